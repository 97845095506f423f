"""What the compiler keeps from one compile to the next (call typings, ABI sizes, its pipeline)
never carries one kernel's facts into another's code; what a compile does not need it skips."""

import subprocess
import sys
import textwrap

import dpnp
import numpy as np
import pytest

import dpex_kernels as dk


def _local_sum(size: int):
    """A kernel whose local array's length is the literal `size` (the typing depends on it)."""
    source = (
        "def local_sum(x, out):\n"
        "    i = dk.get_global_id(0)\n"
        f"    scratch = dk.local.array({size}, dk.float64)\n"
        "    lid = dk.get_local_id(0)\n"
        "    scratch[lid] = x[i]\n"
        "    dk.barrier(dk.LOCAL_MEM_FENCE)\n"
        "    if lid == 0:\n"
        "        total = 0.0\n"
        f"        for k in range({size}):\n"
        "            total += scratch[k]\n"
        "        out[dk.get_group_id(0)] = total\n"
    )
    namespace = {"dk": dk}
    exec(source, namespace)
    return dk.kernel(namespace["local_sum"])


@pytest.mark.parametrize("sizes", [(8, 16, 8), (32, 4)])
def test_kernels_differing_only_in_a_literal_each_get_their_own_code(sizes):
    host = np.random.default_rng(0).random(64)
    x = dpnp.asarray(host)
    for size in sizes:
        kernel = _local_sum(size)
        out = dpnp.zeros(64 // size)
        kernel[dk.NdRange((64,), (size,))](x, out)
        np.testing.assert_allclose(dpnp.asnumpy(out), host.reshape(-1, size).sum(axis=1))
        (compiled,) = kernel.definitions.values()
        assert compiled.local_memory == size * 8


def _applying(scale):
    @dk.kernel
    def apply(a, out):
        i = dk.get_global_id(0)
        out[i] = scale(a[i])

    return apply


def test_a_device_function_redefined_under_its_name_is_compiled_anew():
    x = dpnp.asarray(np.arange(8, dtype=np.int64))
    for factor in (2, 3):
        namespace = {"dk": dk}
        exec(f"def scale(v):\n    return v * {factor}\n", namespace)
        out = dpnp.empty_like(x)
        _applying(dk.func(namespace["scale"]))[8](x, out)
        np.testing.assert_array_equal(dpnp.asnumpy(out), np.arange(8) * factor)


def test_the_same_code_typed_for_float32_then_float64_keeps_each_precision():
    @dk.kernel
    def third(a, out):
        i = dk.get_global_id(0)
        out[i] = a[i] / 3.0 + 0.1

    for dtype in (np.float32, np.float64, np.float32):
        host = np.linspace(0, 1, 16, dtype=dtype)
        out = dpnp.empty(16, dtype=dtype)
        third[16](dpnp.asarray(host), out)
        expected = host / dtype(3.0) + dtype(0.1)
        assert out.dtype == dtype
        np.testing.assert_array_equal(dpnp.asnumpy(out), expected)


FIRST_COMPILE = textwrap.dedent(
    """
    import sys
    import dpnp
    import numpy as np
    import dpex_kernels as dk

    @dk.kernel
    def count(out):
        i = dk.get_global_id(0)
        total = 0
        for k in range(int(i) + 1):
            total += k
        out[i] = total

    out = dpnp.zeros(8, dtype=np.int64)
    count[8](out)
    assert (dpnp.asnumpy(out) == np.arange(8) * (np.arange(8) + 1) // 2).all()
    print(sorted(m for m in ("numba.typed.typeddict", "numba.typed.typedlist") if m in sys.modules))
    """
)


def test_a_first_compile_does_not_load_numbas_typed_containers():
    """Typing `range` once imported numba.typed (and started Numba's CPU target): 40 ms."""
    done = subprocess.run(
        [sys.executable, "-c", FIRST_COMPILE], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_kernel_api_functions_operators_and_modules_are_typed_without_a_failed_typeof(
    monkeypatch,
):
    """Globals that have no typeof (dk.get_global_id, operator.add, the dk module) are typed
    from the registry at once: Numba would raise and format a ValueError for each first."""
    from numba.core.typing import context

    failed = []
    typeof = context.typeof

    def recording(val, purpose):
        try:
            return typeof(val, purpose)
        except ValueError:
            failed.append(val)
            raise

    monkeypatch.setattr(context, "typeof", recording)
    kernel = _local_sum(8)
    x, out = dpnp.ones(64), dpnp.zeros(8)
    kernel[dk.NdRange(64, 8)](x, out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), 8.0)
    assert failed == [], failed
