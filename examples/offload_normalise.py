"""Normalising the rows of a matrix: a reduction, array expressions and an allocation inside.

The mean and spread of the whole matrix are prange reductions on the device; `centred = x -
mean` is an array expression, so it too is a kernel, writing an array the function allocates
on the argument's device; the per-row scaling is a 2-D prange nest. NumPy checks the answer.
"""

import math

import dpnp
import numpy as np
from numba import prange

import dpex_kernels as dk

DEVICE = "opencl:cpu"


@dk.offload
def normalise(x):
    """(x - mean) / std of the whole matrix, then each row scaled to unit length."""
    n, m = x.shape
    total = 0.0
    for i in prange(n):
        for j in prange(m):
            total += x[i, j]
    mean = total / (n * m)
    centred = x - mean
    squares = 0.0
    for i in prange(n):
        for j in prange(m):
            squares += centred[i, j] * centred[i, j]
    centred /= math.sqrt(squares / (n * m))
    lengths = dpnp.empty(n, dtype=x.dtype)
    for i in prange(n):
        length = 0.0
        for j in range(m):
            length += centred[i, j] * centred[i, j]
        lengths[i] = math.sqrt(length)
    out = dpnp.empty((n, m), dtype=x.dtype)
    for i in prange(n):
        for j in prange(m):
            out[i, j] = centred[i, j] / lengths[i]
    return out


def normalise_with_numpy(x):
    z = (x - x.mean()) / x.std()
    return z / np.linalg.norm(z, axis=1, keepdims=True)


def main(n: int = 300, m: int = 70):
    host = np.random.default_rng(1).random((n, m)) * 10 + 3
    out = normalise(dpnp.asarray(host, device=DEVICE))
    assert isinstance(out, dpnp.ndarray) and out.sycl_device.filter_string.startswith(DEVICE)
    np.testing.assert_allclose(dpnp.asnumpy(out), normalise_with_numpy(host), rtol=1e-10)
    kinds = sorted({k.kind for k in normalise.inspect_kernels()})
    print(f"normalised {n}x{m}; kernels: {'; '.join(kinds)}")


if __name__ == "__main__":
    main()
