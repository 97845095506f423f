"""The race and divergence checker (issue 35, item 4): each kind reported, correct kernels not."""

from __future__ import annotations

import dpnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpex_kernels as dk
from dpex_kernels.simulator import KernelRaceWarning

# --- races on global memory ---------------------------------------------------------------


@dk.kernel
def racy_histogram(values, bins):
    v = values[dk.get_global_id(0)]
    bins[v] += 1  # a plain read-modify-write of a shared bin


@dk.kernel
def atomic_histogram(values, bins):
    dk.atomic.add(bins, values[dk.get_global_id(0)], 1)


def test_histogram_race_names_both_work_items_both_lines_and_the_bin():
    values = np.array([0, 1, 2, 1, 3], np.int64)  # work-items 1 and 3 share bin 1
    with pytest.raises(dk.KernelRaceError) as caught:
        racy_histogram.simulate[5](values, np.zeros(4, np.int64))
    message = str(caught.value)
    assert "data race on 'bins'[1]" in message
    assert "work-item global id (1,)" in message and "wrote it" in message
    assert "work-item global id (3,)" in message and "read it" in message
    assert message.count("bins[v] += 1") == 2
    assert "different work-groups" in message


@given(st.lists(st.integers(0, 7), min_size=1, max_size=40), st.sampled_from([1, 2, 4]))
def test_atomic_histogram_is_never_flagged_and_counts(values, group):
    values = np.array(values + [0] * (-len(values) % group), np.int64)
    bins = np.zeros(8, np.int64)
    atomic_histogram.simulate[dk.NdRange(values.size, group)](values, bins)
    np.testing.assert_array_equal(bins, np.bincount(values, minlength=8))


def test_write_write_race_in_one_work_group_without_barrier():
    @dk.kernel
    def last_writer_wins(out):
        out[0] = dk.get_local_id(0)

    with pytest.raises(dk.KernelRaceError, match=r"(?s)data race on 'out'\[0\].*one work-group"):
        last_writer_wins.simulate[dk.NdRange(4, 4)](np.zeros(1, np.int64))


def test_same_value_writes_are_not_a_race():
    @dk.kernel
    def raise_flag(values, flag):
        if values[dk.get_global_id(0)] > 2:
            flag[0] = 1  # every writer stores the same value

    flag = np.zeros(1, np.int32)
    raise_flag.simulate[dk.NdRange(8, 4)](np.arange(8), flag)
    assert flag[0] == 1


def test_read_of_a_neighbours_result_across_work_groups_is_a_race():
    @dk.kernel
    def smooth_in_place(a):
        i = dk.get_global_id(0)
        if i > 0:
            a[i] = (a[i] + a[i - 1]) / 2  # a[i - 1] may be written before or after

    with pytest.raises(dk.KernelRaceError, match=r"'a'\[0\]|'a'\[1\]"):
        smooth_in_place.simulate[dk.NdRange(8, 2)](np.arange(8.0))


def test_plain_write_racing_an_atomic_is_a_race():
    @dk.kernel
    def reset_while_counting(total):
        if dk.get_global_id(0) == 3:
            total[0] = 0
        else:
            dk.atomic.add(total, 0, 1)

    with pytest.raises(dk.KernelRaceError, match="updated \\(atomically\\)"):
        reset_while_counting.simulate[dk.NdRange(8, 8)](np.zeros(1, np.int64))


# --- local memory: barriers order a work-group -------------------------------------------


def _neighbour_sum(barrier: bool):
    @dk.kernel
    def neighbour_sum(a, out):
        lid = dk.get_local_id(0)
        n = dk.get_local_size(0)
        tile = dk.local.array(8, dk.float64)
        tile[lid] = a[dk.get_global_id(0)]
        if barrier:
            dk.barrier(dk.LOCAL_MEM_FENCE)
        out[dk.get_global_id(0)] = tile[lid] + tile[(lid + 1) % n]

    return neighbour_sum


def test_missing_barrier_is_a_race_or_an_unwritten_read():
    a = np.arange(16.0)
    with pytest.raises(dk.KernelRaceError) as caught:
        _neighbour_sum(barrier=False).simulate[dk.NdRange(16, 8)](a, np.zeros(16))
    message = str(caught.value)
    assert "local array 'tile'[1]" in message
    assert "no work-item of its work-group wrote" in message  # item 0 reads tile[1] first


def test_missing_barrier_after_the_write_order_is_reversed_is_a_race():
    @dk.kernel
    def shift_left(a, out):
        lid = dk.get_local_id(0)
        tile = dk.local.array(8, dk.float64)
        tile[7 - lid] = a[dk.get_global_id(0)]
        if lid > 0:
            out[dk.get_global_id(0)] = tile[8 - lid]  # written by work-item lid - 1

    with pytest.raises(dk.KernelRaceError, match=r"data race on local array 'tile'"):
        shift_left.simulate[dk.NdRange(8, 8)](np.arange(8.0), np.zeros(8))


def test_with_the_barrier_the_same_kernel_is_clean_and_right():
    a = np.random.default_rng(3).random(16)
    out = np.zeros(16)
    _neighbour_sum(barrier=True).simulate[dk.NdRange(16, 8)](a, out)
    blocks = a.reshape(2, 8)
    np.testing.assert_allclose(out, (blocks + np.roll(blocks, -1, axis=1)).ravel())


def test_tree_reduction_with_barriers_is_clean():
    @dk.kernel
    def tree(a, out):
        lid = dk.get_local_id(0)
        scratch = dk.local.array(16, dk.float64)
        scratch[lid] = a[dk.get_global_id(0)]
        dk.barrier()
        half = 8
        while half > 0:
            if lid < half:
                scratch[lid] += scratch[lid + half]
            dk.barrier()
            half //= 2
        if lid == 0:
            out[dk.get_group_id(0)] = scratch[0]

    a = np.random.default_rng(4).random(64)
    out = np.zeros(4)
    tree.simulate[dk.NdRange(64, 16)](a, out)
    np.testing.assert_allclose(out, a.reshape(4, 16).sum(axis=1))


def test_sub_group_barrier_orders_its_sub_group():
    @dk.kernel(sub_group_size=4)
    def swap_pairs(a, out):
        lid = dk.get_local_id(0)
        tile = dk.local.array(8, dk.int64)
        tile[lid] = a[dk.get_global_id(0)]
        dk.sub_group.barrier()
        out[dk.get_global_id(0)] = tile[lid ^ 1]  # the partner is in the same sub-group

    a = np.arange(8, dtype=np.int64) * 3
    out = np.zeros(8, np.int64)
    swap_pairs.simulate[dk.NdRange(8, 8)](a, out)
    np.testing.assert_array_equal(out, a.reshape(4, 2)[:, ::-1].ravel())


def test_sub_group_barrier_does_not_order_other_sub_groups():
    @dk.kernel(sub_group_size=4)
    def across(a, out):
        lid = dk.get_local_id(0)
        tile = dk.local.array(8, dk.int64)
        tile[lid] = a[dk.get_global_id(0)]
        dk.sub_group.barrier()
        out[dk.get_global_id(0)] = tile[(lid + 4) % 8]  # the other sub-group's element

    with pytest.raises(dk.KernelRaceError, match="local array 'tile'"):
        across.simulate[dk.NdRange(8, 8)](np.arange(8, dtype=np.int64), np.zeros(8, np.int64))


def test_unwritten_private_memory_is_reported():
    @dk.kernel
    def forgets(out):
        i = dk.get_global_id(0)
        p = dk.private.array(4, dk.float32)
        p[0] = 1
        out[i] = p[0] + p[1]

    with pytest.raises(dk.KernelRaceError, match=r"private array 'p'\[1\].*this work-item"):
        forgets.simulate[2](np.zeros(2, np.float32))


def test_local_atomics_after_initialisation_are_clean():
    @dk.kernel
    def local_counts(values, bins):
        lid = dk.get_local_id(0)
        local_bins = dk.local.array(4, dk.int32)
        if lid < 4:
            local_bins[lid] = 0
        dk.barrier()
        dk.atomic.add(local_bins, values[dk.get_global_id(0)], 1)
        dk.barrier()
        if lid < 4:
            dk.atomic.add(bins, lid, local_bins[lid])

    values = np.random.default_rng(5).integers(0, 4, 32)
    bins = np.zeros(4, np.int32)
    local_counts.simulate[dk.NdRange(32, 8)](values, bins)
    np.testing.assert_array_equal(bins, np.bincount(values, minlength=4))


def test_atomic_on_unwritten_local_memory_is_reported():
    @dk.kernel
    def uninitialised_counts(values, bins):
        local_bins = dk.local.array(4, dk.int32)
        dk.atomic.add(local_bins, values[dk.get_global_id(0)], 1)

    with pytest.raises(dk.KernelRaceError, match="no work-item of its work-group wrote"):
        uninitialised_counts.simulate[dk.NdRange(4, 4)](np.arange(4), np.zeros(4, np.int32))


# --- divergence ---------------------------------------------------------------------------


def test_barrier_in_a_branch_not_every_work_item_takes():
    @dk.kernel
    def divergent(a):
        lid = dk.get_local_id(0)
        if lid < 2:
            dk.barrier()
        a[dk.get_global_id(0)] = lid

    with pytest.raises(dk.KernelRaceError) as caught:
        divergent.simulate[dk.NdRange(4, 4)](np.zeros(4))
    message = str(caught.value)
    assert message.startswith("divergent dk.barrier()")
    assert "finished without reaching it" in message
    assert "local id (2,)" in message and "local id (0,)" in message


def test_two_different_barriers_diverge():
    @dk.kernel
    def two_barriers(a):
        if dk.get_local_id(0) % 2 == 0:
            dk.barrier()
        else:
            dk.barrier()
        a[dk.get_global_id(0)] = 1

    with pytest.raises(dk.KernelRaceError, match="waits at dk.barrier"):
        two_barriers.simulate[dk.NdRange(4, 4)](np.zeros(4))


def test_loop_trip_counts_that_differ_diverge():
    @dk.kernel
    def uneven_loop(a):
        lid = dk.get_local_id(0)
        for _ in range(lid + 1):
            dk.barrier()
        a[dk.get_global_id(0)] = lid

    with pytest.raises(dk.KernelRaceError, match="divergent"):
        uneven_loop.simulate[dk.NdRange(4, 4)](np.zeros(4))


def test_sub_group_collective_not_reached_by_the_whole_sub_group():
    @dk.kernel(sub_group_size=4)
    def partial_sum(a, out):
        i = dk.get_global_id(0)
        if dk.sub_group.get_local_id() != 3:
            out[i] = dk.sub_group.reduce_add(a[i])

    with pytest.raises(dk.KernelRaceError, match=r"divergent dk.sub_group.reduce_add\(\)"):
        partial_sum.simulate[dk.NdRange(8, 8)](np.ones(8), np.zeros(8))


def test_divergence_inside_a_device_function_names_the_barrier_line():
    @dk.func
    def sync_if(flag):
        if flag:
            dk.barrier()

    @dk.kernel
    def calls(a):
        sync_if(dk.get_local_id(0) == 0)
        a[dk.get_global_id(0)] = 1

    with pytest.raises(dk.KernelRaceError, match=r"test_simulator_races.py:\d+"):
        calls.simulate[dk.NdRange(2, 2)](np.zeros(2))


# --- reporting as warnings ----------------------------------------------------------------


def test_races_as_warnings_let_the_launch_finish():
    values = np.array([1, 1, 1, 1], np.int64)
    bins = np.zeros(2, np.int64)
    with pytest.warns(KernelRaceWarning, match=r"data race on 'bins'\[1\]"):
        racy_histogram.simulate(races="warn")[4](values, bins)
    assert bins[1] == 4  # one at a time, the simulator's updates do not collide


def test_races_off_checks_bounds_still():
    racy_histogram.simulate(races="off")[4](np.array([1, 1, 1, 1]), np.zeros(2, np.int64))
    with pytest.raises(dk.KernelBoundsError):
        racy_histogram.simulate(races="off")[4](np.array([1, 1, 1, 5]), np.zeros(2, np.int64))


# --- ordering between work-groups by acquire and release --------------------------------


def _last_group_sums(order, fence: bool = False):
    """A kernel in which each work-group's leader writes its partial, takes a ticket, and the
    work-group with the last ticket reads every partial (examples/single_launch_reduction.py's
    handshake), with the given order on the ticket's fetch_add."""

    @dk.kernel
    def last_group_sums(it, x, partials, ticket, out):
        g = it.get_group()
        group, groups = g.get_group_id(0), g.get_group_range(0)
        last = False
        if g.leader():
            partials[group] = x[group]
            if fence:
                dk.atomic_fence(dk.MemoryOrder.RELEASE, dk.MemoryScope.DEVICE)
            counter = dk.AtomicRef(ticket, 0)
            taken = counter.fetch_add(1, order)
            if fence:
                dk.atomic_fence(dk.MemoryOrder.ACQUIRE, dk.MemoryScope.DEVICE)
            last = taken == groups - 1
        if dk.group_broadcast(g, last):
            total = 0.0
            for k in range(it.get_local_id(0), groups, it.get_local_range(0)):
                total += partials[k]
            total = dk.reduce_over_group(g, total, dk.plus)
            if g.leader():
                out[0] = total

    return last_group_sums


def _run_last_group_sums(kernel, groups=5, local=4):
    x = np.arange(1.0, groups + 1)
    out = np.zeros(1)
    launch = dk.NdRange(groups * local, local)
    kernel.simulate[launch](x, np.zeros(groups), np.zeros(1, np.int32), out)
    return x, out


@pytest.mark.parametrize(
    "order",
    [dk.MemoryOrder.ACQ_REL, dk.MemoryOrder.SEQ_CST],
    ids=["acq_rel", "seq_cst"],
)
def test_partials_published_by_release_and_read_after_acquire_are_not_a_race(order):
    kernel = _last_group_sums(order)
    x, out = _run_last_group_sums(kernel)
    assert out[0] == x.sum()
    on_device = dpnp.zeros(1)  # the same kernel on the device agrees
    kernel[dk.NdRange(20, 4)](
        dpnp.asarray(x), dpnp.zeros(5), dpnp.zeros(1, dtype="i4"), on_device
    ).wait()
    assert float(on_device[0]) == x.sum()


def test_release_fence_before_a_relaxed_ticket_and_acquire_fence_after_order_the_groups():
    kernel = _last_group_sums(dk.MemoryOrder.RELAXED, fence=True)
    x, out = _run_last_group_sums(kernel)
    assert out[0] == x.sum()


def test_the_same_handshake_with_relaxed_atomics_is_a_race_between_work_groups():
    kernel = _last_group_sums(dk.MemoryOrder.RELAXED)
    with pytest.raises(dk.KernelRaceError) as caught:
        _run_last_group_sums(kernel)
    message = str(caught.value)
    assert "data race on 'partials'" in message and "different work-groups" in message
    assert "partials[group] = x[group]" in message and "total += partials[k]" in message


@pytest.mark.parametrize(
    "order", [dk.MemoryOrder.RELEASE, dk.MemoryOrder.ACQUIRE], ids=["release", "acquire"]
)
def test_a_release_without_an_acquire_or_the_reverse_orders_nothing(order):
    kernel = _last_group_sums(order)
    with pytest.raises(dk.KernelRaceError, match="data race on 'partials'"):
        _run_last_group_sums(kernel)


def test_an_acquire_orders_only_the_work_item_that_made_it_until_a_barrier():
    @dk.kernel
    def read_before_the_barrier(it, flag_and_data, out):
        g = it.get_group()
        if g.get_group_id(0) == 0:
            if g.leader():
                flag_and_data[1] = 7.0
                dk.AtomicRef(flag_and_data, 0, memory_order=dk.MemoryOrder.RELEASE).store(1.0)
        else:
            if g.leader():
                dk.AtomicRef(flag_and_data, 0, memory_order=dk.MemoryOrder.ACQUIRE).load()
            else:
                out[it.get_local_id(0)] = flag_and_data[1]  # no barrier after the acquire

    with pytest.raises(dk.KernelRaceError, match=r"data race on 'flag_and_data'\[1\]"):
        read_before_the_barrier.simulate[dk.NdRange(4, 2)](np.zeros(2), np.zeros(2))
