"""Where a warm compile goes: python -m benchmarks.profile_compile [--kernels N]

Compiles the tiled matmul (examples/matmul_tiled.py) under a fresh name N times (8 unless
told) after one compile that warms the compiler, and prints the median milliseconds a compile
spent in each stage: Numba's typing, its lowering and its other passes, LLVM parsing and
linking, optimisation, SPIR-V emission, label repair, spirv-val (only with
DPEX_KERNELS_VALIDATE_SPIRV=1), the runtime's program build and the rest of the device build
(get_sycl_kernel, reference counts). Stages nest, so each is timed without its inner stages.
A profile, not a benchmark: ratios against peers come from `python -m benchmarks`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader

# isort: split
import dpctl.program
from numba.core import typed_passes

from dpex_kernels import device
from dpex_kernels.compiler import codegen
from dpex_kernels.compiler import compile as compile_module

from .cases.work_group import fresh_matmul

#: (owner, attribute, stage, the stages it contains), outermost first.
STAGES = [
    (compile_module, "compile_device_code", "numba: other passes", ("typing", "lowering")),
    (typed_passes.NopythonTypeInference, "run_pass", "typing", ()),
    (typed_passes.NativeLowering, "run_pass", "lowering", ()),
    (compile_module, "_link", "entry, IR text", ("parse + link", "optimise", "emit")),
    (codegen, "link_modules", "parse + link", ()),
    (codegen, "link_into", "parse + link", ()),
    (codegen, "optimise", "optimise", ()),
    (codegen, "emit_spirv", "emit", ("label repair", "spirv-val")),
    (codegen, "repair_label_ids", "label repair", ()),
    (codegen, "_valid", "spirv-val", ()),
    (device, "_build", "build: get_sycl_kernel, refs", ("build: program",)),
    (dpctl.program, "create_program_from_spirv", "build: program", ()),
]


def instrument(spent: dict[str, float]) -> None:
    """Wrap each stage's function so that its time (inner stages included) adds up."""
    for owner, name, stage, _ in STAGES:
        original = getattr(owner, name)

        def wrapper(*args, _original=original, _stage=stage, **kwargs):
            started = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[_stage] += time.perf_counter() - started

        setattr(owner, name, wrapper)


def exclusive(spent: dict[str, float]) -> dict[str, float]:
    """Each stage's time without the stages it contains."""
    inner = {stage: contained for _, _, stage, contained in STAGES}
    return {s: spent[s] - sum(spent[c] for c in inner[s]) for s in dict.fromkeys(inner)}


def main() -> None:
    """Compile, time, print one line per stage."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=8)
    count = parser.parse_args().kernels
    f32_2d = dk.usm_array(dk.float32, 2)
    sig = dk.void(f32_2d, f32_2d, f32_2d)
    dk.kernel(sig)(fresh_matmul())  # the compiler is warm from here on
    spent: dict[str, float] = defaultdict(float)
    instrument(spent)
    samples: dict[str, list[float]] = defaultdict(list)
    for _ in range(count):
        spent.clear()
        started = time.perf_counter()
        dk.kernel(sig)(fresh_matmul())
        samples["total"].append(time.perf_counter() - started)
        for stage, seconds in exclusive(spent).items():
            samples[stage].append(seconds)
    print(f"warm compile of the tiled matmul, median of {count} (ms):")
    for stage, values in samples.items():
        print(f"  {stage:30s} {statistics.median(values) * 1e3:7.1f}")


if __name__ == "__main__":
    main()
