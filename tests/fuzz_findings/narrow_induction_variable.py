"""Fuzzer finding (fixed): a valid kernel was refused with "needs integers of [2] bits".

LLVM's linear function test replacement narrowed the counter of the inner loop (whose trip
count is a value mod 4) to an i2 induction variable; SPIR-V has no 2-bit integers, so codegen's
check refused the module rather than let the back end abort. Device code is now optimised with
-disable-lftr (compiler/patches.py). Exit status 0 when the kernel compiles and counts right.
"""

import sys

import dpnp
import numpy as np

import dpex_kernels as dk


@dk.kernel
def count(out, m, k):
    i = dk.get_global_id(0)
    total = 0
    for outer in range(m % 4):  # the same trip counts in every work-item: collectives are legal
        inner = 0
        while inner < (outer - k) % 4:
            inner += 1
            total += dk.sub_group.reduce_add(1) // dk.sub_group.get_size()
    out[i] = total + i


m, k = 3, 2
out = dpnp.zeros(8, dtype=np.int64)
try:
    count[8](out, m, k).wait()
except dk.KernelCompileError as exc:
    print(exc)
    sys.exit(1)
expected = [sum((o - k) % 4 for o in range(m % 4)) + i for i in range(8)]
print("kernel", dpnp.asnumpy(out).tolist(), "\nPython", expected)
sys.exit(0 if dpnp.asnumpy(out).tolist() == expected else 1)
