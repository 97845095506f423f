"""A @numba.cfunc that launches a kernel, handed to a C caller through ctypes.

The situation of an FFI callback (a JAX/XLA custom call, a solver library's user function):
C code holds raw USM pointers and a SYCL queue, and calls back into compiled Python. The
callback wraps the pointers as Numba arrays, launches with `dk.raw_launch`, and here waits with
`dk.raw_wait` before returning a status; a caller that prefers to wait itself can be handed the
DPCTLSyclEventRef that `raw_launch` returns instead. The C caller is built here with gcc.
"""

import ctypes
import subprocess
import tempfile
from pathlib import Path

import dpnp
import numba
import numpy as np
from numba import types

import dpex_kernels as dk

DEVICE = "opencl:cpu"
vector = dk.usm_array(dk.float32, 1, device=DEVICE)

# The foreign side: a C function that calls a callback on its buffers and queue.
C_CALLER = r"""
typedef int (*callback_t)(void *queue, float *x, float *y, long n, float alpha);

int run_step(callback_t callback, void *queue, float *x, float *y, long n, float alpha)
{
    return callback(queue, x, y, n, alpha);  /* 0: done */
}
"""


@dk.kernel(dk.void(vector, vector, dk.float32))
def axpy(x, y, alpha):
    i = dk.get_global_id(0)
    y[i] += alpha * x[i]


@numba.cfunc(types.int32(types.voidptr, types.voidptr, types.voidptr, types.int64, types.float32))
def step(queue, x_pointer, y_pointer, n, alpha):
    x = numba.carray(x_pointer, (n,), np.float32)
    y = numba.carray(y_pointer, (n,), np.float32)
    event = dk.raw_launch(axpy[n], queue, (x, y, alpha))
    if event == 0:
        return 1  # the runtime refused the launch
    dk.raw_wait(event)
    return 0


def build_caller(directory: Path) -> ctypes.CDLL:
    source = directory / "caller.c"
    source.write_text(C_CALLER)
    library = directory / "libcaller.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", str(source), "-o", str(library)], check=True)
    caller = ctypes.CDLL(str(library))
    caller.run_step.restype = ctypes.c_int
    caller.run_step.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_long, ctypes.c_float]
    return caller


def pointer(array) -> int:
    return array.__sycl_usm_array_interface__["data"][0]


def main(n: int = 10_000) -> None:
    x = dpnp.asarray(np.linspace(0, 1, n, dtype="f4"), device=DEVICE)
    y = dpnp.ones(n, dtype="f4", device=DEVICE)
    x.sycl_queue.wait()  # raw launches are not ordered with dpnp: the caller orders them
    with tempfile.TemporaryDirectory() as tmp:
        caller = build_caller(Path(tmp))
        queue_ref = x.sycl_queue.addressof_ref()
        for _ in range(3):
            status = caller.run_step(step.address, queue_ref, pointer(x), pointer(y), n, 2.0)
            assert status == 0, status
    expected = 1.0 + 3 * 2.0 * np.linspace(0, 1, n, dtype="f4")
    np.testing.assert_allclose(dpnp.asnumpy(y), expected, rtol=1e-6)
    print("three callbacks from C launched axpy; y[-1] =", float(dpnp.asnumpy(y)[-1]))


if __name__ == "__main__":
    main()
