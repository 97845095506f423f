"""Every example runs to completion (each checks its own results against NumPy)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs(name):
    done = subprocess.run(
        [sys.executable, "-m", f"examples.{name}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_mpi_example_runs_on_two_ranks():
    """examples/mpi_ranks.py under `mpiexec -n 2`: the kernel reaches rank 1 by pickle."""
    mpiexec = Path(sys.executable).with_name("mpiexec")
    done = subprocess.run(
        [str(mpiexec), "-n", "2", sys.executable, "-m", "examples.mpi_ranks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "2 ranks" in done.stdout and "no compile on ranks > 0" in done.stdout
