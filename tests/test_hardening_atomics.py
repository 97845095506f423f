"""Atomics that once aborted the process or wrote past an array: run in child processes."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

CAS_LOOPS = textwrap.dedent(
    """
    import json, sys
    import dpnp, numpy as np
    import dpex_kernels as dk

    dtype = sys.argv[1]

    @dk.kernel
    def cas_add(total, values):
        i = dk.get_global_id(0)
        v = values[i]
        old = total[0]
        while True:
            seen = dk.atomic.compare_exchange(total, 0, old, old + v)
            if seen == old:
                break
            old = seen

    @dk.kernel
    def cas_max_local(values, out):
        best = dk.local.array(1, values.dtype)
        if dk.get_local_id(0) == 0:
            best[0] = 0
        dk.barrier()
        v = values[dk.get_global_id(0)]
        old = best[0]
        while old < v:
            seen = dk.atomic.compare_exchange(best, 0, old, v)
            if seen == old:
                break
            old = seen
        dk.barrier()
        if dk.get_local_id(0) == 0:
            out[dk.get_group_id(0)] = best[0]

    host = np.random.default_rng(5).integers(1, 1000, 256).astype(dtype)
    total = dpnp.zeros(1, dtype=dtype)
    cas_add[256](total, dpnp.asarray(host)).wait()
    out = dpnp.zeros(4, dtype=dtype)
    cas_max_local[dk.NdRange(256, 64)](dpnp.asarray(host), out).wait()
    print(json.dumps({"sum": int(dpnp.asnumpy(total)[0]),
                      "max": [int(v) for v in dpnp.asnumpy(out)]}))
    """
)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64"])
def test_integer_compare_exchange_loops_compile_and_match_numpy(dtype):
    done = subprocess.run(
        [sys.executable, "-c", CAS_LOOPS, dtype], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    host = np.random.default_rng(5).integers(1, 1000, 256).astype(dtype)
    assert got["sum"] == int(host.sum(dtype=dtype))
    assert got["max"] == [int(v) for v in host.reshape(4, 64).max(axis=1)]
