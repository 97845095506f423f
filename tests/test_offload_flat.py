"""Flat nests (offloading/flat.py): an element-wise nest of 2 or 3 levels over C-contiguous
arrays of its shape runs as one 1-D range of all its elements; nests whose arrays are strided,
of another shape, of lower rank, or whose indices are used as values run over their own
ranges. Either way the results are NumPy's."""

from __future__ import annotations

import dpnp
import numpy as np
import pytest
from conftest import CPU, launched
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import prange

import dpex_kernels as dk


@dk.offload
def affine(a, out):
    out[...] = a * 3 - 1


@dk.offload
def nest_2d(a, b, out):
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            out[i, j] = a[i, j] * b[i, j] + 1


@dk.offload
def nest_3d(a, out):
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            for k in prange(a.shape[2]):
                out[i, j, k] = -a[i, j, k]


@dk.offload
def inner_rows(a, out):
    for i in prange(a.shape[0] - 1):  # a sub-range: flat indices would be wrong
        for j in prange(a.shape[1]):
            out[i, j] = a[i + 1, j] - a[i, j]


@dk.offload
def part_of_the_rows(a, out):
    for i in prange(out.shape[0]):  # arrays of another shape than the nest's
        for j in prange(out.shape[1]):
            out[i, j] = a[i, j]


@dk.offload
def with_a_row(a, row, out):
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            out[i, j] = a[i, j] + row[j]


@dk.offload
def indices_as_values(out):
    for i in prange(out.shape[0]):
        for j in prange(out.shape[1]):
            out[i, j] = i * 10 + j


def test_contiguous_arrays_of_the_nest_s_shape_run_flat():
    a = np.arange(24.0).reshape(8, 3)
    out = dpnp.zeros((8, 3), device=CPU)
    affine(dpnp.asarray(a, device=CPU), out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), a * 3 - 1)
    assert launched(affine) == {"affine_flat"}


def test_a_strided_view_runs_over_the_nest_s_range():
    a = np.arange(48.0).reshape(8, 6)
    whole = dpnp.zeros((8, 6), device=CPU)
    nest_2d(dpnp.asarray(a, device=CPU)[:, ::2], dpnp.ones((8, 3), device=CPU), whole[:, ::2])
    expected = np.zeros((8, 6))
    expected[:, ::2] = a[:, ::2] + 1
    np.testing.assert_array_equal(dpnp.asnumpy(whole), expected)
    assert "nest_2d_flat" not in launched(nest_2d)


@pytest.mark.parametrize(
    ("function", "arguments", "expected", "flat"),
    [
        (nest_3d, [np.arange(60.0).reshape(3, 4, 5)], lambda a: -a, True),
        (inner_rows, [np.arange(12.0).reshape(4, 3) ** 2], None, False),
        (part_of_the_rows, [np.arange(24.0).reshape(6, 4)], None, False),
        (with_a_row, [np.arange(12.0).reshape(4, 3), np.arange(3.0)], lambda a, r: a + r, False),
    ],
    ids=["3-D", "sub-range", "other shape", "lower rank"],
)
def test_which_nests_run_flat(function, arguments, expected, flat):
    on_device = [dpnp.asarray(x, device=CPU) for x in arguments]
    if function is part_of_the_rows:
        out = dpnp.zeros((3, 4), device=CPU)
        want = arguments[0][:3]
    else:
        out = dpnp.zeros(arguments[0].shape, device=CPU)
        if expected is None:  # the sub-range: the last row stays zero
            want = np.zeros_like(arguments[0])
            want[:-1] = arguments[0][1:] - arguments[0][:-1]
        else:
            want = expected(*arguments)
    function(*on_device, out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), want)
    assert (f"{function.__name__}_flat" in launched(function)) == flat


def test_a_nest_using_its_indices_as_values_has_no_flat_kernel():
    out = dpnp.zeros((4, 3), dtype=np.int64, device=CPU)
    indices_as_values(out)
    i, j = np.indices((4, 3))
    np.testing.assert_array_equal(dpnp.asnumpy(out), i * 10 + j)
    assert not any("_flat_" in k.name for k in indices_as_values.inspect_kernels())


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 9), min_size=2, max_size=3).map(tuple),
    dtype=st.sampled_from([np.float64, np.float32, np.int32, np.int64, np.uint8]),
)
def test_flat_results_are_numpy_s(shape, dtype):
    a = np.random.default_rng(sum(shape)).integers(0, 40, shape).astype(dtype)
    out = dpnp.zeros(shape, dtype=dtype, device=CPU)
    affine(dpnp.asarray(a, device=CPU), out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), (a * 3 - 1).astype(dtype))
