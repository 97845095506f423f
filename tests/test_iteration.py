"""Iterating over the first axis of USM arrays inside kernels (API.md §1)."""

import dpnp
import numpy as np

import dpex_kernels as dk


def test_for_loops_over_1d_values_and_2d_rows():
    @dk.kernel
    def sum_into_rows(a, out):
        total = 0.0
        for x in a:
            total += x
        for row in out:
            row[0] = total
            row[1] = -total

    host = np.random.default_rng(5).random(7)
    out = dpnp.zeros((3, 2))
    sum_into_rows[1](dpnp.asarray(host), out)
    np.testing.assert_allclose(dpnp.asnumpy(out), np.tile([host.sum(), -host.sum()], (3, 1)))
