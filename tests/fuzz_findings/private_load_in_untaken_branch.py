"""Fuzzer finding (fixed): a kernel that never takes a branch crashed the process.

No work-item takes the branch below in work-groups of 16 (its condition needs a work-group
size of 2). LLVM folds the private array's index under that condition, `p[(-size) % 4]` to
`p[4 - size]`, which is right wherever the branch runs. Intel's OpenCL CPU runtime (2026.1)
runs the load anyway once the branch holds a sub-group call and an atomic, with size 16:
p[-12], through a 32-bit offset taken as unsigned, and the process dies of a segmentation
fault in the kernel's code. Without the sub-group call or the atomic it runs. A clamp of
the index (`select(i < 4, i, 0)`) emitted after our optimisation did not help: the runtime's
own optimiser removes it under the same condition. The same kernel in OpenCL C, as the
runtime's own front end compiles it, ran. Found by the kernel fuzzer (case 20261265785227,
tests/fuzz_open/README.md). Since integer arithmetic wraps (no `nsw`: arithmetic.py), LLVM
no longer folds the index under the branch's condition, and the kernel runs. Exit status 0
when the kernel runs.
"""

import dpnp
import numpy as np

import dpex_kernels as dk


@dk.kernel
def kern(flags, scratch_out, n):
    lid = dk.get_local_id(0) * dk.get_local_size(1) + dk.get_local_id(1)
    size = dk.get_local_size(0) * dk.get_local_size(1)
    scratch = dk.local.array(16, dk.int64)
    p = dk.private.array(4, dk.int32)
    for q in range(4):
        p[q] = q
    if (flags[0] | size) == 2:  # never in work-groups of 16
        dk.sub_group.shuffle(n, dk.sub_group.get_local_id())
        if size == n or size != 7:
            scratch[lid] = p[(-size) % 4]
            dk.atomic.max(scratch, 3, n)
            scratch_out[lid] = scratch[3]


flags = dpnp.zeros(1, dtype=np.int64)
out = dpnp.zeros(16, dtype=np.int64)
kern[dk.NdRange((8, 4), (4, 4))](flags, out, 5).wait()
print("ran:", dpnp.asnumpy(out).tolist())
