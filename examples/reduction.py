"""Sum of a vector in two stages: per-work-group partial sums, then one work-group sums those.

Two variants of the work-group step: a tree in local memory with barriers, and sub-group sums
(`dk.sub_group.reduce_add`) added to one local total by one atomic each.
"""

import functools

import dpctl
import dpnp
import numpy as np

import dpex_kernels as dk

WORK_GROUP = 256
#: Elements per work-item in a block; a work-group reads BLOCK elements of x at a time.
PER_ITEM = 32
BLOCK = WORK_GROUP * PER_ITEM
#: The most work-groups of the first stage: past MAX_GROUPS * BLOCK elements each reads more blocks.
MAX_GROUPS = 8192
#: Kernel element types by array dtype: a dict lookup costs far less than dk.typeof per call.
ELEMENT_TYPES = {np.dtype(np.float32): dk.float32, np.dtype(np.float64): dk.float64}


@dk.func
def _block_sum(x, total):
    """total + this work-item's share of x, read so that each sub-group adds up one contiguous
    run of PER_ITEM x its size elements of each of its work-group's blocks.

    A CPU device runs a sub-group as one vector through its whole loop before the next: a
    contiguous run is what its prefetcher streams (a stride of the global size between rounds
    was 1.5x slower). On a GPU each round is one contiguous read per sub-group. Sub-groups are
    runs of consecutive local ids, as on Intel's devices. The indices are unsigned: never
    negative, and an index that may look negative keeps a wraparound that the runtime gathers.
    """
    lid = dk.get_local_id(0)
    lane = dk.sub_group.get_local_id()
    width = dk.sub_group.get_size()
    run = (lid - lane) * PER_ITEM + lane
    group = dk.get_group_id(0)
    groups = dk.get_num_groups(0)
    blocks = x.size // BLOCK
    for block in range(group, blocks, groups):
        start = block * BLOCK + run
        for k in range(PER_ITEM):
            total += x[dk.uint64(start + k * width)]
    if group == groups - 1:  # the rest: fewer than BLOCK elements
        rest = blocks * BLOCK + lid
        for k in range(PER_ITEM):
            if rest + k * WORK_GROUP < x.size:
                total += x[dk.uint64(rest + k * WORK_GROUP)]
    return total


@functools.cache
def tree_kernel(dtype):
    """Partial sums of x, one per work-group, reduced by a tree in local memory."""

    @dk.kernel
    def tree_sum(x, partial):
        lid = dk.get_local_id(0)
        scratch = dk.local.array(WORK_GROUP, dtype)
        total = _block_sum(x, dtype(0))
        scratch[lid] = total
        dk.barrier(dk.LOCAL_MEM_FENCE)
        half = WORK_GROUP // 2
        while half > 0:
            if lid < half:
                scratch[lid] += scratch[lid + half]
            dk.barrier(dk.LOCAL_MEM_FENCE)
            half //= 2
        if lid == 0:
            partial[dk.get_group_id(0)] = scratch[0]

    return tree_sum


@functools.cache
def sub_group_kernel(dtype):
    """Partial sums of x, one per work-group: each sub-group's sum added to one local total.

    One atomic add per sub-group needs neither the number of sub-groups nor a second pass over
    their sums; on a device without native float atomics it is a compare-exchange loop.
    """

    @dk.kernel
    def sub_group_sum(x, partial):
        lid = dk.get_local_id(0)
        group_total = dk.local.array(1, dtype)
        if lid == 0:
            group_total[0] = 0
        dk.barrier(dk.LOCAL_MEM_FENCE)
        total = dk.sub_group.reduce_add(_block_sum(x, dtype(0)))
        if dk.sub_group.get_local_id() == 0:
            dk.atomic.add(group_total, 0, total)
        dk.barrier(dk.LOCAL_MEM_FENCE)
        if lid == 0:
            partial[dk.get_group_id(0)] = group_total[0]

    return sub_group_sum


def groups_for(n: int) -> int:
    """Work-groups of the first stage for n elements: one per whole block, at least one."""
    return max(1, min(MAX_GROUPS, n // BLOCK))


def launch_sum(x: dpnp.ndarray, partial: dpnp.ndarray, out: dpnp.ndarray, sub_groups: bool):
    """Submit both stages: x -> partial[:groups] -> out[0]; returns both events.

    The second stage runs after the first as every launch on a queue runs after the one
    before: the host submits both at once.
    """
    kernel = (sub_group_kernel if sub_groups else tree_kernel)(ELEMENT_TYPES[x.dtype])
    groups = groups_for(x.size)
    partial = partial[:groups]
    first = kernel[dk.NdRange(groups * WORK_GROUP, WORK_GROUP)](x, partial)
    second = kernel[dk.NdRange(WORK_GROUP, WORK_GROUP)](partial, out)
    return first, second


def read_result(out: dpnp.ndarray, last: dpctl.SyclEvent):
    """out[0] once the last stage is done: one copy behind its event, which costs half of
    dpnp.asnumpy's (a view into a larger allocation is copied by dpnp.asnumpy)."""
    memory = out.get_array().usm_data
    if memory.nbytes != out.itemsize:
        return dpnp.asnumpy(out)[0]
    value = np.empty(1, dtype=out.dtype)
    out.sycl_queue.memcpy_async(value, memory, out.itemsize, [last]).wait()
    return value[0]


def device_sum(x: dpnp.ndarray, sub_groups: bool = False):
    """The sum of a 1-d float32 or float64 device array (0 for an empty one)."""
    if x.ndim != 1 or x.dtype not in ELEMENT_TYPES:
        raise TypeError(f"device_sum: a 1-d float32 or float64 array expected, got {x.dtype}")
    partial = dpnp.empty(groups_for(x.size), dtype=x.dtype, sycl_queue=x.sycl_queue)
    out = dpnp.empty(1, dtype=x.dtype, sycl_queue=x.sycl_queue)
    _, last = launch_sum(x, partial, out, sub_groups)
    return read_result(out, last)


def main(n: int = 10_000_019) -> None:
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    x = dpnp.asarray(host)
    expected = host.sum(dtype=np.float64)
    for sub_groups in (False, True):
        total = device_sum(x, sub_groups)
        np.testing.assert_allclose(total, expected, rtol=1e-5)
        print(f"sum of {n} float32 ({'sub-group' if sub_groups else 'tree'}): {total}")


if __name__ == "__main__":
    main()
