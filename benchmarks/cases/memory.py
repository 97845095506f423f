"""Memory: resident-set growth over many launches, and over kernel churn; fresh processes."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

from .. import device, progress
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


#: Kernel churn (issue 8): (case, worker impl, row impl, count in full mode, in quick mode).
CHURN = (
    ("lazy specialisations, deleted", "specialise", "dk lazy", 2_000, 50),
    ("kernel redefinitions, deleted", "redefine", "dk lazy", 1_000, 50),
    ("dpctl program builds, dropped", "program build", "dpctl", 2_000, 50),
)
CHURN_WARMUP = 20


def _run(impl: str, launches: int, warmup: int = WARMUP, chunk: int = CHUNK) -> dict:
    settings = {"impl": impl, "launches": launches, "warmup": warmup, "chunk": chunk}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory_worker", json.dumps(settings)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
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
        progress.measured("memory", case, impl)
        rows.append(Row("memory", case, impl, "MiB", max(growth), None, [], params, note))
    return rows + run_churn(cfg)


def run_churn(cfg: Config) -> list[Row]:
    """RSS growth (MiB) over many kernels made, launched once and deleted, in one fresh process.

    A lazy specialisation of new source costs a Numba compile, LLVM and a dpctl program build;
    a redefinition of the same source reuses the device build (same SPIR-V). The dpctl row
    builds one SPIR-V into programs and drops them, nothing of dpex_kernels involved: what
    dpctl and the OpenCL runtime keep of a build. Information only (no target).
    """
    rows = []
    for case, worker, impl, full, quick in CHURN:
        count = quick if cfg.mode == "quick" else full
        label = f"{case} x " + f"{count:,}".replace(",", " ")
        params = {"items": count, "warmup": CHURN_WARMUP}
        try:
            run = _run(worker, count, CHURN_WARMUP, max(1, count // 10))
        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as exc:
            rows.append(skipped_row("memory", label, impl, "MiB", str(exc), **params))
            continue
        growth = run["after_mib"] - run["before_mib"]
        params.update(
            runs=1,
            growth_mib_runs=[growth],
            growth_mib_median=growth,
            before_mib=run["before_mib"],
            checkpoints_mib_runs=[run["checkpoints_mib"]],
            us_per_launch=run["seconds"] / count * 1e6,
            kib_per_item=growth * 1024 / count,
        )
        note = f"{growth * 1024 / count:.0f} KiB per item" + ("" if run["right"] else ", WRONG")
        progress.measured("memory", label, impl)
        rows.append(Row("memory", label, impl, "MiB", growth, None, [], params, note))
    return rows
