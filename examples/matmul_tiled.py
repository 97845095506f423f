"""Tiled matrix multiply: work-group local memory, barriers and an NdRange."""

import time

import dpnp
import numpy as np

import dpex_kernels as dk

TILE = 16
f32_2d = dk.usm_array(dk.float32, 2)


@dk.kernel(dk.void(f32_2d, f32_2d, f32_2d))
def matmul(a, b, c):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    li = dk.get_local_id(0)
    lj = dk.get_local_id(1)
    a_tile = dk.local.array((TILE, TILE), dk.float32)
    b_tile = dk.local.array((TILE, TILE), dk.float32)
    total = 0.0  # a Python float meeting float32 data stays float32 (NumPy 2's rule)
    for t in range(a.shape[1] // TILE):
        a_tile[li, lj] = a[i, t * TILE + lj]
        b_tile[li, lj] = b[t * TILE + li, j]
        dk.barrier(dk.LOCAL_MEM_FENCE)
        for k in range(TILE):
            total += a_tile[li, k] * b_tile[k, lj]
        dk.barrier(dk.LOCAL_MEM_FENCE)
    c[i, j] = total


def main(n: int = 512) -> None:
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = dpnp.empty((n, n), dtype="f4")
    launch = matmul[dk.NdRange((n, n), (TILE, TILE))]
    da, db = dpnp.asarray(a), dpnp.asarray(b)
    launch(da, db, c).wait()
    started = time.perf_counter()
    launch(da, db, c).wait()
    seconds = time.perf_counter() - started
    np.testing.assert_allclose(dpnp.asnumpy(c), a @ b, rtol=1e-4)
    print(f"{n}x{n} float32 matmul: {2 * n**3 / seconds / 1e9:.1f} GFLOP/s")


if __name__ == "__main__":
    main()
