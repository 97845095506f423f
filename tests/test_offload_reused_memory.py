"""offloading/reused_memory.py: a large array's memory is reused once the array is gone, and
never while anything still holds it."""

import gc
import sys
import weakref

import dpctl
import dpnp
import numba
import numpy as np
import pytest

import dpex_kernels as dk
from dpex_kernels.dispatcher._native import launcher
from dpex_kernels.offloading import reused_memory

LARGE = reused_memory.REUSED_BYTES // 8  # float64 elements of one reused allocation


@dk.offload
def doubled(x):
    return x * 2.0 + 1.0


@dk.offload
def selected(x, m):
    return x[m]


def _address(array) -> int:
    return array.get_array()._pointer


@pytest.fixture(autouse=True)
def _empty_pool():
    gc.collect()
    reused_memory._kept.clear()
    reused_memory._kept_bytes = 0
    yield


@pytest.mark.parametrize("usm_type", ["device", "shared", "host"])
def test_a_dead_results_memory_is_taken_by_the_next_result_of_its_size(usm_type):
    host = np.random.default_rng(0).random(LARGE)
    x = dpnp.asarray(host, usm_type=usm_type)
    first = doubled(x)
    address = _address(first)
    np.testing.assert_array_equal(dpnp.asnumpy(first), host * 2.0 + 1.0)
    del first
    second = doubled(x * 3.0)
    assert _address(second) == address
    np.testing.assert_array_equal(dpnp.asnumpy(second), host * 3.0 * 2.0 + 1.0)
    assert second.usm_type == usm_type and second.sycl_queue == x.sycl_queue


def test_memory_that_an_array_or_a_view_holds_is_not_taken():
    host = np.random.default_rng(1).random(LARGE)
    x = dpnp.asarray(host)
    first = doubled(x)
    view = first[::2]
    address = _address(first)
    del first  # the view holds the memory
    second = doubled(x)
    third = doubled(x)
    assert address not in {_address(second), _address(third)}
    assert _address(second) != _address(third)
    np.testing.assert_array_equal(dpnp.asnumpy(view), (host * 2.0 + 1.0)[::2])
    del view
    fourth = doubled(x)
    assert _address(fourth) == address


def test_a_queue_and_a_size_of_their_own():
    host = np.random.default_rng(2).random(LARGE)
    x = dpnp.asarray(host)
    other_queue = dpctl.SyclQueue(x.sycl_device)
    first = doubled(x)
    address = _address(first)
    del first
    on_other = doubled(dpnp.asarray(host, sycl_queue=other_queue))
    longer = doubled(dpnp.asarray(np.ones(LARGE + 1)))
    assert address not in {_address(on_other), _address(longer)}
    assert on_other.sycl_queue == other_queue
    np.testing.assert_array_equal(dpnp.asnumpy(longer), np.full(LARGE + 1, 3.0))


def test_small_arrays_are_not_kept():
    small = doubled(dpnp.ones(16))
    del small
    assert not reused_memory._kept


def test_kept_memory_is_bounded(monkeypatch):
    monkeypatch.setattr(reused_memory, "KEPT_BYTES", 2 * reused_memory.REUSED_BYTES)
    arrays = [doubled(dpnp.ones(LARGE + k)) for k in range(4)]
    del arrays
    kept = sum(len(memories) for memories in reused_memory._kept.values())
    assert (
        kept * reused_memory.REUSED_BYTES
        <= reused_memory._kept_bytes
        <= 2 * (reused_memory.REUSED_BYTES + 32)
    )
    assert 1 <= kept <= 2
    monkeypatch.setattr(reused_memory, "KEPT_BYTES", reused_memory.REUSED_BYTES - 1)
    too_large = doubled(dpnp.ones(LARGE + 10))  # a size the pool has none of
    del too_large
    launcher.release_completed()
    assert kept == sum(len(memories) for memories in reused_memory._kept.values())


def test_selections_through_a_mask_reuse_the_memory_of_dead_ones():
    rng = np.random.default_rng(3)
    host = rng.random(4 * LARGE)
    mask = host > 0.25
    x, m = dpnp.asarray(host), dpnp.asarray(mask)
    first = selected(x, m)
    address = _address(first)
    del first
    again = selected(x, m)
    assert _address(again) == address
    np.testing.assert_array_equal(dpnp.asnumpy(again), host[mask])


@dk.offload
def made(n):
    return dpnp.ones(n)


@dk.offload
def tail_of_doubled(x):
    return (x * 2.0)[1:]


@numba.njit
def itself(x):
    return x


@pytest.mark.parametrize("size", [16, LARGE], ids=["small", "large"])
def test_arrays_offloaded_code_makes_die_when_python_lets_them_go(size):
    """Returned arrays kept the reference of compiled code (its MemInfo), so every one made
    by an offloaded function lived on: 40 calls of an 8 MiB result held 320 MiB."""
    x = dpnp.ones(size)
    alive = []
    for _ in range(5):
        for result in (doubled(x), made(size), tail_of_doubled(x)):
            alive.append(weakref.ref(result.get_array()))
            del result
    launcher.release_completed()
    gc.collect()
    assert [ref() for ref in alive if ref() is not None] == []


def test_an_array_passed_in_and_returned_keeps_its_count_of_references():
    x = dpnp.ones(8)
    before = sys.getrefcount(x)
    for _ in range(100):
        assert itself(x) is x
    assert sys.getrefcount(x) == before
