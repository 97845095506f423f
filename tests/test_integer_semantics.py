"""Integer arithmetic in kernels wraps at the type's width as NumPy's does (API.md §3): signed
overflow is never undefined behaviour, in kernels, device functions and NumPy ufunc calls, with
either front end."""

from __future__ import annotations

import dpnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpex_kernels as dk

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@dk.func
def _scaled(v, k):
    return v * k - k


@dk.kernel
def _mixed(a, b, out):
    i = dk.get_global_id(0)
    v = a[i] + b[i]
    v = v * b[i]
    v -= a[i] * 3
    out[i] = _scaled(v, b[i])


def _model(a, b):
    with np.errstate(over="ignore"):
        v = a + b
        v = v * b
        v -= a * np.int64(3)
        return v * b - b


@pytest.fixture(params=["direct", "numba"])
def front_end(request, monkeypatch):
    monkeypatch.setenv("DPEX_KERNELS_FRONT_END", request.param)
    return request.param


@given(st.lists(st.tuples(INT64, INT64), min_size=1, max_size=16))
def test_int64_arithmetic_wraps_like_numpy(pairs):
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    out = dpnp.empty(len(pairs), dtype=np.int64)
    _mixed[len(pairs)](dpnp.asarray(a), dpnp.asarray(b), out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), _model(a, b))


def test_a_constant_overflow_is_not_folded_into_a_wrong_value(front_end):
    """The case the issue reported: folded with nsw flags, every work-item stored INT64_MAX."""

    def repeated(out):
        gid = dk.get_global_id(0)
        v = gid + 5
        for _ in range(2):
            v *= -2147483647
        out[gid] = v

    kernel = dk.kernel(repeated)
    out = dpnp.zeros(8, dtype=np.int64)
    kernel[8](out)
    with np.errstate(over="ignore"):
        expected = (np.arange(8, dtype=np.int64) + 5) * np.int64(-2147483647) ** 2
    np.testing.assert_array_equal(dpnp.asnumpy(out), expected)
    used = kernel.definitions[kernel.signatures[0]].artifacts.front_end
    assert used.startswith(front_end)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
@pytest.mark.parametrize("ufunc", [np.add, np.subtract, np.multiply])
def test_numpy_ufuncs_on_integer_scalars_wrap(dtype, ufunc):
    @dk.kernel
    def apply(a, b, out):
        i = dk.get_global_id(0)
        out[i] = ufunc(a[i], b[i])

    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, info.max, -1], dtype=dtype)
    b = np.array([info.max, info.min, 2, info.min], dtype=dtype)
    out = dpnp.empty(4, dtype=dtype)
    apply[4](dpnp.asarray(a), dpnp.asarray(b), out)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(dpnp.asnumpy(out), ufunc(a, b))


def test_no_signed_wrap_flags_reach_the_optimiser_from_user_arithmetic(front_end):
    def arithmetic(a, out):
        i = dk.get_global_id(0)
        out[i] = a[i] * 7 + a[i] - 3

    kernel = dk.kernel(arithmetic)
    a = dpnp.arange(4, dtype=np.int64)
    out = dpnp.empty(4, dtype=np.int64)
    kernel[4](a, out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.arange(4) * 8 - 3)
    linked = kernel.definitions[kernel.signatures[0]].artifacts.linked_ir
    user_lines = [
        line for line in linked.splitlines() if " 7" in line or ", -3" in line or ", 3" in line
    ]
    assert user_lines and not any(" nsw " in line for line in user_lines), user_lines
