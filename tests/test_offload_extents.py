"""Small extents as constants (offloading/extents.py): an offloaded function whose inner loops
run over (or count from) an argument's extent of at most SMALL elements compiles once per such
extent, with the extent a constant, and once for larger ones; every call's result is NumPy's."""

from __future__ import annotations

import dpnp
import numpy as np
import test_offload
from conftest import CPU
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import prange

import dpex_kernels as dk
from dpex_kernels.offloading.extents import SMALL, inner_loop_extents

row_sums = test_offload.row_sums.py_func  # a row's sum in an inner loop over a.shape[1]


def nearest(points, centres, labels):
    for i in prange(points.shape[0]):
        best, best_d = 0, np.inf
        for c in range(len(centres)):
            d = 0.0
            for k in range(points.shape[-1]):
                t = points[i, k] - centres[c, k]
                d += t * t
            if d < best_d:
                best, best_d = c, d
        labels[i] = best


def narrowed(a, out):
    a = a[:, :2]  # the parameter reassigned: its extents are no longer the argument's
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j]
        out[i] = s


def cumulative_counts(x, edges, counts):
    """counts[i, k]: how many of row i's values are at most edges[k] (edges ascending)."""
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            k = edges.shape[0] - 1  # a while loop counts down from an extent
            while x[i, j] <= edges[k]:
                counts[i, k] += 1
                k -= 1
                if k < 0:
                    break


def data_bound(x, out):
    for i in prange(x.shape[0]):
        k = 0
        while x[i, k] > 0 and k < 3:  # the trip count depends on data, and on a constant
            k += 1
        out[i] = k


def host_loop(a):
    total = 0.0
    for j in range(a.shape[0]):  # a loop of host code, not inside another loop
        total += a[j]
    return total


def on_device(*arrays):
    return [dpnp.asarray(a, device=CPU) for a in arrays]


def loop_kernels(function) -> list:
    return [k for k in function.inspect_kernels() if "_loop_" in k.name]


def test_the_extents_of_inner_loops_are_found():
    assert inner_loop_extents(row_sums) == ((0, 1),)
    assert inner_loop_extents(nearest) == ((0, -1), (1, 0))  # len(centres) is its axis 0
    assert inner_loop_extents(narrowed) == ()
    assert inner_loop_extents(host_loop) == ()
    assert inner_loop_extents(cumulative_counts) == ((0, 1), (1, 0))
    assert inner_loop_extents(data_bound) == ()  # x.shape[0] bounds the prange loop only


def test_each_small_extent_compiles_once_and_large_ones_share_a_compile():
    function = dk.offload(row_sums)
    rng = np.random.default_rng(0)
    for columns in (4, 4, 7, SMALL + 1, SMALL + 9, 4):
        a = rng.random((50, columns))
        x, out = on_device(a, np.zeros(50))
        function(x, out)
        np.testing.assert_allclose(dpnp.asnumpy(out), a.sum(axis=1), rtol=1e-12)
    assert len(loop_kernels(function)) == 3  # 4, 7 and one for the larger extents


def test_a_compile_for_an_extent_computes_with_it_as_a_constant():
    """The constant is in the compiled code: a compile for 4 columns sums 4 of 6 columns."""
    function = dk.offload(row_sums)
    a = np.arange(12.0).reshape(2, 6)
    x, out = on_device(a, np.zeros(2))
    function._specialise((((0, 1), 4),))(x, out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), a[:, :4].sum(axis=1))


def test_nested_small_extents_equal_numpy():
    function = dk.offload(nearest)
    rng = np.random.default_rng(1)
    points, centres = rng.random((300, 3)), rng.random((5, 3))
    p, c, labels = on_device(points, centres, np.zeros(300, np.int64))
    function(p, c, labels)
    distances = ((points[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(dpnp.asnumpy(labels), distances.argmin(axis=1))


def test_a_loop_counting_down_from_a_small_extent_equals_numpy():
    """The extent compiled as a constant starts the count; a larger one shares a compile."""
    function = dk.offload(cumulative_counts)
    rng = np.random.default_rng(4)
    x = rng.random((60, 33))
    for bins in (5, 16, SMALL + 4):
        edges = np.sort(rng.random(bins))
        d_x, d_edges, counts = on_device(x, edges, np.zeros((60, bins), np.int64))
        function(d_x, d_edges, counts)
        expected = (x[:, :, None] <= edges[None, None, :]).sum(axis=1)
        np.testing.assert_array_equal(dpnp.asnumpy(counts), expected)
    assert len(loop_kernels(function)) == 3


def test_a_reassigned_parameter_keeps_its_own_extent():
    function = dk.offload(narrowed)
    a = np.random.default_rng(2).random((40, 5))
    x, out = on_device(a, np.zeros(40))
    function(x, out)
    np.testing.assert_allclose(dpnp.asnumpy(out), a[:, :2].sum(axis=1), rtol=1e-12)
    assert len(loop_kernels(function)) == 1


def test_declared_signatures_compile_nothing_more():
    a_type = dk.usm_array(dk.float64, 2, "C", "device", CPU)
    out_type = dk.usm_array(dk.float64, 1, "C", "device", CPU)
    function = dk.offload(dk.void(a_type, out_type))(row_sums)
    a = np.random.default_rng(3).random((30, 3))
    x, out = on_device(a, np.zeros(30))
    function(x, out)
    np.testing.assert_allclose(dpnp.asnumpy(out), a.sum(axis=1), rtol=1e-12)
    assert len(loop_kernels(function)) == 1


_ROW_SUMS = dk.offload(row_sums)


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(1, 70),
    columns=st.integers(0, SMALL + 4),
    dtype=st.sampled_from([np.float64, np.float32, np.int64, np.int32]),
)
def test_one_function_called_with_changing_extents_equals_numpy(rows, columns, dtype):
    """One dispatcher across calls: no call runs a compile made for another extent."""
    a = np.random.default_rng(rows * 31 + columns).integers(-50, 50, (rows, columns)).astype(dtype)
    x, out = on_device(a, np.zeros(rows))
    _ROW_SUMS(x, out)
    np.testing.assert_allclose(dpnp.asnumpy(out), a.sum(axis=1, dtype=np.float64), rtol=1e-6)
