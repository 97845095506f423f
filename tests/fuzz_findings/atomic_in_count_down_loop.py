"""Fuzzer finding (fixed): an atomic in a nested loop ran 64 times an iteration.

LLVM's loop passes test an inner loop's counter before its decrement (`count > 1`); Intel's
OpenCL CPU runtime then ran the loop's atomic add 256 times in each work-item instead of 4,
while a plain counter in the same loop counted 4. The compiler now tests the decremented
value (`runtime_workarounds.count_down_exits_on_the_new_count`). Numba's front end makes the
shape from this kernel; the direct front end from larger ones
(tests/fuzz_cases/atomic_in_count_down_loop.json). Exit status 0 when the atomics count right.
"""

import os
import sys

os.environ["DPEX_KERNELS_FRONT_END"] = "numba"

import dpnp  # noqa: E402
import numpy as np  # noqa: E402

import dpex_kernels as dk  # noqa: E402


@dk.kernel
def count(trips, counts, out, shift):
    i = dk.get_global_id(0)
    outer = (dk.get_num_groups(0) | 1099511627773) % 4  # 3 with 2 work-groups
    total = 0
    for k in range(outer):
        for j in range((k + np.int64(trips[k])) % 4):
            total += 1
            dk.atomic.add(counts, (j + shift * k) % 8, 1)
    out[i] = total


trips = np.array([3000863924, 2067042270, 1566010911], dtype=np.uint32)
counts, out = dpnp.zeros(8, dtype=np.int64), dpnp.zeros(16, dtype=np.int64)
count[dk.NdRange(16, 8)](dpnp.asarray(trips), counts, out, -6).wait()
expected = np.zeros(8, dtype=np.int64)
for k in range(3):
    for j in range((k + int(trips[k])) % 4):
        expected[(j - 6 * k) % 8] += 16
print("kernel", dpnp.asnumpy(counts).tolist(), dpnp.asnumpy(out)[:2].tolist())
print("Python", expected.tolist())
sys.exit(0 if (dpnp.asnumpy(counts) == expected).all() else 1)
