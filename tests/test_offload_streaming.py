"""Streaming loops: a 1-D prange loop of an offloaded function on a CPU device, past its
share of the last-level cache (streaming.streaming_bytes), runs as host-SIMD code with non-temporal
stores (compiler/host_simd.py, docs/offload.md); everything else takes the plain kernel.
Results are checked against NumPy."""

from __future__ import annotations

import importlib.util
import re
import tempfile
from pathlib import Path
from unittest import mock

import dpnp
import numpy as np
import pytest
from conftest import CPU
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import prange

import dpex_kernels as dk
from dpex_kernels.compiler.backend import host_simd
from dpex_kernels.offloading import streaming
from dpex_kernels.offloading.simd_reduction import CHUNK as REDUCTION_CHUNK
from dpex_kernels.offloading.streaming import CHUNK as STREAM_CHUNK
from dpex_kernels.offloading.streaming import streaming_bytes
from dpex_kernels.types.spec import ArraySpec

RNG = np.random.default_rng(11)


def usm(values):
    return dpnp.asarray(values, device=CPU)


def past_the_cache(arrays: int, itemsize: int) -> int:
    """An element count whose `arrays` arrays outgrow the cache, not a multiple of a chunk
    or of a vector: the last work-item runs a partial chunk and a scalar tail."""
    return streaming_bytes() // (arrays * itemsize) + STREAM_CHUNK + 13


def streaming_kernels(function) -> list:
    """The streaming kernels a call launched (each compiles on the first launch that would
    take it; a launch binds a kernel to its device)."""
    return [
        k
        for k in function.inspect_kernels()
        if "_stream_" in k.name and k.kernel.definitions[k.signature].bindings
    ]


def make_triad():
    @dk.offload
    def triad(a, b, c, s):
        for i in prange(a.shape[0]):
            a[i] = b[i] + s * c[i]

    return triad


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_a_loop_past_the_cache_streams_and_equals_numpy(dtype):
    triad = make_triad()
    n = past_the_cache(3, np.dtype(dtype).itemsize)
    b = (RNG.random(n) * 100).astype(dtype)
    c = (RNG.random(n) * 100).astype(dtype)
    s = np.dtype(dtype).type(3)
    a = usm(np.zeros(n, dtype))
    triad(a, usm(b), usm(c), s)
    np.testing.assert_array_equal(dpnp.asnumpy(a), b + s * c)
    (found,) = streaming_kernels(triad)
    assert "Nontemporal" in found.spirv and "SubgroupSize 1" in found.spirv


def test_a_streaming_loop_stores_one_vector_an_iteration():
    """No interleaved vectors (host_simd.py): what a chunk leaves to narrower stores of unknown
    alignment, which read each line before writing it, is then under one vector."""
    triad = make_triad()
    n = past_the_cache(3, 4)
    a = usm(np.zeros(n, "float32"))
    triad(a, usm(np.ones(n, "float32")), usm(np.ones(n, "float32")), np.float32(2))
    np.testing.assert_array_equal(dpnp.asnumpy(a), np.full(n, 3, "float32"))
    (found,) = streaming_kernels(triad)
    (llvm_ir,) = found.kernel.inspect_llvm().values()
    stores = [line for line in llvm_ir.splitlines() if "store <" in line]
    assert [line for line in stores if "!nontemporal" in line] == [stores[0]]
    vector = f"store <{host_simd.vector_bytes() // 4} x float>"  # 16 on AVX-512, 8 on AVX2
    assert vector in stores[0] and vector not in "".join(stores[1:])


def test_a_small_loop_takes_the_plain_kernel_and_compiles_no_streaming_one():
    triad = make_triad()
    b, c = RNG.random(5000), RNG.random(5000)
    a = usm(np.zeros(5000))
    triad(a, usm(b), usm(c), 2.0)
    np.testing.assert_array_equal(dpnp.asnumpy(a), b + 2.0 * c)
    assert streaming_kernels(triad) == []
    assert not [k for k in triad.inspect_kernels() if "_stream_" in k.name]  # compiled lazily


def test_a_loop_just_inside_its_share_of_the_cache_takes_the_plain_kernel():
    """The threshold is the arrays' bytes against streaming_bytes(), not the iteration count."""
    triad = make_triad()
    n = streaming_bytes() // (3 * 8) - 8
    b, c = RNG.random(n), RNG.random(n)
    a = usm(np.zeros(n))
    triad(a, usm(b), usm(c), 2.0)
    np.testing.assert_array_equal(dpnp.asnumpy(a), b + 2.0 * c)
    assert streaming_kernels(triad) == []
    assert streaming.worth_host_simd(n, STREAM_CHUNK, streaming_bytes())


def test_an_array_off_a_64_byte_boundary_takes_the_plain_kernel():
    """The streaming kernel assumes aligned arrays: a view one element in is not."""
    triad = make_triad()
    n = past_the_cache(3, 8)
    b, c = RNG.random(n + 1), RNG.random(n)
    whole = usm(b)
    view = whole[1:]
    assert view.get_array()._pointer % host_simd.ALIGNMENT != 0
    a = usm(np.zeros(n))
    triad(a, view, usm(c), 2.0)
    np.testing.assert_array_equal(dpnp.asnumpy(a), b[1:] + 2.0 * c)
    assert streaming_kernels(triad) == []


def test_a_loop_llvm_cannot_vectorise_is_refused_and_runs_plain():
    """A scattered store vectorises to a masked scatter, which SPIR-V back ends do not take:
    the streaming kernel is refused once, and every launch takes the plain kernel."""

    @dk.offload
    def scatter(out, x, where):
        for i in prange(x.shape[0]):
            out[where[i]] = x[i] * 2.0

    n = past_the_cache(3, 8)
    x = RNG.random(n)
    where = RNG.permutation(n).astype(np.int64)
    for _ in range(2):
        out = usm(np.zeros(n))
        scatter(out, usm(x), usm(where))
        expected = np.zeros(n)
        expected[where] = x * 2.0
        np.testing.assert_array_equal(dpnp.asnumpy(out), expected)
    assert streaming_kernels(scatter) == []


def test_a_loop_among_host_code_streams_too():
    """Every offloaded function is a Numba-compiled host function (the parfor design): host
    code around a loop does not keep it from streaming."""

    @dk.offload
    def scaled(a, b):
        factor = b.shape[0] * 0.5
        for i in prange(a.shape[0]):
            a[i] = b[i] * factor
        return factor

    n = past_the_cache(2, 8)
    b = RNG.random(n)
    a = usm(np.zeros(n))
    factor = scaled(a, usm(b))
    np.testing.assert_allclose(dpnp.asnumpy(a), b * factor)
    assert len(streaming_kernels(scaled)) == 1


def make_stencil():
    @dk.offload
    def stencil(x, y, c0, c1):
        n0, n1 = x.shape
        for i in prange(1, n0 - 1):
            for j in prange(1, n1 - 1):
                y[i, j] = c0 * x[i, j] + c1 * (
                    x[i - 1, j] + x[i + 1, j] + x[i, j - 1] + x[i, j + 1]
                )

    return stencil


def reference_stencil(x, c0, c1):
    y = np.zeros_like(x)
    y[1:-1, 1:-1] = c0 * x[1:-1, 1:-1] + c1 * (
        x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:]
    )
    return y


@pytest.mark.parametrize(
    "columns",
    [
        pytest.param(
            2 * STREAM_CHUNK + 16,
            marks=pytest.mark.xfail(
                strict=True,
                reason="LLVM keeps the parfor body of this stencil scalar (4 stores unrolled): "
                "its streaming kernel is refused and the plain kernel runs",
            ),
        ),
        3 * STREAM_CHUNK + 17,
    ],
)
def test_a_stencil_streams_where_its_rows_are_aligned(columns):
    """Rows of a multiple of 64 bytes stream (the first chunk of a row peels the iterations
    before column 16); other rows would leave every store unaligned and take the plain kernel."""
    stencil = make_stencil()
    rows = streaming_bytes() // (2 * 8 * columns) + 3
    x = RNG.random((rows, columns))
    y = usm(np.zeros((rows, columns)))
    stencil(usm(x), y, 0.5, 0.125)
    np.testing.assert_allclose(dpnp.asnumpy(y), reference_stencil(x, 0.5, 0.125), rtol=1e-12)
    aligned = columns * 8 % host_simd.ALIGNMENT == 0
    assert len(streaming_kernels(stencil)) == (1 if aligned else 0)


def test_a_3d_nest_and_a_1d_loop_with_a_start_stream_and_equal_numpy():
    @dk.offload
    def shifted(a, b):
        for i in prange(3, a.shape[0]):
            a[i] = b[i - 3] * 2.0

    @dk.offload
    def scaled3(a, b, s):
        n0, n1, n2 = a.shape
        for i in prange(n0):
            for j in prange(n1):
                for k in prange(2, n2):
                    a[i, j, k] = b[i, j, k - 2] * s + j

    n = past_the_cache(2, 8)
    b = RNG.random(n)
    a = usm(np.zeros(n))
    shifted(a, usm(b))
    expected = np.zeros(n)
    expected[3:] = b[:-3] * 2.0
    np.testing.assert_array_equal(dpnp.asnumpy(a), expected)
    shape = (3, streaming_bytes() // (2 * 8 * 3 * 2048) + 2, 2048)
    b3 = RNG.random(shape)
    a3 = usm(np.zeros(shape))
    scaled3(a3, usm(b3), 1.5)
    expected3 = np.zeros(shape)
    expected3[:, :, 2:] = b3[:, :, :-2] * 1.5 + np.arange(shape[1])[None, :, None]
    np.testing.assert_array_equal(dpnp.asnumpy(a3), expected3)
    assert len(streaming_kernels(shifted)) == 1 and len(streaming_kernels(scaled3)) == 1


def test_prange_with_a_step_takes_the_plain_kernel():
    @dk.offload
    def odd_half(a, b):
        for i in prange(1, a.shape[0], 2):
            a[i] = b[i] + 1.0

    n = past_the_cache(2, 8)
    b = RNG.random(n)
    a = usm(np.zeros(n))
    odd_half(a, usm(b))
    expected = np.zeros(n)
    expected[1::2] = b[1::2] + 1.0
    np.testing.assert_array_equal(dpnp.asnumpy(a), expected)
    assert streaming_kernels(odd_half) == []


def test_the_streaming_kernel_is_cached_with_its_host_simd_build(tmp_path, monkeypatch):
    monkeypatch.setenv("DPEX_KERNELS_CACHE_DIR", str(tmp_path))
    n = past_the_cache(3, 4)
    b, c = RNG.random(n).astype("f4"), RNG.random(n).astype("f4")
    stats = []
    for _ in range(2):
        triad = dk.offload(make_triad().py_func, cache=True)
        a = usm(np.zeros(n, "f4"))
        triad(a, usm(b), usm(c), np.float32(2))
        np.testing.assert_array_equal(dpnp.asnumpy(a), b + np.float32(2) * c)
        (found,) = streaming_kernels(triad)
        assert "Nontemporal" in found.spirv
        stats.append((found.kernel.stats.compiles, found.kernel.stats.cache_hits))
    assert stats == [(1, 0), (0, 1)]


# --- the compiler's side -------------------------------------------------------------------

KERNEL = (
    "define spir_kernel void @k(ptr addrspace(1) %.1, i64 %.2, i64 %.3, "
    "ptr addrspace(1) noundef %.4, i64 %.5, float %.6) #0 {\nentry:\n{body}\n}\n"
)
#: What KERNEL's parameters flatten: a 2-D float32 array, a 1-D float64 array, a float.
PARAMS = (
    ArraySpec("float32", 2, "C", "device", CPU),
    ArraySpec("float64", 1, "C", "device", CPU),
    "float32",
)


def test_a_kernel_assumes_aligned_arrays_and_rows_of_a_multiple_of_64_bytes():
    text = host_simd.assume_aligned(KERNEL.replace("{body}", "  ret void"), "k", PARAMS)
    assert "(ptr addrspace(1) align 64 %.1, i64 %.2, i64 %.3, " in text
    assert "ptr addrspace(1) noundef align 64 %.4, i64 %.5, float %.6)" in text
    # the 2-D array's last extent (%.3) is a multiple of 16 float32s; nothing of the 1-D one
    assert "entry:\n  %dpex.rows.0 = urem i64 %.3, 16\n" in text
    assert text.count("call void @llvm.assume") == 1
    assert "declare void @llvm.assume(i1)" in text


@pytest.mark.parametrize(
    ("address", "shape", "itemsize", "fits"),
    [
        (4096, (10,), 4, True),
        (4096 + 4, (10,), 4, False),
        (4096, (3, 16), 4, True),
        (4096, (3, 17), 4, False),
        (4096, (3, 4, 8), 8, True),
    ],
)
def test_what_a_launch_checks_is_what_the_kernel_assumes(address, shape, itemsize, fits):
    assert host_simd.fits(address, shape, itemsize) is fits


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("  store <32 x i8> %v, ptr addrspace(1) %.1, align 64", "vectors of [32] elements"),
        (
            "  call void @llvm.masked.scatter.v16f64.v16p1(<16 x double> %v, <16 x ptr> %p, "
            "<16 x i1> %m)",
            "llvm.masked.scatter",
        ),
        ("  store float %v, ptr addrspace(1) %.1, align 4", "not vectorised"),
        ("  store <16 x float> %v, ptr addrspace(1) %.1, align 4", "not vectorised"),
    ],
)
def test_vector_code_spir_v_lacks_or_no_vector_code_is_refused(body, problem):
    with pytest.raises(host_simd.Refusal, match=re.escape(problem)):
        host_simd.finish(KERNEL.replace("{body}", body), "k", "k", host_simd.STREAM)


@pytest.mark.parametrize("vector_bytes", [64, 32])
def test_vector_stores_aligned_to_the_host_s_vectors_stream(monkeypatch, vector_bytes):
    """AVX-512 hosts stream 64-byte stores, AVX2 hosts 32-byte ones; a store under the host's
    vector alignment stays plain, and sub-groups are one work-item."""
    monkeypatch.setattr(host_simd, "vector_bytes", lambda: vector_bytes)
    body = (
        "  store <16 x float> %v, ptr addrspace(1) %.1, align 64, !tbaa !3\n"
        "  store <8 x float> %w, ptr addrspace(1) %.1, align 32\n"
        "  store <4 x float> %x, ptr addrspace(1) %.1, align 16\n"
        "  %m = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %v, <16 x float> %v, "
        "<16 x float> %v)"
    )
    text = host_simd.finish(KERNEL.replace("{body}", body), "k", "k", host_simd.STREAM)
    assert "align 64, !nontemporal !{i32 1}, !tbaa !3" in text
    assert ("align 32, !nontemporal" in text) is (vector_bytes == 32)
    assert "align 16\n" in text  # under the host's vectors: a plain store
    assert "#0 !intel_reqd_sub_group_size !{i32 1} {" in text


# --- random loops: every streaming kernel against NumPy ------------------------------------

#: (loop source, NumPy source) of each leaf of an expression.
LEAVES = [("a[i]", "a"), ("b[i]", "b"), ("s", "s"), ("i", "i"), ("2", "2")]


def _combine(children):
    """(loop source, NumPy source) of an expression over the loop's operands."""
    binary = st.tuples(st.sampled_from(["+", "-", "*"]), children, children).map(
        lambda t: (f"({t[1][0]} {t[0]} {t[2][0]})", f"({t[1][1]} {t[0]} {t[2][1]})")
    )
    extreme = st.tuples(st.sampled_from(["min", "max"]), children, children).map(
        lambda t: (f"{t[0]}({t[1][0]}, {t[2][0]})", f"np.{t[0]}imum({t[1][1]}, {t[2][1]})")
    )
    absolute = children.map(lambda c: (f"abs({c[0]})", f"np.abs({c[1]})"))
    chosen = st.tuples(children, children, children, children).map(
        lambda t: (
            f"({t[0][0]} if {t[1][0]} > {t[2][0]} else {t[3][0]})",
            f"np.where({t[1][1]} > {t[2][1]}, {t[0][1]}, {t[3][1]})",
        )
    )
    return st.one_of(binary, extreme, absolute, chosen)


EXPRESSIONS = st.recursive(st.sampled_from(LEAVES), _combine, max_leaves=5)


@st.composite
def loops(draw):
    """A 1-D prange loop writing one or two outputs, some stores conditional."""
    first, second = draw(EXPRESSIONS), draw(EXPRESSIONS)
    conditional = draw(st.booleans())
    two = draw(st.booleans())
    body = [f"        out[i] = {first[0]}"]
    expected = {"out": first[1]}
    if conditional:  # a masked store: the loop may be refused, and runs plain then
        body = ["        if a[i] > b[i]:", f"    {body[0]}"]
        expected["out"] = f"np.where(a > b, {first[1]}, out)"
    if two:
        body.append(f"        out2[i] = {second[0]}")
        expected["out2"] = second[1]
    return body, expected


SOURCE = """
import numpy as np
from numba import prange

import dpex_kernels as dk


@dk.offload
def loop(out, out2, a, b, s):
    for i in prange({start}, out.shape[0]):
{body}
"""


@settings(max_examples=25, deadline=None)
@given(
    loop=loops(),
    dtype=st.sampled_from(["float64", "int64", "int32"]),
    extra=st.integers(0, 3 * STREAM_CHUNK),
    start=st.sampled_from([0, 0, 1, 5, 16, 17]),
)
def test_random_loops_stream_and_equal_numpy(loop, dtype, extra, start):
    """Every loop without a condition streams (the cache is taken to be empty); a conditional
    store or a conditional expression's load may make the vector code masked, which is
    refused. The results are NumPy's either way (integer values: float64 results are exact)."""
    body, expected = loop
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "random_loop.py"
        path.write_text(SOURCE.format(start=start, body="\n".join(body)))
        spec = importlib.util.spec_from_file_location(f"random_loop_{extra}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    n = STREAM_CHUNK + start + extra
    rng = np.random.default_rng(extra)
    a = rng.integers(-40, 40, n).astype(dtype)
    b = rng.integers(-40, 40, n).astype(dtype)
    s = np.dtype(dtype).type(3)
    out, out2 = rng.integers(-9, 9, n).astype(dtype), np.zeros(n, dtype)
    device = {name: usm(x) for name, x in {"out": out, "out2": out2, "a": a, "b": b}.items()}
    with mock.patch.object(streaming, "streaming_bytes", lambda: 0):
        module.loop(device["out"], device["out2"], device["a"], device["b"], s)
    names = {"np": np, "a": a, "b": b, "s": s, "i": np.arange(n), "out": out}
    before = {"out": out, "out2": out2}
    for name, source in expected.items():
        want = np.broadcast_to(eval(source, names), (n,)).astype(dtype)  # noqa: S307
        want[:start] = before[name][:start]  # the loop starts at `start`
        np.testing.assert_array_equal(dpnp.asnumpy(device[name]), want)
    streamed = len(streaming_kernels(module.loop))
    assert streamed == 1 or any(" if " in line for line in body)


# --- host-SIMD reductions --------------------------------------------------------------------


def simd_kernel(function):
    """The reduction's host-SIMD kernel, and whether a launch took it (it has a binding)."""
    (found,) = [k.kernel for k in function.inspect_kernels() if "_simd_" in k.name]
    (compiled,) = found.definitions.values()
    return found, bool(compiled.bindings)


def make_dot():
    @dk.offload
    def dot(a, b):
        s = 0.0
        for i in prange(a.shape[0]):
            s += a[i] * b[i]
        return s

    return dot


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("past_the_cache_too", [False, True])
def test_a_reduction_of_a_chunk_or_more_runs_as_host_simd_and_equals_numpy(
    dtype, past_the_cache_too
):
    """In the cache or past it: a reduction has no stores to stream (host.worth_host_simd)."""
    dot = make_dot()
    itemsize = np.dtype(dtype).itemsize
    n = past_the_cache(2, itemsize) if past_the_cache_too else 3 * REDUCTION_CHUNK + 13
    a = (RNG.random(n) * 10).astype(dtype)
    b = (RNG.random(n) * 10).astype(dtype)
    expected = np.dot(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(dot(usm(a), usm(b)), expected, rtol=1e-5)
    kernel, launched = simd_kernel(dot)
    assert kernel.refusal is None and launched
    (found,) = [k for k in dot.inspect_kernels() if k.kernel is kernel]
    assert "SubgroupSize 1" in found.spirv


def test_a_small_or_misaligned_reduction_takes_the_plain_kernels():
    dot = make_dot()
    x = RNG.random(REDUCTION_CHUNK - 1)
    assert np.isclose(dot(usm(x), usm(x)), x @ x)
    assert not simd_kernel(dot)[1]
    y = RNG.random(3 * REDUCTION_CHUNK + 1)
    view = usm(y)[1:]
    assert np.isclose(dot(view, view), y[1:] @ y[1:])
    assert not simd_kernel(dot)[1]


def test_reductions_llvm_cannot_vectorise_are_refused_and_run_plain():
    """A float min reduces with NaN-aware compares, which LLVM's vectoriser does not take
    without fast-math: the host-SIMD kernel is refused and the plain kernels launched."""

    @dk.offload
    def smallest(a):
        lo = a[0]
        for i in prange(a.shape[0]):
            lo = min(lo, a[i])
        return lo

    n = past_the_cache(1, 8)
    x = RNG.random(n)
    assert smallest(usm(x)) == x.min()
    # the refused kernel is dropped when the host function is lowered: only the plain ones
    names = [k.name for k in smallest.inspect_kernels()]
    assert not any("_simd_" in name for name in names) and any("_reduce_" in n for n in names)


def test_integer_sums_and_extremes_in_one_loop_run_as_host_simd():
    @dk.offload
    def kinds(a):
        total = 0
        lo = a[0]
        hi = a[0]
        for i in prange(a.shape[0]):
            total += a[i]
            lo = min(lo, a[i])
            hi = max(hi, a[i])
        return total, lo, hi

    n = past_the_cache(1, 8)
    x = RNG.integers(-1000, 1000, n)
    assert kinds(usm(x)) == (x.sum(), x.min(), x.max())
    kernel, launched = simd_kernel(kinds)
    assert kernel.refusal is None and launched


def test_only_a_float_reductions_update_is_marked_reassociable():
    loop = (
        "loop:\n"
        "  %s = phi float [ 0.0, %entry ], [ %s.next, %loop ]\n"
        "  %x = fmul float %a, %b\n"
        "  %y = fadd float %x, %c\n"
        "  %s.next = fadd nsz float %s, %y\n"
        "  br i1 %done, label %exit, label %loop\n"
        "exit:\n"
        "  %s.out = phi float [ %s.next, %loop ]\n"
    )
    text = host_simd.reassociable_reductions(loop)
    assert "%s.next = fadd reassoc nsz float %s, %y" in text
    assert "%x = fmul float %a, %b" in text and "%y = fadd float %x, %c" in text
