"""The opt-in numba-dpex peer: runs numba_dpex_worker.py with another venv's python."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .config import Config
from .results import NDPEX, Row, skipped_row

WORKER = Path(__file__).with_name("numba_dpex_worker.py")


def run_numba_dpex(cfg: Config) -> list[Row]:
    """Rows measured by numba-dpex in `cfg.numba_dpex`, or one SKIPPED row saying why."""
    if not cfg.numba_dpex:
        return [skipped_row("launch", "numba-dpex", NDPEX, "us", "opt-in: --numba-dpex VENV")]
    python = Path(cfg.numba_dpex) / "bin" / "python"
    if not python.exists():
        return [skipped_row("launch", "numba-dpex", NDPEX, "us", f"{python} not found")]
    settings = {
        "launches": cfg.launches,
        "repeat": cfg.launch_repeat,
        "exponents": list(cfg.vector_exponents),
        "dtypes": list(cfg.dtypes),
    }
    try:
        done = subprocess.run(
            [str(python), str(WORKER), json.dumps(settings)],
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [skipped_row("launch", "numba-dpex", NDPEX, "us", "worker timed out")]
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [skipped_row("launch", "numba-dpex", NDPEX, "us", f"worker failed: {last}")]
    return [Row(**row) for row in json.loads(done.stdout.strip().splitlines()[-1])]
