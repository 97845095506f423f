"""numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1) on the simulator benchmark's two kernels.

Run by benchmarks/simulator.py under an interpreter that has numba-cuda (`--cudasim PYTHON`);
prints one JSON line: work-items a second for each kernel.
"""

import json
import os
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402
from numba import cuda, float32  # noqa: E402

TILE = 16


@cuda.jit
def vecadd(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


@cuda.jit
def matmul(a, b, c):
    a_tile = cuda.shared.array((TILE, TILE), float32)
    b_tile = cuda.shared.array((TILE, TILE), float32)
    i, j = cuda.grid(2)
    li, lj = cuda.threadIdx.x, cuda.threadIdx.y
    total = float32(0)
    for t in range(a.shape[1] // TILE):
        a_tile[li, lj] = a[i, t * TILE + lj]
        b_tile[li, lj] = b[t * TILE + li, j]
        cuda.syncthreads()
        for k in range(TILE):
            total += a_tile[li, k] * b_tile[k, lj]
        cuda.syncthreads()
    c[i, j] = total


def rate(launch, items: int) -> float:
    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        launch()
        best = min(best, time.perf_counter() - started)
    return items / best


def main(vecadd_items: int, matmul_n: int) -> None:
    a = np.random.default_rng(0).random(vecadd_items, dtype=np.float32)
    c = np.zeros_like(a)
    blocks = -(-vecadd_items // 256)
    vec = rate(lambda: vecadd[blocks, 256](a, a, c), vecadd_items)
    assert np.array_equal(c, a + a)
    m = np.random.default_rng(1).random((matmul_n, matmul_n), dtype=np.float32)
    out = np.zeros_like(m)
    grid = (matmul_n // TILE, matmul_n // TILE)
    mat = rate(lambda: matmul[grid, (TILE, TILE)](m, m, out), matmul_n * matmul_n)
    assert np.allclose(out, m @ m, rtol=1e-4)
    print(json.dumps({"vecadd": vec, "matmul": mat}))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
