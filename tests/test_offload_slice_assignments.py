"""Assignments into part of an array's dimensions (offloading/slice_assignments.py): `c[:] = e`,
`c[...] = e`, `c[1:] = e` and `c[0] = row` of arrays of two and three dimensions are kernels
storing into `c` (no copy on the host, no kernel for strided views besides the nest's and its
flat one), with NumPy's results, into strided views too."""

from __future__ import annotations

import dpnp
import numpy as np
import pytest
from conftest import CPU, launched
from hypothesis import given, settings
from hypothesis import strategies as st

import dpex_kernels as dk


def copy_all(a, c):
    c[:] = a


def copy_ellipsis(a, c):
    c[...] = a


def copy_tail(a, c):
    c[1:] = a[1:]


def copy_first(a, c):
    c[0] = a[1]


def scale_all(a, c):
    c[:] = a * 2 + 1


def scale_ellipsis(a, c):
    c[...] = a * 2 + 1


def scale_tail(a, c):
    c[1:] = a[:-1] * 2 + 1


def scale_plane(a, c):
    c[1:, :-1] = a[:-1, 1:] - a[1:, :-1]


COPIES = [copy_all, copy_ellipsis, copy_tail, copy_first]
EXPRESSIONS = [scale_all, scale_ellipsis, scale_tail, scale_plane]


def run(function, a: np.ndarray) -> tuple:
    """(the offloaded function, `c` after it ran on device copies, `c` after NumPy ran it)."""
    offloaded = dk.offload(function)
    c = dpnp.zeros(a.shape, dtype=a.dtype, device=CPU)
    offloaded(dpnp.asarray(a, device=CPU), c)
    expected = np.zeros_like(a)
    function(a, expected)
    return offloaded, dpnp.asnumpy(c), expected


@pytest.mark.parametrize("function", COPIES + EXPRESSIONS[:3])
@pytest.mark.parametrize("ndim", [2, 3])
def test_an_assignment_into_part_of_the_dimensions_is_a_kernel(function, ndim):
    a = np.arange(4**ndim, dtype=np.float64).reshape((4,) * ndim)
    offloaded, got, expected = run(function, a)
    np.testing.assert_array_equal(got, expected)
    names = [k.name.split("_line")[0] for k in offloaded.inspect_kernels()]
    assert names.count(f"{function.__name__}_loop") == 1  # the kernel of the nest
    assert f"{function.__name__}_broadcast" not in names  # no second one for strided views


@pytest.mark.parametrize("function", COPIES + EXPRESSIONS)
def test_strided_views_are_stored_into_as_numpy_does(function):
    a = np.arange(60.0).reshape(6, 10)
    whole = dpnp.zeros((6, 20), device=CPU)
    dk.offload(function)(dpnp.asarray(a, device=CPU), whole[:, ::2])
    expected = np.zeros((6, 20))
    function(a, expected[:, ::2])
    np.testing.assert_array_equal(dpnp.asnumpy(whole), expected)


@settings(max_examples=20, deadline=None)
@given(
    function=st.sampled_from(COPIES + EXPRESSIONS),
    shape=st.lists(st.integers(2, 7), min_size=2, max_size=3).map(tuple),
    dtype=st.sampled_from([np.float64, np.float32, np.int32, np.int64]),
)
def test_results_are_numpy_s(function, shape, dtype):
    a = np.random.default_rng(sum(shape)).integers(-50, 50, shape).astype(dtype)
    _, got, expected = run(function, a)
    np.testing.assert_array_equal(got, expected)


def broadcast_all(a, c):
    c[:] = a[0]


def broadcast_sliced(a, c):
    c[:, :] = a[-1]


def broadcast_tail(a, c):
    c[1:] = a[0] * 2 + 1


def broadcast_add(a, c):
    c[...] = a
    c += a[0]


BROADCASTS = [broadcast_all, broadcast_sliced, broadcast_tail, broadcast_add]


@pytest.mark.parametrize("function", BROADCASTS)
@pytest.mark.parametrize("ndim", [2, 3])
def test_an_assignment_that_broadcasts_is_a_kernel(function, ndim):
    a = np.arange(4**ndim, dtype=np.float64).reshape((4,) * ndim)
    offloaded, got, expected = run(function, a)
    np.testing.assert_array_equal(got, expected)
    # rows of a value that repeats are looped in each work-item: no copy on the host
    assert f"{function.__name__}_sequential" in launched(offloaded)


@settings(max_examples=20, deadline=None)
@given(
    shape=st.lists(st.integers(1, 6), min_size=2, max_size=3).map(tuple),
    dropped=st.integers(1, 2),
    ones=st.lists(st.booleans(), min_size=2, max_size=2),
    dtype=st.sampled_from(["float64", "float32", "int32"]),
)
def test_values_of_lower_rank_broadcast_as_numpy_broadcasts_them(shape, dropped, ones, dtype):
    value_shape = tuple(
        1 if one else side for side, one in zip(shape[min(dropped, len(shape) - 1) :], ones)
    )
    value = np.arange(1, 1 + int(np.prod(value_shape)), dtype=dtype).reshape(value_shape)
    c = dpnp.zeros(shape, dtype=dtype, device=CPU)
    dk.offload(broadcast_into)(dpnp.asarray(value, device=CPU), c)
    expected = np.zeros(shape, dtype=dtype)
    broadcast_into(value, expected)
    np.testing.assert_array_equal(dpnp.asnumpy(c), expected)


def broadcast_into(value, c):
    c[...] = value
    c += value


def test_a_value_that_does_not_broadcast_is_numpy_s_error():
    with pytest.raises(ValueError, match="cannot be broadcast"):
        dk.offload(broadcast_into)(dpnp.ones(2, device=CPU), dpnp.zeros((4, 3), device=CPU))
    with pytest.raises(ValueError, match="could not broadcast"):
        dk.offload(broadcast_into)(dpnp.ones(3, device=CPU), dpnp.zeros((4, 1), device=CPU))


def test_a_shape_mismatch_is_numpy_s_error():
    def mismatch(a, c):
        c[1:] = a

    with pytest.raises(ValueError):
        np.zeros((4, 3))[1:] = np.zeros((4, 3))
    with pytest.raises(ValueError):
        dk.offload(mismatch)(dpnp.zeros((4, 3), device=CPU), dpnp.zeros((4, 3), device=CPU))
