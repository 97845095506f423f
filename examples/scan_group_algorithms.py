"""Exclusive prefix sum of any length with group algorithms: examples/scan.py's three steps,
each work-group's part done by dk.reduce_over_group and dk.exclusive_scan_over_group instead
of trees in local memory.

1. `block_sums`: work-group g sums its contiguous block of the input (reduce_over_group).
2. `scan_blocks` on one work-group turns those sums into each block's starting offset.
3. `scan_blocks` on every work-group: each block is scanned a tile (WORK_GROUP elements) at a
   time, exclusive_scan_over_group starting from the running total, which the tile's last
   work-item passes on (group_broadcast).

The sums are kept in the input's dtype (int32 wraps around as NumPy's does; floats round as
they go, in another order than a sequential sum).
"""

import functools

import dpnp
import numpy as np

import dpex_kernels as dk
from examples.scan import MAX_BLOCKS, WORK_GROUP, plan, scratch_for

_DTYPES = {"int32": dk.int32, "int64": dk.int64, "float32": dk.float32, "float64": dk.float64}


@functools.cache
def scan_kernels(dtype):
    """(block_sums, scan_blocks) for arrays of `dtype`."""

    @dk.kernel
    def block_sums(it, x, block, sums):
        g = it.get_group()
        lid = it.get_local_id(0)
        start = g.get_group_id(0) * block
        stop = min(start + block, x.size)
        total = dtype(0)
        for k in range((stop - start) // WORK_GROUP):  # the same trip count for every item
            total = dtype(total + x[dk.uint64(start + k * WORK_GROUP + lid)])
        rest = stop - (stop - start) % WORK_GROUP + lid
        if rest < stop:
            total = dtype(total + x[dk.uint64(rest)])
        block_total = dk.reduce_over_group(g, total, dk.plus)
        if g.leader():
            sums[g.get_group_id(0)] = block_total

    @dk.kernel
    def scan_blocks(it, x, block, offsets, out):
        g = it.get_group()
        lid = it.get_local_id(0)
        carry = offsets[g.get_group_id(0)]
        base = g.get_group_id(0) * block
        stop = min(base + block, x.size)
        while base < stop:  # the same for the whole work-group: all call each algorithm
            i = base + lid
            value = x[dk.uint64(i)] if i < stop else dtype(0)
            before = dk.exclusive_scan_over_group(g, value, carry, dk.plus)
            if i < stop:
                out[dk.uint64(i)] = before
            carry = dk.group_broadcast(g, dtype(before + value), WORK_GROUP - 1)
            base += WORK_GROUP

    return block_sums, scan_blocks


def launch_scan(x: dpnp.ndarray, out: dpnp.ndarray, scratch: tuple) -> object:
    """Submit the three kernels writing the exclusive scan of x into out; the last event."""
    block_sums, scan_blocks = scan_kernels(_DTYPES[x.dtype.name])
    sums, zero, offsets = scratch
    blocks, block = plan(x.size)
    first = block_sums[dk.NdRange(blocks * WORK_GROUP, WORK_GROUP)](x, block, sums[:blocks])
    second = scan_blocks[dk.NdRange(WORK_GROUP, WORK_GROUP)](
        sums[:blocks], WORK_GROUP, zero, offsets, depends_on=first
    )
    return scan_blocks[dk.NdRange(blocks * WORK_GROUP, WORK_GROUP)](
        x, block, offsets, out, depends_on=second
    )


def exclusive_scan(x: dpnp.ndarray) -> dpnp.ndarray:
    """out[i] = x[0] + ... + x[i-1] (out[0] = 0) for a 1-d int32/int64/float32/float64 array."""
    if x.ndim != 1 or x.dtype.name not in _DTYPES:
        raise TypeError(f"exclusive_scan: a 1-d {', '.join(_DTYPES)} array expected, got {x.dtype}")
    out = dpnp.empty_like(x)
    if x.size:
        launch_scan(x, out, scratch_for(x))
    return out


def main(n: int = 3_000_017) -> None:
    rng = np.random.default_rng(0)
    last = {}
    for size in (n, 1, WORK_GROUP * MAX_BLOCKS + 1, 1000):
        host = rng.integers(-100, 100, size).astype(np.int32)
        out = dpnp.asnumpy(exclusive_scan(dpnp.asarray(host)))
        np.testing.assert_array_equal(out[1:], np.cumsum(host, dtype=np.int32)[:-1])
        assert out[0] == 0
        last[size] = out[-1]
    wrapping = rng.integers(2**30, 2**31 - 1, 5000).astype(np.int32)  # sums wrap around
    with np.errstate(over="ignore"):
        expected = np.cumsum(wrapping, dtype=np.int32)[:-1]
    np.testing.assert_array_equal(
        dpnp.asnumpy(exclusive_scan(dpnp.asarray(wrapping)))[1:], expected
    )
    floats = rng.random(100_003)
    np.testing.assert_allclose(
        dpnp.asnumpy(exclusive_scan(dpnp.asarray(floats)))[1:], np.cumsum(floats)[:-1], rtol=1e-9
    )
    print(f"exclusive scan of {n} int32 with group algorithms: last = {last[n]}")


if __name__ == "__main__":
    main()
