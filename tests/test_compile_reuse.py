"""What the compiler keeps from one compile to the next (call typings, ABI sizes, its pipeline)
never carries one kernel's facts into another's code; what a compile does not need it skips."""

import math
import re
import subprocess
import sys
import textwrap

import dpnp
import llvmlite.binding as llvm
import numpy as np
import pytest
from numba.core import lowering, types, untyped_passes

import dpex_kernels as dk
from dpex_kernels.compiler import device_pipeline
from dpex_kernels.compiler.backend import emit
from tests import kernel_fuzzer


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


def _fuzz_signature(case: dict):
    """The signature of a fuzzer case's kernel for its own arguments (accessors included)."""
    arrays, scalars = kernel_fuzzer._inputs(case)
    _, args = kernel_fuzzer._device_arguments(case, arrays, scalars)
    return kernel_fuzzer._signature(case, args)


def _fuzz_llvm(seed: int, lowering_class) -> str:
    """The optimised LLVM IR of case `seed` of a fixed fuzzer campaign, lowered by
    `lowering_class`, with Numba's per-compile unique names and the names of values taken out."""
    case = kernel_fuzzer.generate(kernel_fuzzer.case_seed(20261201, seed))
    namespace = {"dk": dk, "np": np, "math": math}
    exec(compile(case["kernel"], "<fuzz kernel>", "exec"), namespace)
    sig = _fuzz_signature(case)
    original = device_pipeline._DeviceNativeLowering.lowering_class
    device_pipeline._DeviceNativeLowering.lowering_class = property(lambda self: lowering_class)
    try:
        # debug=False: a debug-mode kernel's raise sites store exception codes unique in the
        # process, numbered in the order a lowering meets them, which the comparison is not about
        options = {"debug": False, "opt_level": case["opt_level"]}
        kernel = dk.kernel(namespace["kern"], sub_group_size=case.get("sub_group_size"), **options)
        kernel.compile(sig)
    finally:
        device_pipeline._DeviceNativeLowering.lowering_class = original
    return _normalised_llvm(kernel, sig)


def _normalised_llvm(kernel, sig) -> str:
    """The kernel's optimised LLVM IR without Numba's per-compile unique names, its values
    numbered in order of appearance (lowering names them)."""
    ir = re.sub(r"B\d+v\d+", "", kernel.definitions[sig].artifacts.llvm_ir)
    names: dict[str, str] = {}
    return re.sub(r"%[-\w.$]+", lambda m: names.setdefault(m[0], f"%v{len(names)}"), ir)


@pytest.mark.parametrize("seed", range(12))
def test_binary_operators_lower_as_numba_lowers_them(seed):
    """_DeviceLower lowers operators with the signature typing chose instead of typing them
    again; the code must be Numba's own, for random kernels full of mixed-type arithmetic."""
    assert _fuzz_llvm(seed, device_pipeline._DeviceLower) == _fuzz_llvm(seed, lowering.Lower)


def test_operators_are_not_typed_again_while_lowering(monkeypatch):
    """Typing an operator a second time in lowering took a third of a work-group kernel's
    lowering with Numba's front end; constant operands (`x ** 2`) keep Numba's path and its
    specialised lowering."""
    monkeypatch.setenv("DPEX_KERNELS_FRONT_END", "numba")
    inside, retyped = [False], []
    real_binop, real_call_type = lowering.Lower.lower_binop, types.Function.get_call_type

    def lower_binop(self, *args):
        inside[0] = True
        try:
            return real_binop(self, *args)
        finally:
            inside[0] = False

    def get_call_type(self, *args, **kwargs):
        if inside[0]:
            retyped.append(self)
        return real_call_type(self, *args, **kwargs)

    monkeypatch.setattr(lowering.Lower, "lower_binop", lower_binop)
    monkeypatch.setattr(types.Function, "get_call_type", get_call_type)

    def mixed(a, b, n):
        i = dk.get_global_id(0)
        b[i] = a[i] * n + (a[i] - 1.5) / (i + 1) - (i // 3) % 5

    f64 = dk.usm_array(dk.float64, 1)
    kernel = dk.kernel(dk.void(f64, f64, dk.int32))(mixed)
    assert retyped == []

    def square(a, b):
        i = dk.get_global_id(0)
        b[i] = a[i] ** 2

    squared = dk.kernel(dk.void(f64, f64))(square)
    assert "pow" not in squared.inspect_llvm(dk.void(f64, f64))  # the literal exponent's code
    host = np.random.default_rng(1).random(64)
    a, b = dpnp.asarray(host), dpnp.empty(64)
    kernel[64](a, b, np.int32(7)).wait()
    i = np.arange(64)
    expected = host * 7 + (host - 1.5) / (i + 1) - (i // 3) % 5
    np.testing.assert_allclose(dpnp.asnumpy(b), expected, rtol=1e-12)
    squared[64](a, b).wait()
    np.testing.assert_allclose(dpnp.asnumpy(b), host**2, rtol=1e-12)


def _scale(k: int):
    namespace = {"dk": dk}
    exec(f"def scale(a, out):\n    i = dk.get_global_id(0)\n    out[i] = a[i] * {k}\n", namespace)
    return dk.kernel(namespace["scale"])


def test_one_module_is_emitted_as_the_same_spirv_every_time():
    """LLVM's SPIR-V back end gives one module other ids in up to 4 emissions in 10 (fewer
    early in a process), so a kernel defined again was built on the device again (a CI
    failure of test_device_builds)."""
    a = dpnp.arange(8, dtype="f4")
    out = dpnp.zeros(8, dtype="f4")
    kernel = _scale(7919)  # a literal no other test uses: its builds are this test's own
    kernel[8](a, out).wait()
    (compiled,) = kernel.definitions.values()
    emitted = {
        emit.emit_spirv(llvm.parse_assembly(compiled.llvm_ir), compiled.llvm_ir, 3, False, "scale")
        for _ in range(60)
    }
    assert len(emitted) == 1
    for _ in range(4):
        again = _scale(7919)
        again[8](a, out).wait()
        (redefined,) = again.definitions.values()
        assert redefined.spirv == compiled.spirv
        assert redefined.sycl_kernel is compiled.sycl_kernel
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.arange(8, dtype="f4") * 7919)


def _numba_closure_inlining(monkeypatch) -> None:
    """The device pipeline with Numba's own closure-inlining pass (rebuilt for the test)."""
    replaced = dict(device_pipeline._REPLACED_PASSES)
    del replaced[untyped_passes.InlineClosureLikes]
    monkeypatch.setattr(device_pipeline, "_REPLACED_PASSES", replaced)
    monkeypatch.setattr(device_pipeline._DeviceCompiler, "_pipelines", {})


@pytest.mark.parametrize("seed", range(12, 24))
def test_closure_inlining_skipped_where_nothing_inlines_changes_no_code(seed, monkeypatch):
    """The device pipeline skips Numba's closure inlining for functions with nothing it could
    inline (10% of a compile); random kernels must compile to the same code either way."""
    case = kernel_fuzzer.generate(kernel_fuzzer.case_seed(20261201, seed))
    sig = _fuzz_signature(case)

    def compiled() -> str:
        namespace = {"dk": dk, "np": np, "math": math}
        exec(compile(case["kernel"], "<fuzz kernel>", "exec"), namespace)
        options = {"debug": case["debug"], "opt_level": case["opt_level"]}
        kernel = dk.kernel(namespace["kern"], sub_group_size=case.get("sub_group_size"), **options)
        kernel.compile(sig)
        return _normalised_llvm(kernel, sig)

    skipping = compiled()
    _numba_closure_inlining(monkeypatch)
    assert skipping == compiled()


def test_closures_in_a_kernel_are_still_inlined(monkeypatch):
    ran = []
    numba_pass = untyped_passes.InlineClosureLikes.run_pass

    def recording(self, state):
        ran.append(state.func_id.func_name)
        return numba_pass(self, state)

    monkeypatch.setattr(untyped_passes.InlineClosureLikes, "run_pass", recording)

    def with_closures(a, out):
        i = dk.get_global_id(0)
        scale = lambda v: v * 3 + i  # noqa: E731

        def shift(v):
            return v - 1

        out[i] = shift(scale(a[i]))

    def without(a, out):
        i = dk.get_global_id(0)
        out[i] = a[i] * 3 + i - 1

    a = dpnp.arange(16, dtype="f4")
    expected = np.arange(16, dtype="f4") * 4 - 1
    for function in (with_closures, without):
        out = dpnp.zeros(16, dtype="f4")
        dk.kernel(function)[16](a, out).wait()
        np.testing.assert_array_equal(dpnp.asnumpy(out), expected)
    assert ran == ["with_closures"]
