"""The benchmarked kernels, each written three ways: dpex_kernels Python, OpenCL C, host Numba.

Scalars (triad's s, the stencil's weights) are kernel arguments of the arrays' dtype, so every
version computes in that dtype and all three take the same arguments. (A literal would do as
well in the Python kernels: float literals there follow NumPy 2 (NEP 50), so `0.5 * x[i]` with
float32 `x` stays float32; the OpenCL C and host versions simply take the same scalars.)
"""

from __future__ import annotations

import numba
import numpy as np

try:
    from dpex_kernels import get_global_id
except ImportError:  # the dispatcher's re-exports may not exist yet
    from dpex_kernels.compiler.kernel_api import get_global_id

# --- dpex_kernels (device) ----------------------------------------------------------------


def vecadd(a, b, c):
    i = get_global_id(0)
    c[i] = a[i] + b[i]


def triad(a, b, c, s):
    i = get_global_id(0)
    a[i] = b[i] + s * c[i]


def add10(a0, a1, a2, a3, a4, a5, a6, a7, a8, out):
    i = get_global_id(0)
    out[i] = a0[i] + a1[i] + a2[i] + a3[i] + a4[i] + a5[i] + a6[i] + a7[i] + a8[i]


def axpb(x, out, alpha, beta):
    i = get_global_id(0)
    out[i] = alpha * x[i] + beta


def stencil(x, y, c0, c1):
    i = get_global_id(0) + 1
    j = get_global_id(1) + 1
    y[i, j] = c0 * x[i, j] + c1 * (x[i - 1, j] + x[i + 1, j] + x[i, j - 1] + x[i, j + 1])


PY_KERNELS = {
    "vecadd": vecadd,
    "triad": triad,
    "add10": add10,
    "axpb": axpb,
    "stencil": stencil,
}

# --- OpenCL C (pyopencl) ------------------------------------------------------------------
# OpenCL dimension 0 varies fastest: the stencil's column index j is get_global_id(0).

OPENCL_HEADER = """
#ifdef USE_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double T;
#else
typedef float T;
#endif
"""

OPENCL_KERNELS = {
    "vecadd": """
__kernel void vecadd(__global const T *a, __global const T *b, __global T *c)
{
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}
""",
    "triad": """
__kernel void triad(__global T *a, __global const T *b, __global const T *c, T s)
{
    size_t i = get_global_id(0);
    a[i] = b[i] + s * c[i];
}
""",
    "add10": """
__kernel void add10(__global const T *a0, __global const T *a1, __global const T *a2,
                    __global const T *a3, __global const T *a4, __global const T *a5,
                    __global const T *a6, __global const T *a7, __global const T *a8,
                    __global T *out)
{
    size_t i = get_global_id(0);
    out[i] = a0[i] + a1[i] + a2[i] + a3[i] + a4[i] + a5[i] + a6[i] + a7[i] + a8[i];
}
""",
    "axpb": """
__kernel void axpb(__global const T *x, __global T *out, T alpha, T beta)
{
    size_t i = get_global_id(0);
    out[i] = alpha * x[i] + beta;
}
""",
    # Not a benchmarked kernel: the launch cases' gate, one work-item busy for n steps or until
    # the host sets *open (host-visible memory; the CPU device sees the host's store).
    "spin": """
__kernel void spin(__global T *out, long n, volatile __global const int *open)
{
    T acc = out[0];
    for (long k = 0; k < n; ++k) {
        acc = acc * (T)0.9999999 + (T)1;
        if ((k & 1023) == 0 && *open)
            break;
    }
    out[0] = acc;
}
""",
    "stencil": """
__kernel void stencil(__global const T *x, __global T *y, T c0, T c1, long n)
{
    size_t j = get_global_id(0) + 1;
    size_t i = get_global_id(1) + 1;
    y[i * n + j] = c0 * x[i * n + j]
        + c1 * (x[(i - 1) * n + j] + x[(i + 1) * n + j] + x[i * n + j - 1] + x[i * n + j + 1]);
}
""",
}

# --- host: Numba parallel -----------------------------------------------------------------


@numba.njit(parallel=True, cache=False)
def host_vecadd(a, b, c):
    for i in numba.prange(a.shape[0]):
        c[i] = a[i] + b[i]


@numba.njit(parallel=True, cache=False)
def host_triad(a, b, c, s):
    for i in numba.prange(a.shape[0]):
        a[i] = b[i] + s * c[i]


@numba.njit(parallel=True, cache=False)
def host_stencil(x, y, c0, c1):
    n0, n1 = x.shape
    for i in numba.prange(1, n0 - 1):
        for j in range(1, n1 - 1):
            y[i, j] = c0 * x[i, j] + c1 * (x[i - 1, j] + x[i + 1, j] + x[i, j - 1] + x[i, j + 1])


# --- references (NumPy), for checking every implementation's output -----------------------


def ref_stencil(x: np.ndarray, y: np.ndarray, c0, c1) -> None:
    """The 5-point stencil on the interior of `x`, written into `y`, with NumPy."""
    y[1:-1, 1:-1] = c0 * x[1:-1, 1:-1] + c1 * (
        x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:]
    )
