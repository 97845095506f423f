"""A heat-diffusion stencil written as plain prange loops, offloaded with @dk.offload.

The time loop is host code in the compiled function; each step's 2-D prange nest becomes one
kernel launched on the grid's device, and the copy back a second one. NumPy checks the answer.
"""

import dpnp
import numpy as np
from numba import prange

import dpex_kernels as dk

DEVICE = "opencl:cpu"


@dk.offload
def diffuse(u, scratch, alpha, steps):
    """`steps` explicit heat-equation steps on the interior of `u` (edges held fixed)."""
    n, m = u.shape
    for _ in range(steps):
        for i in prange(1, n - 1):
            for j in prange(1, m - 1):
                scratch[i, j] = u[i, j] + alpha * (
                    u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
                )
        for i in prange(1, n - 1):
            for j in prange(1, m - 1):
                u[i, j] = scratch[i, j]


def diffuse_with_numpy(u, alpha, steps):
    u = u.copy()
    for _ in range(steps):
        inner = u[1:-1, 1:-1]
        u[1:-1, 1:-1] = inner + alpha * (
            u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * inner
        )
    return u


def main(n: int = 128, steps: int = 50, alpha: float = 0.2):
    start = np.zeros((n, n))
    start[n // 2 - 4 : n // 2 + 4, n // 2 - 4 : n // 2 + 4] = 100.0  # a hot square
    u = dpnp.asarray(start, device=DEVICE)
    diffuse(u, dpnp.asarray(start, device=DEVICE), alpha, steps)
    result = dpnp.asnumpy(u)
    np.testing.assert_allclose(result, diffuse_with_numpy(start, alpha, steps), rtol=1e-12)
    kernels = diffuse.inspect_kernels()
    print(
        f"{len(kernels)} kernels ({', '.join(k.kind for k in kernels)}); heat left: "
        f"{result.sum():.3f} of {start.sum():.0f}"
    )


if __name__ == "__main__":
    main()
