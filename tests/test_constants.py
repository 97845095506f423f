"""Compile-time constants as the kernel API's arguments (issue 38, item 6): a module-level NumPy
integer (`_ZERO = np.int64(0)`, as sklearn-numba-dpex's KMeans kernels pass it), a global or
closure variable, an enum member, each taken exactly as the literal it holds, by both front
ends; an argument that is not a constant is an error saying what was not."""

from __future__ import annotations

import dpnp
import numpy as np
import pytest

import dpex_kernels as dk

_ZERO = np.int64(0)
_ONE = np.int32(1)
TWO = 2
FENCE = dk.LOCAL_MEM_FENCE
BOTH_FENCES = dk.LOCAL_MEM_FENCE | dk.GLOBAL_MEM_FENCE
ORDER = dk.MemoryOrder.ACQ_REL
SCOPE = dk.MemoryScope.WORK_GROUP
PLUS = dk.plus


def _front_ends():
    return pytest.mark.parametrize("front_end", ["direct", "numba"])


@dk.kernel
def index_with_literals(out):
    i, j, k = dk.get_global_id(0), dk.get_global_id(1), dk.get_global_id(2)
    out[i, j, k, 0] = dk.get_local_id(0) + 10 * dk.get_local_id(1) + 100 * dk.get_local_id(2)
    out[i, j, k, 1] = dk.get_group_id(0) + 10 * dk.get_group_id(1) + 100 * dk.get_group_id(2)
    out[i, j, k, 2] = dk.get_global_size(0) * dk.get_local_size(1) * dk.get_num_groups(2)
    dk.barrier(dk.LOCAL_MEM_FENCE)
    dk.barrier(dk.LOCAL_MEM_FENCE | dk.GLOBAL_MEM_FENCE)


@dk.kernel
def index_with_globals(out):
    i, j, k = dk.get_global_id(_ZERO), dk.get_global_id(_ONE), dk.get_global_id(TWO)
    out[i, j, k, 0] = (
        dk.get_local_id(_ZERO) + 10 * dk.get_local_id(_ONE) + 100 * dk.get_local_id(TWO)
    )
    out[i, j, k, 1] = (
        dk.get_group_id(_ZERO) + 10 * dk.get_group_id(_ONE) + 100 * dk.get_group_id(TWO)
    )
    out[i, j, k, 2] = dk.get_global_size(_ZERO) * dk.get_local_size(_ONE) * dk.get_num_groups(TWO)
    dk.barrier(FENCE)
    dk.barrier(BOTH_FENCES)


def _index_with_closure_variables(zero, one, two, fence):
    @dk.kernel
    def index_with_closures(out):
        i, j, k = dk.get_global_id(zero), dk.get_global_id(one), dk.get_global_id(two)
        out[i, j, k, 0] = (
            dk.get_local_id(zero) + 10 * dk.get_local_id(one) + 100 * dk.get_local_id(two)
        )
        out[i, j, k, 1] = (
            dk.get_group_id(zero) + 10 * dk.get_group_id(one) + 100 * dk.get_group_id(two)
        )
        out[i, j, k, 2] = dk.get_global_size(zero) * dk.get_local_size(one) * dk.get_num_groups(two)
        dk.barrier(fence)

    return index_with_closures


def _run_index(kernel) -> np.ndarray:
    out = dpnp.zeros((4, 6, 8, 3), dtype="i8")
    kernel[dk.NdRange((4, 6, 8), (2, 3, 4))](out).wait()
    return dpnp.asnumpy(out)


def _expected_index() -> np.ndarray:
    ids = np.indices((4, 6, 8))
    local, group = (
        ids % np.array([2, 3, 4])[:, None, None, None],
        ids // np.array([2, 3, 4])[:, None, None, None],
    )
    out = np.empty((4, 6, 8, 3), "i8")
    out[..., 0] = local[0] + 10 * local[1] + 100 * local[2]
    out[..., 1] = group[0] + 10 * group[1] + 100 * group[2]
    out[..., 2] = 4 * 3 * 2
    return out


@_front_ends()
@pytest.mark.parametrize("form", ["globals", "closure variables", "NumPy closure variables"])
def test_constants_are_taken_as_the_literals_they_hold(front_end, form, monkeypatch):
    monkeypatch.setenv("DPEX_KERNELS_FRONT_END", front_end)
    if form == "globals":
        kernel = dk.kernel(index_with_globals.py_func)
    elif form == "closure variables":
        kernel = _index_with_closure_variables(0, 1, 2, dk.LOCAL_MEM_FENCE)
    else:
        kernel = _index_with_closure_variables(np.int64(0), np.uint8(1), np.int16(2), FENCE)
    literal = dk.kernel(index_with_literals.py_func)
    np.testing.assert_array_equal(_run_index(kernel), _expected_index())
    np.testing.assert_array_equal(_run_index(literal), _expected_index())
    (compiled,) = kernel.definitions.values()
    if front_end == "direct":  # the direct front end compiled it, not Numba's as a fallback
        assert compiled.artifacts.front_end == "direct", compiled.artifacts.front_end


def test_a_kmeans_style_kernel_with_module_level_numpy_constants():
    """sklearn-numba-dpex's KMeans kernels index with `zero_idx = np.int64(0)` in dozens of
    calls; they compile as with a literal 0."""

    @dk.kernel
    def labels(points, centroids, out, n_clusters):
        sample = dk.get_global_id(_ZERO)
        local = dk.get_local_id(_ZERO)
        best, best_distance = _ZERO, np.inf
        for c in range(n_clusters):
            distance = (points[sample] - centroids[c]) ** 2
            if distance < best_distance:
                best, best_distance = c, distance
        out[sample] = best + local * _ZERO

    points = np.random.default_rng(0).random(64)
    centroids = np.array([0.1, 0.5, 0.9])
    out = dpnp.zeros(64, dtype="i8")
    launch = dk.NdRange(64, 16)
    labels[launch](dpnp.asarray(points), dpnp.asarray(centroids), out, 3).wait()
    expected = np.abs(points[:, None] - centroids[None, :]).argmin(axis=1)
    np.testing.assert_array_equal(dpnp.asnumpy(out), expected)


def test_item_methods_orders_scopes_and_operations_take_constants():
    order, scope, op, one = dk.MemoryOrder.SEQ_CST, dk.MemoryScope.DEVICE, dk.maximum, _ONE

    @dk.kernel
    def sycl_constants(it, a, out):
        i, j = it.get_global_id(_ZERO), it.get_global_id(one)
        g = it.get_group()
        x = a[i, j]
        out[0, i, j] = dk.reduce_over_group(g, x, PLUS)
        out[1, i, j] = dk.reduce_over_group(g, x, op)
        out[2, i, j] = g.get_local_range(_ZERO) * 10 + it.get_local_range(_ONE)
        dk.AtomicRef(out, (3, 0, 0), memory_order=ORDER, memory_scope=SCOPE).fetch_add(1)
        dk.AtomicRef(out, (3, 0, 1), memory_order=order, memory_scope=scope).fetch_add(x)
        dk.AtomicRef(out, (3, 0, 2)).store(1, memory_order=order)
        dk.atomic_fence(ORDER, scope)
        dk.group_barrier(g, SCOPE)

    host = np.random.default_rng(1).integers(0, 100, (4, 6))
    out = dpnp.zeros((4, 4, 6), dtype="i8")
    sycl_constants[dk.NdRange((4, 6), (2, 3))](dpnp.asarray(host), out).wait()
    result = dpnp.asnumpy(out)
    blocks = host.reshape(2, 2, 2, 3).transpose(0, 2, 1, 3).reshape(2, 2, 6)
    for bi, bj in np.ndindex(2, 2):
        block = result[:, bi * 2 : bi * 2 + 2, bj * 3 : bj * 3 + 3]
        assert (block[0] == blocks[bi, bj].sum()).all() and (block[1] == blocks[bi, bj].max()).all()
    assert (result[2] == 2 * 10 + 3).all()
    assert result[3, 0, :3].tolist() == [24, host.sum(), 1]


@pytest.mark.parametrize(
    ("source", "what"),
    [
        (
            "out[0] = dk.get_global_id(d)",
            r"dk.get_global_id\(d\): the dimension is a constant.*int64",
        ),
        ("out[0] = dk.get_local_size(d + 0)", r"dk.get_local_size\(d\): the dimension.*int64"),
        ("k = 0\n    if d > 0:\n        k = 1\n    out[0] = dk.get_group_id(k)", "get_group_id"),
        ("out[0] = it.get_global_id(d)", r"item.get_global_id\(d\): the dimension.*int64"),
        ("dk.barrier(d)", r"dk.barrier\(flags\): .* not a value computed at run time"),
        ("dk.AtomicRef(out, 0, memory_order=d).fetch_add(1)", "memory_order is a constant.*int64"),
        ("dk.atomic_fence(d, dk.MemoryScope.DEVICE)", "memory_order is a constant.*int64"),
        ("out[0] = dk.reduce_over_group(it.get_group(), 1, d)", "operation is a constant.*int64"),
    ],
)
def test_an_argument_that_is_not_a_constant_is_an_error_saying_what(source, what):
    namespace = {"dk": dk}
    text = f"def not_constant(it, out, d):\n    out[1] = it.get_global_id(0)\n    {source}\n"
    exec(compile(text, "<not_constant>", "exec"), namespace)  # noqa: S102
    kernel = dk.kernel(namespace["not_constant"])
    with pytest.raises(dk.KernelCompileError, match=what) as info:
        kernel[dk.NdRange(4, 4)](dpnp.zeros(2, dtype="i8"), 0)
    message = str(info.value)
    assert "'not_constant'" in message and "<not_constant>:" in message


def test_constants_reach_a_call_past_a_conditional_expression_among_its_arguments():
    """`f(x, a if c else b)` splits the statement into blocks: the callee, and the constants
    before the conditional, reach the call through copies (found by the kernel fuzzer)."""

    @dk.kernel
    def past_conditionals(it, a, out, n):
        i = it.get_global_id(0)
        g = it.get_group()
        out[0, i] = dk.reduce_over_group(g, a[i] if n > 0 else -a[i], dk.maximum)
        dk.AtomicRef(out, (1, 0), memory_order=ORDER).fetch_add(
            1 if n > 0 else 2, memory_order=dk.MemoryOrder.SEQ_CST
        )
        out[2, i] = dk.group_broadcast(g, a[i] if n > 0 else 0, 3) + it.get_local_id(_ZERO)

    host = np.random.default_rng(2).integers(-50, 50, 16)
    out = dpnp.zeros((3, 16), dtype="i8")
    past_conditionals[dk.NdRange(16, 8)](dpnp.asarray(host), out, 1).wait()
    result = dpnp.asnumpy(out)
    np.testing.assert_array_equal(result[0], np.repeat(host.reshape(2, 8).max(axis=1), 8))
    assert result[1, 0] == 16
    np.testing.assert_array_equal(result[2], np.repeat(host[[3, 11]], 8) + np.arange(16) % 8)
