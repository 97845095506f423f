"""Views returned from compiled code are views (API.md §9): a slice of an argument returned by an
offloaded or @njit function has NumPy's shape, strides and offset, and shares its memory.

The regression: `return a[1:5]` of an argument returned all of `a`.
"""

from __future__ import annotations

import dpnp
import numba
import numpy as np
import pytest
from conftest import CPU

import dpex_kernels as dk


def _views(a):
    return a[1:5], a[::3], a[::-2], a[7:3:-1], a[4:4]


def _views_2d(m):
    return m[1:3], m[:, 2], m.T, m[::2, ::-1], m[1, 1:], m[2:2, :]


offloaded = dk.offload(_views)
offloaded_2d = dk.offload(_views_2d)
compiled = numba.njit(_views)
compiled_2d = numba.njit(_views_2d)


@pytest.mark.parametrize("function", [offloaded, compiled], ids=["offload", "njit"])
def test_returned_slices_of_a_1d_argument_are_numpy_s_views(function):
    host = np.arange(10.0)
    results = function(dpnp.asarray(host, device=CPU))
    for got, expected in zip(results, _views(host), strict=True):
        assert isinstance(got, dpnp.ndarray)
        assert got.shape == expected.shape
        np.testing.assert_array_equal(dpnp.asnumpy(got), expected)


@pytest.mark.parametrize("function", [offloaded_2d, compiled_2d], ids=["offload", "njit"])
def test_returned_views_of_a_2d_argument_are_numpy_s_views(function):
    host = np.arange(20.0).reshape(4, 5)
    results = function(dpnp.asarray(host, device=CPU))
    for got, expected in zip(results, _views_2d(host), strict=True):
        assert got.shape == expected.shape
        assert got.strides == expected.strides
        np.testing.assert_array_equal(dpnp.asnumpy(got), expected)


def test_a_returned_view_shares_the_argument_s_memory():
    a = dpnp.zeros(10, device=CPU)
    view = offloaded(a)[0]
    view[...] = 7.0
    np.testing.assert_array_equal(dpnp.asnumpy(a), [0, 7, 7, 7, 7, 0, 0, 0, 0, 0])


def test_a_view_of_a_view_argument_keeps_its_offset():
    host = np.arange(12.0)
    view = dpnp.asarray(host, device=CPU)[2:]
    results = offloaded(view)
    for got, expected in zip(results, _views(host[2:]), strict=True):
        np.testing.assert_array_equal(dpnp.asnumpy(got), expected)


def test_a_whole_argument_returned_is_the_argument_itself():
    a = dpnp.arange(4.0, device=CPU)
    identity = numba.njit(lambda x: x)
    assert identity(a) is a
    usm = a.get_array()
    assert identity(usm) is usm
