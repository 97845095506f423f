"""Ragged Ranges (docs/launcher.md, "Ranges with no good divisor"): a Range whose last dimension
has no divisor from 32 to 1024 runs in work-groups dk picks, with a smaller last one, where the
device takes them; every work-item runs once, and the global index space is the range's own."""

from __future__ import annotations

from types import SimpleNamespace

import dpctl
import dpnp
import numba
import numpy as np
import pytest
from conftest import CPU
from hypothesis import given, settings
from hypothesis import strategies as st

import dpex_kernels as dk
from dpex_kernels.dispatcher import launch
from dpex_kernels.types.ranges import is_ragged


@dk.kernel
def record_1d(out, local, total):
    i = dk.get_global_id(0)
    out[i] += 1  # each work-item once: every element ends at 1
    local[i] = dk.get_local_size(0)
    total[i] = dk.get_global_size(0)


@dk.kernel
def record_2d(out, local):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    out[i, j] += dk.get_global_size(0) * 10_000 + dk.get_global_size(1)
    local[i, j] = dk.get_local_size(0) * 10_000 + dk.get_local_size(1)


@dk.kernel
def record_3d(out, local):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    k = dk.get_global_id(2)
    sizes = (dk.get_global_size(0) * 10_000 + dk.get_global_size(1)) * 10_000
    out[i, j, k] += sizes + dk.get_global_size(2)
    local[i, j, k] = (dk.get_local_size(0) * dk.get_local_size(1)) * 10_000 + dk.get_local_size(2)


def _zeros(shape, dtype="i8", extra=0):
    """Zeros with `extra` sentinel elements past the end, to catch a write out of range."""
    size = int(np.prod(shape))
    flat = dpnp.zeros(size + extra, dtype=dtype, device=CPU)
    if extra:
        flat[size:] = -7
    return flat, flat[:size].reshape(shape)


def _expected_local(n: int, group: int) -> np.ndarray:
    """The local size of each index along a dimension cut into `group`s and a smaller last."""
    sizes = np.full(n, group, dtype="i8")
    if n % group:
        sizes[n - n % group :] = n % group
    return sizes


def _group() -> int:
    """The work-group size a ragged Range of record_1d gets on the CPU device."""
    queue = dpnp.empty(1, device=CPU).sycl_queue
    compiled = next(iter(record_1d.definitions.values()))
    return launch.ragged_work_group(compiled, queue, compiled.kernel_for(queue, 1))


def test_the_opencl_cpu_runtime_takes_a_smaller_last_work_group():
    queue = dpnp.empty(1, device=CPU).sycl_queue
    assert launch._uneven_work_groups(queue)


@pytest.mark.parametrize("n", [8209, 16_411, 1_000_003, 2 * 8191 * 3])
def test_a_ragged_range_runs_every_work_item_once_in_even_work_groups(n):
    assert is_ragged((n,))
    flat, out = _zeros(n, extra=64)
    local, total = dpnp.zeros(n, dtype="i8", device=CPU), dpnp.zeros(n, dtype="i8", device=CPU)
    record_1d[dk.Range(n)](out, local, total).wait()
    group = _group()
    assert group > 1
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.ones(n, dtype="i8"))
    np.testing.assert_array_equal(dpnp.asnumpy(flat)[n:], np.full(64, -7))
    np.testing.assert_array_equal(dpnp.asnumpy(total), np.full(n, n))
    np.testing.assert_array_equal(dpnp.asnumpy(local), _expected_local(n, group))


@pytest.mark.parametrize("shape", [(3, 8209), (1031, 1031), (2, 3, 4099)])
def test_a_ragged_range_of_more_dimensions_keeps_its_global_range(shape):
    assert is_ragged(shape)
    _, out = _zeros(shape)
    _, local = _zeros(shape)
    kernel = record_2d if len(shape) == 2 else record_3d
    kernel[dk.Range(*shape)](out, local).wait()
    sizes = np.indices(shape)
    expected = np.zeros(shape, dtype="i8")
    for axis, n in enumerate(shape):  # every work-item once, with the range's global sizes
        expected = expected * 10_000 + n + 0 * sizes[axis]
    np.testing.assert_array_equal(dpnp.asnumpy(out), expected)
    last = _expected_local(shape[-1], _group())  # 1 along the other dimensions
    np.testing.assert_array_equal(dpnp.asnumpy(local), np.broadcast_to(10_000 + last, shape))


def test_a_range_with_a_good_divisor_keeps_the_runtimes_work_groups():
    n = 1 << 16
    assert not is_ragged((n,))
    _, out = _zeros(n)
    local, total = dpnp.zeros(n, dtype="i8", device=CPU), dpnp.zeros(n, dtype="i8", device=CPU)
    record_1d[dk.Range(n)](out, local, total).wait()
    sizes = np.unique(dpnp.asnumpy(local))
    assert len(sizes) == 1 and n % sizes[0] == 0  # one size, dividing the range


def test_a_ragged_range_from_compiled_code():
    @numba.njit
    def run(out, local, total, n):
        return record_1d[n](out, local, total)

    n = 12_289
    _, out = _zeros(n)
    local, total = dpnp.zeros(n, dtype="i8", device=CPU), dpnp.zeros(n, dtype="i8", device=CPU)
    event = run(out, local, total, n)
    assert isinstance(event, dpctl.SyclEvent)
    event.wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.ones(n, dtype="i8"))
    np.testing.assert_array_equal(dpnp.asnumpy(local), _expected_local(n, _group()))


def test_an_nd_range_is_launched_as_given():
    n, group = 8192 * 3, 3
    _, out = _zeros(n)
    local, total = dpnp.zeros(n, dtype="i8", device=CPU), dpnp.zeros(n, dtype="i8", device=CPU)
    record_1d[dk.NdRange(n, group)](out, local, total).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(local), np.full(n, group))


def test_host_simd_kernels_and_devices_without_a_smaller_last_work_group_keep_the_runtimes():
    compiled = next(iter(record_1d.definitions.values()))
    queue = dpnp.empty(1, device=CPU).sycl_queue
    sycl_kernel = compiled.kernel_for(queue, 1)
    host_simd = SimpleNamespace(artifacts=SimpleNamespace(host_simd="stream"))
    assert launch.ragged_work_group(host_simd, queue, sycl_kernel) == 0

    class LevelZeroDevice:  # hashable, as a SyclDevice is
        backend = dpctl.backend_type.level_zero

    assert not launch._uneven_work_groups(SimpleNamespace(sycl_device=LevelZeroDevice()))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 1 << 40), min_size=1, max_size=3))
def test_ragged_is_a_large_range_whose_last_dimension_has_no_divisor_from_32_to_1024(dims):
    fastest, total = dims[-1], int(np.prod(dims, dtype=object))
    good = any(fastest % d == 0 for d in range(32, 1025))
    assert is_ragged(tuple(dims)) == (fastest >= 1024 and total >= 8192 and not good)
