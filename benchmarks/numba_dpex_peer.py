"""The opt-in numba-dpex peer: runs numba_dpex_worker.py with another venv's python.

The worker runs on that venv's own SYCL and OpenCL CPU runtimes (what a numba-dpex user has):
its environment points the ICD loader at VENV/lib/libintelocl.so and puts VENV/lib first on
LD_LIBRARY_PATH, and drops OCL_ICD_VENDORS (the main suite's pyopencl folder, which names this
venv's runtime: with both, the loader would show two CPU platforms).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from .config import Config
from .results import NDPEX, Row, skipped_row, time_row
from .timing import summarise

WORKER = Path(__file__).with_name("numba_dpex_worker.py")
FIRST_CALL = NDPEX + " (first call)"


def worker_env(venv: Path) -> dict[str, str]:
    """This process's environment, with the ICD loader and libraries of `venv`."""
    env = dict(os.environ)
    env.pop("OCL_ICD_VENDORS", None)
    lib = venv / "lib"
    if (lib / "libintelocl.so").exists():
        env["OCL_ICD_FILENAMES"] = str(lib / "libintelocl.so")
    else:
        env.pop("OCL_ICD_FILENAMES", None)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(lib), os.environ.get("LD_LIBRARY_PATH", "")) if p
    )
    return env


def _run_worker(python: Path, env: dict, settings: dict, timeout: float) -> dict:
    """The worker's JSON answer; raises RuntimeError with its last stderr line if it failed."""
    try:
        done = subprocess.run(
            [str(python), str(WORKER), json.dumps(settings)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"worker timed out after {timeout:.0f} s") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"worker failed (exit {done.returncode}): {last[:200]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _first_call_rows(python: Path, env: dict, runs: int) -> list[Row]:
    """Import time and first-call time of numba-dpex, each run in a fresh interpreter."""
    answers = [_run_worker(python, env, {"task": "first"}, 600) for _ in range(runs)]
    imports = summarise([a["import_s"] for a in answers])
    calls = summarise([a["first_call_s"] for a in answers])
    return [
        time_row("compile", "import numba_dpex, dpctl, dpnp", NDPEX, imports, "ms"),
        time_row("compile", "first compile vecadd (fresh process)", FIRST_CALL, calls, "ms"),
    ]


def run_numba_dpex(cfg: Config, machine: dict | None = None) -> list[Row]:
    """Rows measured by numba-dpex in `cfg.numba_dpex`, or one SKIPPED row saying why.

    Its versions go into machine["numba_dpex"] when `machine` is given.
    """
    if not cfg.numba_dpex:
        return [skipped_row("launch", "numba-dpex", NDPEX, "us", "opt-in: --numba-dpex VENV")]
    venv = Path(cfg.numba_dpex).absolute()
    python = venv / "bin" / "python"
    if not python.exists():
        return [skipped_row("launch", "numba-dpex", NDPEX, "us", f"{python} not found")]
    env = worker_env(venv)
    settings = {
        "task": "main",
        "launches": cfg.launches,
        "sync_launches": cfg.sync_launches,
        "repeat": cfg.launch_repeat,
        "compile_repeat": cfg.compile_repeat,
        "exponents": list(cfg.vector_exponents),
        "dtypes": list(cfg.dtypes),
        "warmup": cfg.warmup,
        "bandwidth_repeat": cfg.repeat,
        "min_time": cfg.min_time,
    }
    try:
        rows = _first_call_rows(python, env, cfg.first_compile_runs)
        answer = _run_worker(python, env, settings, 1800)
    except RuntimeError as exc:
        return [skipped_row("launch", "numba-dpex", NDPEX, "us", str(exc))]
    if machine is not None:
        machine["numba_dpex"] = answer["versions"]
    return rows + [Row(**row) for row in answer["rows"]]
