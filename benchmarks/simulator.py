"""The simulator's throughput: work-items a second for a vecadd and a tiled matmul, with the
race checker on and off, and numba-cuda's simulator on the same kernels where one is given.

    python -m benchmarks.simulator [--cudasim PYTHON]

PYTHON is an interpreter with numba-cuda installed (its own venv: numba-cuda pins its own
Numba); benchmarks/cudasim_peer.py runs there with NUMBA_ENABLE_CUDASIM=1.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader

# isort: split
import numpy as np

from examples.matmul_tiled import TILE, launch_range, matmul_kernel

VECADD_ITEMS = 20_000
MATMUL_N = 64  # 4096 work-items, 4 tiles of 16 along the inner dimension


@dk.kernel
def vecadd(a, b, c):
    i = dk.get_global_id(0)
    c[i] = a[i] + b[i]


def _rate(launch, items: int, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        launch()
        best = min(best, time.perf_counter() - started)
    return items / best


def measure() -> dict[str, float]:
    """Work-items a second of each kernel and checker setting (best of three launches)."""
    a = np.random.default_rng(0).random(VECADD_ITEMS, dtype=np.float32)
    c = np.zeros_like(a)
    m = np.random.default_rng(1).random((MATMUL_N, MATMUL_N), dtype=np.float32)
    out = np.zeros_like(m)
    vecadd.simulate[VECADD_ITEMS](a, a, c)  # compiles once: the device check
    matmul_kernel.simulate[launch_range(MATMUL_N, MATMUL_N)](m, m, out)
    results = {}
    for races in ("error", "off"):
        simulation = vecadd.simulate(races=races)
        results[f"vecadd races={races}"] = _rate(
            lambda s=simulation: s[VECADD_ITEMS](a, a, c), VECADD_ITEMS
        )
        simulation = matmul_kernel.simulate(races=races)
        results[f"matmul races={races}"] = _rate(
            lambda s=simulation: s[launch_range(MATMUL_N, MATMUL_N)](m, m, out),
            MATMUL_N * MATMUL_N,
        )
    assert np.array_equal(c, a + a) and np.allclose(out, m @ m, rtol=1e-4)
    return results


def cudasim(python: str) -> dict[str, float]:
    done = subprocess.run(
        [
            python,
            str(Path(__file__).with_name("cudasim_peer.py")),
            str(VECADD_ITEMS),
            str(MATMUL_N),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return {f"{name} numba-cuda simulator": value for name, value in found.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cudasim", help="an interpreter with numba-cuda, for the peer")
    options = parser.parse_args(argv)
    results = measure()
    if options.cudasim:
        results.update(cudasim(options.cudasim))
    print(f"vecadd: {VECADD_ITEMS} work-items; matmul: {MATMUL_N}x{MATMUL_N}, tiles of {TILE}")
    for name, value in results.items():
        print(f"  {name:40s} {value:10.0f} work-items/s")


if __name__ == "__main__":
    main(sys.argv[1:])
