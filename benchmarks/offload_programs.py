"""Classic data-parallel programs: @dk.offload against numba.njit(parallel=True) and kernels.

    python -m benchmarks.offload_programs [--quick]

Black-Scholes (the test suite's program), l2-norm, pairwise distance, a k-means assignment
step, gpairs, rambo and knn, written once with prange loops and NumPy/math names (as a
numba-dpex `dpjit` user writes them), are compiled twice: by @dk.offload and run on dpnp
(USM) arrays, and by numba.njit(parallel=True) and run on NumPy arrays on the same CPU.
Each also has an explicit @dk.kernel twin (`KERNELS`), written as a user would: one
work-item per iteration of the prange loop, the loop body as the kernel body, private
arrays for knn. It runs on the same dpnp inputs and writes outputs of its own.
Each timed call waits for its results; each implementation runs in its own turn
(`timing.own_turns`: OpenMP's threads spin after Numba's parallel loops). The results of
the first calls (compile and run, reported too) are checked against numba's: `measure`
raises AssertionError where they differ. Ratios: numba's time over offload's (target at
least 1.0) and the explicit kernel's time over offload's (target at least 0.9). Numba runs
a second time on NumPy views of USM memory ("numba USM", information): NumPy's large arrays
get huge pages, USM memory does not, and past the caches that alone moves a loop's time.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader

# isort: split
import dpnp
import numba
import numpy as np
from numba import prange

from tests.offload_programs import black_scholes_prange

from .cases.offload import host_view
from .timing import own_turns, wall_clock

K_NEIGHBOURS = 5
CLASSES = 3


def l2_norm(a, d):
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j] * a[i, j]
        d[i] = math.sqrt(s)


def pairwise_distance(x1, x2, distances):
    for i in prange(x1.shape[0]):
        for j in range(x2.shape[0]):
            d = 0.0
            for k in range(x1.shape[1]):
                tmp = x1[i, k] - x2[j, k]
                d += tmp * tmp
            distances[i, j] = math.sqrt(d)


def kmeans_assign(points, centroids, labels):
    for i in prange(points.shape[0]):
        best = 0
        best_d = np.inf
        for c in range(centroids.shape[0]):
            d = 0.0
            for k in range(points.shape[1]):
                t = points[i, k] - centroids[c, k]
                d += t * t
            if d < best_d:
                best_d = d
                best = c
        labels[i] = best


def gpairs(x1, y1, z1, w1, x2, y2, z2, w2, rbins, counts):
    for i in prange(x1.shape[0]):
        for j in range(x2.shape[0]):
            dx, dy, dz = x1[i] - x2[j], y1[i] - y2[j], z1[i] - z2[j]
            dsq = dx * dx + dy * dy + dz * dz
            k = rbins.shape[0] - 1
            while dsq <= rbins[k]:
                counts[i, k] += w1[i] * w2[j]
                k -= 1
                if k < 0:
                    break


def rambo(c1, f1, q1, output):
    for i in prange(output.shape[0]):
        for j in range(output.shape[1]):
            cos_theta = 2.0 * c1[i, j] - 1.0
            sin_theta = math.sqrt(1.0 - cos_theta * cos_theta)
            phi = 2.0 * math.pi * f1[i, j]
            energy = -math.log(q1[i, j])
            output[i, j, 0] = energy
            output[i, j, 1] = energy * sin_theta * math.cos(phi)
            output[i, j, 2] = energy * sin_theta * math.sin(phi)
            output[i, j, 3] = energy * cos_theta


def knn(train, train_labels, test, predictions):
    for i in prange(test.shape[0]):
        best = np.empty(K_NEIGHBOURS)
        best_labels = np.empty(K_NEIGHBOURS, np.int64)
        for k in range(K_NEIGHBOURS):
            best[k] = np.inf
            best_labels[k] = 0
        for j in range(train.shape[0]):
            d = 0.0
            for f in range(train.shape[1]):
                t = test[i, f] - train[j, f]
                d += t * t
            if d < best[K_NEIGHBOURS - 1]:
                k = K_NEIGHBOURS - 1
                while k > 0 and best[k - 1] > d:
                    best[k] = best[k - 1]
                    best_labels[k] = best_labels[k - 1]
                    k -= 1
                best[k] = d
                best_labels[k] = train_labels[j]
        votes = np.zeros(CLASSES, np.int64)
        for k in range(K_NEIGHBOURS):
            votes[best_labels[k]] += 1
        winner = 0
        for c in range(CLASSES):
            if votes[c] > votes[winner]:
                winner = c
        predictions[i] = winner


# The same algorithms as explicit kernels, as a user writes them by hand: one work-item per
# iteration of the prange loop, the loop body as the kernel body, in the same arithmetic order.


@dk.kernel
def black_scholes_kernel(price, strike, t, rate, volatility, call, put):
    i = dk.get_global_id(0)
    a = math.log(price[i] / strike[i])
    b = t[i] * -rate[i]
    z = t[i] * volatility[i] * volatility[i] * 2
    c = 0.25 * z
    y = 1.0 / math.sqrt(z)
    d1 = 0.5 + 0.5 * math.erf((a - b + c) * y)
    d2 = 0.5 + 0.5 * math.erf((a - b - c) * y)
    future = strike[i] * math.exp(b)
    call[i] = price[i] * d1 - future * d2
    put[i] = call[i] - price[i] + future


@dk.kernel
def l2_norm_kernel(a, d):
    i = dk.get_global_id(0)
    s = 0.0
    for j in range(a.shape[1]):
        s += a[i, j] * a[i, j]
    d[i] = math.sqrt(s)


@dk.kernel
def pairwise_distance_kernel(x1, x2, distances):
    i = dk.get_global_id(0)
    for j in range(x2.shape[0]):
        d = 0.0
        for k in range(x1.shape[1]):
            tmp = x1[i, k] - x2[j, k]
            d += tmp * tmp
        distances[i, j] = math.sqrt(d)


@dk.kernel
def kmeans_assign_kernel(points, centroids, labels):
    i = dk.get_global_id(0)
    best = 0
    best_d = math.inf
    for c in range(centroids.shape[0]):
        d = 0.0
        for k in range(points.shape[1]):
            t = points[i, k] - centroids[c, k]
            d += t * t
        if d < best_d:
            best_d = d
            best = c
    labels[i] = best


@dk.kernel
def gpairs_kernel(x1, y1, z1, w1, x2, y2, z2, w2, rbins, counts):
    i = dk.get_global_id(0)
    for j in range(x2.shape[0]):
        dx, dy, dz = x1[i] - x2[j], y1[i] - y2[j], z1[i] - z2[j]
        dsq = dx * dx + dy * dy + dz * dz
        k = rbins.shape[0] - 1
        while dsq <= rbins[k]:
            counts[i, k] += w1[i] * w2[j]
            k -= 1
            if k < 0:
                break


@dk.kernel
def rambo_kernel(c1, f1, q1, output):
    i = dk.get_global_id(0)
    for j in range(output.shape[1]):
        cos_theta = 2.0 * c1[i, j] - 1.0
        sin_theta = math.sqrt(1.0 - cos_theta * cos_theta)
        phi = 2.0 * math.pi * f1[i, j]
        energy = -math.log(q1[i, j])
        output[i, j, 0] = energy
        output[i, j, 1] = energy * sin_theta * math.cos(phi)
        output[i, j, 2] = energy * sin_theta * math.sin(phi)
        output[i, j, 3] = energy * cos_theta


@dk.kernel
def knn_kernel(train, train_labels, test, predictions):
    i = dk.get_global_id(0)
    best = dk.private.array(K_NEIGHBOURS, dk.float64)
    best_labels = dk.private.array(K_NEIGHBOURS, dk.int64)
    for k in range(K_NEIGHBOURS):
        best[k] = math.inf
        best_labels[k] = 0
    for j in range(train.shape[0]):
        d = 0.0
        for f in range(train.shape[1]):
            t = test[i, f] - train[j, f]
            d += t * t
        if d < best[K_NEIGHBOURS - 1]:
            k = K_NEIGHBOURS - 1
            while k > 0 and best[k - 1] > d:
                best[k] = best[k - 1]
                best_labels[k] = best_labels[k - 1]
                k -= 1
            best[k] = d
            best_labels[k] = train_labels[j]
    votes = dk.private.array(CLASSES, dk.int64)
    for c in range(CLASSES):
        votes[c] = 0
    for k in range(K_NEIGHBOURS):
        votes[best_labels[k]] += 1
    winner = 0
    for c in range(CLASSES):
        if votes[c] > votes[winner]:
            winner = c
    predictions[i] = winner


def inputs(scale: float, rng: np.random.Generator) -> dict[str, tuple]:
    """Each program's arguments (NumPy arrays), sized by `scale` (1: the full run)."""

    def n(size: int) -> int:
        return max(16, int(size * scale))

    options = n(2**22)
    rows, features = n(2**20), 8
    points_a, points_b = n(4096), n(2048)
    kmeans_points = n(2**20)
    pairs_a, pairs_b, bins = n(4096), n(1024), 16
    events, particles = n(2**16), 32
    train, test = n(8192), n(4096)
    return {
        "black-scholes": (
            rng.uniform(10, 50, options),
            rng.uniform(10, 50, options),
            rng.uniform(1, 2, options),
            rng.uniform(0.01, 0.05, options),
            rng.uniform(0.1, 0.5, options),
            np.zeros(options),
            np.zeros(options),
        ),
        "l2-norm": (rng.random((rows, features)), np.zeros(rows)),
        "pairwise distance": (
            rng.random((points_a, 3)),
            rng.random((points_b, 3)),
            np.zeros((points_a, points_b)),
        ),
        "k-means assign": (
            rng.random((kmeans_points, 4)),
            rng.random((16, 4)),
            np.zeros(kmeans_points, np.int64),
        ),
        "gpairs": (
            *(rng.random(pairs_a) for _ in range(4)),
            *(rng.random(pairs_b) for _ in range(4)),
            np.linspace(0.01, 1.0, bins) ** 2,
            np.zeros((pairs_a, bins)),
        ),
        "rambo": (
            rng.random((events, particles)),
            rng.random((events, particles)),
            rng.uniform(0.01, 1.0, (events, particles)),
            np.zeros((events, particles, 4)),
        ),
        "knn": (
            rng.random((train, 4)),
            rng.integers(0, CLASSES, train),
            rng.random((test, 4)),
            np.zeros(test, np.int64),
        ),
    }


PROGRAMS: dict[str, Callable] = {
    "black-scholes": black_scholes_prange,
    "l2-norm": l2_norm,
    "pairwise distance": pairwise_distance,
    "k-means assign": kmeans_assign,
    "gpairs": gpairs,
    "rambo": rambo,
    "knn": knn,
}


#: Each program's explicit kernel and its launch range (the prange loop's trip count) from the
#: program's arguments.
KERNELS: dict[str, tuple[dk.JitKernel, Callable[..., int]]] = {
    "black-scholes": (black_scholes_kernel, lambda price, *_: price.shape[0]),
    "l2-norm": (l2_norm_kernel, lambda a, d: a.shape[0]),
    "pairwise distance": (pairwise_distance_kernel, lambda x1, x2, distances: x1.shape[0]),
    "k-means assign": (kmeans_assign_kernel, lambda points, *_: points.shape[0]),
    "gpairs": (gpairs_kernel, lambda x1, *_: x1.shape[0]),
    "rambo": (rambo_kernel, lambda c1, f1, q1, output: output.shape[0]),
    "knn": (knn_kernel, lambda train, train_labels, test, predictions: test.shape[0]),
}

#: How many of a program's last arguments it writes (one where not named).
OUTPUTS = {"black-scholes": 2}

#: The implementations, in the order they take turns.
IMPLEMENTATIONS = ("offload", "kernel", "numba", "numba USM")


def check(name: str, implementation: str, got: list, expected: list) -> None:
    """Raise AssertionError unless `got` (NumPy or dpnp arrays) agrees with `expected`."""
    for position, (actual, wanted) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(
            dpnp.asnumpy(actual) if isinstance(actual, dpnp.ndarray) else actual,
            wanted,
            rtol=1e-9,
            atol=1e-9,
            err_msg=f"{name}: {implementation} differs from numba in output {position}",
        )


def measure(scale: float, samples: int) -> list[dict]:
    """One row per program: first calls and median call times of the four, checked equal.

    Raises AssertionError when the results of a first call differ from numba's.
    """
    rows = []
    for name, arguments in inputs(scale, np.random.default_rng(0)).items():
        program = PROGRAMS[name]
        kernel, launch_range = KERNELS[name]
        outputs = OUTPUTS.get(name, 1)
        offloaded, parallel = dk.offload(program), numba.njit(parallel=True)(program)
        on_device = [dpnp.asarray(a) for a in arguments]
        # The kernel reads the same input arrays and writes copies of the outputs of its own.
        for_kernel = on_device[:-outputs] + [dpnp.asarray(a) for a in arguments[-outputs:]]
        on_host = [a.copy() for a in arguments]
        # Numba again, on NumPy views of USM memory (4 KiB pages, where NumPy's large arrays
        # get huge pages: docs/offload.md, "Memory, not the kernel")
        usm_copies = [dpnp.asarray(a) for a in arguments]
        on_usm = [host_view(a) for a in usm_copies]
        grid = dk.Range(launch_range(*for_kernel))

        def offload_call(args=on_device, f=offloaded) -> None:
            f(*args)
            args[-1].sycl_queue.wait()

        def kernel_call(args=for_kernel, k=kernel, grid=grid) -> None:
            k[grid](*args).wait()

        def numba_call(args=on_host, f=parallel) -> None:
            f(*args)

        def numba_usm_call(args=on_usm, f=parallel) -> None:
            f(*args)

        calls = {
            "offload": offload_call,
            "kernel": kernel_call,
            "numba": numba_call,
            "numba USM": numba_usm_call,
        }
        first = {key: wall_clock(call)() for key, call in calls.items()}
        check(name, "offload", on_device[-outputs:], on_host[-outputs:])
        check(name, "kernel", for_kernel[-outputs:], on_host[-outputs:])
        check(name, "numba USM", on_usm[-outputs:], on_host[-outputs:])
        times = own_turns({key: wall_clock(call) for key, call in calls.items()}, samples)
        medians = {key: float(np.median(value)) for key, value in times.items()}
        rows.append({"program": name, "first": first, "median": medians})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 samples")
    options = parser.parse_args()
    scale, samples = (1 / 64, 3) if options.quick else (1.0, 9)
    #: program, median ms of the four, the three ratios, first-call seconds of the first three
    #: (Numba's second run reuses its first compile)
    compiled = IMPLEMENTATIONS[:3]
    widths = (18, 9, 9, 9, 11, 11, 11, 11, 9, 9, 9)
    groups = ("", "median ms", "ratio", "first call s")
    spans = (widths[0], sum(widths[1:5]), sum(widths[5:8]), sum(widths[8:]))
    print(groups[0].ljust(spans[0]) + "".join(g.rjust(w) for g, w in zip(groups[1:], spans[1:])))
    ratios = ("numba/off", "kernel/off", "USM/off")
    header = ("program", *IMPLEMENTATIONS, *ratios, *compiled)
    print(header[0].ljust(widths[0]) + "".join(h.rjust(w) for h, w in zip(header[1:], widths[1:])))
    for row in measure(scale, samples):
        ms = {key: row["median"][key] * 1e3 for key in IMPLEMENTATIONS}
        cells = (
            *(f"{ms[key]:.2f}" for key in IMPLEMENTATIONS),
            f"{ms['numba'] / ms['offload']:.3f}",
            f"{ms['kernel'] / ms['offload']:.3f}",
            f"{ms['numba USM'] / ms['offload']:.3f}",
            *(f"{row['first'][key]:.2f}" for key in compiled),
        )
        line = row["program"].ljust(widths[0])
        print(line + "".join(c.rjust(w) for c, w in zip(cells, widths[1:])))
    print("numba/off: numba.njit(parallel=True) time / @dk.offload time (higher is better, >= 1.0)")
    print("kernel/off: explicit @dk.kernel time / @dk.offload time (higher is better, >= 0.9)")
    print("USM/off: numba.njit(parallel=True) on the USM memory / @dk.offload (information)")
    print("first call: compile included")


if __name__ == "__main__":
    main()
