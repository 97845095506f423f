"""Open finding (issue 8; fixed on branch `hardening`): an integer compare_exchange whose result
decides a loop aborts the process in LLVM's SPIR-V back end ("illegal aggregate intrinsic user").

Exit status 0 when the kernel compiles and counts right; the open finding kills the process
(SIGABRT), so run this file in a child process.
"""

import sys

import dpnp
import numpy as np

import dpex_kernels as dk


@dk.kernel
def count(total):
    old = total[0]
    while True:
        seen = dk.atomic.compare_exchange(total, 0, old, old + 1)
        if seen == old:
            break
        old = seen


total = dpnp.zeros(1, dtype=np.int32)
count[64](total).wait()
got = int(dpnp.asnumpy(total)[0])
print("count", got)
sys.exit(0 if got == 64 else 1)
