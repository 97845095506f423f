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


FAR_OVERRUN = textwrap.dedent(
    """
    import dpnp
    import dpex_kernels as dk

    @dk.kernel(debug=True)
    def far_add(out):
        i = dk.get_global_id(0)
        dk.atomic.add(out, i + 100_000_000, 1.0)

    try:
        far_add[8](dpnp.zeros(8, dtype="f4"))
    except dk.KernelBoundsError as exc:
        print("raised:", exc)
    """
)


def test_debug_atomic_far_out_of_bounds_raises_instead_of_crashing(tmp_path):
    script = tmp_path / "far_overrun.py"
    script.write_text(FAR_OVERRUN)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    message = done.stdout
    assert "raised:" in message
    assert "far_add" in message and "'out'" in message
    assert "size 8" in message and "10000000" in message
    assert "dk.atomic.add(out, i + 100_000_000, 1.0)" in message
    assert "far_overrun.py:8" in message


@pytest.mark.parametrize("op", ["add", "sub", "min", "max", "exchange"])
def test_debug_atomic_small_global_overrun_is_reported_and_writes_nothing(op):
    import dpnp

    import dpex_kernels as dk

    atomic = getattr(dk.atomic, op)

    @dk.kernel(debug=True)
    def overrun(out):
        i = dk.get_global_id(0)
        atomic(out, i + 1, 7)

    backing = dpnp.full(48, -1, dtype="i8")
    with pytest.raises(dk.KernelBoundsError) as info:
        overrun[16](backing[16:32])
    text = str(info.value)
    assert "overrun" in text and "'out'" in text
    assert "index 16" in text and "size 16" in text
    assert "atomic(out, i + 1, 7)" in text and ".py:" in text
    host = dpnp.asnumpy(backing)
    np.testing.assert_array_equal(host[:16], -1)
    np.testing.assert_array_equal(host[32:], -1)


def test_debug_compare_exchange_on_2d_array_checks_every_axis():
    import dpnp

    import dpex_kernels as dk

    @dk.kernel(debug=True)
    def claim(grid):
        i = dk.get_global_id(0)
        dk.atomic.compare_exchange(grid, (0, i), 0, 1)

    grid = dpnp.zeros((2, 4), dtype="i4")
    with pytest.raises(dk.KernelBoundsError, match=r"axis 1 of 'grid'.*size 4"):
        claim[5](grid)


def test_debug_atomic_local_overrun_is_reported():
    import dpnp

    import dpex_kernels as dk

    @dk.kernel(debug=True)
    def local_overrun(out):
        counts = dk.local.array(8, dk.int32)
        lid = dk.get_local_id(0)
        counts[lid] = 0
        dk.barrier()
        dk.atomic.add(counts, lid + 3, 1)
        dk.barrier()
        out[dk.get_global_id(0)] = counts[lid]

    out = dpnp.zeros(16, dtype="i4")
    with pytest.raises(dk.KernelBoundsError) as info:
        local_overrun[dk.NdRange(16, 8)](out)
    text = str(info.value)
    assert "local_overrun" in text and "'counts'" in text and "size 8" in text
    assert "dk.atomic.add(counts, lid + 3, 1)" in text


def test_debug_plain_store_names_array_index_bound_and_line():
    import dpnp

    import dpex_kernels as dk

    @dk.kernel(debug=True)
    def shifted(values):
        i = dk.get_global_id(0)
        values[i + 5] = 1.0

    with pytest.raises(dk.KernelBoundsError) as info:
        shifted[8](dpnp.zeros(8, dtype="f4"))
    text = str(info.value)
    assert "'values'" in text and "size 8" in text and "values[i + 5] = 1.0" in text
    assert any(f"index {k}" in text for k in range(8, 13))


def test_atomics_without_debug_are_not_checked():
    import dpnp

    import dpex_kernels as dk

    @dk.kernel
    def add_all(out):
        dk.atomic.add(out, dk.get_global_id(0), 2)

    out = dpnp.zeros(8, dtype="i4")
    add_all[8](out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), 2)
    assert "dpex_kernels.bounds" not in add_all.inspect_llvm()


def test_debug_bounds_error_in_a_device_function_names_its_line():
    import dpnp

    import dpex_kernels as dk

    @dk.func(debug=True)
    def bump(arr, k):
        dk.atomic.add(arr, k, 1)
        return k

    @dk.func
    def checked(x):
        if x < 0:
            raise ValueError("negative input")
        return x

    @dk.kernel(debug=True)
    def calls(arr, shift):
        i = dk.get_global_id(0)
        arr[checked(i)] += 0
        bump(arr, i + shift)

    arr = dpnp.zeros(4, dtype="i4")
    calls[4](arr, 0)
    np.testing.assert_array_equal(dpnp.asnumpy(arr), 1)
    with pytest.raises(dk.KernelBoundsError, match=r"'arr' with size 4\n +dk.atomic.add"):
        calls[4](arr, 2)
