"""Command line of the suite: python -m benchmarks [--quick] [--json FILE] [--plot FILE]."""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from . import device, progress  # first: imports dpex_kernels, which sets up the OpenCL ICD loader
from .cases.bandwidth import Implementations, run_bandwidth
from .cases.compile import run_first_compile, run_warm_compile
from .cases.device_time import Profiled, run_device_time
from .cases.launch import run_launch, run_reject
from .cases.memory import run_memory
from .cases.offload import run_offload
from .cases.sycl2020 import run_sycl2020
from .cases.work_group import run_work_group
from .compare import all_comparisons
from .config import make_config
from .machine import describe, last_level_cache_bytes, load_average
from .numba_dpex_peer import run_numba_dpex
from .opencl_peer import open_opencl
from .plot import write_plot
from .report import render, write_json
from .results import Row, skipped_row

# The groups that run fresh processes (compile, memory, numba-dpex) come first: they fork before
# this process has runtime thread pools, and they measure in children while this one is idle.
# device-time runs before the wall-clock bandwidth groups, whose host Numba thread pool it does
# not need.
GROUPS = (
    "compile",
    "memory",
    "numba-dpex",
    "work-group",
    "sycl2020",
    "offload",
    "launch",
    "reject",
    "device-time",
    "vecadd",
    "triad",
    "stencil",
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command-line options."""
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    p.add_argument("--quick", action="store_true", help="CI smoke run, under 2 minutes")
    p.add_argument("--json", type=Path, metavar="FILE", help="write every measurement as JSON")
    p.add_argument("--plot", type=Path, metavar="FILE", help="write a PNG plot of the ratios")
    p.add_argument("--numba-dpex", metavar="VENV", help="also run numba-dpex from this venv")
    p.add_argument("--only", metavar="GROUPS", help=f"comma-separated subset of {','.join(GROUPS)}")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the suite, print the report, write the files asked for; 0 even if targets miss."""
    args = parse_args(argv)
    cfg = make_config(args.quick, args.numba_dpex)
    wanted = set(args.only.split(",")) if args.only else set(GROUPS)
    if wanted - set(GROUPS):
        print(
            f"unknown groups {sorted(wanted - set(GROUPS))}; choose from {GROUPS}", file=sys.stderr
        )
        return 2
    groups = [g for g in GROUPS if g in wanted]  # the suite's order, whatever the order given
    started = time.perf_counter()
    load_start = load_average()
    import dpnp

    try:
        queue = dpnp.empty(1, device=device.DEVICE).sycl_queue
    except Exception as exc:
        print(f"no {device.DEVICE} device: {exc}", file=sys.stderr)
        return 1
    machine = describe(device.device_description(queue))  # now: it may fork
    ocl, reason = open_opencl()  # after dpctl has seen its devices
    notes = {"opencl": reason}
    impls = Implementations(queue, ocl, notes)
    impls.prepare(tuple(g for g in ("vecadd", "triad", "stencil") if g in groups), cfg.dtypes)
    cache_bytes = last_level_cache_bytes()
    profiled: Profiled | Exception | None = None
    if "device-time" in groups:
        try:  # compiled now, like the bandwidth kernels; a failure is reported on its row
            profiled = Profiled(ocl, notes)
            profiled.prepare(cfg.dtypes)
        except Exception as exc:
            profiled = exc

    def device_time() -> list[Row]:
        if isinstance(profiled, Exception):
            raise profiled
        return run_device_time(cfg, profiled, cache_bytes)

    jobs: dict[str, Callable[[], list[Row]]] = {
        "launch": lambda: run_launch(cfg, queue, ocl, notes),
        "reject": lambda: run_reject(cfg, queue),
        "compile": lambda: run_first_compile(cfg) + run_warm_compile(cfg, queue, ocl, notes),
        "vecadd": lambda: run_bandwidth("vecadd", cfg, impls),
        "triad": lambda: run_bandwidth("triad", cfg, impls),
        "stencil": lambda: run_bandwidth("stencil", cfg, impls),
        "device-time": device_time,
        "memory": lambda: run_memory(cfg),
        "numba-dpex": lambda: run_numba_dpex(cfg, machine),
        "work-group": lambda: run_work_group(cfg, ocl, notes),
        "sycl2020": lambda: run_sycl2020(cfg),
        "offload": lambda: run_offload(cfg),
    }
    rows: list[Row] = []
    shown = progress.start(len(groups))  # per group, and per case from the row constructors
    for group in groups:
        shown.show(group)
        try:
            rows += jobs[group]()
        except Exception as exc:  # report it and go on: one broken case must not hide the rest
            traceback.print_exc()
            rows.append(skipped_row(group, group, "suite", "-", f"failed: {exc}"))
        shown.advance()
    progress.stop()

    comparisons = all_comparisons(rows, cache_bytes)
    machine["load_average_start"], machine["load_average_end"] = load_start, load_average()
    print(render(rows, comparisons, machine, cfg.mode, cache_bytes))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    if args.json:
        write_json(args.json, rows, comparisons, machine, asdict(cfg))
        print(f"wrote {args.json}")
    if args.plot:
        title = f"dpex_kernels benchmarks ({cfg.mode}) — {machine['cpu']}"
        problem = write_plot(args.plot, comparisons, cache_bytes, title)
        print(f"plot SKIPPED: {problem}" if problem else f"wrote {args.plot}")
    return 0
