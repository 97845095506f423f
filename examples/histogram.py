"""256-bin histogram: each work-group counts into local bins with local atomics, then adds its
bins to the global ones with one atomic per bin.

Values are integers; bin b counts the values equal to b. A value outside 0..255 is skipped
(counted nowhere, as np.histogram skips values outside its range): nothing is ever written
outside the 256 bins. Weights (integer or float) make it a weighted histogram, like
np.bincount(values, weights).
"""

import functools

import dpnp
import numpy as np

import dpex_kernels as dk

BINS = 256
WORK_GROUP = 256
#: Values per work-item (about), and the most work-groups: each work-item counts many values,
#: so the local bins are set up and merged into the global ones rarely.
PER_ITEM = 32
MAX_GROUPS = 1024


@functools.cache
def count_kernel(bin_dtype, cpu: bool = False):
    """Counts of each value 0..BINS-1 in `values` (others skipped), added to `bins`.

    On a CPU device (`cpu`) in sub-groups of one work-item: the OpenCL CPU runtime then runs a
    work-group's work-items one after another, and the local atomics cost what a plain add
    costs, where as vector lanes each took a locked add (2^24 values: 11.5-13.9 ms against
    17.8-19.5 ms, docs/workloads.md). The weighted kernel's native float atomics are the other
    way round, so it keeps the runtime's sub-groups.
    """

    @dk.kernel(sub_group_size=1 if cpu else None)
    def histogram_counts(values, bins):
        local_bins = dk.local.array(BINS, bin_dtype)
        lid = dk.get_local_id(0)
        for b in range(lid, BINS, WORK_GROUP):
            local_bins[b] = 0
        dk.barrier(dk.LOCAL_MEM_FENCE)
        i = dk.get_global_id(0)
        step = dk.get_global_size(0)
        for k in range(values.size // step + 1):  # the same trip count for every work-item
            j = i + k * step  # neighbouring work-items read neighbouring values
            if j < values.size:
                v = values[j]
                if v >= 0 and v < BINS:
                    dk.atomic.add(local_bins, v, 1)
        dk.barrier(dk.LOCAL_MEM_FENCE)
        for b in range(lid, BINS, WORK_GROUP):
            if local_bins[b] != 0:
                dk.atomic.add(bins, b, local_bins[b])

    return histogram_counts


@functools.cache
def weighted_kernel(bin_dtype):
    """Sums of `weights` per value 0..BINS-1 of `values` (others skipped), added to `bins`."""

    @dk.kernel
    def histogram_weights(values, weights, bins):
        local_bins = dk.local.array(BINS, bin_dtype)
        lid = dk.get_local_id(0)
        for b in range(lid, BINS, WORK_GROUP):
            local_bins[b] = 0
        dk.barrier(dk.LOCAL_MEM_FENCE)
        # Each work-group takes a contiguous share of the values, WORK_GROUP at a time, so its
        # reads stream through memory. (count_kernel strides over the whole range, as its
        # OpenCL C peer in the benchmarks does: a page per round, each load waiting on memory.)
        n = values.size
        groups = dk.get_num_groups(0)
        share = ((n + groups - 1) // groups + WORK_GROUP - 1) // WORK_GROUP * WORK_GROUP
        start = dk.get_group_id(0) * share
        end = min(n, start + share)
        rounds = (end - start) // WORK_GROUP
        for k in range(rounds):  # whole rounds: no test per value
            j = dk.uint64(start + k * WORK_GROUP + lid)  # never negative: no wraparound
            v = values[j]
            inside = v >= 0 and v < BINS
            # Outside the bins: add nothing to bin 0, which leaves it as it was. With no branch
            # around the atomic, the runtime adds each lane's weight without testing the lane.
            where = v if inside else v - v  # v - v: a zero of v's type
            dk.atomic.add(local_bins, where, weights[j] if inside else bin_dtype(0))
        j = start + rounds * WORK_GROUP + lid  # the last, partial round
        if j < end:
            v = values[j]
            if v >= 0 and v < BINS:
                dk.atomic.add(local_bins, v, weights[j])
        dk.barrier(dk.LOCAL_MEM_FENCE)
        for b in range(lid, BINS, WORK_GROUP):
            if local_bins[b] != 0:
                dk.atomic.add(bins, b, local_bins[b])

    return histogram_weights


def launch_range(n: int) -> dk.NdRange:
    """About PER_ITEM values per work-item, in at most MAX_GROUPS work-groups."""
    groups = max(1, min(MAX_GROUPS, n // (PER_ITEM * WORK_GROUP)))
    return dk.NdRange(groups * WORK_GROUP, WORK_GROUP)


def histogram(values: dpnp.ndarray, weights: dpnp.ndarray | None = None) -> dpnp.ndarray:
    """Counts (int32) or weight sums (the weights' dtype) of each value 0..255 of `values`."""
    if values.ndim != 1 or values.dtype.kind not in "iu":
        raise TypeError(f"histogram: a 1-d integer array of values expected, got {values.dtype}")
    if weights is None:
        bins = dpnp.zeros(BINS, dtype="i4", sycl_queue=values.sycl_queue)
        count_kernel(dk.int32, values.sycl_device.is_cpu)[launch_range(values.size)](values, bins)
        return bins
    if weights.shape != values.shape or weights.dtype.name not in _WEIGHT_TYPES:
        raise TypeError(
            f"histogram: weights must be {', '.join(_WEIGHT_TYPES)} shaped like the values "
            f"{values.shape}, got {weights.dtype} {weights.shape}"
        )
    bins = dpnp.zeros(BINS, dtype=weights.dtype, sycl_queue=values.sycl_queue)
    kernel = weighted_kernel(_WEIGHT_TYPES[weights.dtype.name])
    kernel[launch_range(values.size)](values, weights, bins)
    return bins


_WEIGHT_TYPES = {"int32": dk.int32, "int64": dk.int64, "float32": dk.float32, "float64": dk.float64}


def main(n: int = 1 << 22) -> None:
    rng = np.random.default_rng(0)
    values = rng.integers(-10, BINS + 10, n).astype(np.int32)  # some out of range: skipped
    weights = rng.random(n, dtype=np.float32)
    inside = (values >= 0) & (values < BINS)
    counts = dpnp.asnumpy(histogram(dpnp.asarray(values)))
    np.testing.assert_array_equal(counts, np.bincount(values[inside], minlength=BINS))
    sums = dpnp.asnumpy(histogram(dpnp.asarray(values), dpnp.asarray(weights)))
    expected = np.bincount(values[inside], weights[inside], minlength=BINS)
    np.testing.assert_allclose(sums, expected, rtol=1e-4)
    print("counts of 0..7:", counts[:8], " weight sums of 0..3:", sums[:4])


if __name__ == "__main__":
    main()
