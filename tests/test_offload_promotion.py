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


#: Statements a generated `j` loop body is made of: independent ones, and ones that carry a
#: value between iterations or read another column of an array the loop writes.
STATEMENTS = [
    "out[i, j] = a[i, j] * 2.0 + b[i, j]",
    "out[i, j] = a[i, j - 1] + 1.0",
    "out[i, j] = out[i, j - 1] + a[i, j]",
    "s = s + a[i, j]\n            out[i, j] = s",
    "t = a[i, j] * 3.0\n            out[i, j] = t - b[i, j]",
    "out[i, 0] = a[i, j]",
    "b[i, j] = out[i, j] + 1.0",
    "for k in range(2):\n                out[i, j] += a[i, k] * 0.5",
    "out[i, j] = math.sqrt(abs(a[i, j])) + out[i, j]",
]


def generated(statements: list[int], start: int, after: bool):
    """A function of `a, b, out` whose prange loop over rows holds a loop over columns made of
    `statements`, defined from source text (as functions without a file are)."""
    body = "\n            ".join(STATEMENTS[k] for k in statements)
    tail = "\n        out[i, 0] = -1.0" if after else ""
    source = (
        "def f(a, b, out):\n"
        "    for i in prange(a.shape[0]):\n"
        "        s = 0.0\n"
        f"        for j in range({start}, a.shape[1]):\n"
        f"            {body}"
        f"{tail}\n"
    )
    namespace = {"prange": prange, "math": math}
    exec(compile(source, "<generated>", "exec"), namespace)
    return namespace["f"]


@settings(max_examples=25, deadline=None)
@given(
    statements=st.lists(st.integers(0, len(STATEMENTS) - 1), min_size=1, max_size=3),
    start=st.sampled_from([0, 1]),
    after=st.booleans(),
    columns=st.sampled_from([5, PROMOTED_MIN + 4]),
    aliasing=st.sampled_from(["none", "out is a", "b is out"]),
)
def test_generated_loops_give_python_s_results(statements, start, after, columns, aliasing):
    """Promoted or not, on separate or shared arrays: the result of plain Python."""
    python_function = generated(statements, start, after)
    rng = np.random.default_rng(columns * 7 + start)
    values = [rng.random((3, columns)) for _ in range(3)]
    shared = {"none": (0, 1, 2), "out is a": (0, 1, 0), "b is out": (0, 2, 2)}[aliasing]
    on_device = [dpnp.asarray(v, device=CPU) for v in values]
    dk.offload(python_function)(*(on_device[k] for k in shared))
    expected = [np.copy(v) for v in values]
    python_function(*(expected[k] for k in shared))
    for got, want in zip(on_device, expected):
        np.testing.assert_allclose(dpnp.asnumpy(got), want, rtol=1e-12)
