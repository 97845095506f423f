"""Miscompilations the kernel fuzzer found that the compiler now avoids; each failed before."""

import json
from pathlib import Path

import dpnp
import numpy as np
import pytest

import dpex_kernels as dk
from tests import kernel_fuzzer as fuzzer


@pytest.mark.parametrize("dtype", ["f4", "f8", "i4", "i8"])
@pytest.mark.parametrize("op", ["add", "sub", "min", "max", "exchange"])
def test_an_atomic_on_a_local_array_at_a_constant_index(op, dtype):
    """The CAS loop of a float atomic on local memory at a constant index wrote 16 x the offset
    away (LLVM's SPIR-V back end typed the constant address by cmpxchg's result struct)."""
    function = getattr(dk.atomic, op)

    @dk.kernel
    def update(values, out):
        i = dk.get_global_id(0)
        j = dk.get_local_id(0)
        scratch = dk.local.array(2, values.dtype)
        scratch[j] = values[i]
        dk.barrier(dk.LOCAL_MEM_FENCE)
        function(scratch, 1, 3)
        dk.barrier(dk.LOCAL_MEM_FENCE)
        out[i] = scratch[1]

    host = np.array([10, 20, 30, 40], dtype=dtype)
    out = dpnp.zeros(4, dtype=dtype)
    update[dk.NdRange(4, 2)](dpnp.asarray(host), out).wait()
    second = host[1::2].astype(np.float64)  # each group's slot 1, updated by its 2 work-items
    expected = {
        "add": second + 6,
        "sub": second - 6,
        "min": np.minimum(second, 3),
        "max": np.maximum(second, 3),
        "exchange": np.full(2, 3.0),
    }[op]
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.repeat(expected, 2).astype(dtype))


def test_a_lazy_device_function_called_with_different_literals():
    """Each literal call compiled a specialisation with its value folded in, and a later call
    with another literal (or a variable) reused the first one: df(100) returned df(1)."""

    @dk.func
    def double(a, b):
        return a + a + b

    @dk.kernel
    def calls(out, n):
        out[0] = double(1, 0)
        out[1] = double(100, 0)
        out[2] = double(n, 1)
        out[3] = double(-7, 1)

    out = dpnp.zeros(4, dtype=np.int64)
    calls[1](out, 21).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), [2, 200, 43, -13])


CASES = sorted((Path(__file__).parent / "fuzz_cases").glob("*.json"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_a_fixed_fuzzer_case_now_matches_its_model(path):
    """Whole generated cases that aborted or mismatched before their fix ("found" says how)."""
    case = json.loads(path.read_text())
    runner = fuzzer.Runner()
    try:
        result = runner.run(case)
    finally:
        runner.close()
    assert result["outcome"] == "ok", result


@pytest.mark.parametrize("debug", [False, True])
def test_a_read_only_array_whose_shape_or_index_is_only_read_may_be_passed(debug):
    """A launch refused a read-only array the kernel only reads (found by the fuzzer's SYCL
    2020 cases, which pass read-only inputs): with debug=True the bounds check stores the
    index and the array's bound in the error record, and an index computed from the array's
    shape made a store look like a write through it."""

    @dk.kernel(debug=debug)
    def copy_last(a, b, n):
        i = dk.get_global_id(0)
        b[i] = a[(i + n) % a.shape[0]]
        b[a.shape[0] - 1 - i] += 0

    host = np.arange(8, dtype="i8")
    source = dpnp.asarray(host)
    source.flags.writable = False
    out = dpnp.zeros(8, dtype="i8")
    copy_last[8](source, out, 3).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.roll(host, -3))
