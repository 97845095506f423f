"""Compile time: the first compile in a fresh process, and warm compiles in this one."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader

# isort: split
import dpctl
import numpy as np

from .. import device
from ..config import Config
from ..opencl_peer import OpenCL
from ..results import EAGER, LAZY, OCL, Row, skipped_row, time_row
from ..timing import measure, summarise

PIPELINE = "compile_kernel + build"
_unique = itertools.count()
REPO_ROOT = Path(__file__).resolve().parents[2]


def run_first_compile(cfg: Config) -> list[Row]:
    """Import time and first compile time, each in a fresh interpreter."""
    imports, compiles, via = [], [], ""
    for _ in range(cfg.first_compile_runs):
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.first_compile"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            reason = f"worker failed: {done.stderr.strip().splitlines()[-1:]}"
            return [
                skipped_row("compile", "first compile vecadd (fresh process)", EAGER, "ms", reason)
            ]
        result = json.loads(done.stdout.strip().splitlines()[-1])
        imports.append(result["import_s"])
        compiles.append(result["compile_s"])
        via = result["via"]
    impl = EAGER if via.startswith("dk") else PIPELINE
    return [
        time_row("compile", "import dpex_kernels, dpctl, dpnp", "python", summarise(imports), "ms"),
        time_row(
            "compile",
            "first compile vecadd (fresh process)",
            impl,
            summarise(compiles),
            "ms",
            via=via,
        ),
    ]


def _lazy_first_call(name: str, queue: dpctl.SyclQueue):
    dtype = np.dtype("float32")
    if name == "stencil":
        x = device.device_array(np.zeros((64, 64), dtype), queue)
        args, rng = (
            (
                x,
                device.device_array(np.zeros((64, 64), dtype), queue),
                np.float32(0.5),
                np.float32(0.125),
            ),
            dk.Range(62, 62),
        )
    else:
        args = tuple(device.device_array(np.zeros(64, dtype), queue) for _ in range(3))
        rng = dk.Range(64)
    return lambda: device.jit_kernel(name, dtype, "lazy")[rng](*args).wait()


def run_warm_compile(
    cfg: Config, queue: dpctl.SyclQueue, ocl: OpenCL | None, notes: dict
) -> list[Row]:
    """Compile a kernel not seen before, once the compiler is warm; per implementation."""
    rows = []
    dtype = np.dtype("float32")
    for name in ("vecadd", "stencil"):
        case = f"warm compile {name}"
        impls: dict = {PIPELINE: lambda name=name: device.compile_raw(name, dtype, queue)}
        if device.dispatcher_available():
            impls[EAGER] = lambda name=name: device.jit_kernel(name, dtype, "eager")
            impls[LAZY + " (first call)"] = _lazy_first_call(name, queue)
        else:
            impls[EAGER] = device.NO_DISPATCHER
        if ocl is not None:
            impls[OCL] = lambda name=name: ocl.kernel(name, dtype, tag=f"build {next(_unique)}")
        else:
            impls[OCL] = notes["opencl"]
        for impl, build in impls.items():
            if isinstance(build, str):
                rows.append(skipped_row("compile", case, impl, "ms", build))
                continue
            try:
                stats = measure(build, 1, cfg.compile_repeat)
            except Exception as exc:  # a broken implementation must not stop the others
                reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
                rows.append(skipped_row("compile", case, impl, "ms", reason))
                continue
            rows.append(time_row("compile", case, impl, stats, "ms"))
    return rows
