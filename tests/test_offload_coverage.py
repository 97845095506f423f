"""@dk.offload covers what numba.njit(parallel=True) parallelises (issue 40, API.md §9): dpnp's
names on scalars in loops, dpnp's allocation API, usm_type following the inputs, masks, axis
reductions, calls between offloaded functions and functions without source. Every result is
checked against NumPy computed on host copies."""

from __future__ import annotations

import dpctl
import dpnp
import numpy as np
import pytest
from conftest import CPU
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes
from numba import prange

import dpex_kernels as dk

RNG = np.random.default_rng(40)


def usm(values, **placement):
    return dpnp.asarray(values, device=CPU, **placement)


def host(array):
    return dpnp.asnumpy(array)


# --- dpnp's names on scalars inside loops -----------------------------------------------------

#: dpnp name -> NumPy's, called on one element of a positive array in a prange body.
SCALAR_NAMES = ["sqrt", "exp", "log", "sin", "cos", "tanh", "abs", "floor", "log1p", "square"]


def _scalar_loop(name: str):
    function = getattr(dpnp, name)

    @dk.offload
    def loop(a, out):
        for i in prange(a.shape[0]):
            out[i] = function(a[i]) + 1.0

    return loop


@pytest.mark.parametrize("name", SCALAR_NAMES)
def test_dpnp_functions_on_scalars_in_a_prange_body_equal_numpy(name):
    a = RNG.random(300) + 0.1
    out = usm(np.zeros(300))
    _scalar_loop(name)(usm(a), out)
    np.testing.assert_allclose(host(out), getattr(np, name)(a) + 1.0, rtol=1e-12)


@dk.offload
def dpnp_elementwise(a, b):
    return dpnp.add(a, b), dpnp.multiply(a, 2.0), dpnp.negative(a), dpnp.maximum(a, b)


def test_dpnp_elementwise_functions_on_arrays_are_kernels_equal_numpy():
    a, b = RNG.random((5, 8)), RNG.random((5, 8))
    got = dpnp_elementwise(usm(a), usm(b))
    expected = (a + b, a * 2.0, -a, np.maximum(a, b))
    for value, want in zip(got, expected):
        assert isinstance(value, dpnp.ndarray) and value.sycl_device.filter_string == CPU
        np.testing.assert_allclose(host(value), want)


# --- dpnp's allocation API inside -------------------------------------------------------------


@dk.offload
def likes(a):
    return dpnp.empty_like(a), dpnp.zeros_like(a), dpnp.ones_like(a), dpnp.full_like(a, 3)


@pytest.mark.parametrize("usm_type", ["device", "shared", "host"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_like_allocations_follow_their_array(usm_type, dtype):
    a = usm(np.arange(12, dtype=dtype).reshape(3, 4), usm_type=usm_type)
    empty, zeros, ones, full = likes(a)
    for array, fill in ((empty, None), (zeros, 0), (ones, 1), (full, 3)):
        assert array.shape == (3, 4) and array.dtype == np.dtype(dtype)
        assert array.usm_type == usm_type and array.sycl_queue == a.sycl_queue
        if fill is not None:
            np.testing.assert_array_equal(host(array), np.full((3, 4), fill, dtype))


@dk.offload
def on_queue(a, q):
    b = dpnp.empty(a.shape[0], dtype=a.dtype, sycl_queue=q)
    for i in prange(a.shape[0]):
        b[i] = a[i] * 2
    return b


def test_a_sycl_queue_argument_places_allocations():
    queue = dpctl.SyclQueue(CPU)
    a = RNG.random(50)
    b = on_queue(dpnp.asarray(a, sycl_queue=queue), queue)
    assert b.sycl_queue == queue
    np.testing.assert_allclose(host(b), a * 2)


@dk.offload
def host_usm(a):
    return dpnp.zeros(a.shape, usm_type="host"), dpnp.ones(3, usm_type="shared")


def test_usm_type_keyword_of_an_allocation():
    zeros, ones = host_usm(usm(np.ones(4)))
    assert zeros.usm_type == "host" and ones.usm_type == "shared"
    np.testing.assert_array_equal(host(zeros), np.zeros(4))
    np.testing.assert_array_equal(host(ones), np.ones(3))


@dk.offload
def added(a, b):
    return a + b


@pytest.mark.parametrize(
    ("first", "second", "result"),
    [
        ("shared", "shared", "shared"),
        ("host", "host", "host"),
        ("shared", "host", "shared"),
        ("device", "host", "device"),
    ],
)
def test_an_expression_s_result_has_its_inputs_usm_type_by_dpnp_s_rules(first, second, result):
    a, b = RNG.random(10), RNG.random(10)
    got = added(usm(a, usm_type=first), usm(b, usm_type=second))
    assert (
        got.usm_type
        == result
        == (dpnp.asarray(a, usm_type=first) + usm(b, usm_type=second)).usm_type
    )
    np.testing.assert_allclose(host(got), a + b)


# --- comparisons and masks ------------------------------------------------------------------


@dk.offload
def comparisons(a, b):
    below = a < b
    both = (a > 0.25) & (b < 0.75)
    either = (a == b) | ~(a != a)
    a[a > 0.9] = 0.0
    return below, both, either


def test_comparisons_and_masks_are_kernels_equal_numpy():
    a, b = RNG.random(200), RNG.random(200)
    a_usm = usm(a)
    below, both, either = comparisons(a_usm, usm(b))
    for value in (below, both, either):
        assert isinstance(value, dpnp.ndarray) and value.dtype == np.bool_
    np.testing.assert_array_equal(host(below), a < b)
    np.testing.assert_array_equal(host(both), (a > 0.25) & (b < 0.75))
    np.testing.assert_array_equal(host(either), np.ones(200, bool))
    np.testing.assert_array_equal(host(a_usm), np.where(a > 0.9, 0.0, a))


# --- reductions with axis= ------------------------------------------------------------------


@dk.offload
def along_axes(x):
    return x.sum(axis=0), x.max(axis=1), dpnp.min(x, axis=0), x.mean()


@settings(max_examples=15, deadline=None)
@given(
    shape=array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=9),
    dtype=st.sampled_from(["float32", "float64", "int64"]),
)
def test_axis_reductions_equal_numpy(shape, dtype):
    x = (RNG.random(shape) * 100).astype(dtype)
    sums, maxima, minima, mean = along_axes(usm(x))
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(host(sums), x.sum(axis=0), rtol=rtol)
    np.testing.assert_array_equal(host(maxima), x.max(axis=1))
    np.testing.assert_array_equal(host(minima), x.min(axis=0))
    np.testing.assert_allclose(mean, x.mean(), rtol=rtol)


# --- expressions and whole-array reductions over shapes and dtypes ----------------------------


@dk.offload
def expression_and_sum(a, b):
    c = a * b - a / (b + 10)
    return c, c.sum(), dpnp.max(a - b)


@settings(max_examples=20, deadline=None)
@given(
    shape=array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=12),
    dtype=st.sampled_from(["float32", "float64", "int32", "int64"]),
)
def test_expressions_and_reductions_over_shapes_and_dtypes_equal_numpy(shape, dtype):
    a = RNG.integers(0, 20, size=shape).astype(dtype)
    b = RNG.integers(0, 20, size=shape).astype(dtype)
    c, total, biggest = expression_and_sum(usm(a), usm(b))
    want = a * b - a / (b + 10)
    assert c.dtype == want.dtype and c.shape == want.shape
    rtol = 1e-5 if want.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(host(c), want, rtol=rtol)
    np.testing.assert_allclose(total, want.sum(), rtol=rtol * 10)
    assert biggest == (a - b).max()


# --- calls between offloaded functions; functions without source ------------------------------


@dk.offload
def doubled(a):
    return a * 2


@dk.offload
def calls_another(a, out):
    d = doubled(a)
    for i in prange(a.shape[0]):
        out[i] = d[i] + 1


def test_an_offloaded_function_calls_another():
    a = RNG.random(40)
    out = usm(np.zeros(40))
    calls_another(usm(a), out)
    np.testing.assert_allclose(host(out), a * 2 + 1)


NO_SOURCE = """
def no_source(a, out):
    total = 0.0
    for i in prange(a.shape[0]):
        out[i] = a[i] * a[i]
        total += a[i]
    return total
"""


def test_a_function_without_source_offloads():
    namespace = {"prange": prange}
    exec(NO_SOURCE, namespace)  # noqa: S102 (no source file: Numba compiles the bytecode)
    function = dk.offload(namespace["no_source"])
    a = RNG.random(100)
    out = usm(np.zeros(100))
    assert function(usm(a), out) == pytest.approx(a.sum(), rel=1e-12)
    np.testing.assert_allclose(host(out), a * a)
    assert {k.kind for k in function.inspect_kernels()} == {"prange loop"}  # on the device


def test_a_typing_error_without_source_stays_numba_s_error():
    """No source to find the loop in: Numba's own TypingError, not a silent host run."""
    namespace = {"prange": prange}
    exec(  # noqa: S102
        "def bad(a):\n    for i in prange(a.shape[0]):\n        a[i] = undefined_name(a[i])\n",
        namespace,
    )
    from numba.core.errors import TypingError

    with pytest.raises(TypingError, match="undefined_name"):
        dk.offload(namespace["bad"])(usm(np.ones(3)))


@dk.offload
def two_reduction_nests(x):
    n, m = x.shape
    total = 0.0
    for i in prange(n):
        for j in prange(m):
            total += x[i, j]
    squares = 0.0
    for i in prange(n):
        for j in prange(m):
            squares += x[i, j] * x[i, j]
    return total, squares


def test_two_reduction_nests_over_the_same_bounds_equal_numpy():
    """The second nest's bounds are lowered on the host after the first nest's kernels were
    compiled (a regression: the bound check's implementation belonged to the device)."""
    x = RNG.random((13, 7))
    total, squares = two_reduction_nests(usm(x))
    assert total == pytest.approx(x.sum(), rel=1e-12)
    assert squares == pytest.approx((x * x).sum(), rel=1e-12)


@dk.offload
def float_bound(a):
    for i in prange(a.shape[0] / 2):
        a[i] = 0.0


def test_a_float_prange_bound_is_a_compile_error_saying_integers():
    with pytest.raises(dk.KernelCompileError, match="prange\\(\\) takes integers"):
        float_bound(usm(np.ones(4)))


@dk.offload
def computed_into_planes(c1, f1, output):
    s = dpnp.sqrt(1.0 - dpnp.square(c1))  # made in compiled code: no Python object behind it
    output[:, :, 0] = s * dpnp.sin(f1)
    output[:, :, 1] = s * c1


def test_expressions_of_arrays_made_inside_allocate_their_results():
    """Expressions of arrays the function made, stored into planes of an argument (the rambo
    program of offload_programs.py is the regression test of their allocations' placement)."""
    c1, f1 = RNG.random((6, 5)), RNG.random((6, 5))
    output = usm(np.zeros((6, 5, 2)))
    computed_into_planes(usm(c1), usm(f1), output)
    s = np.sqrt(1.0 - c1 * c1)
    np.testing.assert_allclose(host(output), np.stack([s * np.sin(f1), s * c1], axis=-1))
