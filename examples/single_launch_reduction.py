"""Sum of a vector in one launch: each work-group sums its blocks with dk.reduce_over_group, and
the last work-group to finish sums the partial sums.

A work-group's leader writes its partial sum, then takes a ticket with a device-scope
acquire-release fetch_add: the release half publishes the partial sum before the ticket, and
the work-group that takes the last ticket acquires every other one's. That work-group (each
of its work-items learns it from dk.group_broadcast, so all take the same branch) sums the
partial sums with another reduce_over_group and puts the ticket back to 0 for the next launch.
One launch, where examples/reduction.py needs two.
"""

import functools

import dpnp
import numpy as np

import dpex_kernels as dk
from examples.reduction import BLOCK, PER_ITEM, WORK_GROUP, read_result

#: The most work-groups: past MAX_GROUPS * BLOCK elements each reads more blocks. Each
#: work-group takes a ticket with a device-scope acquire-release atomic (about 85 ns each on
#: the OpenCL CPU runtime), so fewer work-groups reading more blocks pay: for 2^24 float32 on
#: a 2-core EPYC, 1.93 ms with 2048 work-groups and 1.75 ms with 1024 or 512 (the two-stage
#: sum 1.91 ms). 1024 still gives each compute unit of a large GPU two work-groups.
MAX_GROUPS = 1024
ELEMENT_TYPES = {np.dtype(np.float32): dk.float32, np.dtype(np.float64): dk.float64}


@functools.cache
def sum_kernel(dtype):
    """The one-launch sum of arrays of `dtype`."""

    @dk.kernel
    def single_launch_sum(it, x, partials, ticket, out):
        g = it.get_group()
        sg = it.get_sub_group()
        lid = it.get_local_id(0)
        # Each sub-group adds up one contiguous run of each block (examples/reduction.py).
        lane, width = sg.get_local_id(), sg.get_local_range()
        run = (lid - lane) * PER_ITEM + lane
        group, groups = g.get_group_id(0), g.get_group_range(0)
        blocks = x.size // BLOCK
        total = dtype(0)
        for block in range(group, blocks, groups):
            start = block * BLOCK + run
            for k in range(PER_ITEM):
                total += x[dk.uint64(start + k * width)]
        if group == groups - 1:  # the rest: fewer than BLOCK elements
            rest = blocks * BLOCK + lid
            for k in range(PER_ITEM):
                if rest + k * WORK_GROUP < x.size:
                    total += x[dk.uint64(rest + k * WORK_GROUP)]
        partial = dk.reduce_over_group(g, total, dk.plus)
        last = False
        if g.leader():
            partials[group] = partial
            counter = dk.AtomicRef(
                ticket, 0, memory_order=dk.MemoryOrder.ACQ_REL, memory_scope=dk.MemoryScope.DEVICE
            )
            last = counter.fetch_add(1) == groups - 1
        if dk.group_broadcast(g, last):
            # The leader acquired the partial sums; the barrier passes them on to its group.
            dk.group_barrier(g)
            mine = dtype(0)
            for k in range(lid, groups, WORK_GROUP):
                mine += partials[k]
            grand_total = dk.reduce_over_group(g, mine, dk.plus)
            if g.leader():
                out[0] = grand_total
                ticket[0] = 0  # ready for the next launch

    return single_launch_sum


def groups_for(n: int) -> int:
    """Work-groups for n elements: one per whole block, at least one."""
    return max(1, min(MAX_GROUPS, n // BLOCK))


class Summer:
    """The partial sums and the ticket of one-launch sums on one queue, made once."""

    def __init__(self, queue):
        self.partials = {}
        self.ticket = dpnp.zeros(1, dtype="i4", sycl_queue=queue)
        self.queue = queue

    def launch(self, x: dpnp.ndarray, out: dpnp.ndarray):
        """Submit the sum of x into out[0]; its event."""
        partials = self.partials.get(x.dtype)
        if partials is None:
            partials = dpnp.empty(MAX_GROUPS, dtype=x.dtype, sycl_queue=self.queue)
            self.partials[x.dtype] = partials
        groups = groups_for(x.size)
        kernel = sum_kernel(ELEMENT_TYPES[x.dtype])
        return kernel[dk.NdRange(groups * WORK_GROUP, WORK_GROUP)](x, partials, self.ticket, out)


def device_sum(x: dpnp.ndarray, summer: Summer | None = None):
    """The sum of a 1-d float32 or float64 device array (0 for an empty one)."""
    if x.ndim != 1 or x.dtype not in ELEMENT_TYPES:
        raise TypeError(f"device_sum: a 1-d float32 or float64 array expected, got {x.dtype}")
    summer = summer or Summer(x.sycl_queue)
    out = dpnp.empty(1, dtype=x.dtype, sycl_queue=x.sycl_queue)
    return read_result(out, summer.launch(x, out))


def main(n: int = 10_000_019) -> None:
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    x = dpnp.asarray(host)
    summer = Summer(x.sycl_queue)
    expected = host.sum(dtype=np.float64)
    for size in (n, 1, 0, BLOCK - 1, BLOCK * 3 + 5):  # the ticket is reused between launches
        total = device_sum(x[:size], summer)
        np.testing.assert_allclose(total, host[:size].sum(dtype=np.float64), rtol=1e-5)
    total = device_sum(x.astype(np.float64), summer)
    np.testing.assert_allclose(total, expected, rtol=1e-9)
    print(f"sum of {n} float32 in one launch: {device_sum(x, summer)}")


if __name__ == "__main__":
    main()
