"""Jacobi sweeps for Laplace's equation until convergence, with the loop in @numba.njit.

Each sweep launches two kernels from compiled code: the five-point update, and a per-row
maximum of the change that the host loop reads back to decide whether to stop. The same solver
with its loop in Python is the reference (benchmarks compare the two); NumPy checks the answer.
"""

import dpnp
import numba
import numpy as np

import dpex_kernels as dk

DEVICE = "opencl:cpu"
grid = dk.usm_array(dk.float64, 2, usm_type="shared", device=DEVICE)
rows = dk.usm_array(dk.float64, 1, usm_type="shared", device=DEVICE)


@dk.kernel(dk.void(grid, grid))
def sweep(u, out):
    i = dk.get_global_id(0) + 1
    j = dk.get_global_id(1) + 1
    out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


@dk.kernel(dk.void(grid, grid, rows))
def row_change(u, out, change):
    i = dk.get_global_id(0) + 1
    worst = 0.0
    for j in range(1, u.shape[1] - 1):
        worst = max(worst, abs(out[i, j] - u[i, j]))
    change[i - 1] = worst


@numba.njit
def solve(u, out, change, host_change, tol, max_sweeps, check_every):
    """Sweep until the largest change is below `tol`; returns the number of sweeps."""
    n, m = u.shape
    for done in range(1, max_sweeps + 1):
        sweep[(n - 2, m - 2)](u, out)
        u, out = out, u
        if done % check_every == 0:
            row_change[n - 2](out, u, change).wait()
            copy_to_host(change, host_change)
            if host_change.max() < tol:
                return done
    return max_sweeps


@numba.njit
def copy_to_host(device_array, host):
    """Row changes to the host (device USM is host-visible on the CPU device; elsewhere use
    dpnp.asnumpy outside compiled code)."""
    for i in range(host.shape[0]):
        host[i] = device_array[i]


def solve_with_numpy(u, tol, max_sweeps, check_every):
    u = u.copy()
    for done in range(1, max_sweeps + 1):
        new = u.copy()
        new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        if done % check_every == 0 and np.abs(new - u).max() < tol:
            return new, done
        u = new
    return u, max_sweeps


def initial(n: int) -> np.ndarray:
    u = np.zeros((n, n))
    u[0, :] = 1.0  # a hot top edge
    return u


def main(n: int = 64, tol: float = 1e-4, max_sweeps: int = 20_000, check_every: int = 10):
    start = initial(n)
    u = dpnp.asarray(start, device=DEVICE, usm_type="shared")
    out = dpnp.asarray(start, device=DEVICE, usm_type="shared")
    change = dpnp.zeros(n - 2, device=DEVICE, usm_type="shared")
    sweeps = solve(u, out, change, np.zeros(n - 2), tol, max_sweeps, check_every)
    result = dpnp.asnumpy(u if sweeps % 2 == 0 else out)
    expected, expected_sweeps = solve_with_numpy(start, tol, max_sweeps, check_every)
    assert sweeps == expected_sweeps, (sweeps, expected_sweeps)
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)
    print(f"converged after {sweeps} sweeps; centre value {result[n // 2, n // 2]:.6f}")


if __name__ == "__main__":
    main()
