"""Promoted loops (offloading/promotion.py): a `range` loop that is the whole body of a prange
loop, with independent iterations, is a level of the nest's range; loops whose iterations
depend on each other stay loops of each work-item; a call whose arrays overlap one the loop
writes, whose promoted level is short, or whose element-wise body cannot run flat, runs the
loop in order in each work-item. Results are those of the same function run as plain Python
on NumPy arrays."""

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
from dpex_kernels.offloading.ranges import PROMOTED_MIN


def pairwise(x1, x2, out):
    for i in prange(x1.shape[0]):
        for j in range(x2.shape[0]):
            d = 0.0
            for k in range(x1.shape[1]):
                t = x1[i, k] - x2[j, k]
                d += t * t
            out[i, j] = math.sqrt(d)


def shifted(a, out):
    for i in prange(a.shape[0]):
        for j in range(1, a.shape[1]):
            s = 0.0
            for _ in range(2):  # a loop of its own: a 2-D range where nothing overlaps
                s += a[i, j - 1]
            out[i, j] = s / 2 + 1


def scaled_row(a, x, out):
    for i in prange(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * x[j]


def running_sum(a, out):
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j]
            out[i, j] = s


def one_column(a, out):
    for i in prange(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, 0] = a[i, j]  # every iteration writes one element: the last one wins


def last_index(a, out):
    for i in prange(a.shape[0]):
        m = 0
        for j in range(a.shape[1]):
            m = j
        out[i, 0] = m


def then_more(a, out):
    for i in prange(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * 2
        out[i, 0] = -1  # after the loop: the prange body is not only the loop


def until_negative(a, out):
    for i in prange(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] > 30:
                break  # later iterations depend on this one
            out[i, j] = a[i, j]


def negative_start(a, start, out):
    for i in prange(a.shape[0]):
        for j in range(start, a.shape[1]):
            out[i, j] = a[i, j] + 1


def kinds(function) -> set[str]:
    return {k.kind for k in function.inspect_kernels()}


def launched(function) -> set[str]:
    return {
        k.name.split("_line")[0].rsplit("_", 1)[-1]
        for k in function.inspect_kernels()
        if k.kernel.definitions[k.signature].bindings
    }


def run(python_function, *arguments):
    """(the offloaded function, its last argument afterwards, the same for plain Python)."""
    function = dk.offload(python_function)
    on_device = [dpnp.asarray(a, device=CPU) if isinstance(a, np.ndarray) else a for a in arguments]
    function(*on_device)
    expected = [np.copy(a) if isinstance(a, np.ndarray) else a for a in arguments]
    python_function(*expected)
    return function, dpnp.asnumpy(on_device[-1]), expected[-1]


def test_independent_iterations_are_a_level_of_the_range():
    rng = np.random.default_rng(3)
    x1, x2 = rng.random((40, 3)), rng.random((PROMOTED_MIN + 9, 3))
    function, got, expected = run(pairwise, x1, x2, np.zeros((40, PROMOTED_MIN + 9)))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert kinds(function) == {"2-D prange nest"}
    assert launched(function) == {"loop"}


@pytest.mark.parametrize(
    "python_function",
    [running_sum, one_column, last_index, then_more, until_negative, negative_start],
)
def test_dependent_or_unprovable_loops_stay_loops(python_function):
    a = np.arange(60.0).reshape(4, 15)
    extra = (-3,) if python_function is negative_start else ()
    function, got, expected = run(python_function, a, *extra, np.zeros((4, 15)))
    np.testing.assert_array_equal(got, expected)
    assert kinds(function) == {"prange loop"}


def test_overlapping_arrays_run_the_loop_in_order():
    a = np.arange(4.0 * 40).reshape(4, 40)
    function = dk.offload(shifted)
    on_device = dpnp.asarray(a, device=CPU)
    function(on_device, on_device)  # each element is the one before it plus 1, as written
    expected = np.copy(a)
    shifted(expected, expected)
    np.testing.assert_array_equal(dpnp.asnumpy(on_device), expected)
    assert "sequential" in launched(function)
    separate = dpnp.zeros((4, 40), device=CPU)
    function(dpnp.asarray(a, device=CPU), separate)
    expected = np.zeros((4, 40))
    shifted(a, expected)
    np.testing.assert_array_equal(dpnp.asnumpy(separate), expected)
    assert "loop" in launched(function)


def test_a_short_promoted_level_runs_in_order():
    rng = np.random.default_rng(5)
    x1, x2 = rng.random((50, 3)), rng.random((PROMOTED_MIN - 1, 3))
    function, got, expected = run(pairwise, x1, x2, np.zeros((50, PROMOTED_MIN - 1)))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert launched(function) == {"sequential"}


PAIRWISE = dk.offload(pairwise)


@settings(max_examples=20, deadline=None)
@given(
    rows=st.integers(1, 40),
    columns=st.integers(1, 60),
    features=st.integers(1, 5),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_promoted_results_are_python_s(rows, columns, features, dtype):
    rng = np.random.default_rng(rows * 100 + columns)
    x1 = rng.random((rows, features)).astype(dtype)
    x2 = rng.random((columns, features)).astype(dtype)
    out = dpnp.zeros((rows, columns), dtype=dtype, device=CPU)
    PAIRWISE(dpnp.asarray(x1, device=CPU), dpnp.asarray(x2, device=CPU), out)
    expected = np.sqrt(((x1[:, None, :] - x2[None, :, :]) ** 2).sum(axis=-1))
    np.testing.assert_allclose(dpnp.asnumpy(out), expected, rtol=1e-5)


def test_an_element_wise_row_that_cannot_run_flat_runs_in_order():
    a, x = np.arange(4.0 * 40).reshape(4, 40), np.arange(40.0)
    function, got, expected = run(scaled_row, a, x, np.zeros((4, 40)))
    np.testing.assert_array_equal(got, expected)
    assert launched(function) == {"sequential"}  # rows written element-wise: row loops
