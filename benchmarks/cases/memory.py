"""Memory: resident-set growth over many launches, each run in a fresh process."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

from .. import device
from ..compare import MEMORY_TARGET_LAUNCHES
from ..config import Config
from ..results import EAGER, RAW, Row, skipped_row

REPO_ROOT = Path(__file__).resolve().parents[2]
WARMUP = 1_000
CHUNK = 10_000  # wait after this many launches, so the queue stays bounded


def case_name(launches: int) -> str:
    """The memory case label; a shorter (quick) run says that the target is not judged on it."""
    label = "RSS growth, " + f"{launches:,}".replace(",", " ") + " launches"
    return label if launches >= MEMORY_TARGET_LAUNCHES else label + " (quick: no target)"


def _run(impl: str, launches: int) -> dict:
    settings = {"impl": impl, "launches": launches, "warmup": WARMUP, "chunk": CHUNK}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory_worker", json.dumps(settings)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"worker failed (exit {done.returncode}): {last[:200]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_memory(cfg: Config) -> list[Row]:
    """RSS growth (MiB) of dk eager and of the raw submit_async loop, vecadd on 64 floats.

    Each run is a fresh interpreter: compile, 1 000 warm-up launches and a wait, RSS, then
    `cfg.memory_launches` async launches with a wait every 10 000, RSS again. The row's value is
    the largest growth of `cfg.memory_runs` runs (the target is judged on the worst run).
    """
    case = case_name(cfg.memory_launches)
    if not device.dispatcher_available():
        return [skipped_row("memory", case, i, "MiB", device.NO_DISPATCHER) for i in (EAGER, RAW)]
    rows = []
    for impl, name in ((EAGER, "eager"), (RAW, "raw")):
        params = {"launches": cfg.memory_launches, "warmup": WARMUP, "chunk": CHUNK}
        try:
            runs = [_run(name, cfg.memory_launches) for _ in range(cfg.memory_runs)]
        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as exc:
            rows.append(skipped_row("memory", case, impl, "MiB", str(exc), **params))
            continue
        growth = [r["after_mib"] - r["before_mib"] for r in runs]
        params.update(
            runs=len(runs),
            growth_mib_runs=growth,
            growth_mib_median=statistics.median(growth),
            before_mib=runs[0]["before_mib"],
            checkpoints_mib_runs=[r["checkpoints_mib"] for r in runs],
            us_per_launch=statistics.median(r["seconds"] for r in runs) / cfg.memory_launches * 1e6,
        )
        note = "" if all(r["right"] for r in runs) else "WRONG result"
        rows.append(Row("memory", case, impl, "MiB", max(growth), None, [], params, note))
    return rows
