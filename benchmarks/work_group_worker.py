"""Worker run in a fresh process for the work-group group's compile cases; prints one JSON line.

python -m benchmarks.work_group_worker first-use [--profile]
    The first use of a module of ten work-group kernels (the examples' kernels, each compiled
    on its first launch): seconds from after the imports until all ten have run, and with
    --profile where the time went, in the stages of benchmarks/profile_compile.py (Numba
    typing, lowering and other passes, LLVM, SPIR-V emission, the runtime's program build).
python -m benchmarks.work_group_worker cached DIR
    The same first use with cache=True and the cache in DIR (a first run fills it, a second
    one loads it): the time the first launches spent getting their kernels ready, and each
    kernel's SPIR-V written to DIR/programs.
python -m benchmarks.work_group_worker bare DIR
    The runtime's bare builds of DIR/programs/*.spv: the floor of a cached first launch.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path


def first_use(profile: bool) -> dict:
    """Run each of the ten kernels once on small arrays, in a process that compiled nothing."""
    import dpnp
    import numpy as np

    from examples import histogram, kmeans, matmul_tiled, reduction, scan

    spent: dict[str, float] = defaultdict(float)
    if profile:
        from .profile_compile import instrument

        instrument(spent)
    rng = np.random.default_rng(0)
    started = time.perf_counter()
    x = dpnp.asarray(rng.random(4096, dtype=np.float32))
    for sub_groups in (False, True):  # tree_sum, sub_group_sum
        reduction.device_sum(x, sub_groups)
    values = dpnp.asarray(rng.integers(0, 256, 4096).astype(np.int32))
    histogram.histogram(values)  # histogram_counts
    histogram.histogram(values, x)  # histogram_weights
    scan.exclusive_scan(values)  # block_sums, scan_blocks
    a = dpnp.asarray(rng.random((40, 24), dtype=np.float32))
    b = dpnp.asarray(rng.random((24, 40), dtype=np.float32))
    matmul_tiled.matmul(a, b)  # matmul_kernel
    data = rng.random((500, 14), dtype=np.float32)
    kmeans.kmeans(data, data[:8], max_iter=1)  # assign, partial_sums, sum_parts
    dpnp.asnumpy(x[:1])
    result = {"seconds": time.perf_counter() - started}
    if profile:
        result["stages"] = dict(spent)
    return result


def cached(folder: Path) -> dict:
    """The ten kernels' first use with cache=True (cache in `folder`): the time their first
    launches spent getting ready (cache look-up, load, program build), and what ran."""
    import dpex_kernels as dk
    from dpex_kernels.dispatcher import jit_kernel

    os.environ["DPEX_KERNELS_CACHE_DIR"] = str(folder)
    plain = dk.kernel
    dk.kernel = lambda f=None, /, **options: plain(f, **{**options, "cache": True})
    made: list = []
    original_init = jit_kernel.JitKernel.__init__

    def remember(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        made.append(self)

    jit_kernel.JitKernel.__init__ = remember
    spent = {"prepare": 0.0}
    compile_ = jit_kernel.JitKernel.compile

    def timed_compile(self, sig):
        started = time.perf_counter()
        try:
            return compile_(self, sig)
        finally:
            spent["prepare"] += time.perf_counter() - started

    jit_kernel.JitKernel.compile = timed_compile
    result = first_use(False)
    made = [k for k in made if k.definitions]  # the ten used (examples define one more)
    programs = folder / "programs"
    programs.mkdir(exist_ok=True)
    for k in made:
        for compiled in k.definitions.values():
            name = compiled.sycl_kernel.get_function_name()
            (programs / f"{name}.spv").write_bytes(compiled.spirv)
    result.update(
        prepare_s=spent["prepare"],
        kernels=len(made),
        cache_hits=sum(k.stats.cache_hits for k in made),
        compiles=sum(k.stats.compiles for k in made),
    )
    return result


def bare(folder: Path) -> dict:
    """The runtime's own builds of the same SPIR-V (create_program_from_spirv +
    get_sycl_kernel), one program per kernel, in a fresh process."""
    import dpex_kernels  # noqa: F401  (first: it sets up the OpenCL ICD loader)

    # isort: split
    import dpctl.program
    import dpnp

    queue = dpnp.empty(1).sycl_queue
    spirvs = {p.stem: p.read_bytes() for p in sorted((folder / "programs").glob("*.spv"))}
    started = time.perf_counter()
    for name, spirv in spirvs.items():
        dpctl.program.create_program_from_spirv(queue, spirv).get_sycl_kernel(name)
    return {"seconds": time.perf_counter() - started, "kernels": len(spirvs)}


def main() -> None:
    """Dispatch on the mode given on the command line."""
    mode = sys.argv[1]
    if mode == "first-use":
        result = first_use("--profile" in sys.argv)
    elif mode == "cached":
        result = cached(Path(sys.argv[2]))
    else:
        result = bare(Path(sys.argv[2]))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
