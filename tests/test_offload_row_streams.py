"""Row loops that stream: a prange loop whose work-items reduce rows of their own
(offloading/row_loops.py) and store each result once, at the loop's own index, past its share
of the last-level cache, runs each work-item's chunk of rows in order with every store
non-temporal (offloading/streaming.py, mode "rows"; docs/offload.md, "Streaming loops").
Everything else keeps the plain row loop. Results are checked against NumPy."""

from __future__ import annotations

import re
from unittest import mock

import dpctl
import dpnp
import numpy as np
import pytest
from conftest import CPU
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import prange
from offload_programs import l2_norm_prange
from test_offload_promotion import running_sum

import dpex_kernels as dk
from dpex_kernels.compiler.backend import host_simd
from dpex_kernels.offloading import streaming
from dpex_kernels.offloading.streaming import CHUNK, streaming_bytes

RNG = np.random.default_rng(23)


def usm(values):
    return dpnp.asarray(values, device=CPU)


def least_rows() -> int:
    """The fewest rows a row loop streams on the test device."""
    units = dpctl.SyclDevice(CPU).max_compute_units
    return streaming.CHUNK * streaming.ROW_CHUNKS_PER_UNIT * units


def past_the_cache(columns: int, itemsize: int) -> int:
    """A row count whose rows outgrow the cache and are enough to stream, not a multiple of a
    chunk: the last work-item runs a partial chunk."""
    return max(streaming_bytes() // (columns * itemsize), least_rows()) + 13


def row_streams(function) -> list:
    """The streaming kernels of mode "rows" a call launched."""
    return [
        k
        for k in function.inspect_kernels()
        if "_stream_" in k.name
        and k.kernel.options.host_simd == host_simd.ROWS
        and k.kernel.definitions[k.signature].bindings
    ]


def launched_streams(function) -> list:
    """Every streaming kernel a call launched, of either mode."""
    return [
        k
        for k in function.inspect_kernels()
        if "_stream_" in k.name and k.kernel.definitions[k.signature].bindings
    ]


def make_l2_norm():
    """The test programs' l2-norm (a dpnp.sqrt of each row's sum of squares), offloaded anew."""
    return dk.offload(l2_norm_prange)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_an_l2_norm_past_the_cache_streams_its_rows_and_equals_numpy(dtype):
    l2_norm = make_l2_norm()
    rows = past_the_cache(16, np.dtype(dtype).itemsize)
    a = RNG.random((rows, 16)).astype(dtype)
    d = usm(np.zeros(rows, dtype))
    l2_norm(usm(a), d)
    rtol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(dpnp.asnumpy(d), np.sqrt((a * a).sum(axis=1)), rtol=rtol)
    (found,) = row_streams(l2_norm)
    assert "Nontemporal" in found.spirv and "SubgroupSize 1" in found.spirv


def test_integer_row_sums_of_a_2d_nest_stream_and_equal_numpy():
    """Over a 2-D range the store's index is the outer level's index, then the lane's."""

    @dk.offload
    def row_sums(a, out):
        for i in prange(a.shape[0]):
            for k in prange(a.shape[1]):
                s = 0
                for j in range(a.shape[2]):
                    s += a[i, k, j]
                out[i, k] = s

    columns = -(-past_the_cache(3 * 8, 8) // 8) * 8  # rows of `out` of a multiple of 64 bytes
    shape = (3, columns, 8)
    a = RNG.integers(-1000, 1000, shape)
    out = usm(np.zeros(shape[:2], np.int64))
    row_sums(usm(a), out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), a.sum(axis=2))
    assert len(row_streams(row_sums)) == 1


def test_too_few_rows_keep_the_plain_row_loop():
    """Past the cache but with fewer rows than ROW_CHUNKS_PER_UNIT chunks for each compute
    unit: whole chunks would leave some of them idle."""
    l2_norm = make_l2_norm()
    rows = least_rows() - 1
    columns = 8 * (streaming_bytes() // (8 * 8 * rows) + 1)
    a = RNG.random((rows, columns))
    d = usm(np.zeros(rows))
    l2_norm(usm(a), d)
    np.testing.assert_allclose(dpnp.asnumpy(d), np.sqrt((a * a).sum(axis=1)), rtol=1e-12)
    assert launched_streams(l2_norm) == []


def conditional_store(a, d):
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j]
        if s > a.shape[1] / 2:
            d[i] = s


def store_to_a_column(a, d):
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j]
        d[i, 0] = s


def reference(function, a: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The function run as Python over NumPy arrays (prange is range there)."""
    expected = d.copy()
    function(a, expected)
    return expected


@pytest.mark.parametrize(
    ("function", "shape"),
    [(conditional_store, (8,)), (running_sum, (8, 8)), (store_to_a_column, (8, 8))],
    ids=["conditional", "in-the-row-loop", "column"],
)
def test_row_loops_whose_stores_are_not_their_own_elements_keep_the_plain_kernel(function, shape):
    """A store on some paths only, one in the inner loop or one to a column: the rows do not
    stream (a store on some paths or to a column would write lines in part)."""
    rows = 4096
    a = RNG.random((rows, 8))
    d = RNG.random((rows, *shape[1:]))
    expected = reference(function, a, d)
    offloaded = dk.offload(function)
    on_device = usm(d)
    with (
        mock.patch.object(streaming, "streaming_bytes", lambda: 0),
        mock.patch.object(streaming, "ROW_CHUNKS_PER_UNIT", 0),
    ):
        offloaded(usm(a), on_device)
    np.testing.assert_allclose(dpnp.asnumpy(on_device), expected, rtol=1e-12)
    assert row_streams(offloaded) == []


def test_a_strided_output_keeps_the_plain_kernel():
    """Every other element of an array: each store would write part of a line."""
    l2_norm = make_l2_norm()
    rows = 4096
    a = RNG.random((rows, 8))
    whole = usm(np.zeros(2 * rows))
    with (
        mock.patch.object(streaming, "streaming_bytes", lambda: 0),
        mock.patch.object(streaming, "ROW_CHUNKS_PER_UNIT", 0),
    ):
        l2_norm(usm(a), whole[::2])
    np.testing.assert_allclose(dpnp.asnumpy(whole)[::2], np.sqrt((a * a).sum(axis=1)))
    assert not dpnp.asnumpy(whole)[1::2].any()
    assert row_streams(l2_norm) == []


@dk.offload
def sums(a, out):
    for i in prange(a.shape[0]):
        s = 0
        for j in range(a.shape[1]):
            s += a[i, j] * 2
        out[i] = s


@settings(max_examples=20, deadline=None)
@given(
    rows=st.integers(1, 3 * CHUNK + 40),
    columns=st.sampled_from([8, 16, 24]),
    dtype=st.sampled_from(["float64", "float32", "int64", "int32"]),
)
def test_random_row_loops_stream_and_equal_numpy(rows, columns, dtype):
    """Any row count streams where the cache is taken to be empty and no count too small:
    whole chunks, a partial last one and ranges shorter than a chunk. Integer values: every sum is
    exact in each dtype."""
    itemsize = np.dtype(dtype).itemsize
    columns = columns * 8 // itemsize  # rows of a multiple of 64 bytes, as streams assume
    a = RNG.integers(-100, 100, (rows, columns)).astype(dtype)
    out = usm(np.zeros(rows, dtype))
    with (
        mock.patch.object(streaming, "streaming_bytes", lambda: 0),
        mock.patch.object(streaming, "ROW_CHUNKS_PER_UNIT", 0),
    ):
        sums(usm(a), out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), (a * 2).sum(axis=1).astype(dtype))
    assert [k for k in row_streams(sums) if str(k.signature.args[0].dtype) == dtype]


# --- the compiler's side -------------------------------------------------------------------

KERNEL = (
    "define spir_kernel void @k(ptr addrspace(1) %.1, i64 %.2, ptr %.3) #0 {\nentry:\n"
    "{body}\n  ret void\n}\n"
)


def test_every_store_to_global_memory_of_a_row_stream_is_non_temporal():
    body = (
        "  store double %v, ptr addrspace(1) %.1, align 8, !tbaa !3\n"
        "  store <4 x i64> %w, ptr addrspace(1) %p, align 32\n"
        "  store double %v, ptr %.3, align 8"
    )
    text = host_simd.finish(KERNEL.replace("{body}", body), "k", "k", host_simd.ROWS)
    assert "store double %v, ptr addrspace(1) %.1, align 8, !nontemporal !{i32 1}, !tbaa !3" in text
    assert "store <4 x i64> %w, ptr addrspace(1) %p, align 32, !nontemporal !{i32 1}" in text
    assert "store double %v, ptr %.3, align 8\n" in text  # private memory: a plain store
    assert "#0 !intel_reqd_sub_group_size !{i32 1} {" in text


def test_a_row_stream_that_stores_nothing_to_global_memory_is_refused():
    body = "  store double %v, ptr %.3, align 8"
    with pytest.raises(host_simd.Refusal, match=re.escape("store nothing to global memory")):
        host_simd.finish(KERNEL.replace("{body}", body), "k", "k", host_simd.ROWS)
