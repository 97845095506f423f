"""Each reproducer in tests/fuzz_findings/ runs in a child; open findings are strict xfails."""

import subprocess
import sys
from pathlib import Path

import pytest

FINDINGS = Path(__file__).parent / "fuzz_findings"

#: Reproducer -> why it is still open. A fixed one makes its xfail fail: remove it here.
OPEN: dict[str, str] = {
    "sub_group_divergent_branch.py": "Intel's OpenCL CPU runtime 2026.1 miscompiles the kernel "
    "(its OpenCL C twin too); no rewrite of our IR is known to avoid it",
}


def _cases():
    for path in sorted(FINDINGS.glob("*.py")):
        reason = OPEN.get(path.name)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        yield pytest.param(path, marks=marks, id=path.stem)


@pytest.mark.parametrize("path", list(_cases()))
def test_reproducer_passes(path):
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
