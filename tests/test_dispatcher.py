"""JitKernel, matching and launching: every clause of API.md §2."""

from __future__ import annotations

import dataclasses
import gc
import os
import re
import subprocess
import sys
import threading

import dpctl
import dpctl.program
import dpnp
import numpy as np
import pytest
from conftest_kernels import CPU, assert_close, dk, to_device, to_host
from dpctl.enum_types import event_status_type
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import param_id

F4 = dk.usm_array(dk.float32, 1)
F8 = dk.usm_array(dk.float64, 1)
F4_A = dk.usm_array(dk.float32, 1, "A")
F8_2D_A = dk.usm_array(dk.float64, 2, "A")

SIG_F4 = dk.void(F4, F4, F4)
SIG_F8 = dk.void(F8, F8, F8)


@dk.kernel([SIG_F4, SIG_F8])
def vecadd(a, b, c):
    i = dk.get_global_id(0)
    c[i] = a[i] + b[i]


@dk.kernel(dk.void(F4_A, F4_A))
def copy_any_layout(src, dst):
    i = dk.get_global_id(0)
    dst[i] = src[i]


@dk.kernel(dk.void(F4, F4))
def copy_c_only(src, dst):
    i = dk.get_global_id(0)
    dst[i] = src[i]


@dk.kernel
def lazy_add_one(a):
    i = dk.get_global_id(0)
    a[i] += 1


def _f32(n, start=0.0):
    return to_device(np.arange(start, start + n, dtype="f4"))


SPIRV_MAGIC = (0x07230203).to_bytes(4, "little")


# ---------------------------------------------------------------------------------------------
# Eager and lazy compilation, definitions, signatures, inspection
# ---------------------------------------------------------------------------------------------


def test_eager_compiles_every_signature_at_decoration():
    assert vecadd.stats.compiles == 2
    assert list(vecadd.definitions) == [SIG_F4, SIG_F8]
    assert vecadd.signatures == [SIG_F4, SIG_F8]
    # Keyed by the declared signatures: an equal signature built another way finds them.
    same = dk.void(*[dk.usm_array("f4", 1, device="cpu")] * 3)
    assert same in vecadd.definitions
    assert vecadd.definitions[same] is vecadd.definitions[SIG_F4]


def test_eager_decoration_forms():
    def body(a, b, c):
        i = dk.get_global_id(0)
        c[i] = a[i] * b[i]

    single = dk.kernel(SIG_F4)(body)
    listed = dk.kernel([SIG_F8, SIG_F4])(body)
    assert single.signatures == [SIG_F4]
    assert single.stats.compiles == 1
    assert listed.signatures == [SIG_F8, SIG_F4]
    assert listed.stats.compiles == 2
    a, b, c = _f32(8, 1), _f32(8, 2), dpnp.zeros(8, dtype="f4")
    single[8](a, b, c)
    assert_close(c, np.arange(1, 9, dtype="f4") * np.arange(2, 10, dtype="f4"))
    assert single.stats.compiles == 1  # launching never compiles an eager kernel


def test_non_void_kernel_signature_is_rejected():
    with pytest.raises(TypeError):

        @dk.kernel(dk.float32(F4))
        def bad(a):
            a[0] = 1


def test_compiled_kernel_fields():
    for sig in vecadd.signatures:
        ck = vecadd.definitions[sig]
        assert ck.signature == sig
        assert ck.device == CPU
        assert isinstance(ck.sycl_kernel, dpctl.program.SyclKernel)
        assert isinstance(ck.spirv, bytes) and ck.spirv[:4] == SPIRV_MAGIC
        assert isinstance(ck.llvm_ir, str) and "spir" in ck.llvm_ir
        attrs = ck.attrs
        assert dataclasses.is_dataclass(attrs)
        names = {f.name for f in dataclasses.fields(attrs)}
        assert names >= {
            "preferred_work_group_size_multiple",
            "max_work_group_size",
            "private_mem_size",
            "max_sub_group_size",
            "max_num_sub_groups",
            "compile_num_sub_groups",
            "compile_sub_group_size",
            "num_args",
        }
        assert attrs.max_work_group_size >= 1
        assert attrs.preferred_work_group_size_multiple >= 1
        assert attrs.num_args == ck.sycl_kernel.num_args
        with pytest.raises(dataclasses.FrozenInstanceError):
            attrs.max_work_group_size = 1


AFTER_A_PARALLEL_LOOP = """
import dpex_kernels as dk, dpnp, numba, numpy as np

@numba.njit(parallel=True)
def host_add(a, b, c):
    for i in numba.prange(a.size):
        c[i] = a[i] + b[i]

@dk.kernel
def add(a, b, c):
    i = dk.get_global_id(0)
    c[i] = a[i] + b[i]

x = np.ones(1 << 20, np.float32)
d = dpnp.ones(64, dtype="f4")
add[64](d, d, d).wait()
for _ in range(3):
    host_add(x, x, x.copy())  # Numba's TBB pool busy when the next line starts spirv-dis
    (text,) = add.inspect_spirv().values()
    assert "OpEntryPoint" in text, text[:200]
assert numba.threading_layer() == "tbb", numba.threading_layer()
"""


def test_inspection_right_after_a_parallel_loop_prints_nothing(tmp_path):
    """spirv-dis runs in a spawned child: a fork() with Numba's TBB pool busy made Numba print
    "Unable to join threads to shut down before fork()" for every inspection."""
    script = tmp_path / "inspect_after_parallel_loop.py"
    script.write_text(AFTER_A_PARALLEL_LOOP)
    env = {**os.environ, "NUMBA_THREADING_LAYER": "tbb"}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == "", done.stdout + done.stderr


def test_inspection():
    for sig in vecadd.signatures:
        assert isinstance(vecadd.inspect_llvm(sig), str)
        assert isinstance(vecadd.inspect_spirv(sig), str)
        assert isinstance(vecadd.inspect_types(sig), str)
        assert vecadd.inspect_llvm(sig) == vecadd.definitions[sig].llvm_ir
    for inspect in (vecadd.inspect_llvm, vecadd.inspect_spirv, vecadd.inspect_types):
        everything = inspect()
        assert isinstance(everything, dict)
        assert list(everything) == vecadd.signatures
        assert all(isinstance(v, str) and v for v in everything.values())


def test_compile_adds_a_signature_in_order():
    def body(a, b):
        i = dk.get_global_id(0)
        b[i] = a[i] * 3

    k = dk.kernel(dk.void(F4, F4))(body)
    assert k.stats.compiles == 1
    ck = k.compile(dk.void(F8, F8))
    assert k.stats.compiles == 2
    assert k.signatures == [dk.void(F4, F4), dk.void(F8, F8)]
    assert k.definitions[dk.void(F8, F8)] is ck
    assert k.compile(dk.void(F8, F8)) is ck  # already there: nothing compiles
    assert k.stats.compiles == 2
    out = dpnp.zeros(4)
    k[4](to_device(np.arange(4.0)), out)
    assert_close(out, np.arange(4.0) * 3)


def test_lazy_compiles_once_per_type_tuple():
    @dk.kernel
    def scale(a, b):
        i = dk.get_global_id(0)
        b[i] = a[i] * 2

    assert scale.stats.compiles == 0
    assert scale.definitions == {}
    a, b = _f32(16), dpnp.zeros(16, dtype="f4")
    scale[16](a, b)
    scale[16](a, b)
    scale[8](_f32(8, 5), dpnp.zeros(8, dtype="f4"))  # new arrays, same types
    assert scale.stats.compiles == 1
    assert scale.signatures == [dk.void(F4, F4)]
    assert_close(b, np.arange(16, dtype="f4") * 2)
    scale[4](to_device(np.arange(4.0)), dpnp.zeros(4))
    assert scale.stats.compiles == 2
    assert scale.signatures == [dk.void(F4, F4), dk.void(F8, F8)]
    scale[4](to_device(np.arange(4.0)), dpnp.zeros(4))
    assert scale.stats.compiles == 2


def test_launch_returns_sycl_event_and_is_usable():
    a, b, c = _f32(32), _f32(32, 1), dpnp.zeros(32, dtype="f4")
    ev = vecadd[dk.Range(32)](a, b, c)
    assert isinstance(ev, dpctl.SyclEvent)
    ev.wait()
    assert ev.execution_status == event_status_type.complete
    assert_close(c, np.arange(32, dtype="f4") * 2 + 1)


@pytest.mark.parametrize(
    "launch",
    [32, (32,), dk.Range(32), dk.NdRange((32,), (8,)), dk.NdRange(dk.Range(32), dk.Range(4))],
    ids=["int", "tuple", "Range", "NdRange-tuples", "NdRange-Ranges"],
)
def test_range_forms(launch):
    a, b, c = _f32(32), _f32(32), dpnp.zeros(32, dtype="f4")
    vecadd[launch](a, b, c).wait()
    assert_close(c, np.arange(32, dtype="f4") * 2)


# ---------------------------------------------------------------------------------------------
# Signature matching
# ---------------------------------------------------------------------------------------------


def _assert_mismatch(kernel, args, name, position, field):
    before = dict(kernel.definitions)
    compiles = kernel.stats.compiles
    with pytest.raises(dk.KernelSignatureError) as excinfo:
        kernel[4](*args)
    assert isinstance(excinfo.value, TypeError)
    msg = str(excinfo.value)
    assert f"'{kernel.__name__}'" in msg or kernel.__name__ in msg, msg
    assert name in msg, msg
    assert re.search(rf"\b{position}\b", msg), msg
    assert field in msg, msg
    assert kernel.definitions == before
    assert kernel.signatures == list(before)
    assert kernel.stats.compiles == compiles
    return msg


def test_mismatch_dtype():
    a = to_device(np.zeros(4, dtype="i4"))
    msg = _assert_mismatch(vecadd, (a, _f32(4), _f32(4)), "'a'", 0, "dtype")
    assert "int32" in msg  # the type of the argument given
    # Both declared signatures are explained.
    assert str(SIG_F4) in msg or "float32" in msg
    assert "float64" in msg


def test_mismatch_ndim():
    c = dpnp.zeros((2, 2), dtype="f4")
    _assert_mismatch(copy_c_only, (_f32(4), c), "'dst'", 1, "ndim")


def test_mismatch_layout_c_signature_rejects_strided_view():
    strided = _f32(8)[::2]
    _assert_mismatch(copy_c_only, (strided, _f32(4)), "'src'", 0, "layout")
    reversed_view = _f32(4)[::-1]
    _assert_mismatch(copy_c_only, (_f32(4), reversed_view), "'dst'", 1, "layout")


def test_mismatch_usm_type():
    shared = dpnp.zeros(4, dtype="f4", usm_type="shared")
    _assert_mismatch(copy_c_only, (_f32(4), shared), "'dst'", 1, "usm_type")


def test_mismatch_third_argument_named():
    c = to_device(np.zeros(4, dtype="f8"))
    _assert_mismatch(vecadd, (_f32(4), _f32(4), c), "'c'", 2, "dtype")


def test_usm_type_of_signature_is_honoured():
    shared_t = dk.usm_array(dk.float32, 1, usm_type="shared")

    @dk.kernel(dk.void(shared_t))
    def fill_shared(a):
        a[dk.get_global_id(0)] = 7

    x = dpnp.zeros(4, dtype="f4", usm_type="shared")
    fill_shared[4](x)
    assert_close(x, np.full(4, 7, dtype="f4"))
    with pytest.raises(dk.KernelSignatureError, match="usm_type"):
        fill_shared[4](dpnp.zeros(4, dtype="f4"))


@pytest.mark.parametrize(
    "view",
    [
        lambda d: d,
        lambda d: d[::2],
        lambda d: d[::-1],
        lambda d: d[3:],
        lambda d: d.reshape(4, 6).T[1],  # a 1-d row of an F view: stride 6
    ],
    ids=["C", "step2", "reversed", "offset", "row-of-F"],
)
def test_layout_a_accepts_any_strides(view):
    base = np.arange(24, dtype="f4")
    src = view(to_device(base))
    ref = view(base)
    dst = dpnp.zeros(ref.size, dtype="f4")
    copy_any_layout[ref.size](src, dst)
    # A strided output through "A" too.
    dst2_base = dpnp.zeros(2 * ref.size, dtype="f4")
    copy_any_layout[ref.size](src, dst2_base[::2])
    assert_close(dst, ref)
    assert_close(dst2_base[::2], ref)
    assert_close(dst2_base[1::2], np.zeros(ref.size, dtype="f4"))
    assert copy_any_layout.stats.compiles == 1


def test_layout_a_accepts_f_ordered_2d():
    @dk.kernel(dk.void(F8_2D_A, F8_2D_A))
    def copy2(src, dst):
        i = dk.get_global_id(0)
        j = dk.get_global_id(1)
        dst[i, j] = src[i, j]

    base = np.arange(12.0).reshape(3, 4)
    for src, ref in (
        (to_device(base), base),
        (dpnp.asarray(base, order="F"), base),
        (to_device(base).T, base.T),
        (to_device(base)[:, 1:], base[:, 1:]),
    ):
        dst = dpnp.zeros(ref.shape)
        copy2[ref.shape](src, dst)
        assert_close(dst, ref)
    assert copy2.stats.compiles == 1


def test_lazy_kernel_specialises_on_layout():
    @dk.kernel
    def copy_lazy(src, dst):
        i = dk.get_global_id(0)
        dst[i] = src[i]

    base = to_device(np.arange(8, dtype="f4"))
    d1, d2 = dpnp.zeros(8, dtype="f4"), dpnp.zeros(4, dtype="f4")
    copy_lazy[8](base, d1)
    copy_lazy[4](base[::2], d2)
    assert [s.args[0].layout for s in copy_lazy.signatures] == ["C", "A"]
    assert_close(d2, np.arange(0, 8, 2, dtype="f4"))


# ---------------------------------------------------------------------------------------------
# Queues
# ---------------------------------------------------------------------------------------------


def test_other_queue_on_same_device_needs_no_recompile():
    q2 = dpctl.SyclQueue("opencl:cpu")
    a = dpnp.ones(8, dtype="f4", sycl_queue=q2)
    b = dpnp.ones(8, dtype="f4", sycl_queue=q2)
    c = dpnp.zeros(8, dtype="f4", sycl_queue=q2)
    compiles = vecadd.stats.compiles
    sigs = vecadd.signatures
    ev = vecadd[8](a, b, c)
    assert isinstance(ev, dpctl.SyclEvent)
    assert_close(c, np.full(8, 2, dtype="f4"))
    assert vecadd.stats.compiles == compiles
    assert vecadd.signatures == sigs
    # And a lazy kernel does not compile again for the second queue.
    x = dpnp.zeros(8, dtype="f4")
    lazy_add_one[8](x)
    n = lazy_add_one.stats.compiles
    y = dpnp.zeros(8, dtype="f4", sycl_queue=q2)
    lazy_add_one[8](y)
    lazy_add_one[8](y)
    assert lazy_add_one.stats.compiles == n
    assert_close(y, np.full(8, 2, dtype="f4"))


def test_arrays_on_different_queues_raise_execution_queue_error():
    q2 = dpctl.SyclQueue("opencl:cpu")
    a = dpnp.ones(8, dtype="f4")
    b = dpnp.ones(8, dtype="f4", sycl_queue=q2)
    c = dpnp.zeros(8, dtype="f4")
    assert a.sycl_queue != b.sycl_queue
    compiles = vecadd.stats.compiles
    with pytest.raises(dk.ExecutionQueueError) as excinfo:
        vecadd[8](a, b, c)
    assert isinstance(excinfo.value, ValueError)
    msg = str(excinfo.value)
    assert "'a'" in msg and "'b'" in msg, msg
    assert CPU in msg, msg
    assert vecadd.stats.compiles == compiles
    assert_close(c, np.zeros(8, dtype="f4"))
    with pytest.raises(dk.ExecutionQueueError):
        lazy_add_one_two[8](a, b)


@dk.kernel
def lazy_add_one_two(a, b):
    i = dk.get_global_id(0)
    a[i] += 1
    b[i] += 1


@dk.kernel
def no_arrays(x, y):
    z = x + y  # noqa: F841  (nothing to write to: runs for its own sake)


def test_kernel_without_array_arguments_runs_on_default_device():
    ev = no_arrays[4](1, 2.5)
    assert isinstance(ev, dpctl.SyclEvent)
    ev.wait()
    (sig,) = no_arrays.signatures
    assert no_arrays.definitions[sig].device == dpctl.select_default_device().filter_string
    assert no_arrays.definitions[sig].device == CPU


# ---------------------------------------------------------------------------------------------
# What may be passed
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "hint"),
    [
        (np.zeros(4, dtype="f4"), "dpnp.asarray"),
        ([1.0, 2.0, 3.0, 4.0], "dpnp.asarray"),
        (None, "pass"),
        ("abc", "pass"),
        (object(), "pass"),
    ],
    ids=["numpy", "list", "None", "str", "object"],
)
@pytest.mark.parametrize("which", ["eager", "lazy"])
def test_non_usm_arguments_raise_type_error(bad, hint, which):
    kernel = vecadd if which == "eager" else lazy_add_one_two
    args = (_f32(4), bad, dpnp.zeros(4, dtype="f4"))[: kernel.nparams if which == "lazy" else 3]
    before = dict(kernel.definitions)
    compiles = kernel.stats.compiles
    with pytest.raises(TypeError) as excinfo:
        kernel[4](*args)
    msg = str(excinfo.value)
    assert hint in msg, msg
    assert kernel.definitions == before
    assert kernel.stats.compiles == compiles


@pytest.mark.parametrize("nargs", [0, 2, 4])
def test_wrong_argument_count_raises_type_error(nargs):
    args = [_f32(4) for _ in range(nargs)]
    with pytest.raises(TypeError):
        vecadd[4](*args)
    with pytest.raises(TypeError):
        lazy_add_one[4](*(args + [_f32(4)]) if nargs else ())


def test_unknown_keyword_raises_type_error():
    with pytest.raises(TypeError):
        vecadd[4](_f32(4), _f32(4), dpnp.zeros(4, dtype="f4"), queue=None)


def test_calling_without_range_raises_type_error():
    with pytest.raises(TypeError):
        vecadd(_f32(4), _f32(4), dpnp.zeros(4, dtype="f4"))


# ---------------------------------------------------------------------------------------------
# Scalars
# ---------------------------------------------------------------------------------------------

OUT_I8 = dk.usm_array(dk.int64, 1)
OUT_F8 = dk.usm_array(dk.float64, 1)
OUT_B = dk.usm_array(dk.boolean, 1)


def _store_kernel(out_t, scalar_t):
    @dk.kernel(dk.void(out_t, scalar_t))
    def store(out, s):
        out[0] = s

    return store


STORE_I32 = _store_kernel(OUT_I8, dk.int32)
STORE_U32 = _store_kernel(OUT_I8, dk.uint32)
STORE_I8 = _store_kernel(OUT_I8, dk.int8)
STORE_F32 = _store_kernel(OUT_F8, dk.float32)
STORE_F64 = _store_kernel(OUT_F8, dk.float64)
STORE_BOOL = _store_kernel(OUT_B, dk.boolean)

_SCALAR_CASES = [
    # kernel, value, accepted, expected stored value
    (STORE_I32, 5, True, 5),
    (STORE_I32, -(2**31), True, -(2**31)),
    (STORE_I32, 2**31 - 1, True, 2**31 - 1),
    (STORE_I32, 2**31, False, None),
    (STORE_I32, 2**40, False, None),
    (STORE_I32, True, False, None),
    (STORE_I32, 1.0, False, None),
    (STORE_I32, 1 + 0j, False, None),
    (STORE_I32, np.int16(-7), True, -7),
    (STORE_I32, np.int32(9), True, 9),
    (STORE_I32, np.uint16(65535), True, 65535),
    (STORE_I32, np.int64(3), False, None),
    (STORE_I32, np.uint32(3), False, None),
    (STORE_I32, np.float32(1.0), False, None),
    (STORE_U32, 2**32 - 1, True, 2**32 - 1),
    (STORE_U32, -1, False, None),
    (STORE_I8, -128, True, -128),
    (STORE_I8, 127, True, 127),
    (STORE_I8, 128, False, None),
    (STORE_I8, np.int8(-5), True, -5),
    (STORE_F32, 1.5, True, 1.5),
    (STORE_F32, 3, True, 3.0),
    (STORE_F32, np.float32(0.25), True, 0.25),
    (STORE_F32, np.float64(0.25), False, None),
    (STORE_F32, np.int8(4), True, 4.0),
    (STORE_F32, True, False, None),
    (STORE_F32, 1j, False, None),
    (STORE_F64, 0.1, True, 0.1),
    (STORE_F64, -7, True, -7.0),
    (STORE_F64, np.float32(0.5), True, 0.5),
    (STORE_F64, np.int32(-9), True, -9.0),
    (STORE_F64, False, False, None),
    (STORE_BOOL, True, True, True),
    (STORE_BOOL, False, True, False),
    (STORE_BOOL, np.bool_(True), True, True),
    (STORE_BOOL, 1, False, None),
    (STORE_BOOL, 0.0, False, None),
]


@pytest.mark.parametrize(
    ("kernel", "value", "accepted", "expected"),
    _SCALAR_CASES,
    ids=[f"{k.signatures[0].args[1]}-{v!r}" for k, v, _, _ in _SCALAR_CASES],
)
def test_scalar_matching_rules(kernel, value, accepted, expected):
    out_dtype = {STORE_F32: "f8", STORE_F64: "f8", STORE_BOOL: "?"}.get(kernel, "i8")
    out = dpnp.zeros(1, dtype=out_dtype)
    compiles = kernel.stats.compiles
    if accepted:
        kernel[1](out, value)
        assert to_host(out)[0] == expected
    else:
        with pytest.raises(dk.KernelSignatureError) as excinfo:
            kernel[1](out, value)
        assert "'s'" in str(excinfo.value)
        assert "1" in str(excinfo.value)
    assert kernel.stats.compiles == compiles


@settings(max_examples=40, deadline=None)
@given(value=st.one_of(st.integers(-(2**33), 2**33), st.integers(-(2**70), 2**70)))
def test_python_int_matches_int32_iff_it_fits(value):
    out = dpnp.zeros(1, dtype="i8")
    if -(2**31) <= value < 2**31:
        STORE_I32[1](out, value)
        assert to_host(out)[0] == value
    else:
        with pytest.raises(dk.KernelSignatureError):
            STORE_I32[1](out, value)
    assert STORE_I32.stats.compiles == 1


def test_scalar_value_decides_per_call_not_per_type():
    # The same Python type (int) fits in one call and not in the next: each call re-checks.
    out = dpnp.zeros(1, dtype="i8")
    STORE_I32[1](out, 7)
    with pytest.raises(dk.KernelSignatureError):
        STORE_I32[1](out, 2**40)
    STORE_I32[1](out, -3)
    assert to_host(out)[0] == -3


# ---------------------------------------------------------------------------------------------
# Ranges
# ---------------------------------------------------------------------------------------------


def _bad_range_values():
    return [
        pytest.param(lambda: dk.Range(), id="Range()"),
        pytest.param(lambda: dk.Range(1, 2, 3, 4), id="Range-4d"),
        pytest.param(lambda: dk.Range(-1), id="Range-negative"),
        pytest.param(lambda: dk.Range(2.5), id="Range-float"),
        pytest.param(lambda: dk.Range("4"), id="Range-str"),
        pytest.param(lambda: dk.NdRange((10,), (3,)), id="NdRange-not-dividing"),
        pytest.param(lambda: dk.NdRange((8, 8), (4,)), id="NdRange-rank-mismatch"),
        pytest.param(lambda: dk.NdRange((8,), (0,)), id="NdRange-local-zero"),
        pytest.param(lambda: dk.NdRange((8,), (-2,)), id="NdRange-local-negative"),
        pytest.param(lambda: dk.NdRange((8.0,), (2,)), id="NdRange-float"),
        pytest.param(lambda: (), id="empty-tuple"),
        pytest.param(lambda: (1, 2, 3, 4), id="tuple-4d"),
        pytest.param(lambda: -5, id="negative-int"),
        pytest.param(lambda: 2.0, id="float"),
        pytest.param(lambda: (4, 2.0), id="tuple-with-float"),
        pytest.param(lambda: "8", id="str"),
        pytest.param(lambda: None, id="None"),
        pytest.param(lambda: True, id="bool"),
        pytest.param(lambda: [8], id="list"),
        pytest.param(lambda: (4, -1), id="tuple-negative"),
        pytest.param(lambda: 2**70, id="huge"),
    ]


@pytest.mark.parametrize("make", _bad_range_values())
def test_invalid_ranges_raise_before_submission(make):
    a, b = _f32(8), _f32(8)
    c = dpnp.full(8, -1, dtype="f4")
    compiles = vecadd.stats.compiles
    with pytest.raises(dk.InvalidRangeError):
        vecadd[make()](a, b, c)
    assert isinstance(dk.InvalidRangeError("x"), ValueError)
    assert_close(c, np.full(8, -1, dtype="f4"))
    assert vecadd.stats.compiles == compiles


def test_local_size_larger_than_max_work_group_size():
    attrs = vecadd.definitions[SIG_F4].attrs
    too_big = attrs.max_work_group_size * 2
    a, b = _f32(too_big), _f32(too_big)
    c = dpnp.full(too_big, -1, dtype="f4")
    with pytest.raises(dk.InvalidRangeError) as excinfo:
        vecadd[dk.NdRange((too_big,), (too_big,))](a, b, c)
    assert str(attrs.max_work_group_size) in str(excinfo.value)
    assert_close(c, np.full(too_big, -1, dtype="f4"))
    # 2-d: each dimension fits, the product does not.
    side = int(np.ceil(np.sqrt(attrs.max_work_group_size))) + 1
    with pytest.raises(dk.InvalidRangeError):
        index_2d[dk.NdRange((side, side), (side, side))](dpnp.zeros((side, side)))
    # Exactly the maximum is fine.
    n = attrs.max_work_group_size
    vecadd[dk.NdRange((n,), (n,))](_f32(n), _f32(n), dpnp.zeros(n, dtype="f4")).wait()


@dk.kernel
def index_2d(out):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    out[i, j] = i * 100 + j


@pytest.mark.parametrize(
    "launch",
    [
        dk.Range(0),
        dk.Range(4, 0),
        dk.Range(0, 4, 4),
        0,
        (3, 0),
        dk.NdRange((0,), (4,)),
        dk.NdRange((4, 0), (2, 1)),
    ],
    ids=["R0", "R4x0", "R0x4x4", "int0", "tuple3x0", "Nd0", "Nd4x0"],
)
def test_zero_range_launches_nothing(launch):
    nd = (
        len(launch.global_range)
        if isinstance(launch, dk.NdRange)
        else (len(launch) if isinstance(launch, tuple) else 1)
    )
    if nd == 1:
        out = dpnp.full(8, -1, dtype="f4")
        ev = vecadd[launch](_f32(8), _f32(8), out)
    else:
        out = dpnp.full((4, 4), -1.0)
        ev = index_2d[launch](out) if nd == 2 else index_3d[launch](dpnp.full((4, 4, 4), -1.0))
    assert isinstance(ev, dpctl.SyclEvent)
    assert ev.execution_status == event_status_type.complete
    ev.wait()
    assert (to_host(out) == -1).all()


@dk.kernel
def index_3d(out):
    out[dk.get_global_id(0), dk.get_global_id(1), dk.get_global_id(2)] = 1.0


def test_zero_range_still_checks_arguments():
    # Arguments are matched even when nothing runs.
    with pytest.raises(dk.KernelSignatureError):
        vecadd[0](to_device(np.zeros(4, dtype="i4")), _f32(4), _f32(4))
    with pytest.raises(TypeError):
        vecadd[0](np.zeros(4, dtype="f4"), _f32(4), _f32(4))


def test_range_and_ndrange_objects():
    r = dk.Range(3, 4)
    assert tuple(r) == (3, 4)
    nd = dk.NdRange(dk.Range(8, 4), dk.Range(2, 2))
    assert tuple(nd.global_range) == (8, 4)
    assert tuple(nd.local_range) == (2, 2)
    assert isinstance(dk.InvalidRangeError("x"), (ValueError, TypeError))


# ---------------------------------------------------------------------------------------------
# depends_on, asynchrony, lifetimes, ordering with dpnp
# ---------------------------------------------------------------------------------------------


@dk.kernel
def slow_scale(a, out, reps):
    # Enough work per item that the launch is still running when the host moves on.
    i = dk.get_global_id(0)
    acc = a[i]
    for _ in range(reps):
        acc = acc * 0.5 + a[i] * 0.5
    out[i] = acc + 1.0


def test_depends_on_forms():
    n = 64
    a = to_device(np.arange(n, dtype="f8"))
    b, c, d, e = (dpnp.zeros(n) for _ in range(4))
    ev1 = slow_scale[n](a, b, 100)
    ev2 = slow_scale[n](b, c, 100, depends_on=ev1)
    ev3 = slow_scale[n](c, b, 1, depends_on=[ev1, ev2])
    ev4 = slow_scale[n](a, d, 1, depends_on=[])
    ev5 = slow_scale[n](d, e, 1, depends_on=(ev4,))
    ev6 = slow_scale[n](a, d, 1, depends_on=None)
    for ev in (ev1, ev2, ev3, ev4, ev5, ev6):
        assert isinstance(ev, dpctl.SyclEvent)
    for ev in (ev3, ev5, ev6):
        ev.wait()
    assert_close(b, np.arange(n) + 3.0)
    assert_close(d, np.arange(n) + 1.0)
    assert_close(e, np.arange(n) + 2.0)


@pytest.mark.parametrize("bad", [5, "event", [5], [None], object()], ids=param_id)
def test_depends_on_rejects_non_events(bad):
    c = dpnp.full(4, -1, dtype="f4")
    with pytest.raises(TypeError):
        vecadd[4](_f32(4), _f32(4), c, depends_on=bad)
    assert_close(c, np.full(4, -1, dtype="f4"))


def test_depends_on_is_keyword_only():
    ev = vecadd[4](_f32(4), _f32(4), dpnp.zeros(4, dtype="f4"))
    with pytest.raises(TypeError):
        vecadd[4](_f32(4), _f32(4), dpnp.zeros(4, dtype="f4"), ev)


def test_arguments_stay_alive_until_completion():
    n = 1 << 16
    outs = []
    for k in range(4):
        out = dpnp.zeros(n)
        # Temporaries: the only reference to the input is the launch.
        slow_scale[n](dpnp.full(n, float(k)), out, 200)
        outs.append(out)
    gc.collect()
    for k, out in enumerate(outs):
        assert_close(out, np.full(n, k + 1.0))


def test_temporaries_deleted_right_after_launch():
    n = 1 << 15
    out = dpnp.zeros(n, dtype="f4")
    a = dpnp.ones(n, dtype="f4")
    b = dpnp.full(n, 2.0, dtype="f4")
    vecadd[n](a, b, out)
    del a, b
    gc.collect()
    vecadd[n](dpnp.ones(n, dtype="f4"), dpnp.ones(n, dtype="f4"), out2 := dpnp.zeros(n, dtype="f4"))
    gc.collect()
    assert_close(out, np.full(n, 3, dtype="f4"))
    assert_close(out2, np.full(n, 2, dtype="f4"))


def test_dpnp_ordering_without_waits():
    n = 1 << 18
    for rep in range(10):
        x = dpnp.zeros(n, dtype="f4")
        lazy_add_one[n](x)
        got = dpnp.asnumpy(x)  # no wait: the order manager orders it after the kernel
        assert (got == 1).all(), (rep, np.unique(got))
        y = x * 2  # dpnp work after the kernel sees its result
        lazy_add_one[n](y)
        z = y + x
        assert (dpnp.asnumpy(z) == 4).all(), rep


def test_kernel_sees_pending_dpnp_work():
    n = 1 << 18
    for rep in range(5):
        x = dpnp.arange(n, dtype="f4")
        y = x * 3.0  # submitted by dpnp, not waited for
        out = dpnp.empty_like(y)
        vecadd[n](y, x, out)
        np.testing.assert_array_equal(dpnp.asnumpy(out), np.arange(n, dtype="f4") * 4, rep)


# ---------------------------------------------------------------------------------------------
# Threads
# ---------------------------------------------------------------------------------------------


def test_concurrent_first_calls_compile_each_type_once():
    @dk.kernel
    def threaded(a, out):
        i = dk.get_global_id(0)
        out[i] = a[i] * 3 + 1

    n = 256
    dtypes = ["f4", "f8"]
    barrier = threading.Barrier(8)
    results = {}
    errors = []

    def work(t):
        try:
            dtype = dtypes[t % 2]
            a = to_device(np.arange(n, dtype=dtype) + t)
            out = dpnp.zeros(n, dtype=dtype)
            barrier.wait()
            for _ in range(3):
                threaded[n](a, out)
            results[t] = (dtype, dpnp.asnumpy(out))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors, errors
    assert threaded.stats.compiles == 2
    assert len(threaded.signatures) == 2
    for t, (dtype, got) in results.items():
        assert_close(got, (np.arange(n, dtype=dtype) + t) * 3 + 1, dtype)
    assert len(results) == 8


# ---------------------------------------------------------------------------------------------
# Property: random arguments and ranges raise only documented errors
# ---------------------------------------------------------------------------------------------

HYP_SIGS = [
    dk.void(F4, F4, dk.int64),
    dk.void(F8_2D_A, F8_2D_A, dk.float64),
]


@dk.kernel(HYP_SIGS)
def hyp_target(a, b, s):
    # Bounds-checked on the flat global id, so any accepted range is safe.
    i = dk.get_global_id(0)
    if a.ndim == 1:
        if i < a.shape[0] and i < b.shape[0]:
            b[i] = a[i] + s
    else:
        if i < a.shape[0] and i < b.shape[0]:
            for j in range(min(a.shape[1], b.shape[1])):
                b[i, j] = a[i, j] + s


_DTYPES = ["f4", "f8", "i4", "i8", "u1", "?", "c8"]
Q2 = dpctl.SyclQueue("opencl:cpu")


@st.composite
def usm_arrays(draw):
    dtype = draw(st.sampled_from(_DTYPES))
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    usm_type = draw(st.sampled_from(["device", "device", "shared", "host"]))
    queue = draw(st.sampled_from([None, None, None, Q2]))
    x = dpnp.zeros(shape, dtype=dtype, usm_type=usm_type, sycl_queue=queue)
    if ndim >= 1 and draw(st.booleans()):
        x = x[::2]
    if ndim >= 2 and draw(st.booleans()):
        x = x.transpose()
    return x


_ARGS = st.one_of(
    usm_arrays(),
    usm_arrays(),
    st.builds(lambda n: np.zeros(n, dtype="f4"), st.integers(0, 4)),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.complex_numbers(allow_nan=False, allow_infinity=False, max_magnitude=10),
    st.none(),
    st.text(max_size=3),
    st.lists(st.integers(0, 3), max_size=3),
)

_RANGES = st.one_of(
    st.integers(-2, 12),
    st.tuples(st.integers(-1, 6)),
    st.tuples(st.integers(0, 6), st.integers(-1, 6)),
    st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)),
    st.just(()),
    st.floats(0, 10),
    st.none(),
    st.text(max_size=2),
    st.builds(lambda g, ell: ("nd", g, ell), st.integers(0, 12), st.integers(-1, 6)),
)

_DOCUMENTED = (TypeError, dk.InvalidRangeError, dk.ExecutionQueueError)


# Argument tuples that match (or nearly match) a declared signature, so that launches with
# random ranges actually run too.
_NEAR_VALID = st.tuples(
    st.integers(0, 8).map(lambda n: dpnp.zeros(n, dtype="f4")),
    st.integers(0, 8).map(lambda n: dpnp.zeros(n, dtype="f4")),
    st.one_of(st.integers(-(2**64), 2**64), st.booleans(), st.floats(-2, 2)),
).map(list) | st.tuples(
    st.integers(1, 4).map(lambda n: dpnp.zeros((n, 3))),
    st.integers(1, 4).map(lambda n: dpnp.zeros((3, n)).transpose()),
    st.one_of(st.floats(-2, 2), st.integers(-5, 5)),
).map(list)


@settings(max_examples=80, deadline=None)
@given(args=st.one_of(st.lists(_ARGS, min_size=2, max_size=4), _NEAR_VALID), launch=_RANGES)
def test_random_arguments_raise_only_documented_errors(args, launch):
    before = list(hyp_target.definitions.items())
    compiles = hyp_target.stats.compiles
    try:
        if isinstance(launch, tuple) and launch[:1] == ("nd",):
            launch = dk.NdRange((launch[1],), (launch[2],))
        ev = hyp_target[launch](*args)
    except _DOCUMENTED:
        pass
    else:
        assert isinstance(ev, dpctl.SyclEvent)
        ev.wait()
    assert list(hyp_target.definitions.items()) == before
    assert hyp_target.stats.compiles == compiles


def test_hypothesis_target_accepts_its_own_signatures():
    a = to_device(np.arange(6, dtype="f4"))
    b = dpnp.zeros(6, dtype="f4")
    hyp_target[6](a, b, 2)
    assert_close(b, np.arange(6, dtype="f4") + 2)
    a2 = to_device(np.arange(12.0).reshape(3, 4))
    b2 = dpnp.zeros((4, 3)).T
    hyp_target[3](a2, b2, 0.5)
    assert_close(b2, np.arange(12.0).reshape(3, 4) + 0.5)
