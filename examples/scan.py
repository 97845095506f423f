"""Exclusive prefix sum of any length: reduce, scan the block sums, then scan each block.

1. `block_sums`: work-group g sums its contiguous block of the input.
2. `scan_blocks` on one work-group turns those sums into each block's starting offset.
3. `scan_blocks` on every work-group: each block is scanned tile by tile (WORK_GROUP elements
   at a time, a Hillis-Steele scan in local memory), starting from its offset.

The sums are kept in the input's dtype (int32 wraps around as in C; floats round as they
go, in another order than a sequential sum).
"""

import functools

import dpnp
import numpy as np

import dpex_kernels as dk

WORK_GROUP = 256
#: Blocks at most: the block sums are scanned by one work-group of this many work-items.
MAX_BLOCKS = WORK_GROUP


@functools.cache
def scan_kernels(dtype):
    """(block_sums, scan_blocks) for arrays of `dtype`."""

    @dk.kernel
    def block_sums(x, block, sums):
        lid = dk.get_local_id(0)
        start = dk.get_group_id(0) * block
        stop = min(start + block, x.size)
        total = dtype(0)
        for k in range((stop - start) // WORK_GROUP):  # the same trip count for every item
            total += x[dk.uint64(start + k * WORK_GROUP + lid)]
        rest = stop - (stop - start) % WORK_GROUP + lid
        if rest < stop:
            total += x[dk.uint64(rest)]
        scratch = dk.local.array(WORK_GROUP, dtype)
        scratch[lid] = total
        dk.barrier(dk.LOCAL_MEM_FENCE)
        half = WORK_GROUP // 2
        while half > 0:
            if lid < half:
                scratch[lid] += scratch[lid + half]
            dk.barrier(dk.LOCAL_MEM_FENCE)
            half //= 2
        if lid == 0:
            sums[dk.get_group_id(0)] = scratch[0]

    @dk.kernel
    def scan_blocks(x, block, offsets, out):
        lid = dk.get_local_id(0)
        group = dk.get_group_id(0)
        scratch = dk.local.array(WORK_GROUP, dtype)
        carry = offsets[group]
        base = group * block
        stop = min(base + block, x.size)
        while base < stop:  # the same for the whole work-group: every item meets each barrier
            i = base + lid
            scratch[lid] = x[dk.uint64(i)] if i < stop else dtype(0)
            dk.barrier(dk.LOCAL_MEM_FENCE)
            step = 1
            while step < WORK_GROUP:  # scratch[lid] becomes the inclusive sum up to lid
                before = scratch[lid - step] if lid >= step else dtype(0)
                dk.barrier(dk.LOCAL_MEM_FENCE)
                scratch[lid] += before
                dk.barrier(dk.LOCAL_MEM_FENCE)
                step *= 2
            if i < stop:
                out[dk.uint64(i)] = carry + scratch[lid - 1] if lid > 0 else carry
            carry += scratch[WORK_GROUP - 1]
            dk.barrier(dk.LOCAL_MEM_FENCE)  # all have read scratch before the next tile
            base += WORK_GROUP

    return block_sums, scan_blocks


_DTYPES = {"int32": dk.int32, "int64": dk.int64, "float32": dk.float32, "float64": dk.float64}


def plan(n: int) -> tuple[int, int]:
    """(blocks, block length): at most MAX_BLOCKS blocks of whole tiles covering n elements."""
    tiles = max(1, -(-n // WORK_GROUP))
    blocks = min(MAX_BLOCKS, tiles)
    return blocks, -(-tiles // blocks) * WORK_GROUP


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


def scratch_for(x: dpnp.ndarray) -> tuple:
    """The small work arrays of launch_scan (block sums, a zero, block offsets)."""
    make = functools.partial(dpnp.zeros, dtype=x.dtype, sycl_queue=x.sycl_queue)
    return make(MAX_BLOCKS), make(1), make(MAX_BLOCKS)


def exclusive_scan(x: dpnp.ndarray) -> dpnp.ndarray:
    """out[i] = x[0] + ... + x[i-1] (out[0] = 0) for a 1-d int32/int64/float32/float64 array."""
    if x.ndim != 1 or x.dtype.name not in _DTYPES:
        raise TypeError(f"exclusive_scan: a 1-d {', '.join(_DTYPES)} array expected, got {x.dtype}")
    out = dpnp.empty_like(x)
    if x.size:
        launch_scan(x, out, scratch_for(x))
    return out


def main(n: int = 3_000_017) -> None:
    host = np.random.default_rng(0).integers(-100, 100, n).astype(np.int32)
    out = dpnp.asnumpy(exclusive_scan(dpnp.asarray(host)))
    np.testing.assert_array_equal(out[1:], np.cumsum(host, dtype=np.int32)[:-1])
    assert out[0] == 0
    print(f"exclusive scan of {n} int32: last = {out[-1]}")


if __name__ == "__main__":
    main()
