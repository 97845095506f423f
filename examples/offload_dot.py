"""A dot product as a prange reduction: the sum runs on the device, the scalar comes back.

`s += a[i] * b[i]` in a prange loop is a reduction: each work-group sums its share in local
memory, a second kernel sums the work-groups' results, and the host adds that to `s`.
"""

import dpnp
import numpy as np
from numba import prange

import dpex_kernels as dk

DEVICE = "opencl:cpu"


@dk.offload
def dot(a, b):
    s = 0.0
    for i in prange(a.shape[0]):
        s += a[i] * b[i]
    return s


@dk.offload
def norms(a):
    """The 1-, 2- and max-norm of `a`, three reductions in one loop."""
    one = 0.0
    two = 0.0
    biggest = 0.0
    for i in prange(a.shape[0]):
        one += abs(a[i])
        two += a[i] * a[i]
        biggest = max(biggest, abs(a[i]))
    return one, two**0.5, biggest


def main(n: int = 1_000_003):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    x, y = dpnp.asarray(a, device=DEVICE), dpnp.asarray(b, device=DEVICE)
    value = dot(x, y)
    np.testing.assert_allclose(value, np.dot(a, b), rtol=1e-10)
    one, two, biggest = norms(x)
    np.testing.assert_allclose(
        (one, two, biggest), (np.abs(a).sum(), np.linalg.norm(a), np.abs(a).max()), rtol=1e-10
    )
    print(f"dot = {value:.6f}; norms {one:.3f}, {two:.3f}, {biggest:.3f}")


if __name__ == "__main__":
    main()
