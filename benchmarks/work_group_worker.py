"""Worker run in a fresh process for the work-group group's compile cases; prints one JSON line.

python -m benchmarks.work_group_worker first-use [--profile]
    The first use of a module of ten work-group kernels (the examples' kernels, each compiled
    on its first launch): seconds from after the imports until all ten have run, and with
    --profile where the time went (Numba typing, Numba lowering, LLVM optimisation, SPIR-V
    emission, label repair, the runtime's program build).
python -m benchmarks.work_group_worker cached DIR
    With cache=True and $DPEX_KERNELS_CACHE_DIR=DIR: the first launch of the matmul kernel
    (filling the cache if DIR is empty), its SPIR-V written to DIR/matmul.spv.
python -m benchmarks.work_group_worker bare DIR
    The runtime's bare build of DIR/matmul.spv (create_program_from_spirv + get_sycl_kernel)
    and one launch: the floor for the cached first launch.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path

STAGES = ("numba typing", "numba lowering", "llvm optimise", "spirv emit", "label repair")


def _profile() -> dict[str, float]:
    """Wrap each compile stage in a timer; returns the dict the timers add to."""
    import dpctl.program
    from numba.core import typed_passes

    from dpex_kernels import device
    from dpex_kernels.compiler import codegen

    spent: dict[str, float] = defaultdict(float)

    def timed(owner, name, stage):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[stage] += time.perf_counter() - started

        setattr(owner, name, wrapper)

    from dpex_kernels.compiler import compile as compile_module
    from dpex_kernels.dispatcher import jit_kernel

    timed(jit_kernel, "compile_kernel", "compile_kernel (all compiler stages)")
    timed(compile_module, "compile_device_code", "numba (typing + lowering + rest)")
    timed(codegen, "link_modules", "llvm parse + link")
    timed(typed_passes.NopythonTypeInference, "run_pass", "numba typing")
    timed(typed_passes.NativeLowering, "run_pass", "numba lowering")
    timed(codegen, "optimise", "llvm optimise")
    timed(codegen, "repair_label_ids", "label repair")  # inside emit: subtracted below
    timed(codegen, "emit_spirv", "spirv emit")
    timed(dpctl.program, "create_program_from_spirv", "program build")
    del device  # imported so that its dpctl.program reference is the patched module's
    return spent


def first_use(profile: bool) -> dict:
    """Run each of the ten kernels once on small arrays, in a process that compiled nothing."""
    import dpnp
    import numpy as np

    from examples import histogram, kmeans, matmul_tiled, reduction, scan

    spent = _profile() if profile else {}
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
    matmul_tiled.matmul(a, a.T.copy())  # matmul_kernel
    data = rng.random((500, 14), dtype=np.float32)
    kmeans.kmeans(data, data[:8], max_iter=1)  # assign, partial_sums, sum_parts
    dpnp.asnumpy(x[:1])
    result = {"seconds": time.perf_counter() - started}
    if profile:
        result["stages"] = dict(spent)
        result["stages"]["spirv emit"] -= spent.get("label repair", 0.0)
    return result


def cached(folder: Path) -> dict:
    """First launch of the tiled matmul with cache=True (a hit when `folder` holds it)."""
    import dpnp

    import dpex_kernels as dk
    from examples import matmul_tiled

    a = dpnp.ones((32, 32), dtype="f4")
    c = dpnp.empty_like(a)
    started = time.perf_counter()
    kernel = dk.kernel(cache=True)(matmul_tiled.matmul_kernel.py_func)
    kernel[matmul_tiled.launch_range(32, 32)](a, a, c).wait()
    seconds = time.perf_counter() - started
    (compiled,) = kernel.definitions.values()
    (folder / "matmul.spv").write_bytes(compiled.spirv)
    return {
        "seconds": seconds,
        "symbol": compiled.sycl_kernel.get_function_name(),
        "hits": kernel.stats.cache_hits,
        "compiles": kernel.stats.compiles,
        "numba_compiles": _numba_compiles(),
    }


def _numba_compiles() -> int:
    """How many functions Numba's compiler has compiled in this process."""
    from numba.core import compiler

    return sum(1 for _ in getattr(compiler, "_dpex_kernels_seen", ()))


def bare(folder: Path) -> dict:
    """The runtime's own build of the SPIR-V, and one launch of it."""
    import ctypes

    import dpctl
    import dpctl.program
    import dpnp

    queue = dpnp.empty(1).sycl_queue
    spirv = (folder / "matmul.spv").read_bytes()
    symbol = json.loads((folder / "cached.json").read_text())["symbol"]
    a = dpnp.ones((32, 32), dtype="f4")
    c = dpnp.empty_like(a)
    started = time.perf_counter()
    kernel = dpctl.program.create_program_from_spirv(queue, spirv).get_sycl_kernel(symbol)
    usm = [a.get_array().usm_data, c.get_array().usm_data]
    args = []
    for arr in (a, a, c):  # the flattened array arguments: pointer, offset, shape, strides
        args += [arr.get_array().usm_data, ctypes.c_int64(0)]
        args += [ctypes.c_int64(32), ctypes.c_int64(32), ctypes.c_int64(32), ctypes.c_int64(1)]
    del usm
    try:
        queue.submit_async(kernel, args, [32, 32], [16, 16]).wait()
    except Exception:  # the flattening is the dispatcher's business: time the build alone then
        pass
    return {"seconds": time.perf_counter() - started, "dpctl": dpctl.__version__}


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
