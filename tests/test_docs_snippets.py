"""Every ```python block in README.md and docs/*.md runs (each file's blocks in order, fresh)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _documents_with_code():
    return [d for d in DOCUMENTS if _BLOCK.search(d.read_text())]


@pytest.mark.parametrize("document", _documents_with_code(), ids=lambda d: d.name)
def test_python_blocks_run(document, tmp_path):
    source = "\n\n".join(_BLOCK.findall(document.read_text()))
    script = tmp_path / f"{document.stem}_snippets.py"
    script.write_text(source)
    # As from the clone's root, where `from examples import ...` finds the examples.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, f"{document.name}:\n{done.stderr[-3000:]}"


def test_import_loads_no_numba_until_a_name_needs_it():
    # README: "import dpex_kernels itself loads no Numba ... Numba loads with the first use".
    script = (
        "import sys, dpex_kernels as dk\n"
        "assert 'numba' not in sys.modules\n"
        "dk.usm_array\n"
        "assert 'numba' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
