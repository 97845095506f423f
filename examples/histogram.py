"""Histogram with work-group local bins and atomics, checked against NumPy."""

import dpnp
import numpy as np

import dpex_kernels as dk

BINS = 16


@dk.kernel
def histogram(values, bins):
    local_bins = dk.local.array(BINS, dk.int32)
    lid = dk.get_local_id(0)
    if lid < BINS:
        local_bins[lid] = 0
    dk.barrier()
    dk.atomic.add(local_bins, values[dk.get_global_id(0)] % BINS, 1)
    dk.barrier()
    if lid < BINS:
        dk.atomic.add(bins, lid, local_bins[lid])


def main(n: int = 1 << 20) -> None:
    host = np.random.default_rng(0).integers(0, 1000, n).astype(np.int32)
    bins = dpnp.zeros(BINS, dtype="i4")
    histogram[dk.NdRange(n, 256)](dpnp.asarray(host), bins)
    np.testing.assert_array_equal(dpnp.asnumpy(bins), np.bincount(host % BINS, minlength=BINS))
    print("bins:", dpnp.asnumpy(bins))


if __name__ == "__main__":
    main()
