"""Where a warm compile goes: python -m benchmarks.profile_compile [--kernels N]

Compiles the tiled matmul (examples/matmul_tiled.py) under a fresh name N times (8 unless
told) after one compile that warms the compiler, and prints the median milliseconds a compile
spent in each stage: the front end's typing, its lowering and the rest of it (reading the
source for the direct front end, Numba's other passes for Numba's; DPEX_KERNELS_FRONT_END=numba
profiles Numba's), LLVM parsing and linking, optimisation, SPIR-V emission, label repair,
spirv-val (only with DPEX_KERNELS_VALIDATE_SPIRV=1), the runtime's program build and the rest
of the device build (get_sycl_kernel, reference counts). Stages nest, so each is timed without
its inner stages. A profile, not a benchmark: ratios against peers come from
`python -m benchmarks`.
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
from dpex_kernels.compiler import codegen, direct
from dpex_kernels.compiler import compile as compile_module
from dpex_kernels.compiler.direct import lowerer

from .cases.work_group import fresh_matmul

#: (owner, attribute, stage): each stage is timed without the stages called inside it.
STAGES = [
    (compile_module, "_numba_kernel", "numba: kernel entry"),
    (compile_module, "compile_device_code", "numba: other passes"),
    (direct, "compile_direct", "direct: source"),
    (typed_passes.NopythonTypeInference, "run_pass", "typing"),
    (direct, "type_function", "typing"),
    (typed_passes.NativeLowering, "run_pass", "lowering"),
    (lowerer.Lowerer, "run", "lowering"),
    (compile_module, "_link", "IR text"),
    (codegen, "link_modules", "parse + link"),
    (codegen, "link_into", "parse + link"),
    (codegen, "optimise", "optimise"),
    (codegen, "emit_spirv", "emit"),
    (codegen, "repair_label_ids", "label repair"),
    (codegen, "_valid", "spirv-val"),
    (device, "_build", "build: get_sycl_kernel, refs"),
    (dpctl.program, "create_program_from_spirv", "build: program"),
]


def instrument(spent: dict[str, float]) -> None:
    """Wrap each stage's function so that `spent[stage]` adds up its time less the time of the
    stages it calls."""
    inner: list[float] = []  # per active stage: the time its inner stages took

    for owner, name, stage in STAGES:
        original = getattr(owner, name)

        def wrapper(*args, _original=original, _stage=stage, **kwargs):
            started = time.perf_counter()
            inner.append(0.0)
            try:
                return _original(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - started
                spent[_stage] += elapsed - inner.pop()
                if inner:
                    inner[-1] += elapsed

        setattr(owner, name, wrapper)


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
        for stage in dict.fromkeys(stage for _, _, stage in STAGES):
            samples[stage].append(spent[stage])
    print(f"warm compile of the tiled matmul, median of {count} (ms):")
    for stage, values in samples.items():
        print(f"  {stage:30s} {statistics.median(values) * 1e3:7.1f}")


if __name__ == "__main__":
    main()
