"""Stores through a mask of an element-wise expression of selections through that mask
(offloading/masked_updates.py): one expression over the whole arrays and one store through
the mask, equal to NumPy's select, compute and store."""

from __future__ import annotations

import math

import dpnp
import numpy as np
import pytest
from conftest import CPU
from hypothesis import given, settings
from hypothesis import strategies as st

import dpex_kernels as dk


def usm(values):
    return dpnp.asarray(values, device=CPU)


def doubled(a, x, m):
    a[m] *= 2


def added(a, x, m):
    a[m] += x[m]


def blended(a, x, m):
    a[m] = a[m] * x[m] + 1


def rooted(a, x, m):
    a[m] = np.sqrt(x[m]) - a[m]


def rooted_by_dpnp(a, x, m):
    a[m] = dpnp.sqrt(x[m]) + 3


def where_large(a, x, m):
    a[a > 50] -= x[a > 50]  # two masks of equal values: not one mask, not fused


UPDATES = [doubled, added, blended, rooted, rooted_by_dpnp]
OFFLOADED = {f: dk.offload(f) for f in [*UPDATES, where_large]}
#: (the arrays' shape, the mask's shape): masks of the array's shape are fused; 1-D masks over
#: rows select rows, which are not.
MASKINGS = [((50,), (50,)), ((6, 7), (6, 7)), ((3, 4, 5), (3, 4, 5)), ((9, 4), (9,))]


def numpy_update(function, a, x, m):
    """What NumPy computes (dpnp's names as NumPy's)."""
    if function is rooted_by_dpnp:
        a[m] = np.sqrt(x[m]) + 3
    else:
        function(a, x, m)


@settings(max_examples=20, deadline=None)
@given(
    function=st.sampled_from(UPDATES),
    masking=st.sampled_from(MASKINGS),
    share=st.sampled_from([0.0, 0.4, 1.0]),
    dtype=st.sampled_from(["float64", "float32", "int64"]),
)
def test_updates_through_a_mask_equal_numpy(function, masking, share, dtype):
    shape, mask_shape = masking
    if dtype == "int64" and function in (rooted, rooted_by_dpnp):
        return  # NumPy's cannot cast float64 to int64 under 'same_kind', ours truncates
    rng = np.random.default_rng(len(shape) + int(share * 10) + UPDATES.index(function))
    a, x = (rng.random((2, *shape)) * 100).astype(dtype)
    m = rng.random(mask_shape) < share
    device_a = usm(a)
    OFFLOADED[function](device_a, usm(x), usm(m))
    numpy_update(function, a, x, m)
    np.testing.assert_allclose(dpnp.asnumpy(device_a), a, rtol=1e-6)


@pytest.mark.parametrize("masking", MASKINGS)
def test_masks_of_the_arrays_shape_fuse_and_masks_over_rows_do_not(masking):
    """Fused: one expression kernel and one store, no selection and no place()."""
    shape, mask_shape = masking
    rng = np.random.default_rng(len(shape))
    a, x = rng.random((2, *shape))
    m = rng.random(mask_shape) < 0.5
    device_a = usm(a)
    offloaded = dk.offload(blended)
    offloaded(device_a, usm(x), usm(m))
    blended(a, x, m)
    np.testing.assert_allclose(dpnp.asnumpy(device_a), a, rtol=1e-12)
    kinds = {k.kind for k in offloaded.inspect_kernels()}
    fused = len(mask_shape) == len(shape)
    assert ("masked_store()" in kinds) is fused, kinds
    assert ("compress()" in kinds or "place()" in kinds) is not fused, kinds


def test_selections_through_two_masks_of_equal_values_are_numpy_s():
    a = np.linspace(0, 100, 40)
    x = np.linspace(5, 7, 40)
    device_a = usm(a)
    OFFLOADED[where_large](device_a, usm(x), usm(np.ones(40, bool)))
    where_large(a, x, None)
    np.testing.assert_array_equal(dpnp.asnumpy(device_a), a)


def reversed_update(a, m):
    b = a[::-1]
    a[m] = b[m] * 2


def test_a_selection_of_a_view_of_the_array_stored_into_reads_the_old_values():
    """`b[m]` of a reversed view of `a`: NumPy selects before it stores, and so does this."""
    a = np.arange(12.0)
    m = a % 3 == 0
    device_a = usm(a)
    dk.offload(reversed_update)(device_a, usm(m))
    reversed_update(a, m)
    np.testing.assert_array_equal(dpnp.asnumpy(device_a), a)


@pytest.mark.parametrize(("x_shape", "m_shape"), [((6, 5), (5, 6)), ((30,), (29,))])
def test_an_array_of_another_shape_than_the_mask_is_numpy_s_index_error(x_shape, m_shape):
    a = np.zeros(m_shape)
    x = np.ones(x_shape)
    m = np.ones(m_shape, bool)
    with pytest.raises(IndexError):
        blended(a.copy(), x, m)  # NumPy's
    with pytest.raises(IndexError, match="boolean index"):
        OFFLOADED[blended](usm(a), usm(x), usm(m))


def norms_where_positive(a, x, m):
    a[m] = math.pi * x[m] ** 2


def test_a_scalar_of_the_host_and_a_power_fuse_too():
    a, x = np.zeros((5, 8)), np.random.default_rng(2).random((5, 8)) - 0.5
    m = x > 0
    device_a = usm(a)
    offloaded = dk.offload(norms_where_positive)
    offloaded(device_a, usm(x), usm(m))
    norms_where_positive(a, x, m)
    np.testing.assert_allclose(dpnp.asnumpy(device_a), a, rtol=1e-12)
    assert "masked_store()" in {k.kind for k in offloaded.inspect_kernels()}
