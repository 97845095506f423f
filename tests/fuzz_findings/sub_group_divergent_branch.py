"""Fuzzer finding (open, a runtime fault): after a sub-group barrier, a work-item that takes
the `if` branch of a branch its sub-group diverges on leaves with the `else` branch's value.

Found by `python -m tests.kernel_fuzzer --seed 20261219` (case 20261279783852, a 2-D kernel
with a compare-and-swap loop); this is that kernel shrunk by hand, its oracle the kernel's own
logic. The LLVM IR and the SPIR-V are right: `result` is a phi of 0 from the `if` branch and 1
from the `else` branch. Intel's OpenCL CPU runtime 2026.1 gets the same wrong answer for the
kernel written in OpenCL C and built by pyopencl, with `sub_group_barrier`,
`sub_group_reduce_add` or `sub_group_broadcast` before the branch; with `-cl-opt-disable`, a
work-group barrier or no sub-group call it is right:

    long gid = get_global_id(0);
    long gsz = get_global_size(1);
    long v2 = 1;
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    if (gid > 0) {
        if (gsz & 3) out[gid * stride + 2] = 1;
        v2 = 0;
        out[gid * stride + 3] = 1;
    } else {
        ga[gid] += ia[3] > 0 ? (uint)(((int)gid < 0) ? 1 : 0) : (uint)ia[1];
    }
    out[gid * stride + 7] = v2;

(global (4, 2), local (2, 2): gid 1 gets 1.) `CL_CONFIG_USE_VECTORIZER=False` makes this file
right but not the OpenCL C twin, so it is no workaround either. No rewrite of our IR is known
to avoid it, so it stays open (tests/test_fuzz_findings.py). Exit status 0 when the results
are right, 1 when they are wrong.
"""

import sys

import dpnp
import numpy as np

import dpex_kernels as dk


@dk.kernel
def branch_after_sub_group_barrier(a, total, out, n):
    i = dk.get_global_id(1)
    size = dk.get_global_size(0)
    private = dk.private.array(1, dk.int32)
    private[0] = i
    result = 1
    dk.sub_group.barrier()
    if private[n] > 0:
        for _ in range(size % 4):
            out[i, 2] = 1
        result = 0
        out[i, 3] = 1
    else:
        dk.atomic.add(total, 0, (result if private[0] < 0 else 0) if a[3] > 0 else a[1])
    out[i, 7] = result


a = dpnp.asarray(np.array([314134257, -2000018291, -344788924, 162098330], np.int32))
total = dpnp.zeros(8, dtype=np.uint32)
out = dpnp.zeros((4, 8), dtype=np.int64)
launch = dk.NdRange(dk.Range(2, 4), dk.Range(2, 2))
branch_after_sub_group_barrier[launch](a, total, out, 0).wait()
got = dpnp.asnumpy(out)[:, 7]
want = np.where(np.arange(4) > 0, 0, 1)  # private[0] = i: only i == 0 takes the else branch
print("kernel", got.tolist(), "\nwanted", want.tolist())
sys.exit(0 if np.array_equal(got, want) else 1)
