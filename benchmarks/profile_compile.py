"""Where a warm compile goes: python -m benchmarks.profile_compile [--kernels N]

Compiles the tiled matmul (examples/matmul_tiled.py) under a fresh name N times (8 unless
told) after one compile that warms the compiler, and prints the median milliseconds a compile
spent in each stage: the front end's typing, its lowering and the rest of it (reading the
source for the direct front end, Numba's other passes for Numba's; DPEX_KERNELS_FRONT_END=numba
profiles Numba's), LLVM parsing and linking, each stage of the back end (compiler/backend/
pipeline.py: optimise, emit ...), label repair, spirv-val (only with
DPEX_KERNELS_VALIDATE_SPIRV=1), the runtime's program build and the rest of the device build
(get_sycl_kernel, reference counts). Stages nest, so each is timed without
its inner stages. A profile, not a benchmark: ratios against peers come from
`python -m benchmarks`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from dataclasses import replace

import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader

# isort: split
import dpctl.program
from numba.core import typed_passes

from dpex_kernels import device
from dpex_kernels.compiler.backend import emit, llvm, pipeline
from dpex_kernels.compiler.frontend import direct, numba_front_end
from dpex_kernels.compiler.frontend.direct import lowerer

from .cases.work_group import fresh_matmul

#: (owner, attribute, stage): each stage is timed without the stages called inside it; the
#: back end's stages (pipeline.STAGES) are timed each under its own name.
STAGES = [
    (numba_front_end, "compile_numba", "numba: kernel entry"),
    (numba_front_end, "compile_device_code", "numba: other passes"),
    (direct, "_compile", "direct: source"),
    (typed_passes.NopythonTypeInference, "run_pass", "typing"),
    (direct, "type_function", "typing"),
    (typed_passes.NativeLowering, "run_pass", "lowering"),
    (lowerer.Lowerer, "run", "lowering"),
    (llvm, "link_modules", "parse + link"),
    (llvm, "link_into", "parse + link"),
    (llvm, "optimise", "optimise"),
    (emit, "emit_spirv", "emit"),
    (emit, "repair_label_ids", "label repair"),
    (emit, "_valid", "spirv-val"),
    (device, "_build", "build: get_sycl_kernel, refs"),
    (dpctl.program, "create_program_from_spirv", "build: program"),
]


def instrument(spent: dict[str, float]) -> None:
    """Wrap each stage's function so that `spent[stage]` adds up its time less the time of the
    stages it calls."""
    inner: list[float] = []  # per active stage: the time its inner stages took

    def timed(original, stage: str):
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            inner.append(0.0)
            try:
                return original(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - started
                spent[stage] += elapsed - inner.pop()
                if inner:
                    inner[-1] += elapsed

        return wrapper

    for owner, name, stage in STAGES:
        setattr(owner, name, timed(getattr(owner, name), stage))
    pipeline.STAGES = tuple(
        replace(stage, run=timed(stage.run, f"back end: {stage.name}")) for stage in pipeline.STAGES
    )


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
        for stage in dict.fromkeys([*(stage for _, _, stage in STAGES), *spent]):
            samples[stage].append(spent[stage])
    print(f"warm compile of the tiled matmul, median of {count} (ms):")
    for stage, values in samples.items():
        print(f"  {stage:30s} {statistics.median(values) * 1e3:7.1f}")


if __name__ == "__main__":
    main()
