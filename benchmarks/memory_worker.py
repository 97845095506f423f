"""Worker run in a fresh process: resident memory before and after many launches of one kernel.

Run by cases/memory.py as `python -m benchmarks.memory_worker JSON`, one process per
implementation so that nothing else the suite does (other cases, other implementations) changes
this process's RSS. JSON: {"impl": "eager" | "raw", "launches": N, "warmup": W, "chunk": C}, or
{"impl": "specialise" | "redefine" | "program build", "launches": N, "warmup": W, "chunk": C}
for kernel churn: N kernels defined, compiled, launched once and deleted (each with its own
source, or all with the same one), or N dpctl programs built from one SPIR-V and dropped.
Prints one JSON object: RSS in MiB before, after and at every checkpoint, and the seconds spent.
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import time
from pathlib import Path

ARRAY_LEN = 64
CHURN = ("specialise", "redefine", "program build")


def rss_mib() -> float:
    """This process's resident set size now (VmRSS), in MiB; peak RSS where /proc is absent."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux; a peak


def _settled_rss() -> float:
    """RSS once collectable garbage is gone: what the process keeps, not what it has yet to free."""
    gc.collect()
    return rss_mib()


CHURN_SOURCE = """
def churn(a, out):
    i = dk.get_global_id(0)
    out[i] = a[i] * {k} + 1.0
"""


def churn_main(cfg: dict) -> dict:
    """RSS before and after `launches` kernels are made, launched once and dropped."""
    import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader

    # isort: split
    import dpctl.program
    import dpnp
    import numpy as np

    from . import device

    host = np.arange(ARRAY_LEN, dtype=np.float32)
    a = dpnp.asarray(host, device=device.DEVICE)
    out = dpnp.empty_like(a)
    right = [True]

    def make(k: int):
        namespace = {"dk": dk}
        exec(CHURN_SOURCE.format(k=k), namespace)
        return dk.kernel(namespace["churn"])

    def kernel_once(k: int) -> None:
        kernel = make(k)
        kernel[ARRAY_LEN](a, out).wait()
        right[0] &= bool(np.array_equal(dpnp.asnumpy(out), host * k + 1))

    if cfg["impl"] == "program build":
        first = make(3)
        first[ARRAY_LEN](a, out).wait()
        (compiled,) = first.definitions.values()
        spirv, symbol = compiled.spirv, compiled.artifacts.symbol

        def once(k: int) -> None:
            dpctl.program.create_program_from_spirv(a.sycl_queue, spirv).get_sycl_kernel(symbol)

    elif cfg["impl"] == "specialise":
        once = kernel_once  # a new source each time: new SPIR-V, a new device build
    else:

        def once(k: int) -> None:
            kernel_once(3)  # the same source: same SPIR-V, built once per process

    for k in range(cfg["warmup"]):
        once(k + 2)
    before = _settled_rss()
    checkpoints = []
    started = time.perf_counter()
    for k in range(cfg["launches"]):
        once(k + cfg["warmup"] + 2)
        if (k + 1) % cfg["chunk"] == 0:
            checkpoints.append(rss_mib())
    seconds = time.perf_counter() - started
    after = _settled_rss()
    return {
        "before_mib": before,
        "after_mib": after,
        "checkpoints_mib": checkpoints,
        "seconds": seconds,
        "right": right[0],
    }


def main() -> None:
    """Warm up, read RSS, launch `launches` times (waiting every `chunk`), read RSS again."""
    cfg = json.loads(sys.argv[1])
    if cfg["impl"] in CHURN:
        print(json.dumps(churn_main(cfg)))
        return
    import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader

    # isort: split
    import dpnp
    import numpy as np

    from . import device

    dtype = np.dtype("float32")
    host = [np.full(ARRAY_LEN, k, dtype) for k in range(3)]
    queue = dpnp.empty(1, device=device.DEVICE).sycl_queue
    arrays = tuple(device.device_array(h, queue) for h in host)
    kernel = device.jit_kernel("vecadd", dtype, "eager")
    if cfg["impl"] == "eager":
        rng = dk.Range(ARRAY_LEN)

        def launch():
            kernel[rng](*arrays)

    else:
        sycl_kernel = device.sycl_kernel_of(kernel)
        flat = device.flatten(arrays, device.argtypes("vecadd", dtype))
        gsize = [ARRAY_LEN]

        def launch():
            queue.submit_async(sycl_kernel, flat, gsize)

    for _ in range(cfg["warmup"]):
        launch()
    queue.wait()
    before = _settled_rss()
    checkpoints = []
    started = time.perf_counter()
    for done in range(0, cfg["launches"], cfg["chunk"]):
        for _ in range(min(cfg["chunk"], cfg["launches"] - done)):
            launch()
        queue.wait()
        checkpoints.append(rss_mib())
    seconds = time.perf_counter() - started
    after = _settled_rss()
    expected = host[0] + host[1]
    right = bool(np.array_equal(dpnp.asnumpy(arrays[2]), expected))
    result = {
        "before_mib": before,
        "after_mib": after,
        "checkpoints_mib": checkpoints,
        "seconds": seconds,
        "right": right,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
