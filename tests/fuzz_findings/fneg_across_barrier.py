"""Open finding (kernel fuzzer): a float negation live across a barrier gives every work-item
of the group the value of the group's last work-item.

The LLVM IR and the SPIR-V are right (OpFNegate, or an integer xor of the sign bit, or
OpFSub -0.0: all fail the same way; `0.0 - x` works): Intel's OpenCL CPU runtime appears to treat
the negation as uniform across the work-group when it saves values over the barrier.
Exit status 0 when the results are right, 1 when the finding is still open.
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
