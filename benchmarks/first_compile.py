"""Worker run in a fresh process: time the imports, then the process's first kernel compile.

Prints one JSON object. Run by cases/compile.py as `python -m benchmarks.first_compile`.
"""

from __future__ import annotations

import json
import time


def main() -> None:
    """Time `import dpex_kernels` (+ dpctl, dpnp) and the first compile of vecadd."""
    started = time.perf_counter()
    import dpex_kernels  # noqa: F401  (first: it sets up the OpenCL ICD loader)

    # isort: split
    import dpnp

    from . import device

    queue = dpnp.empty(1, device=device.DEVICE).sycl_queue
    imported = time.perf_counter()
    dtype = dpnp.dtype("float32")
    if device.dispatcher_available():
        device.jit_kernel("vecadd", dtype, "eager")
        via = "dk.kernel eager"
    else:
        device.compile_raw("vecadd", dtype, queue)
        via = "compile_kernel + build"
    compiled = time.perf_counter()
    result = {"import_s": imported - started, "compile_s": compiled - imported, "via": via}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
