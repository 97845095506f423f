"""Fuzzer finding (fixed): a float negation live across a barrier gave every work-item of the
group one work-item's value.

The LLVM IR and the SPIR-V are right (OpFNegate, or an integer xor of the sign bit, or
OpFSub -0.0: all failed the same way); Intel's OpenCL CPU runtime treats the negation as
uniform across the work-group when it saves values over the barrier. The compiler now emits
each negation of such a kernel as fma(x, -1.0, -0.0) (compiler/runtime_workarounds.py).
Exit status 0 when the results are right, 1 when they are wrong.
"""

import sys

import dpnp
import numpy as np

import dpex_kernels as dk


@dk.kernel
def negate(a, out):
    i = dk.get_global_id(0)
    value = -a[i]
    dk.barrier(dk.LOCAL_MEM_FENCE)
    out[i] = value


a = np.arange(8, dtype=np.float64) / 10
out = dpnp.zeros(8)
negate[dk.NdRange(dk.Range(8), dk.Range(4))](dpnp.asarray(a), out).wait()
got = dpnp.asnumpy(out)
print("kernel", got.tolist(), "\nNumPy ", (-a).tolist())
sys.exit(0 if np.array_equal(got, -a) else 1)
