"""Row loops (offloading/row_loops.py): on a CPU device a prange loop whose work-items each walk
a row of their own runs with sub-groups of one work-item; loops that read neighbours side by
side or call math functions in their inner loops stay vectorised across work-items. Either
way the results are NumPy's."""

from __future__ import annotations

import math

import dpnp
import numpy as np
import pytest
from conftest import CPU
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import prange

import dpex_kernels as dk


def row_sums(a, out):
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j] * a[i, j]
        out[i] = math.sqrt(s)  # math after the inner loop: once a work-item


def nearest(points, centres, out):
    for i in prange(points.shape[0]):
        best, best_d = 0, np.inf
        for c in range(centres.shape[0]):
            d = 0.0
            for k in range(points.shape[1]):
                t = points[i, k] - centres[c, k]
                d += t * t
            if d < best_d:
                best, best_d = c, d
        out[i] = best


def row_norms_in_loop(a, out):
    for i in prange(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = math.sqrt(a[i, j])  # math in the inner loop: vector math pays


def with_neighbours(a, v, out):
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j] * v[i]  # v[i]: neighbouring work-items read neighbours
        out[i] = s


def no_inner_loop(a, out):
    for i in prange(a.shape[0]):
        out[i] = a[i, 0] + a[i, 1]


def expected_nearest(points, centres):
    distances = ((points[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(distances, axis=1)


CASES = {
    # function, arguments from a random generator, NumPy's result, sub-group size
    "row sums": (
        row_sums,
        lambda rng: (rng.random((257, 9)), np.zeros(257)),
        lambda a, out: np.sqrt((a * a).sum(axis=1)),
        1,
    ),
    "nearest centre": (
        nearest,
        lambda rng: (rng.random((300, 4)), rng.random((7, 4)), np.zeros(300, np.int64)),
        lambda points, centres, out: expected_nearest(points, centres),
        1,
    ),
    "math in the row loop": (
        row_norms_in_loop,
        lambda rng: (rng.random((65, 33)), np.zeros((65, 33))),
        lambda a, out: np.sqrt(a),
        0,
    ),
    "neighbours read in the row loop": (
        with_neighbours,
        lambda rng: (rng.random((129, 5)), rng.random(129), np.zeros(129)),
        lambda a, v, out: a.sum(axis=1) * v,
        0,
    ),
    "no inner loop": (
        no_inner_loop,
        lambda rng: (rng.random((100, 2)), np.zeros(100)),
        lambda a, out: a[:, 0] + a[:, 1],
        0,
    ),
}


def compiled_sub_group_sizes(function) -> set[int]:
    return {k.attrs.compile_sub_group_size for k in function.inspect_kernels()}


@pytest.mark.parametrize("case", CASES)
def test_sub_group_size_follows_the_loop(case):
    python_function, make, numpy_result, sub_group_size = CASES[case]
    arguments = make(np.random.default_rng(5))
    function = dk.offload(python_function)
    on_device = [dpnp.asarray(a, device=CPU) for a in arguments]
    function(*on_device)
    assert compiled_sub_group_sizes(function) == {sub_group_size}
    np.testing.assert_allclose(dpnp.asnumpy(on_device[-1]), numpy_result(*arguments), rtol=1e-12)


SUMMED = dk.offload(row_sums)  # compiled once for each dtype


@settings(max_examples=15, deadline=None)
@given(
    rows=st.integers(1, 300),
    columns=st.integers(1, 20),
    dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64]),
)
def test_row_loops_match_numpy(rows, columns, dtype):
    a = (np.random.default_rng(rows * 31 + columns).random((rows, columns)) * 100).astype(dtype)
    out = dpnp.zeros(rows, dtype=np.float64, device=CPU)
    SUMMED(dpnp.asarray(a, device=CPU), out)
    assert compiled_sub_group_sizes(SUMMED) == {1}
    squares = (a.astype(np.float64) ** 2).sum(axis=1)
    np.testing.assert_allclose(dpnp.asnumpy(out), np.sqrt(squares), rtol=1e-6)
