"""The SYCL 2020 forms in the simulator, reached as the compiler's stubs will reach them.

The public stubs (dk.reduce_over_group, ...) are being added to the compiler; here stand-ins
made with the same host_stub(..., public=...) route to the simulator's entries by public name.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

import dpex_kernels as dk
from dpex_kernels.compiler.kernel_api.registry import host_stub, simulated
from dpex_kernels.simulator import LocalAccessor

SYCL2020_NAMES = (
    "group_barrier",
    "group_broadcast",
    "reduce_over_group",
    "inclusive_scan_over_group",
    "exclusive_scan_over_group",
    "any_of_group",
    "all_of_group",
    "none_of_group",
    "shift_group_left",
    "shift_group_right",
    "permute_group_by_xor",
    "select_from_group",
    "AtomicRef",
    "atomic_fence",
)
sycl = SimpleNamespace(
    **{
        name: host_stub(f"simulator_test_{name}", "a stand-in stub", f"dk.{name}")
        for name in SYCL2020_NAMES
    }
)
ops = SimpleNamespace(
    **{
        name: SimpleNamespace(name=name)
        for name in (
            [
                "plus",
                "multiplies",
                "minimum",
                "maximum",
                "bit_and",
                "bit_or",
                "bit_xor",
                "logical_and",
                "logical_or",
            ]
        )
    }
)


def test_stand_in_stubs_still_refuse_host_calls():
    assert simulated("dk.reduce_over_group") is None
    with pytest.raises(TypeError, match="dk.reduce_over_group"):
        sycl.reduce_over_group(None, 1, ops.plus)


def test_item_kernel_under_a_range():
    @dk.kernel
    def ids(item, out):
        i = item.get_id(0)
        j = item.get_id(1)
        out[i, j, 0] = item.get_linear_id()
        out[i, j, 1] = item.get_range(0) * 100 + item.get_range(1)
        out[i, j, 2] = item.get_linear_range()

    out = np.zeros((3, 5, 3), np.int64)
    ids.simulate[dk.Range(3, 5)](out)  # one argument fewer: the first parameter is the item
    np.testing.assert_array_equal(out[..., 0], np.arange(15).reshape(3, 5))
    np.testing.assert_array_equal(out[..., 1], np.full((3, 5), 305))
    np.testing.assert_array_equal(out[..., 2], np.full((3, 5), 15))


def test_nd_item_groups_and_sub_groups():
    @dk.kernel(sub_group_size=4)
    def ids(it, out):
        g = it.get_global_linear_id()
        group = it.get_group()
        sg = it.get_sub_group()
        out[g, 0] = it.get_global_id(0)
        out[g, 1] = it.get_local_id(0)
        out[g, 2] = it.get_local_linear_id()
        out[g, 3] = group.get_group_id(0) * 10 + group.get_local_range(0)
        out[g, 4] = group.get_group_linear_id() + 100 * group.leader()
        out[g, 5] = sg.get_local_id() + 10 * sg.get_local_range()
        out[g, 6] = sg.get_group_id() + 10 * sg.get_group_range()

    out = np.zeros((16, 7), np.int64)
    ids.simulate[dk.NdRange(16, 8)](out)
    g = np.arange(16)
    np.testing.assert_array_equal(out[:, 0], g)
    np.testing.assert_array_equal(out[:, 1], g % 8)
    np.testing.assert_array_equal(out[:, 2], g % 8)
    np.testing.assert_array_equal(out[:, 3], g // 8 * 10 + 8)
    np.testing.assert_array_equal(out[:, 4], g // 8 + 100 * (g % 8 == 0))
    np.testing.assert_array_equal(out[:, 5], g % 4 + 40)
    np.testing.assert_array_equal(out[:, 6], g % 8 // 4 + 20)


OPERATORS = {
    "plus": np.add,
    "multiplies": np.multiply,
    "minimum": np.minimum,
    "maximum": np.maximum,
    "bit_and": np.bitwise_and,
    "bit_or": np.bitwise_or,
    "bit_xor": np.bitwise_xor,
}


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_reductions_and_scans_over_a_work_group_and_its_sub_groups(name):
    op = getattr(ops, name)

    @dk.kernel(sub_group_size=4)
    def collectives(it, a, out):
        g = it.get_global_linear_id()
        x = a[g]
        group = it.get_group()
        sg = it.get_sub_group()
        out[g, 0] = sycl.reduce_over_group(group, x, op)
        out[g, 1] = sycl.inclusive_scan_over_group(group, x, op)
        out[g, 2] = sycl.exclusive_scan_over_group(sg, x, op)
        out[g, 3] = sycl.reduce_over_group(sg, x, 5, op)  # with an initial value

    a = np.random.default_rng(6).integers(1, 9, 16).astype(np.int64)
    out = np.zeros((16, 4), np.int64)
    collectives.simulate[dk.NdRange(16, 8)](a, out)
    ufunc = OPERATORS[name]
    groups, subs = a.reshape(2, 8), a.reshape(4, 4)
    np.testing.assert_array_equal(out[:, 0], np.repeat(ufunc.reduce(groups, axis=1), 8))
    np.testing.assert_array_equal(out[:, 1], ufunc.accumulate(groups, axis=1).ravel())
    identity = {"minimum": np.iinfo(np.int64).max, "maximum": np.iinfo(np.int64).min}.get(
        name, ufunc.identity
    )
    exclusive = np.concatenate(
        [np.full((4, 1), identity), ufunc.accumulate(subs, axis=1)[:, :-1]], axis=1
    )
    np.testing.assert_array_equal(out[:, 2], exclusive.ravel())
    np.testing.assert_array_equal(out[:, 3], np.repeat(ufunc(5, ufunc.reduce(subs, axis=1)), 4))


def test_predicates_and_broadcast():
    @dk.kernel
    def votes(it, a, out):
        g = it.get_global_linear_id()
        group = it.get_group()
        out[g, 0] = sycl.any_of_group(group, a[g] > 5)
        out[g, 1] = sycl.all_of_group(group, a[g] > 0)
        out[g, 2] = sycl.none_of_group(group, a[g] > 8)
        out[g, 3] = sycl.group_broadcast(group, a[g] * 10, 2)

    a = np.array([1, 2, 3, 4, 6, 7, 8, 9], np.int64)
    out = np.zeros((8, 4), np.int64)
    votes.simulate[dk.NdRange(8, 4)](a, out)
    blocks = a.reshape(2, 4)
    np.testing.assert_array_equal(out[:, 0], np.repeat((blocks > 5).any(axis=1), 4))
    np.testing.assert_array_equal(out[:, 1], np.repeat((blocks > 0).all(axis=1), 4))
    np.testing.assert_array_equal(out[:, 2], np.repeat(~(blocks > 8).any(axis=1), 4))
    np.testing.assert_array_equal(out[:, 3], np.repeat(blocks[:, 2] * 10, 4))


def test_sub_group_shifts_permutes_and_selects():
    @dk.kernel(sub_group_size=8)
    def lanes(it, a, out):
        g = it.get_global_linear_id()
        sg = it.get_sub_group()
        x = a[g]
        out[g, 0] = sycl.shift_group_left(sg, x, 1)
        out[g, 1] = sycl.shift_group_right(sg, x, 2)
        out[g, 2] = sycl.permute_group_by_xor(sg, x, 3)
        out[g, 3] = sycl.select_from_group(sg, x, 7 - sg.get_local_id())

    a = np.arange(16, dtype=np.int64) * 11
    out = np.zeros((16, 4), np.int64)
    lanes.simulate[dk.NdRange(16, 16)](a, out)
    for lane, sub in itertools.product(range(8), range(2)):
        g, base = sub * 8 + lane, sub * 8
        assert out[g, 0] == a[base + lane + 1] if lane < 7 else out[g, 0] == a[g]
        assert out[g, 1] == a[base + lane - 2] if lane >= 2 else out[g, 1] == a[g]
        assert out[g, 2] == a[base + (lane ^ 3)]
        assert out[g, 3] == a[base + 7 - lane]


def test_local_accessor_is_one_array_per_work_group():
    @dk.kernel
    def rotate(it, a, tile, out):
        lid = it.get_local_id(0)
        n = tile.shape[0]
        tile[lid] = a[it.get_global_id(0)]
        sycl.group_barrier(it.get_group())
        out[it.get_global_id(0)] = tile[(lid + 1) % n]

    a = np.arange(12.0)
    out = np.zeros(12)
    rotate.simulate[dk.NdRange(12, 6)](a, LocalAccessor(6, dk.float64), out)
    np.testing.assert_array_equal(out, np.roll(a.reshape(2, 6), -1, axis=1).ravel())


def test_local_accessor_without_its_barrier_is_a_race():
    @dk.kernel
    def rotate(it, a, tile, out):
        lid = it.get_local_id(0)
        tile[lid] = a[it.get_global_id(0)]
        if lid > 0:
            out[it.get_global_id(0)] = tile[lid - 1]

    with pytest.raises(dk.KernelRaceError, match=r"local array 'tile'\[0\]"):
        rotate.simulate[dk.NdRange(4, 4)](np.arange(4.0), LocalAccessor((4,), "f8"), np.zeros(4))


def test_atomic_ref_operations():
    @dk.kernel
    def counters(it, values, total, olds):
        g = it.get_global_linear_id()
        v = values[g]
        ref = sycl.AtomicRef(total, 0, memory_order="relaxed", memory_scope="device")
        olds[g] = ref.fetch_add(v)
        sycl.AtomicRef(total, 1).fetch_max(v)
        sycl.AtomicRef(total, 2).fetch_min(v)
        sycl.AtomicRef(total, 3).fetch_or(v)
        sycl.AtomicRef(total, 4).fetch_xor(v)
        sycl.AtomicRef(total, 5).fetch_and(v | 1)
        sycl.AtomicRef(total, 6).fetch_sub(1)
        sycl.atomic_fence("seq_cst", "device")
        if g == 0:
            sycl.AtomicRef(total, 7).store(sycl.AtomicRef(total, 0).load() * 0 + 42)

    values = np.array([3, 9, 4, 12, 7, 1], np.int64)
    total = np.array([0, 0, 100, 0, 0, -1, 0, 0], np.int64)
    olds = np.zeros(6, np.int64)
    counters.simulate[dk.NdRange(6, 3)](values, total, olds)
    assert total[0] == values.sum() and total[1] == values.max() and total[2] == values.min()
    assert total[3] == np.bitwise_or.reduce(values)
    assert total[4] == np.bitwise_xor.reduce(values)
    assert total[5] == np.bitwise_and.reduce(values | 1)
    assert total[6] == -6 and total[7] == 42
    np.testing.assert_array_equal(olds, np.concatenate([[0], np.cumsum(values)[:-1]]))


def test_atomic_ref_compare_exchange_returns_the_old_value():
    @dk.kernel
    def claim(it, slot, winners):
        g = it.get_global_linear_id()
        old = sycl.AtomicRef(slot, 0).compare_exchange(-1, g)
        winners[g] = old

    slot = np.array([-1], np.int64)
    winners = np.zeros(4, np.int64)
    claim.simulate[dk.NdRange(4, 2)](slot, winners)
    assert slot[0] == 0  # the first work-item claimed it
    np.testing.assert_array_equal(winners, [-1, 0, 0, 0])


def test_the_table_has_every_public_name():
    from dpex_kernels.simulator.builtins import Table
    from dpex_kernels.simulator.sycl2020 import add_sycl2020

    table = Table()
    add_sycl2020(table, launch=None)
    assert {f"dk.{name}" for name in SYCL2020_NAMES} <= set(table)
    with pytest.raises(NotImplementedError, match=r"dk.not_a_thing\(\) has no implementation"):
        table["dk.not_a_thing"]()
