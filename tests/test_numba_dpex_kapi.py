"""dpex_kernels.numba_dpex (API.md §7): numba-dpex 0.23 kernels, compiled, equal NumPy.

Kernels written as numba-dpex 0.23's documentation writes them (items first, `kernel_api` as
`kapi`, `dpex.call_kernel`), each checked against NumPy: range and nd-range kernels, local
accessors and group barriers, device functions, specialised kernels, AtomicRef with orders and
scopes, PrivateArray, atomic_fence, asynchronous launches, and the semantics where 0.23
differs from dk (Group.leader a property, `dimensions`, compare_exchange into an array).
"""

from __future__ import annotations

import dpctl
import dpnp
import numpy as np
import pytest
from conftest_kernels import assert_close, to_device, to_host
from hypothesis import given
from hypothesis import strategies as st

import dpex_kernels as dk
import dpex_kernels.numba_dpex as dpex
from dpex_kernels.numba_dpex import kernel_api as kapi
from dpex_kernels.numba_dpex.core.exceptions import ExecutionQueueInferenceError
from dpex_kernels.numba_dpex.core.types.kernel_api.index_space_ids import ItemType, NdItemType

# --- range kernels --------------------------------------------------------------------------


@dpex.kernel
def vecadd(item: kapi.Item, a, b, c):
    i = item.get_id(0)
    c[i] = a[i] + b[i]


@given(
    values=st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=300),
    dtype=st.sampled_from(["f4", "f8", "i4", "i8"]),
)
def test_range_kernel_vector_add(values, dtype):
    a = np.asarray(values).astype(dtype)
    b = a[::-1] * 3
    c = dpnp.zeros(len(a), dtype=dtype)
    assert dpex.call_kernel(vecadd, kapi.Range(len(a)), to_device(a), to_device(b), c) is None
    assert_close(c, a + b)


@dpex.kernel
def item_ids(item: kapi.Item, ids, ranges, linear):
    i, j, k = item.get_id(0), item.get_id(1), item.get_id(2)
    ids[i, j, k] = item.get_linear_id()
    ranges[i, j, k] = item.get_range(0) * 10000 + item.get_range(1) * 100 + item.get_range(2)
    linear[i, j, k] = item.get_linear_range() * 10 + item.dimensions


@given(shape=st.tuples(*[st.integers(1, 7)] * 3))
def test_item_ids_and_ranges_in_three_dimensions(shape):
    outputs = [dpnp.zeros(shape, dtype="i8") for _ in range(3)]
    dpex.call_kernel(item_ids, kapi.Range(*shape), *outputs)
    size = int(np.prod(shape))
    assert_close(outputs[0], np.arange(size).reshape(shape))  # C order: last varies fastest
    assert_close(outputs[1], np.full(shape, shape[0] * 10000 + shape[1] * 100 + shape[2]))
    assert_close(outputs[2], np.full(shape, size * 10 + 3))


@pytest.mark.parametrize("shape", [(9,), (4, 6)], ids=str)
def test_item_dimensions_follow_the_launch(shape):
    @dpex.kernel
    def dims(item, out):
        out[item.get_linear_id()] = item.dimensions

    out = dpnp.zeros(int(np.prod(shape)), dtype="i8")
    dpex.call_kernel(dims, kapi.Range(*shape), out)
    assert_close(out, np.full(out.shape, len(shape)))


# --- nd-range kernels -----------------------------------------------------------------------


@dpex.kernel
def nd_ids(nditem: kapi.NdItem, out):
    gi, gj = nditem.get_global_id(0), nditem.get_global_id(1)
    group = nditem.get_group()
    out[0, gi, gj] = nditem.get_local_id(0) * 100 + nditem.get_local_id(1)
    out[1, gi, gj] = nditem.get_global_linear_id()
    out[2, gi, gj] = nditem.get_local_linear_id()
    out[3, gi, gj] = nditem.get_global_range(0) * 100 + nditem.get_global_range(1)
    out[4, gi, gj] = nditem.get_local_range(0) * 100 + nditem.get_local_range(1)
    out[5, gi, gj] = nditem.get_global_linear_range() * 1000 + nditem.get_local_linear_range()
    out[6, gi, gj] = group.get_group_id(0) * 100 + group.get_group_id(1)
    out[7, gi, gj] = group.get_group_linear_id()
    out[8, gi, gj] = group.get_group_range(0) * 100 + group.get_group_range(1)
    out[9, gi, gj] = group.get_group_linear_range()
    out[10, gi, gj] = group.get_local_range(0) * 100 + group.get_local_range(1)
    out[11, gi, gj] = group.get_local_linear_range()
    out[12, gi, gj] = nditem.dimensions * 10 + group.dimensions
    out[13, gi, gj] = 1 if group.leader else 0


@given(
    groups=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    local=st.tuples(st.integers(1, 4), st.integers(1, 4)),
)
def test_nd_item_and_group_queries(groups, local):
    g0, g1 = groups[0] * local[0], groups[1] * local[1]
    out = dpnp.zeros((14, g0, g1), dtype="i8")
    dpex.call_kernel(nd_ids, kapi.NdRange((g0, g1), local), out)
    i, j = np.indices((g0, g1))
    li, lj = i % local[0], j % local[1]
    gi, gj = i // local[0], j // local[1]
    n_local = local[0] * local[1]
    expected = [
        li * 100 + lj,
        i * g1 + j,
        li * local[1] + lj,
        np.full_like(i, g0 * 100 + g1),
        np.full_like(i, local[0] * 100 + local[1]),
        np.full_like(i, g0 * g1 * 1000 + n_local),
        gi * 100 + gj,
        gi * groups[1] + gj,
        np.full_like(i, groups[0] * 100 + groups[1]),
        np.full_like(i, groups[0] * groups[1]),
        np.full_like(i, local[0] * 100 + local[1]),
        np.full_like(i, n_local),
        np.full_like(i, 22),
        (li == 0) & (lj == 0),
    ]
    assert_close(out, np.stack(expected).astype("i8"))


SIDE = 2  # the work-group is SIDE x SIDE


@dpex.kernel
def sliding_matmul(nditem: kapi.NdItem, X, Y, X_slm, Y_slm, result):
    """The documentation's sliding-window matmul: each work-group slides SIDE x SIDE tiles of
    X and Y through two LocalAccessors, synchronised by group barriers."""
    rows, cols, inner = X.shape[0], Y.shape[1], X.shape[1]
    row, col = nditem.get_global_id(0), nditem.get_global_id(1)
    lrow, lcol = nditem.get_local_id(0), nditem.get_local_id(1)
    blocks = (inner + SIDE - 1) // SIDE
    total = X.dtype.type(0)
    group = nditem.get_group()
    for block in range(blocks):
        X_slm[lrow, lcol] = 0
        Y_slm[lrow, lcol] = 0
        if row < rows and lcol + SIDE * block < inner:
            X_slm[lrow, lcol] = X[row, lcol + SIDE * block]
        if col < cols and lrow + SIDE * block < inner:
            Y_slm[lrow, lcol] = Y[lrow + SIDE * block, col]
        kapi.group_barrier(group)
        for k in range(SIDE):
            total += X_slm[lrow, k] * Y_slm[k, lcol]
        kapi.group_barrier(group)
    if row < rows and col < cols:
        result[row, col] = total


@pytest.mark.parametrize("n", [5, 8])
def test_nd_range_matmul_with_local_accessors_and_group_barriers(n):
    x = np.arange(n * n, dtype="f4").reshape(n, n) / 7
    y = x.T.copy() + 1
    result = dpnp.zeros((n, n), dtype="f4")
    padded = -(-n // SIDE) * SIDE  # the global range covers the matrix in whole tiles
    tiles = [kapi.LocalAccessor(shape=(SIDE, SIDE), dtype=np.float32) for _ in range(2)]
    dpex.call_kernel(
        sliding_matmul,
        kapi.NdRange((padded, padded), (SIDE, SIDE)),
        to_device(x),
        to_device(y),
        *tiles,
        result,
    )
    assert_close(result, x @ y, scale=10)


@dpex.kernel
def hillis_steele_scan(nditem: kapi.NdItem, a, slm_b, slm_c):
    gid, lid = nditem.get_global_id(0), nditem.get_local_id(0)
    size = nditem.get_local_range(0)
    group = nditem.get_group()
    slm_c[lid] = slm_b[lid] = a[gid]
    kapi.group_barrier(group)
    d = 1
    while d < size:
        if lid >= d:
            slm_c[lid] = slm_b[lid] + slm_b[lid - d]
        else:
            slm_c[lid] = slm_b[lid]
        kapi.group_barrier(group)
        swap = slm_c[lid]
        slm_c[lid] = slm_b[lid]
        slm_b[lid] = swap
        kapi.group_barrier(group)
        d *= 2
    kapi.group_barrier(group, kapi.MemoryScope.DEVICE)
    a[gid] = slm_b[lid]


@given(values=st.lists(st.integers(-1000, 1000), min_size=64, max_size=64))
def test_scan_in_one_work_group(values):
    a = to_device(np.asarray(values, dtype="i8"))
    accessors = [kapi.LocalAccessor(64, dtype=a.dtype) for _ in range(2)]
    dpex.call_kernel(hillis_steele_scan, dpex.NdRange((64,), (64,)), a, *accessors)
    assert_close(a, np.cumsum(values))


def test_local_accessor_on_a_range_launch_is_refused():
    a = dpnp.zeros(8, dtype="i8")
    with pytest.raises(TypeError, match="hillis_steele_scan.*NdRange"):
        dpex.call_kernel(hillis_steele_scan, kapi.Range(8), a, kapi.LocalAccessor(8, np.int64), a)


# --- device functions -----------------------------------------------------------------------


@dpex.device_func
def a_device_function(a):
    return a + 1


@dpex.kernel
def a_kernel_function(item: kapi.Item, a, b):
    i = item.get_id(0)
    b[i] = a_device_function(a[i])


@dpex.device_func
def increment_value(nd_item: kapi.NdItem, a):
    i = nd_item.get_global_id(0)
    a[i] += 1
    kapi.group_barrier(nd_item.get_group(), kapi.MemoryScope.DEVICE)
    if i == 0:
        for idx in range(1, a.size):
            a[0] += a[idx]


@dpex.kernel
def another_kernel(nd_item: kapi.NdItem, a):
    increment_value(nd_item, a)


def test_device_functions_of_the_documentation():
    a = np.arange(16, dtype="i4")
    b = dpnp.zeros(16, dtype="i4")
    dpex.call_kernel(a_kernel_function, dpex.Range(16), to_device(a), b)
    assert_close(b, a + 1)
    ones = dpnp.ones(16, dtype="i4")
    dpex.call_kernel(another_kernel, dpex.NdRange((16,), (16,)), ones)
    assert_close(ones, np.array([32] + [2] * 15, dtype="i4"))


def test_device_function_with_index_space_types_in_its_signature():
    arrty = dpex.usm_ndarray(1, "C", dpex.int64)

    @dpex.device_func(dpex.void(NdItemType(1), arrty))
    def store_group(nd_item, out):
        out[nd_item.get_global_id(0)] = nd_item.get_group().get_group_id(0)

    @dpex.kernel
    def groups(nd_item: kapi.NdItem, out):
        store_group(nd_item, out)

    out = dpnp.zeros(12, dtype="i8")
    dpex.call_kernel(groups, dpex.NdRange((12,), (4,)), out)
    assert_close(out, np.arange(12) // 4)


# --- specialisation -------------------------------------------------------------------------


def test_specialised_kernel_compiles_at_decoration_and_refuses_other_types():
    i64 = dpex.usm_ndarray(1, "C", dpex.int64)
    f32 = dpex.usm_ndarray(1, "C", dpex.float32)
    specialized = dpex.kernel([(ItemType(1), i64, i64, i64), (ItemType(1), f32, f32, f32)])

    def data_parallel_sum(item, a, b, c):
        i = item.get_id(0)
        c[i] = a[i] + b[i]

    precompiled = specialized(data_parallel_sum)
    assert precompiled.stats.compiles == 2
    for dtype in ("i8", "f4"):
        a = np.arange(32, dtype=dtype)
        c = dpnp.zeros(32, dtype=dtype)
        dpex.call_kernel(precompiled, dpex.Range(32), to_device(a), to_device(a * 2), c)
        assert_close(c, a * 3)
    assert precompiled.stats.compiles == 2
    f8 = dpnp.zeros(32, dtype="f8")
    with pytest.raises(dk.KernelSignatureError):
        dpex.call_kernel(precompiled, dpex.Range(32), f8, f8, f8)


def test_void_signature_with_an_nd_item_type():
    i32 = dpex.usm_ndarray(1, "C", dpex.int32)

    @dpex.kernel(dpex.void(NdItemType(1), i32))
    def local_ids(nd_item, out):
        out[nd_item.get_global_id(0)] = nd_item.get_local_id(0)

    out = dpnp.zeros(12, dtype="i4")
    dpex.call_kernel(local_ids, dpex.NdRange(dpex.Range(12), dpex.Range(3)), out)
    assert_close(out, np.arange(12, dtype="i4") % 3)


# --- AtomicRef ------------------------------------------------------------------------------


@dpex.kernel
def atomic_reduction(item: kapi.Item, a, res):
    idx = item.get_id(0)
    acc = kapi.AtomicRef(res, 0)
    acc.fetch_add(a[idx])


@given(
    values=st.lists(st.integers(-1000, 1000), min_size=1, max_size=500),
    dtype=st.sampled_from(["i4", "i8", "u4", "u8", "f4", "f8"]),
)
def test_atomic_fetch_add_reduction(values, dtype):
    a = np.abs(np.asarray(values)).astype(dtype)
    res = dpnp.zeros(1, dtype=dtype)
    dpex.call_kernel(atomic_reduction, dpex.Range(len(a)), to_device(a), res)
    assert_close(res, np.asarray([a.sum()], dtype=dtype))


@dpex.kernel
def fetch_all(item: kapi.Item, a, totals, olds):
    i = item.get_id(0)
    order = kapi.MemoryOrder.SEQ_CST
    kapi.AtomicRef(totals, 0, memory_order=order).fetch_sub(a[i])
    kapi.AtomicRef(totals, 1, memory_scope=kapi.MemoryScope.WORK_GROUP).fetch_min(a[i])
    kapi.AtomicRef(totals, 2, address_space=kapi.AddressSpace.GLOBAL).fetch_max(a[i])
    kapi.AtomicRef(totals, 3).fetch_and(a[i])
    kapi.AtomicRef(totals, 4).fetch_or(a[i])
    kapi.AtomicRef(totals, index=5).fetch_xor(a[i])
    olds[i] = kapi.AtomicRef(totals, 6).exchange(a[i])


@given(values=st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=300))
def test_atomic_fetch_operations_equal_numpy(values):
    a = np.asarray(values, dtype="i8")
    start = np.array([0, 2**62, -1, -1, 0, 0, -7], dtype="i8")
    totals = to_device(start)
    olds = dpnp.zeros(len(a), dtype="i8")
    dpex.call_kernel(fetch_all, kapi.Range(len(a)), to_device(a), totals, olds)
    got = to_host(totals)
    expected = [
        -a.sum(),
        min(a.min(), start[1]),
        max(a.max(), start[2]),
        np.bitwise_and.reduce(a) & start[3],
        np.bitwise_or.reduce(a),
        np.bitwise_xor.reduce(a),
    ]
    np.testing.assert_array_equal(got[:6], expected)
    # exchange: each old value is the start or another work-item's; the last stays
    seen = np.append(to_host(olds), got[6])
    assert sorted(seen) == sorted([-7, *a.tolist()])


@dpex.kernel
def cas_claim(item: kapi.Item, slots, expected, claimed, won):
    """Every work-item tries to swap its id into slots[i % n] from the value it expects."""
    i = item.get_id(0)
    ref = kapi.AtomicRef(slots, i % slots.shape[0])
    won[i] = ref.compare_exchange(expected, claimed[i], i)


@given(
    slots=st.lists(st.integers(0, 3), min_size=1, max_size=8),
    guesses=st.lists(st.integers(0, 3), min_size=1, max_size=64),
)
def test_compare_exchange_writes_what_it_found_into_the_expected_array(slots, guesses):
    start = np.asarray(slots, dtype="i4")
    guessed = np.asarray(guesses, dtype="i4")
    n = len(guessed)
    claimed = np.arange(100, 100 + n, dtype="i4")
    slots_d, expected_d = to_device(start), to_device(guessed)
    won = dpnp.zeros(n, dtype="b1")
    dpex.call_kernel(cas_claim, kapi.Range(n), slots_d, expected_d, to_device(claimed), won)
    won, expected, final = to_host(won), to_host(expected_d), to_host(slots_d)
    # A winner found its guess in the slot; a loser was told the value it found instead.
    np.testing.assert_array_equal(expected[won], guessed[won])
    assert np.all(expected[~won] != guessed[~won])
    for slot, first in enumerate(start):
        mine = np.flatnonzero(np.arange(n) % len(start) == slot)
        winners = mine[won[mine]]
        # ids (>= 100) are never guessed: the first right guess wins, and then no other
        assert len(winners) == int(np.any(guessed[mine] == first))
        if len(winners):
            assert guessed[winners[0]] == first and final[slot] == claimed[winners[0]]
            seen = {first, claimed[winners[0]]}
        else:
            assert final[slot] == first
            seen = {first}
        assert set(expected[mine[~won[mine]]].tolist()) <= seen


def test_compare_exchange_of_floats_and_the_default_index():
    @dpex.kernel
    def cas(item, value, expected, desired, won):
        won[0] = kapi.AtomicRef(value, 0).compare_exchange(expected, desired[0])

    value = to_device(np.array([1.5], dtype="f4"))
    expected = to_device(np.array([2.5], dtype="f4"))
    won = dpnp.zeros(1, dtype="b1")
    dpex.call_kernel(cas, kapi.Range(1), value, expected, to_device(np.float32([9.0])), won)
    assert not to_host(won)[0] and to_host(expected)[0] == 1.5 and to_host(value)[0] == 1.5
    dpex.call_kernel(cas, kapi.Range(1), value, expected, to_device(np.float32([9.0])), won)
    assert to_host(won)[0] and to_host(value)[0] == 9.0


@pytest.mark.parametrize("order", list(kapi.MemoryOrder), ids=lambda o: o.name)
@pytest.mark.parametrize(
    "scope",
    [kapi.MemoryScope.WORK_GROUP, kapi.MemoryScope.DEVICE],
    ids=lambda s: s.name,
)
def test_atomic_ref_orders_and_scopes(order, scope):
    @dpex.kernel
    def counted(item, a, res):
        kapi.AtomicRef(res, 0, memory_order=order, memory_scope=scope).fetch_add(a[item.get_id(0)])

    a = np.arange(64, dtype="f4")
    res = dpnp.zeros(1, dtype="f4")
    dpex.call_kernel(counted, kapi.Range(64), to_device(a), res)
    assert_close(res, np.float32([a.sum()]))


@dpex.kernel
def local_histogram(nditem: kapi.NdItem, values, bins, counts):
    """Per-group counts in a LocalAccessor through AtomicRef, then added to the global ones."""
    lid = nditem.get_local_id(0)
    group = nditem.get_group()
    if lid < bins.shape[0]:
        bins[lid] = 0
    kapi.group_barrier(group)
    bin_ref = kapi.AtomicRef(
        bins, values[nditem.get_global_id(0)], address_space=kapi.AddressSpace.LOCAL
    )
    bin_ref.fetch_add(1)
    kapi.group_barrier(group)
    if lid < bins.shape[0]:
        kapi.AtomicRef(counts, lid).fetch_add(bins[lid])


@given(values=st.lists(st.integers(0, 7), min_size=64, max_size=64))
def test_atomic_ref_on_a_local_accessor(values):
    counts = dpnp.zeros(8, dtype="i4")
    bins = kapi.LocalAccessor(8, np.int32)
    dpex.call_kernel(
        local_histogram, kapi.NdRange((64,), (16,)), to_device(np.int64(values)), bins, counts
    )
    assert_close(counts, np.bincount(values, minlength=8).astype("i4"))


def test_atomic_ref_address_space_must_be_the_arrays():
    @dpex.kernel
    def wrong_space(item, a):
        kapi.AtomicRef(a, 0, address_space=kapi.AddressSpace.LOCAL).fetch_add(1)

    with pytest.raises(dk.KernelCompileError, match="address_space"):
        dpex.call_kernel(wrong_space, kapi.Range(4), dpnp.zeros(1, dtype="i4"))


@dpex.kernel
def last_group_sums(nditem: kapi.NdItem, a, partial, done, total):
    """One launch: each group writes its sum, releases it, and the last group to finish
    acquires every partial sum and adds them up."""
    group = nditem.get_group()
    kapi.AtomicRef(partial, group.get_group_id(0)).fetch_add(a[nditem.get_global_id(0)])
    kapi.group_barrier(group, kapi.MemoryScope.DEVICE)
    if group.leader:
        kapi.atomic_fence(kapi.MemoryOrder.RELEASE, kapi.MemoryScope.DEVICE)
        ticket = kapi.AtomicRef(
            done, 0, memory_order=kapi.MemoryOrder.ACQ_REL, memory_scope=kapi.MemoryScope.DEVICE
        ).fetch_add(1)
        if ticket == group.get_group_range(0) - 1:
            kapi.atomic_fence(kapi.MemoryOrder.ACQUIRE, kapi.MemoryScope.DEVICE)
            s = 0
            for g in range(group.get_group_range(0)):
                s += kapi.AtomicRef(partial, g).load()
            total[0] = s


def test_single_launch_reduction_with_fences_and_acquire_release():
    a = np.arange(1, 257, dtype="i8")
    partial, done, total = (dpnp.zeros(n, dtype="i8") for n in (8, 1, 1))
    dpex.call_kernel(
        last_group_sums, kapi.NdRange((256,), (32,)), to_device(a), partial, done, total
    )
    assert_close(partial, a.reshape(8, 32).sum(axis=1))
    assert_close(total, [a.sum()])


# --- private memory -------------------------------------------------------------------------


@dpex.kernel
def private_memory_kernel(nditem: kapi.NdItem, A):
    memory = kapi.PrivateArray(shape=1, dtype=np.float32)
    i = nditem.get_global_id(0)
    memory[0] = i
    kapi.group_barrier(nditem.get_group())
    A[i] = memory[0] * 2


@dpex.kernel
def zero_filled(item: kapi.Item, out):
    scratch = kapi.PrivateArray((2, 3), np.int64, fill_zeros=True)
    scratch[1, 2] += item.get_id(0)
    total = 0
    for r in range(2):
        for c in range(3):
            total += scratch[r, c]
    out[item.get_id(0)] = total


def test_private_arrays():
    A = dpnp.zeros(100, dtype="f4")
    dpex.call_kernel(private_memory_kernel, dpex.NdRange(dpex.Range(100), dpex.Range(100)), A)
    assert_close(A, np.arange(100, dtype="f4") * 2)
    out = dpnp.full(16, -1, dtype="i8")
    dpex.call_kernel(zero_filled, dpex.Range(16), out)
    assert_close(out, np.arange(16))


# --- asynchronous launches ------------------------------------------------------------------


def test_call_kernel_async_returns_the_host_and_kernel_events():
    a, b = dpnp.ones(10), dpnp.ones(10)
    c = dpnp.zeros(10)
    host, event = dpex.call_kernel_async(vecadd, kapi.Range(10), (), a, b, c)
    assert isinstance(host, dpctl.SyclEvent) and isinstance(event, dpctl.SyclEvent)
    host.wait()
    assert event.execution_status == dpctl.event_status_type.complete
    host2, event2 = dpex.call_kernel_async(vecadd, kapi.Range(10), (event,), a, c, b)
    event2.wait()
    assert_close(b, np.full(10, 3.0))
    host2.wait()
    with pytest.raises(TypeError, match="tuple"):
        dpex.call_kernel_async(vecadd, kapi.Range(10), event, a, b, c)


# --- how 0.23 code meets the rest -----------------------------------------------------------


def test_kernels_without_an_item_and_both_launch_forms():
    @dpex.kernel
    def old_style(a):
        a[dpex.get_global_id(0)] = dpex.get_global_id(0) * 2

    a = dpnp.zeros(8, dtype="i8")
    dpex.call_kernel(old_style, dpex.Range(8), a)
    assert_close(a, np.arange(8) * 2)
    c = dpnp.zeros(8)
    vecadd[dpex.Range(8)](dpnp.ones(8), dpnp.ones(8), c)  # numba-dpex 0.21's launch form
    assert_close(c, np.full(8, 2.0))


def test_an_item_only_passed_on_is_recognised_at_the_launch():
    @dpex.kernel
    def passes_item(nd_item, a):  # no annotation, no item method: 0.23's arity rule
        increment_value(nd_item, a)

    ones = dpnp.ones(8, dtype="i4")
    dpex.call_kernel(passes_item, dpex.NdRange((8,), (8,)), ones)
    assert_close(ones, np.array([16] + [2] * 7, dtype="i4"))


def test_group_leader_is_a_property_here_and_a_method_in_dk():
    @dpex.kernel
    def called(nd_item, out):
        out[0] = nd_item.get_group().leader()

    with pytest.raises(dk.KernelCompileError):
        dpex.call_kernel(called, kapi.NdRange((4,), (4,)), dpnp.zeros(1, dtype="b1"))

    @dk.kernel
    def dk_leaders(item, out):
        out[item.get_global_id(0)] = item.get_group().leader()

    out = dpnp.zeros(8, dtype="b1")
    dk_leaders[dk.NdRange(8, 4)](out).wait()
    assert_close(out, np.arange(8) % 4 == 0)


def test_nd_item_methods_need_an_nd_range():
    @dpex.kernel
    def needs_nd(item, out):
        out[item.get_global_id(0)] = 1

    with pytest.raises(dk.InvalidRangeError, match="NdRange"):
        dpex.call_kernel(needs_nd, kapi.Range(4), dpnp.zeros(4, dtype="i4"))


def test_arrays_on_two_queues_raise_numba_dpex_error():
    other = dpctl.SyclQueue("opencl:cpu")
    a = dpnp.ones(8)
    with pytest.raises(ExecutionQueueInferenceError, match="vecadd") as raised:
        dpex.call_kernel(vecadd, kapi.Range(8), a, dpnp.ones(8, sycl_queue=other), a)
    assert isinstance(raised.value, dk.ExecutionQueueError)


def test_launching_something_else_is_refused():
    with pytest.raises(TypeError, match="@dpex.kernel"):
        dpex.call_kernel(vecadd.py_func, kapi.Range(4), dpnp.zeros(4))
    with pytest.raises(dk.InvalidRangeError, match="Range or an NdRange"):
        dpex.call_kernel(vecadd, 4, dpnp.zeros(4), dpnp.zeros(4), dpnp.zeros(4))
    with pytest.raises(TypeError, match="launch range"):
        vecadd(dpnp.zeros(4), dpnp.zeros(4), dpnp.zeros(4))


def test_kernel_object_pickles_with_its_item():
    import cloudpickle

    a = dpnp.ones(8)
    c = dpnp.zeros(8)
    dpex.call_kernel(vecadd, kapi.Range(8), a, a, c)
    clone = cloudpickle.loads(cloudpickle.dumps(vecadd))
    c2 = dpnp.zeros(8)
    dpex.call_kernel(clone, kapi.Range(8), a, a, c2)
    assert_close(c2, np.full(8, 2.0))
    assert clone.stats.compiles == 0


@given(values=st.lists(st.integers(-100, 100), min_size=32, max_size=32))
def test_dk_group_algorithms_take_a_kapi_group(values):
    @dpex.kernel
    def sums(nditem: kapi.NdItem, a, out):
        group = nditem.get_group()
        total = dk.reduce_over_group(group, a[nditem.get_global_id(0)], dk.plus)
        if group.leader:
            out[group.get_group_id(0)] = total

    out = dpnp.zeros(4, dtype="i8")
    dpex.call_kernel(sums, kapi.NdRange((32,), (8,)), to_device(np.int64(values)), out)
    assert_close(out, np.int64(values).reshape(4, 8).sum(axis=1))


def _counts_groups(item, out):
    out[item.get_global_id(0)] = item.get_group().get_group_id(0)


def test_disk_cache_keeps_numba_dpex_items_apart_from_dks(tmp_path, monkeypatch):
    monkeypatch.setenv("DPEX_KERNELS_CACHE_DIR", str(tmp_path))
    out = dpnp.zeros(8, dtype="i8")
    first = dpex.kernel(_counts_groups, cache=True)
    dpex.call_kernel(first, kapi.NdRange((8,), (4,)), out)
    again = dpex.kernel(_counts_groups, cache=True)
    dpex.call_kernel(again, kapi.NdRange((8,), (4,)), out)
    assert (first.stats.cache_misses, again.stats.cache_hits, again.stats.compiles) == (1, 1, 0)
    assert_close(out, np.arange(8) // 4)
    as_dk = dk.kernel(_counts_groups, cache=True)
    as_dk[dk.NdRange(8, 4)](out).wait()
    assert (as_dk.stats.cache_misses, as_dk.stats.compiles) == (1, 1)


@dpex.kernel
def cas_keywords(item, b, spelling):
    ref = kapi.AtomicRef(b, index=1)
    if spelling == 0:  # numba-dpex's names in kernels
        b[0] = ref.compare_exchange(expected_ref=b, desired=b[3], expected_idx=2)
    else:  # and in Python
        b[4] = ref.compare_exchange(desired=b[5], expected=b)


@pytest.mark.parametrize("dtype", ["i4", "i8", "f4", "f8"])
def test_compare_exchange_keywords_of_both_spellings(dtype):
    b = to_device(np.array([9, 1, 2, 3, 9, 7], dtype=dtype))
    dpex.call_kernel(cas_keywords, kapi.Range(1), b, 0)  # 1 != 2: fails, b[2] = 1
    assert_close(b, np.array([0, 1, 1, 3, 9, 7], dtype=dtype))
    dpex.call_kernel(cas_keywords, kapi.Range(1), b, 0)  # 1 == 1: b[1] = b[3]
    assert_close(b, np.array([1, 3, 1, 3, 9, 7], dtype=dtype))
    dpex.call_kernel(cas_keywords, kapi.Range(1), b, 1)  # b[0] is 1, b[1] 3: fails
    assert_close(b, np.array([3, 3, 1, 3, 0, 7], dtype=dtype))
    b[0] = 3
    dpex.call_kernel(cas_keywords, kapi.Range(1), b, 1)  # 3 == 3: b[1] = b[5]
    assert_close(b, np.array([3, 7, 1, 3, 1, 7], dtype=dtype))
