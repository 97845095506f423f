"""SYCL 2020's group algorithms on the device (API.md §3), checked against NumPy.

Work-groups and sub-groups are laid out as the device lays them out: a work-group's work-items in
linear order (SYCL's last dimension fastest), its sub-groups the runs that
`item.get_sub_group()` reports (read back from the device, then modelled in NumPy).
"""

from __future__ import annotations

import re

import dpnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpex_kernels as dk
from dpex_kernels.compiler.backend import workarounds

#: dk operation name -> (NumPy ufunc, whether it takes integers only).
OPERATIONS = {
    "plus": (np.add, False),
    "multiplies": (np.multiply, False),
    "minimum": (np.minimum, False),
    "maximum": (np.maximum, False),
    "bit_and": (np.bitwise_and, True),
    "bit_or": (np.bitwise_or, True),
    "bit_xor": (np.bitwise_xor, True),
}
DTYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")
#: Every (operation, dtype) the algorithms take: bitwise ones on integers only.
CASES = [
    (operation, dtype)
    for operation, (_, integers_only) in sorted(OPERATIONS.items())
    for dtype in DTYPES
    if not (integers_only and dtype.startswith("float"))
]


def _values(dtype: str, n: int, seed: int, operation: str) -> np.ndarray:
    """Values whose products and sums stay exact in `dtype` (small, or 1 and 2 for products)."""
    rng = np.random.default_rng(seed)
    if operation == "multiplies":
        return rng.choice([1, 1, 1, 2], n).astype(dtype)
    if np.dtype(dtype).kind == "f":
        return rng.integers(-50, 50, n).astype(dtype)
    low = 0 if np.dtype(dtype).kind == "u" else -1000
    return rng.integers(low, 1000, n).astype(dtype)


def _identity(ufunc, dtype: np.dtype):
    if ufunc is np.minimum:
        return np.inf if dtype.kind == "f" else np.iinfo(dtype).max
    if ufunc is np.maximum:
        return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min
    if ufunc is np.bitwise_and:
        return ~dtype.type(0)
    return ufunc.identity


def _exclusive(ufunc, blocks: np.ndarray) -> np.ndarray:
    first = np.full((blocks.shape[0], 1), _identity(ufunc, blocks.dtype), blocks.dtype)
    return np.concatenate([first, ufunc.accumulate(blocks, axis=1)[:, :-1]], axis=1)


def _kernel_for(operation: str, sub_group_size: int | None = None):
    op = getattr(dk, operation)

    @dk.kernel(sub_group_size=sub_group_size)
    def collectives(it, a, out, sub_out):
        g = it.get_global_linear_id()
        x = a[g]
        group = it.get_group()
        out[0, g] = dk.reduce_over_group(group, x, op)
        out[1, g] = dk.inclusive_scan_over_group(group, x, op)
        out[2, g] = dk.exclusive_scan_over_group(group, x, op)
        sg = it.get_sub_group()
        sub_out[0, g] = dk.reduce_over_group(sg, x, op)
        sub_out[1, g] = dk.inclusive_scan_over_group(sg, x, op)
        sub_out[2, g] = dk.exclusive_scan_over_group(sg, x, op)

    return collectives


def _sub_groups(global_size: int, local_size: int, sub_group_size: int | None) -> list[list]:
    """The work-items of each sub-group, in lane order, as the device forms them."""

    @dk.kernel(sub_group_size=sub_group_size)
    def layout(it, out):
        g = it.get_global_linear_id()
        sg = it.get_sub_group()
        out[g, 0] = it.get_group().get_group_linear_id()
        out[g, 1] = sg.get_group_id()
        out[g, 2] = sg.get_local_id()

    out = dpnp.zeros((global_size, 3), dtype="i8")
    layout[dk.NdRange(global_size, local_size)](out).wait()
    table = dpnp.asnumpy(out)
    groups: dict = {}
    for g, (group, sub, lane) in enumerate(table):
        groups.setdefault((group, sub), {})[lane] = g
    return [[members[lane] for lane in sorted(members)] for _, members in sorted(groups.items())]


def _per_sub_group(values: np.ndarray, sub_groups: list[list], compute) -> np.ndarray:
    result = np.empty_like(values)
    for members in sub_groups:
        result[members] = compute(values[members][None, :])[0]
    return result


@pytest.mark.parametrize(("operation", "dtype"), CASES)
def test_work_group_algorithms_match_numpy(operation, dtype):
    ufunc = OPERATIONS[operation][0]
    n, local = 96, 32
    host = _values(dtype, n, 1, operation)
    out = dpnp.zeros((3, n), dtype=dtype)
    sub_out = dpnp.zeros((3, n), dtype=dtype)
    _kernel_for(operation)[dk.NdRange(n, local)](dpnp.asarray(host), out, sub_out).wait()
    blocks = host.reshape(-1, local)
    result = dpnp.asnumpy(out)
    np.testing.assert_array_equal(result[0], np.repeat(ufunc.reduce(blocks, axis=1), local))
    np.testing.assert_array_equal(result[1], ufunc.accumulate(blocks, axis=1).ravel())
    np.testing.assert_array_equal(result[2], _exclusive(ufunc, blocks).ravel())


@pytest.mark.parametrize("sub_group_size", [None, 4, 8, 16])
@pytest.mark.parametrize(("operation", "dtype"), CASES)
def test_sub_group_algorithms_match_numpy(operation, dtype, sub_group_size):
    ufunc = OPERATIONS[operation][0]
    n, local = 60, 20  # work-groups of 20: a shorter last sub-group for every size
    host = _values(dtype, n, 2, operation)
    out = dpnp.zeros((3, n), dtype=dtype)
    sub_out = dpnp.zeros((3, n), dtype=dtype)
    kernel = _kernel_for(operation, sub_group_size)
    kernel[dk.NdRange(n, local)](dpnp.asarray(host), out, sub_out).wait()
    sub_groups = _sub_groups(n, local, sub_group_size)
    assert sorted(g for members in sub_groups for g in members) == list(range(n))
    result = dpnp.asnumpy(sub_out)
    reduce = _per_sub_group(
        host, sub_groups, lambda b: np.repeat(ufunc.reduce(b, axis=1), b.shape[1])[None, :]
    )
    np.testing.assert_array_equal(result[0], reduce)
    inclusive = _per_sub_group(host, sub_groups, lambda b: ufunc.accumulate(b, axis=1))
    np.testing.assert_array_equal(result[1], inclusive)
    np.testing.assert_array_equal(
        result[2], _per_sub_group(host, sub_groups, lambda b: _exclusive(ufunc, b))
    )


@pytest.mark.parametrize("local", [(4, 4), (2, 3), (3, 5), (1, 20), (2, 2, 3), (20,), (17,)])
@pytest.mark.parametrize("sub_group_size", [None, 4, 8])
def test_sub_group_queries_agree_with_the_sub_groups_themselves(local, sub_group_size):
    """A sub-group's size and index (which Intel's CPU runtime has derived, workaround
    `sub-group-ids-derived`) agree with what its algorithms see: as many lanes as a reduce of
    ones counts, lanes 0.., and indices that number the sub-groups of a work-group 0.."""

    @dk.kernel(sub_group_size=sub_group_size)
    def queries(it, out):
        g = it.get_global_linear_id()
        sg = it.get_sub_group()
        out[g, 0] = it.get_local_linear_id()
        out[g, 1] = sg.get_local_range()
        out[g, 2] = dk.reduce_over_group(sg, 1, dk.plus)
        out[g, 3] = sg.get_group_id()
        out[g, 4] = dk.group_broadcast(sg, it.get_local_linear_id(), 0)
        out[g, 5] = sg.get_local_id()
        out[g, 6] = sg.get_group_range()

    n = int(np.prod(local))
    out = dpnp.zeros((n, 7), dtype="i8")
    queries[dk.NdRange(local, local)](out).wait()
    table = dpnp.asnumpy(out)
    np.testing.assert_array_equal(table[:, 1], table[:, 2])
    leaders = {}
    for linear, size, _, index, leader, lane, count in table:
        assert 0 <= lane < size and 0 <= index < count
        assert leaders.setdefault(index, leader) == leader  # one leader per index
        assert linear - lane == leader  # lanes are consecutive from the leader
    assert sorted(leaders) == list(range(table[0, 6]))


@pytest.mark.parametrize("dtype", ["int64", "uint64", "float64", "int32"])
def test_sub_group_size_4_shuffles_of_64_bit_values(dtype):
    """Shuffles from lanes computed from the sub-group's size or index, with sub_group_size=4:
    Intel's CPU compiler aborted the process on them for 64-bit values."""

    @dk.kernel(sub_group_size=4)
    def shuffles(it, a, out, n):
        g = it.get_global_linear_id()
        x = a[g]
        sg = it.get_sub_group()
        out[g, 0] = dk.select_from_group(sg, x, sg.get_local_range() - n)
        out[g, 1] = dk.select_from_group(sg, x, sg.get_group_id() + n - 1)
        total = x - x
        for lane in range(sg.get_local_range()):
            total += dk.select_from_group(sg, x, lane)
        out[g, 2] = total
        out[g, 3] = dk.reduce_over_group(sg, x, dk.multiplies)

    host = np.arange(1, 25).astype(dtype)
    out = dpnp.zeros((24, 4), dtype=dtype)
    shuffles[dk.NdRange(24, 6)](dpnp.asarray(host), out, 1).wait()
    result = dpnp.asnumpy(out)
    for members in _sub_groups(24, 6, 4):
        values = host[members]
        np.testing.assert_array_equal(result[members, 0], values[len(members) - 1])
        index = members[0] % 6 // 4  # this work-group's sub-groups: 4 lanes, then 2
        np.testing.assert_array_equal(result[members, 1], values[index] if index < 2 else 0)
        np.testing.assert_array_equal(result[members, 2], values.sum(dtype=dtype))
        np.testing.assert_array_equal(result[members, 3], values.prod(dtype=dtype))


def test_initial_values_start_reduces_and_scans():
    @dk.kernel
    def with_init(it, a, out):
        g = it.get_global_linear_id()
        x = a[g]
        group = it.get_group()
        sg = it.get_sub_group()
        out[0, g] = dk.reduce_over_group(group, x, 100, dk.plus)
        out[1, g] = dk.inclusive_scan_over_group(group, x, dk.plus, 100)
        out[2, g] = dk.exclusive_scan_over_group(group, x, 100, dk.plus)
        out[3, g] = dk.reduce_over_group(sg, x, -5, dk.maximum)
        out[4, g] = dk.exclusive_scan_over_group(group, x, 7, dk.bit_xor)
        out[5, g] = dk.reduce_over_group(group, x, 2, dk.multiplies)

    host = np.random.default_rng(3).integers(-9, 9, 32)
    host[::5] = 1
    out = dpnp.zeros((6, 32), dtype="i8")
    with_init[dk.NdRange(32, 8)](dpnp.asarray(host), out).wait()
    blocks, result = host.reshape(4, 8), dpnp.asnumpy(out)
    np.testing.assert_array_equal(result[0], np.repeat(blocks.sum(axis=1) + 100, 8))
    np.testing.assert_array_equal(result[1], (np.cumsum(blocks, axis=1) + 100).ravel())
    np.testing.assert_array_equal(result[2], (_exclusive(np.add, blocks) + 100).ravel())
    sub_groups = _sub_groups(32, 8, None)
    np.testing.assert_array_equal(
        result[3],
        _per_sub_group(host, sub_groups, lambda b: np.full(b.shape, max(-5, b.max()))),
    )
    np.testing.assert_array_equal(result[4], (_exclusive(np.bitwise_xor, blocks) ^ 7).ravel())
    np.testing.assert_array_equal(result[5], np.repeat(blocks.prod(axis=1) * 2, 8))


def test_a_float_result_from_an_integer_initial_value_is_a_float():
    @dk.kernel
    def total(it, a, out):
        g = it.get_global_linear_id()
        out[g] = dk.reduce_over_group(it.get_group(), a[g], 0, dk.plus)

    host = np.linspace(0.25, 4.0, 16).astype("f4")
    out = dpnp.zeros(16, dtype="f4")
    total[dk.NdRange(16, 16)](dpnp.asarray(host), out).wait()
    np.testing.assert_allclose(dpnp.asnumpy(out), host.sum(), rtol=1e-6)


def test_logical_algorithms_and_votes():
    @dk.kernel
    def votes(it, a, out):
        g = it.get_global_linear_id()
        group = it.get_group()
        x = a[g]
        out[0, g] = dk.any_of_group(group, x > 5)
        out[1, g] = dk.all_of_group(group, x > 0)
        out[2, g] = dk.none_of_group(group, x > 8)
        out[3, g] = dk.reduce_over_group(group, x > 3, dk.logical_and)
        out[4, g] = dk.reduce_over_group(group, x > 3, dk.logical_or)
        out[5, g] = dk.inclusive_scan_over_group(group, x > 2, dk.logical_and)
        out[6, g] = dk.exclusive_scan_over_group(group, x > 6, dk.logical_or)

    host = np.array([1, 2, 3, 4, 6, 7, 8, 9, 4, 5, 6, 7, 9, 9, 9, 9])
    out = dpnp.zeros((7, 16), dtype="i8")
    votes[dk.NdRange(16, 4)](dpnp.asarray(host), out).wait()
    blocks, result = host.reshape(4, 4), dpnp.asnumpy(out).astype(bool)
    expand = lambda per_block: np.repeat(per_block, 4)  # noqa: E731
    np.testing.assert_array_equal(result[0], expand((blocks > 5).any(axis=1)))
    np.testing.assert_array_equal(result[1], expand((blocks > 0).all(axis=1)))
    np.testing.assert_array_equal(result[2], expand(~(blocks > 8).any(axis=1)))
    np.testing.assert_array_equal(result[3], expand((blocks > 3).all(axis=1)))
    np.testing.assert_array_equal(result[4], expand((blocks > 3).any(axis=1)))
    np.testing.assert_array_equal(result[5], np.logical_and.accumulate(blocks > 2, axis=1).ravel())
    before = np.logical_or.accumulate(blocks > 6, axis=1)
    exclusive = np.concatenate([np.zeros((4, 1), bool), before[:, :-1]], axis=1)
    np.testing.assert_array_equal(result[6], exclusive.ravel())


@pytest.mark.parametrize("local", [(8,), (4, 4), (2, 2, 4)])
def test_broadcast_from_a_linear_local_id(local):
    @dk.kernel
    def broadcast(it, a, out, source):
        g = it.get_global_linear_id()
        out[0, g] = dk.group_broadcast(it.get_group(), a[g], source)
        out[1, g] = dk.group_broadcast(it.get_group(), a[g])
        out[2, g] = dk.group_broadcast(it.get_sub_group(), a[g], 1)

    n = int(np.prod(local)) * 2
    global_size = (local[0] * 2, *local[1:])
    host = np.arange(n, dtype="f8") * 1.5
    out = dpnp.zeros((3, n), dtype="f8")
    broadcast[dk.NdRange(global_size, local)](dpnp.asarray(host), out, 5).wait()
    result = dpnp.asnumpy(out)
    linear = np.arange(n).reshape(global_size)
    group_of = np.zeros(n, int)
    group_index = (np.indices(global_size)[0] // local[0]).ravel()
    group_of[linear.ravel()] = group_index
    for group in range(2):
        members = np.sort(np.flatnonzero(group_of == group))
        local_linear = [
            np.ravel_multi_index(tuple(np.array(np.unravel_index(g, global_size)) % local), local)
            for g in members
        ]
        by_local = dict(zip(local_linear, members))
        np.testing.assert_array_equal(result[0, members], host[by_local[5]])
        np.testing.assert_array_equal(result[1, members], host[by_local[0]])
    for members in _sub_groups_nd(global_size, local):
        np.testing.assert_array_equal(result[2, members], host[members[1]])


def _sub_groups_nd(global_size: tuple, local: tuple) -> list[list]:
    @dk.kernel
    def layout(it, out):
        g = it.get_global_linear_id()
        sg = it.get_sub_group()
        out[g, 0] = it.get_group().get_group_linear_id()
        out[g, 1] = sg.get_group_id()
        out[g, 2] = sg.get_local_id()

    n = int(np.prod(global_size))
    out = dpnp.zeros((n, 3), dtype="i8")
    layout[dk.NdRange(global_size, local)](out).wait()
    groups: dict = {}
    for g, (group, sub, lane) in enumerate(dpnp.asnumpy(out)):
        groups.setdefault((group, sub), {})[lane] = g
    return [[m[lane] for lane in sorted(m)] for _, m in sorted(groups.items())]


def test_shifts_permutes_and_selects_within_sub_groups():
    @dk.kernel(sub_group_size=8)
    def lanes(it, a, out):
        g = it.get_global_linear_id()
        sg = it.get_sub_group()
        x = a[g]
        out[0, g] = dk.shift_group_left(sg, x, 1)
        out[1, g] = dk.shift_group_right(sg, x, 2)
        out[2, g] = dk.permute_group_by_xor(sg, x, 3)
        out[3, g] = dk.select_from_group(sg, x, 7 - sg.get_local_id())
        out[4, g] = dk.shift_group_left(sg, x)

    host = np.arange(32, dtype="i4") * 11
    out = dpnp.zeros((5, 32), dtype="i4")
    lanes[dk.NdRange(32, 16)](dpnp.asarray(host), out).wait()
    result = dpnp.asnumpy(out)
    for members in _sub_groups(32, 16, 8):
        assert len(members) == 8
        values = host[members]
        lane = np.arange(8)
        # Lanes whose source is outside the sub-group get an unspecified value.
        np.testing.assert_array_equal(result[0, members][:7], values[1:])
        np.testing.assert_array_equal(result[1, members][2:], values[:-2])
        np.testing.assert_array_equal(result[2, members], values[lane ^ 3])
        np.testing.assert_array_equal(result[3, members], values[7 - lane])
        np.testing.assert_array_equal(result[4, members][:7], values[1:])


def test_work_groups_larger_than_the_local_memory_algorithms_take_are_refused():
    @dk.kernel
    def product(it, a, out):
        g = it.get_global_linear_id()
        out[g] = dk.reduce_over_group(it.get_group(), a[g], dk.multiplies)

    a = dpnp.ones(2048, dtype="i4")
    out = dpnp.zeros(2048, dtype="i4")
    with pytest.raises(dk.InvalidRangeError, match="at most 1024"):
        product[dk.NdRange(2048, 2048)](a, out)
    product[dk.NdRange(2048, 1024)](a, out).wait()
    assert (dpnp.asnumpy(out) == 1).all()


def test_group_algorithms_need_an_nd_range():
    @dk.kernel
    def total(it, a, out):
        g = it.get_linear_id()
        out[g] = dk.reduce_over_group(it.get_group(), a[g], dk.plus)

    a = dpnp.ones(8, dtype="i4")
    with pytest.raises(dk.InvalidRangeError, match="NdRange"):
        total[dk.Range(8)](a, dpnp.zeros(8, dtype="i4"))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("dk.reduce_over_group(it.get_group(), a[0], dk.bit_and)", "takes integers"),
        ("dk.reduce_over_group(a[1], a[0], dk.plus)", "first argument is a group"),
        ("dk.shift_group_left(it.get_group(), a[0], 1)", "sub-group"),
        ("dk.reduce_over_group(it.get_group(), a[0], op)", "operation"),
        ("dk.reduce_over_group(it.get_group(), a, dk.plus)", "integer, float or boolean"),
    ],
)
def test_bitwise_operations_refuse_floats_and_other_misuse(body, message):
    namespace = {"dk": dk}
    source = f"def misuse(it, a, op):\n    i = it.get_global_id(0)\n    a[i] = {body}\n"
    exec(source, namespace)  # noqa: S102 - one kernel per misuse
    kernel = dk.kernel(namespace["misuse"])
    with pytest.raises(dk.KernelCompileError, match=message):
        kernel[dk.NdRange(8, 8)](dpnp.zeros(8, dtype="f4"), 0)


@given(
    values=st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=64),
    local=st.sampled_from([1, 2, 3, 5, 8, 16, 32]),
)
def test_wrapping_sums_and_scans_of_random_int32s_match_numpy(values, local):
    """Sums wrap at 32 bits as NumPy's do, whatever the values and work-group size."""
    n = -(-len(values) // local) * local
    host = np.zeros(n, dtype="i4")
    host[: len(values)] = values
    out = dpnp.zeros((3, n), dtype="i4")
    sub_out = dpnp.zeros((3, n), dtype="i4")
    _PLUS[dk.NdRange(n, local)](dpnp.asarray(host), out, sub_out).wait()
    blocks, result = host.reshape(-1, local), dpnp.asnumpy(out)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(result[0], np.repeat(blocks.sum(axis=1, dtype="i4"), local))
        np.testing.assert_array_equal(result[1], np.cumsum(blocks, axis=1, dtype="i4").ravel())


_PLUS = _kernel_for("plus")


# --- group functions where not every work-item gets to ------------------------------------------

#: Kernel bodies (after `def diverging(it, a, n):`) whose group function only some work-items
#: of the group reach, and the line of the condition that decides it.
DIVERGING = {
    "inside an if on a local id": (
        "    if it.get_local_id(0) == 0:\n"
        "        a[0] = dk.reduce_over_group(it.get_group(), 1, dk.plus)\n",
        2,
    ),
    "a ragged guard on the global id": (
        "    if it.get_global_id(0) < n:\n        dk.group_barrier(it.get_group())\n",
        2,
    ),
    "a flag set by the leader": (
        "    x = 0\n"
        "    if it.get_group().leader():\n"
        "        x = 1\n"
        "    if x == 1:\n"
        "        a[0] = dk.reduce_over_group(it.get_group(), 1, dk.plus)\n",
        5,
    ),
    "a loop over the local id": (
        "    for k in range(it.get_local_id(0)):\n        dk.group_barrier(it.get_group())\n",
        2,
    ),
    "after a break some work-items take": (
        "    k = 0\n"
        "    while k < 4:\n"
        "        if it.get_local_id(0) == k:\n"
        "            break\n"
        "        k += 1\n"
        "        a[1] = dk.group_broadcast(it.get_group(), k)\n",
        4,
    ),
    "a value chosen by a varying condition": (
        "    y = n if it.get_local_id(0) > 1 else 3\n"
        "    if y > 2:\n"
        "        dk.group_barrier(it.get_group())\n",
        3,
    ),
    "a scan's result": (
        "    s = dk.inclusive_scan_over_group(it.get_group(), 1, dk.plus)\n"
        "    if s > 2:\n"
        "        dk.group_barrier(it.get_group())\n",
        3,
    ),
    "an element read at the work-item's id": (
        "    if a[it.get_global_id(0)] > 0:\n        dk.group_barrier(it.get_group())\n",
        2,
    ),
    "an atomic's old value": (
        "    t = dk.AtomicRef(a, 0).fetch_add(1)\n"
        "    if t == 3:\n"
        "        dk.group_barrier(it.get_group())\n",
        3,
    ),
    "an early return": (
        "    if it.get_local_id(0) == 0:\n        return\n    dk.group_barrier(it.get_group())\n",
        2,
    ),
    "a uniform if nested in a varying one": (
        "    if it.get_local_id(0) == 0:\n"
        "        if n > 0:\n"
        "            a[0] = dk.any_of_group(it.get_group(), n > 1)\n",
        2,
    ),
    "a work-group algorithm under a sub-group's index": (
        "    if it.get_sub_group().get_group_id() == 0:\n"
        "        a[0] = dk.reduce_over_group(it.get_group(), 1, dk.plus)\n",
        2,
    ),
    "a sub-group algorithm under a lane": (
        "    sg = it.get_sub_group()\n"
        "    if sg.get_local_id() == 0:\n"
        "        a[0] = dk.reduce_over_group(sg, 1, dk.plus)\n",
        3,
    ),
    "a sub-group shift after a continue": (
        "    sg = it.get_sub_group()\n"
        "    for k in range(4):\n"
        "        if sg.leader():\n"
        "            continue\n"
        "        a[1] = dk.shift_group_left(sg, k)\n",
        4,
    ),
}

#: Group functions every work-item of the group reaches: conditions the group agrees on.
CONVERGED = {
    "uniform conditions and loops": (
        "    g = it.get_group()\n"
        "    if g.get_group_id(0) == 0 and n > 1:\n"
        "        a[0] = dk.reduce_over_group(g, it.get_local_id(0), dk.plus)\n"
        "    for k in range(n):\n"
        "        dk.group_barrier(g)\n"
        "    t = dk.reduce_over_group(g, it.get_local_id(0), dk.plus)\n"
        "    if t > 3:\n"
        "        dk.group_barrier(g)\n"
    ),
    "an element read at a uniform index": (
        "    if a[0] > -1:\n        dk.group_barrier(it.get_group())\n"
    ),
    "a broadcast of a varying value": (
        "    t = dk.AtomicRef(a, 0).fetch_add(1)\n"
        "    if dk.group_broadcast(it.get_group(), t) >= 0:\n"
        "        dk.group_barrier(it.get_group())\n"
    ),
    "a sub-group algorithm under the sub-group's index": (
        "    sg = it.get_sub_group()\n"
        "    if sg.get_group_id() >= 0:\n"
        "        a[1] = dk.reduce_over_group(sg, 1, dk.plus)\n"
    ),
    "a varying branch after the group function": (
        "    for k in range(4):\n"
        "        dk.group_barrier(it.get_group())\n"
        "        if it.get_local_id(0) == 0:\n"
        "            continue\n"
        "        a[1] = k\n"
    ),
}


_GROUP_CALL = re.compile(r"dk\.(\w+_group\w*|group_\w+)\(")


def _diverging_kernel(name: str, body: str):
    namespace = {"dk": dk}
    exec(compile(f"def diverging(it, a, n):\n{body}", f"<{name}>", "exec"), namespace)  # noqa: S102
    return dk.kernel(namespace["diverging"])


@pytest.mark.parametrize("case", sorted(DIVERGING))
def test_a_group_function_not_every_work_item_reaches_is_a_compile_error(case):
    body, condition_line = DIVERGING[case]
    kernel = _diverging_kernel(case, body)
    a = dpnp.zeros(16, dtype="i8")
    with pytest.raises(dk.KernelCompileError) as info:
        kernel[dk.NdRange(16, 8)](a, 3)
    message = str(info.value)
    lines = body.splitlines()
    call_line = 2 + max(i for i, line in enumerate(lines) if _GROUP_CALL.search(line))
    assert "'diverging'" in message and "not every work-item" in message, message
    assert f"the condition at line {condition_line}," in message, message
    assert f"<{case}>:{call_line}" in message and "call it where all of them do" in message


@pytest.mark.parametrize("case", sorted(CONVERGED))
def test_group_functions_under_conditions_the_group_agrees_on_compile_and_run(case):
    kernel = _diverging_kernel(case, CONVERGED[case])
    a = dpnp.zeros(16, dtype="i8")
    kernel[dk.NdRange(16, 8)](a, 3).wait()


def test_sub_group_queries_are_the_built_ins_unless_the_kernel_shuffles():
    """The derived size and index (workaround sub-group-ids-derived) hide the sub-group's lanes
    from the CPU runtime's vectoriser, which made the sum of examples/reduction.py 4.5x
    slower: only kernels that shuffle get them."""

    @dk.kernel
    def strided_sum(it, x, out):
        sg = it.get_sub_group()
        total = x[it.get_global_id(0)] * sg.get_local_range() + sg.get_group_id()
        out[it.get_global_id(0)] = total

    @dk.kernel
    def shuffled(it, x, out):
        sg = it.get_sub_group()
        out[it.get_global_id(0)] = dk.select_from_group(sg, x[it.get_global_id(0)], 0) + (
            sg.get_local_range()
        )

    x = dpnp.arange(16.0)
    for kernel in (strided_sum, shuffled):
        out = dpnp.zeros(16)
        kernel[dk.NdRange(16, 16)](x, out).wait()
    target = strided_sum.definitions[strided_sum.signatures[0]].artifacts.target
    derives = workarounds.by_name("sub-group-ids-derived").applies(target)
    plain = strided_sum.inspect_llvm(strided_sum.signatures[0])
    shuffling = shuffled.inspect_llvm(shuffled.signatures[0])
    assert "get_sub_group_size" in plain and "get_max_sub_group_size" not in plain
    assert ("get_max_sub_group_size" in shuffling) == derives


@dk.kernel
def exclusive_sums_from(it, a, init, out):
    g = it.get_global_linear_id()
    out[g] = dk.exclusive_scan_over_group(it.get_group(), a[g], init[0], dk.plus)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64", "int8", "uint16"])
@given(seed=st.integers(0, 2**32 - 1))
def test_exclusive_integer_sums_wrap_around_as_numpy_s(dtype, seed):
    """An exclusive work-group sum of integers is the inclusive one less the value (groups.py):
    it must still wrap around exactly as NumPy's sums do."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    host = rng.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
    out = dpnp.zeros(64, dtype=dtype)
    init = np.array([5], dtype=dtype)
    exclusive_sums_from[dk.NdRange(64, 32)](dpnp.asarray(host), dpnp.asarray(init), out).wait()
    blocks = host.reshape(2, 32)
    with np.errstate(over="ignore"):  # sums in the dtype (np.add.accumulate widens int32)
        inclusive = np.cumsum(blocks, axis=1, dtype=dtype)
        expected = inclusive - blocks + init[0]
    np.testing.assert_array_equal(dpnp.asnumpy(out), expected.ravel())
