"""Typical data-parallel programs as a numba-dpex `dpjit` user writes them, for @dk.offload.

Written after numba-dpex's documentation and examples and the classic data-parallel benchmarks
(black-scholes, l2-norm, pairwise distance, k-means, gpairs, rambo, knn), with prange loops,
array expressions, reductions and dpnp's names. Each program has a NumPy reference written
independently (vectorised NumPy, no loops to share a mistake with): tests/test_offload_programs.py
runs every program on USM arrays and compares its result and its arguments afterwards with the
reference's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import dpnp
import numba
import numpy as np
from numba import prange

import dpex_kernels as dk

#: Fixed sizes of the knn program's private arrays (numba-dpex kernels declare them so too).
K_NEIGHBOURS = 5
CLASSES = 3


@dataclass(frozen=True)
class Program:
    """One program: its function, inputs made from a generator, its NumPy reference."""

    function: Callable
    inputs: Callable[[np.random.Generator], tuple]
    #: Takes NumPy copies of the inputs, may change them as the program changes its arguments,
    #: and returns what the program returns.
    reference: Callable
    rtol: float = 1e-10

    @property
    def name(self) -> str:
        return self.function.__name__


def _erf(x):
    return np.vectorize(math.erf)(x)


# --- element-wise: prange and array expressions ---------------------------------------------


def vecadd_prange(a, b, c):
    for i in prange(a.shape[0]):
        c[i] = a[i] + b[i]


def _vecadd_prange(a, b, c):
    c[:] = a + b


def vecadd_expression(a, b):
    return a + b


def _vecadd_expression(a, b):
    return a + b


def saxpy_in_place(alpha, x, y):
    y += alpha * x


def _saxpy_in_place(alpha, x, y):
    y += alpha * x


@numba.vectorize
def erf(x):
    """A ufunc of the user's (dpnp has no erf): array expressions call it element-wise."""
    return math.erf(x)


def black_scholes_dpnp(price, strike, t, rate, volatility):
    a = dpnp.log(price / strike)
    b = t * -rate
    z = t * volatility * volatility * 2
    c = 0.25 * z
    y = dpnp.true_divide(1.0, dpnp.sqrt(z))
    w1 = (a - b + c) * y
    w2 = (a - b - c) * y
    d1 = 0.5 + 0.5 * erf(w1)
    d2 = 0.5 + 0.5 * erf(w2)
    future = strike * dpnp.exp(b)
    call = price * d1 - future * d2
    return call, call - price + future


def _black_scholes(price, strike, t, rate, volatility):
    a = np.log(price / strike)
    b = t * -rate
    z = t * volatility * volatility * 2
    c = 0.25 * z
    y = 1.0 / np.sqrt(z)
    d1 = 0.5 + 0.5 * _erf((a - b + c) * y)
    d2 = 0.5 + 0.5 * _erf((a - b - c) * y)
    future = strike * np.exp(b)
    call = price * d1 - future * d2
    return call, call - price + future


def black_scholes_prange(price, strike, t, rate, volatility, call, put):
    for i in prange(price.shape[0]):
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


def _black_scholes_prange(price, strike, t, rate, volatility, call, put):
    call[:], put[:] = _black_scholes(price, strike, t, rate, volatility)


def _options(rng):
    n = 1000
    return (
        rng.uniform(10, 50, n),
        rng.uniform(10, 50, n),
        rng.uniform(1, 2, n),
        rng.uniform(0.01, 0.05, n),
        rng.uniform(0.1, 0.5, n),
    )


def dpnp_math_on_scalars(a, out):
    for i in prange(a.shape[0]):
        s = a[i]
        out[i] = dpnp.sqrt(s) + dpnp.exp(-s) * dpnp.cos(s) + dpnp.abs(dpnp.minimum(s, 0.5))


def _dpnp_math_on_scalars(a, out):
    out[:] = np.sqrt(a) + np.exp(-a) * np.cos(a) + np.abs(np.minimum(a, 0.5))


def broadcasting(x, row, column):
    return (x - row) * column + 1.0


def _broadcasting(x, row, column):
    return (x - row) * column + 1.0


def comparisons_and_masks(a, b):
    below = a < b
    both = (a > 0.25) & (b < 0.75)
    a[a > 0.9] = 0.0
    return below, both, dpnp.where(below, a, b)


def _comparisons_and_masks(a, b):
    below = a < b
    both = (a > 0.25) & (b < 0.75)
    a[a > 0.9] = 0.0
    return below, both, np.where(below, a, b)


def integer_bitwise(a, b):
    return (a & b) | (a ^ 7), a >> 1, ~b


def _integer_bitwise(a, b):
    return (a & b) | (a ^ 7), a >> 1, ~b


# --- reductions ------------------------------------------------------------------------------


def prange_reductions(a):
    total = 0.0
    smallest = a[0]
    biggest = a[0]
    for i in prange(a.shape[0]):
        total += a[i] * a[i]
        smallest = min(smallest, a[i])
        biggest = max(biggest, a[i])
    return total, smallest, biggest


def _prange_reductions(a):
    return float(np.sum(a * a)), a.min(), a.max()


def statistics(a):
    return a.sum(), a.prod(), a.mean(), a.std(), a.var(), a.min(), a.max(), a.argmin(), a.argmax()


def _statistics(a):
    return a.sum(), a.prod(), a.mean(), a.std(), a.var(), a.min(), a.max(), a.argmin(), a.argmax()


def _small_positive(rng):
    return (rng.uniform(0.9, 1.1, 500),)


def axis_reductions(x):
    return x.sum(axis=0), dpnp.max(x, axis=1), dpnp.mean(x, axis=0), x.min(axis=0)


def _axis_reductions(x):
    return x.sum(axis=0), x.max(axis=1), x.mean(axis=0), x.min(axis=0)


def l2_norm_axis(a):
    return dpnp.sqrt(dpnp.sum(a * a, axis=1))


def _l2_norm(a):
    return np.sqrt(np.sum(a * a, axis=1))


def l2_norm_prange(a, d):
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j] * a[i, j]
        d[i] = dpnp.sqrt(s)


def _l2_norm_prange(a, d):
    d[:] = _l2_norm(a)


def softmax_rows(x):
    biggest = dpnp.max(x, axis=1)
    e = dpnp.exp(x - biggest.reshape((x.shape[0], 1)))
    return e / dpnp.sum(e, axis=1).reshape((x.shape[0], 1))


def _softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# --- loop nests -------------------------------------------------------------------------------


def pairwise_distance_prange(x1, x2, distances):
    for i in prange(x1.shape[0]):
        for j in range(x2.shape[0]):
            d = 0.0
            for k in range(x1.shape[1]):
                tmp = x1[i, k] - x2[j, k]
                d += tmp * tmp
            distances[i, j] = dpnp.sqrt(d)


def _pairwise_distance_prange(x1, x2, distances):
    distances[:] = np.sqrt(((x1[:, None, :] - x2[None, :, :]) ** 2).sum(axis=-1))


def pairwise_distance_dpnp(x1, x2):
    s1 = dpnp.sum(dpnp.square(x1), axis=1)
    s2 = dpnp.sum(dpnp.square(x2), axis=1)
    d = -2.0 * (x1 @ x2.T) + s1.reshape((s1.shape[0], 1)) + s2
    return dpnp.sqrt(dpnp.maximum(d, 0.0))


def _pairwise_distance_dpnp(x1, x2):
    return np.sqrt(np.maximum(((x1[:, None, :] - x2[None, :, :]) ** 2).sum(axis=-1), 0.0))


def _points(rng):
    return rng.random((64, 3)), rng.random((48, 3))


def stencil_nest(a, b):
    for i in prange(1, a.shape[0] - 1):
        for j in prange(1, a.shape[1] - 1):
            b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


def _stencil_nest(a, b):
    b[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])


def kmeans_step(points, centroids, labels, new_centroids):
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
    for c in prange(centroids.shape[0]):
        count = 0
        for k in range(points.shape[1]):
            new_centroids[c, k] = 0.0
        for i in range(points.shape[0]):
            if labels[i] == c:
                count += 1
                for k in range(points.shape[1]):
                    new_centroids[c, k] += points[i, k]
        for k in range(points.shape[1]):
            new_centroids[c, k] = new_centroids[c, k] / max(count, 1)


def _kmeans_step(points, centroids, labels, new_centroids):
    d = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
    labels[:] = d.argmin(axis=1)
    for c in range(centroids.shape[0]):
        members = points[labels == c]
        new_centroids[c] = members.sum(axis=0) / max(len(members), 1)


def _kmeans_inputs(rng):
    points = rng.random((200, 2))
    return points, points[:4].copy(), np.zeros(200, np.int64), np.zeros((4, 2))


def kmeans_inertia(points, centroids, labels):
    offsets = points - centroids[labels]
    return (offsets * offsets).sum()


def _kmeans_inertia(points, centroids, labels):
    offsets = points - centroids[labels]
    return (offsets * offsets).sum()


def _inertia_inputs(rng):
    return rng.random((300, 3)), rng.random((5, 3)), rng.integers(0, 5, 300)


def outlier_mean(x, limit):
    far = x[np.abs(x - x.mean()) > limit]
    return far.sum() / max(far.shape[0], 1)


def _outlier_mean(x, limit):
    far = x[np.abs(x - x.mean()) > limit]
    return far.sum() / max(far.shape[0], 1)


def masked_updates(x, y, limit):
    high = x > limit
    x[high] = y[high]
    x[x < -limit] *= 0.5
    rows = x[:, 0] > 0.0
    x[rows] = y[0]
    return x


def _masked_updates(x, y, limit):
    np.copyto(x, np.where(x > limit, y, x))
    np.copyto(x, np.where(x < -limit, x * 0.5, x))
    np.copyto(x, np.where(x[:, :1] > 0.0, y[0], x))
    return x


def gpairs(x1, y1, z1, w1, x2, y2, z2, w2, rbins):
    counts = dpnp.zeros((x1.shape[0], rbins.shape[0]), dtype=w1.dtype, device=x1.device)
    for i in prange(x1.shape[0]):
        for j in range(x2.shape[0]):
            dx = x1[i] - x2[j]
            dy = y1[i] - y2[j]
            dz = z1[i] - z2[j]
            dsq = dx * dx + dy * dy + dz * dz
            for k in range(rbins.shape[0]):
                if dsq <= rbins[k]:
                    counts[i, k] += w1[i] * w2[j]
    return counts.sum(axis=0)


def _gpairs(x1, y1, z1, w1, x2, y2, z2, w2, rbins):
    dsq = (x1[:, None] - x2) ** 2 + (y1[:, None] - y2) ** 2 + (z1[:, None] - z2) ** 2
    weights = w1[:, None] * w2
    return np.array([(weights * (dsq <= r)).sum() for r in rbins])


def _gpairs_inputs(rng):
    n = 100
    return (*(rng.random(n) for _ in range(8)), np.linspace(0.1, 1.0, 6) ** 2)


def rambo(c1, f1, q1, output):
    c = 2.0 * c1 - 1.0
    s = dpnp.sqrt(1.0 - dpnp.square(c))
    f = 2.0 * np.pi * f1
    q = -dpnp.log(q1)
    output[:, :, 0] = q
    output[:, :, 1] = q * s * dpnp.sin(f)
    output[:, :, 2] = q * s * dpnp.cos(f)
    output[:, :, 3] = q * c


def _rambo(c1, f1, q1, output):
    c = 2.0 * c1 - 1.0
    s = np.sqrt(1.0 - c * c)
    f = 2.0 * np.pi * f1
    q = -np.log(q1)
    output[...] = np.stack([q, q * s * np.sin(f), q * s * np.cos(f), q * c], axis=-1)


def _rambo_inputs(rng):
    events, particles = 50, 4
    return (
        rng.random((events, particles)),
        rng.random((events, particles)),
        rng.uniform(0.1, 1.0, (events, particles)),
        np.zeros((events, particles, 4)),
    )


def knn(train, train_labels, test, predictions):
    for i in prange(test.shape[0]):
        nearest = np.empty((K_NEIGHBOURS, 2))
        for j in range(K_NEIGHBOURS):
            nearest[j, 0] = np.inf
            nearest[j, 1] = 0.0
        for j in range(train.shape[0]):
            d = 0.0
            for k in range(train.shape[1]):
                diff = train[j, k] - test[i, k]
                d += diff * diff
            if d < nearest[K_NEIGHBOURS - 1, 0]:
                slot = K_NEIGHBOURS - 1
                while slot > 0 and nearest[slot - 1, 0] > d:
                    nearest[slot, 0] = nearest[slot - 1, 0]
                    nearest[slot, 1] = nearest[slot - 1, 1]
                    slot -= 1
                nearest[slot, 0] = d
                nearest[slot, 1] = train_labels[j]
        votes = np.zeros(CLASSES)
        for j in range(K_NEIGHBOURS):
            votes[int(nearest[j, 1])] += 1
        best = 0
        for c in range(CLASSES):
            if votes[c] > votes[best]:
                best = c
        predictions[i] = best


def _knn(train, train_labels, test, predictions):
    d = ((test[:, None, :] - train[None, :, :]) ** 2).sum(axis=-1)
    nearest = np.argsort(d, axis=1, kind="stable")[:, :K_NEIGHBOURS]
    votes = np.stack([(train_labels[nearest] == c).sum(axis=1) for c in range(CLASSES)], axis=1)
    predictions[:] = votes.argmax(axis=1)


def _knn_inputs(rng):
    train = rng.random((60, 3))
    return (
        train,
        rng.integers(0, CLASSES, 60).astype(np.int64),
        rng.random((40, 3)),
        np.zeros(40, np.int64),
    )


def private_array(a, out):
    for i in prange(a.shape[0]):
        powers = np.zeros(3)
        for k in range(3):
            powers[k] = a[i] ** k
        out[i] = powers.sum()


def _private_array(a, out):
    out[:] = 1 + a + a * a


# --- allocation, slices, calls, linear algebra -------------------------------------------------


def dpnp_allocations(a):
    b = dpnp.empty_like(a)
    c = dpnp.zeros_like(a)
    d = dpnp.ones(a.shape, dtype=a.dtype, device=a.device)
    e = dpnp.full_like(a, 3.0)
    for i in prange(a.shape[0]):
        b[i] = a[i] + c[i] + d[i] + e[i]
    return b


def _dpnp_allocations(a):
    return a + 4.0


def slices(a):
    a[:2] = 0.0
    return a[1:] - a[:-1], a[1:5]


def _slices(a):
    a[:2] = 0.0
    return a[1:] - a[:-1], a[1:5].copy()


@dk.offload
def triple(x):
    return x * 3.0


def calls_between_offloaded_functions(a, b):
    return triple(a + b) - triple(a)


def _calls(a, b):
    return (a + b) * 3.0 - a * 3.0


def inner_function(a, out):
    def square(x):
        return x * x

    for i in prange(a.shape[0]):
        out[i] = square(a[i]) + 1.0


def _inner_function(a, out):
    out[:] = a * a + 1.0


def matmul(a, b):
    return a @ b


def _matmul(a, b):
    return a @ b


def _vectors(rng, n=1000):
    return rng.random(n), rng.random(n)


def _vectors_out(rng):
    return (*_vectors(rng), np.zeros(1000))


def _one_out(rng):
    return rng.random(1000), np.zeros(1000)


PROGRAMS = [
    Program(vecadd_prange, _vectors_out, _vecadd_prange),
    Program(vecadd_expression, _vectors, _vecadd_expression),
    Program(saxpy_in_place, lambda rng: (2.5, *_vectors(rng)), _saxpy_in_place),
    Program(black_scholes_dpnp, _options, _black_scholes, rtol=1e-9),
    Program(
        black_scholes_prange,
        lambda rng: (*_options(rng), np.zeros(1000), np.zeros(1000)),
        _black_scholes_prange,
        rtol=1e-9,
    ),
    Program(dpnp_math_on_scalars, _one_out, _dpnp_math_on_scalars),
    Program(
        broadcasting,
        lambda rng: (rng.random((6, 4)), rng.random(4), rng.random((6, 1))),
        _broadcasting,
    ),
    Program(comparisons_and_masks, _vectors, _comparisons_and_masks),
    Program(
        integer_bitwise,
        lambda rng: (rng.integers(0, 100, 50), rng.integers(0, 100, 50)),
        _integer_bitwise,
    ),
    Program(prange_reductions, lambda rng: (rng.random(1000),), _prange_reductions),
    Program(statistics, _small_positive, _statistics, rtol=1e-8),
    Program(axis_reductions, lambda rng: (rng.random((30, 7)),), _axis_reductions),
    Program(l2_norm_axis, lambda rng: (rng.random((100, 5)),), _l2_norm),
    Program(l2_norm_prange, lambda rng: (rng.random((100, 5)), np.zeros(100)), _l2_norm_prange),
    Program(softmax_rows, lambda rng: (rng.random((20, 8)),), _softmax_rows),
    Program(
        pairwise_distance_prange,
        lambda rng: (*_points(rng), np.zeros((64, 48))),
        _pairwise_distance_prange,
    ),
    Program(pairwise_distance_dpnp, _points, _pairwise_distance_dpnp, rtol=1e-7),
    Program(stencil_nest, lambda rng: (rng.random((40, 30)), np.zeros((40, 30))), _stencil_nest),
    Program(kmeans_step, _kmeans_inputs, _kmeans_step),
    Program(kmeans_inertia, _inertia_inputs, _kmeans_inertia, rtol=1e-9),
    Program(outlier_mean, lambda rng: (rng.normal(size=5000), 2.0), _outlier_mean, rtol=1e-9),
    Program(
        masked_updates,
        lambda rng: (rng.normal(size=(200, 3)), rng.normal(size=(200, 3)), 1.0),
        _masked_updates,
    ),
    Program(gpairs, _gpairs_inputs, _gpairs),
    Program(rambo, _rambo_inputs, _rambo),
    Program(knn, _knn_inputs, _knn),
    Program(private_array, _one_out, _private_array),
    Program(dpnp_allocations, lambda rng: (rng.random(100),), _dpnp_allocations),
    Program(slices, lambda rng: (rng.random(20),), _slices),
    Program(calls_between_offloaded_functions, _vectors, _calls),
    Program(inner_function, _one_out, _inner_function),
    Program(matmul, lambda rng: (rng.random((12, 7)), rng.random((7, 5))), _matmul),
]
