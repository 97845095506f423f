"""Stores whose right-hand side reads the array they store into (offloading/aliasing.py): the
old values are read, as NumPy reads all of a right-hand side before it stores."""

from __future__ import annotations

import dpnp
import numpy as np
import pytest
from conftest import CPU, launched
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import prange

import dpex_kernels as dk


def shift(c):
    c[1:] = c[:-1] + 1


def accumulate_shifted(c):
    c[1:] += c[:-1]


def add_first_row(c):
    c += c[0]


def smooth(u):
    u[1:-1] = (u[:-2] + u[2:]) / 2


def reverse(c):
    c[:] = c[::-1]


def first_row_everywhere(c):
    c[1:] = c[0] * 2


ALIASED = [shift, accumulate_shifted, add_first_row, smooth, reverse, first_row_everywhere]


def run(function, a: np.ndarray) -> tuple:
    """(the offloaded function, `a` after it ran on a device copy, `a` after NumPy ran it)."""
    offloaded = dk.offload(function)
    c = dpnp.asarray(a, device=CPU)
    offloaded(c)
    expected = a.copy()
    function(expected)
    return offloaded, dpnp.asnumpy(c), expected


@pytest.mark.parametrize(
    ("function", "shape"),
    [(f, (4096,)) for f in ALIASED if f is not add_first_row] + [(f, (300, 17)) for f in ALIASED],
)
def test_a_right_hand_side_reads_the_old_values(function, shape):
    a = np.random.default_rng(len(shape)).random(shape)
    _, got, expected = run(function, a)
    np.testing.assert_allclose(got, expected)


def double(c):
    c[:] = c * 2
    c += c


def test_the_stored_array_itself_is_read_where_it_is_stored_without_a_copy():
    a = np.arange(24.0).reshape(4, 6)
    offloaded, got, expected = run(double, a)
    np.testing.assert_array_equal(got, expected)
    kinds = {k.kind for k in offloaded.inspect_kernels()}
    assert not any("copy" in kind for kind in kinds), kinds


def test_a_view_it_reads_is_copied_by_a_kernel():
    offloaded, got, expected = run(shift, np.arange(64.0))
    np.testing.assert_array_equal(got, expected)
    assert any("copy" in k.kind for k in offloaded.inspect_kernels())


def shifted_by(c, k):
    c[k:] = c[:-k] * 3 - c[k:]


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(2, 200),
    k=st.integers(1, 5),
    dtype=st.sampled_from(["float64", "float32", "int64", "int32"]),
)
def test_shifted_stores_are_numpy_s(n, k, dtype):
    k = min(k, n - 1)
    a = (np.arange(n) % 7 - 3).astype(dtype)
    offloaded = dk.offload(shifted_by)
    c = dpnp.asarray(a, device=CPU)
    offloaded(c, k)
    expected = a.copy()
    shifted_by(expected, k)
    np.testing.assert_array_equal(dpnp.asnumpy(c), expected)


def elements_and_rows(c, rows):
    c[0, 0] = c[1, 1]
    rows[1:] = rows[:-1]
    for i in prange(c.shape[0] - 1):
        c[i + 1, 0] = c[i, 1] * 2  # each work-item's own elements: no copy in a kernel


def test_elements_and_prange_bodies_are_stored_as_written():
    c, rows = np.arange(24.0).reshape(6, 4), np.arange(12.0).reshape(4, 3)
    offloaded = dk.offload(elements_and_rows)
    got = [dpnp.asarray(c, device=CPU), dpnp.asarray(rows, device=CPU)]
    offloaded(*got)
    elements_and_rows(c, rows)
    for device, host in zip(got, (c, rows)):
        np.testing.assert_array_equal(dpnp.asnumpy(device), host)


def blend_rows(c, r0, r1, k):
    c[r0:r1] = c[r0 + k : r1 + k] * 2 + c[r0:r1]


def add_rows(c, r0, r1, k):
    c[r0:r1, 1:] += c[r0 + k : r1 + k, :-1]


@settings(max_examples=15, deadline=None)
@given(
    function=st.sampled_from([blend_rows, add_rows]),
    rows=st.integers(3, 300),
    columns=st.integers(2, 70),
    data=st.data(),
)
def test_overlapping_views_of_rows_are_stored_as_numpy_stores_them(function, rows, columns, data):
    k = data.draw(st.integers(-(rows - 1), rows - 1).filter(bool), label="k")
    r0 = data.draw(st.integers(max(0, -k), rows - 1 - max(0, k)), label="r0")
    r1 = data.draw(st.integers(r0 + 1, rows - max(0, k)), label="r1")
    a = np.arange(rows * columns, dtype=np.float64).reshape(rows, columns) % 11
    c = dpnp.asarray(a, device=CPU)
    dk.offload(function)(c, r0, r1, k)
    expected = a.copy()
    function(expected, r0, r1, k)
    np.testing.assert_array_equal(dpnp.asnumpy(c), expected)


def scale_in_place(c, k):
    c[1:] = c[1:] * 2
    c[k:] = c[k:] + 1
    c[1:-1, 2] = c[1:-1, 2] * 3 - c[1:-1, 2]


def test_the_view_stored_into_is_read_where_it_is_stored_without_a_copy():
    """The same array with an equal index of slices and integers: each element is read where
    it is written, so nothing is copied (a view with another index still is)."""
    a = np.arange(48.0).reshape(8, 6)
    offloaded = dk.offload(scale_in_place)
    c = dpnp.asarray(a, device=CPU)
    offloaded(c, 3)
    expected = a.copy()
    scale_in_place(expected, 3)
    np.testing.assert_array_equal(dpnp.asnumpy(c), expected)
    kinds = {k.kind for k in offloaded.inspect_kernels()}
    assert not any("copy" in kind for kind in kinds), kinds


def add_repeatedly(a, out, times):
    for i in prange(out.shape[0]):
        for _ in range(times):
            out[i] += a[i]


@pytest.mark.parametrize("size", [1000, 40])
def test_a_loop_storing_into_arrays_that_share_memory_runs_its_twin_without_noalias(size):
    """The nest's kernel is compiled `noalias` (ranges.py `_noalias`); where two arrays share
    memory, the launch takes its twin compiled without it, which reads `a[i]` again after each
    store, as Numba's loop does on the same array."""
    offloaded = dk.offload(add_repeatedly)
    x = np.random.default_rng(3).random(size)
    host = x.copy()
    add_repeatedly(host, host, 4)  # the same array: each store doubles the element
    same = dpnp.asarray(x, device=CPU)
    offloaded(same, same, 4)
    np.testing.assert_allclose(dpnp.asnumpy(same), host)
    assert launched(offloaded) == {"add_repeatedly_aliased"}
    a, out = dpnp.asarray(x, device=CPU), dpnp.zeros(size, device=CPU)
    offloaded(a, out, 4)  # apart: the kernel compiled noalias
    np.testing.assert_allclose(dpnp.asnumpy(out), x * 4)
    assert launched(offloaded) == {"add_repeatedly_aliased", "add_repeatedly_loop"}
    (loop,) = [k for k in offloaded.inspect_kernels() if k.name.startswith("add_repeatedly_loop")]
    assert loop.kernel.options.noalias


def test_halves_of_one_array_are_apart_and_views_that_overlap_are_not():
    offloaded = dk.offload(add_repeatedly)
    x = np.arange(64.0)
    c = dpnp.asarray(x, device=CPU)
    offloaded(c[:32], c[32:], 3)  # apart: no twin
    expected = x.copy()
    expected[32:] += 3 * x[:32]
    np.testing.assert_array_equal(dpnp.asnumpy(c), expected)
    assert launched(offloaded) == {"add_repeatedly_loop"}
    c = dpnp.asarray(x, device=CPU)
    offloaded(c[::2], c[::2], 3)  # one strided view twice: each element doubles three times
    expected = x.copy()
    expected[::2] *= 8
    np.testing.assert_array_equal(dpnp.asnumpy(c), expected)
    assert "add_repeatedly_aliased" in launched(offloaded)
