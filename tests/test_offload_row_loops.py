"""Row loops (offloading/row_loops.py): on a CPU device a prange loop whose work-items each
reduce rows of their own, or write them element by element, runs with sub-groups of one
work-item; loops that read neighbours side by side, call math functions or write rows after
inner loops stay vectorised across work-items. Either way the results are NumPy's."""

from __future__ import annotations

import math

import dpnp
import numpy as np
import pytest
from conftest import CPU, param_id
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import prange
from offload_programs import PROGRAMS, l2_norm_prange

import dpex_kernels as dk
from dpex_kernels.compiler.backend import host_simd


def loop_sub_group_sizes(function) -> set[int]:
    """The sub-group sizes the prange loops' kernels were compiled for (0: the runtime's)."""
    return {
        k.attrs.compile_sub_group_size for k in function.inspect_kernels() if "_loop_" in k.name
    }


def run(python_function, arguments: tuple):
    """The offloaded function, called on device copies of `arguments`; (function, result,
    the arguments afterwards as NumPy arrays)."""
    function = dk.offload(python_function)
    on_device = [dpnp.asarray(a, device=CPU) if isinstance(a, np.ndarray) else a for a in arguments]
    result = function(*on_device)
    after = [dpnp.asnumpy(a) if isinstance(a, dpnp.ndarray) else a for a in on_device]
    return function, result, after


#: program of tests/offload_programs.py -> the sub-group sizes of its loops' kernels
CLASSIC = {
    "l2_norm_prange": {1},  # a row's sum of squares
    "knn": {1},  # distances to every training point, k nearest kept
    "kmeans_step": {1},  # labels (rows read), new centres (rows written element-wise)
    "pairwise_distance_prange": {0},  # math.sqrt in the loop
    "rambo": {0},  # math in the loop, rows written
    # neighbours' x1[i] read in the loop; counts[i, k] written in its innermost loop, which
    # only an AVX-512 host scatters from a vector (and the sum over its rows, vectorised)
    "gpairs": {0} if host_simd.vector_scatters() else {0, 1},
    "matmul": {0},  # rows of the product written in the loop
}


@pytest.mark.parametrize("name", CLASSIC)
def test_classic_programs(name):
    (program,) = [p for p in PROGRAMS if p.name == name]
    inputs = program.inputs(np.random.default_rng(7))
    function, result, after = run(program.function, inputs)
    assert loop_sub_group_sizes(function) == CLASSIC[name]
    expected_inputs = [np.copy(x) if isinstance(x, np.ndarray) else x for x in inputs]
    expected = program.reference(*expected_inputs)
    if expected is not None:
        np.testing.assert_allclose(dpnp.asnumpy(result), expected, rtol=program.rtol)
    for got, want in zip(after, expected_inputs):
        np.testing.assert_allclose(got, want, rtol=program.rtol, atol=program.rtol)


def math_in_row_loop(a, out):
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += math.sqrt(a[i, j])
        out[i] = s


def neighbours_in_row_loop(a, v, out):
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j] * v[i]  # v[i]: neighbouring work-items read neighbours
        out[i] = s


def row_written_element_wise(a, x, out):
    for i in prange(a.shape[0]):
        s = a.dtype.type(0)  # carried from column to column: not a promoted loop
        for j in range(a.shape[1]):
            s += a[i, j] * x[j]
            out[i, j] = s


def no_inner_loop(a, out):
    for i in prange(a.shape[0]):
        out[i] = a[i, 0] + a[i, 1]


@pytest.mark.parametrize(
    ("python_function", "arguments", "numpy_result"),
    [
        (math_in_row_loop, (np.ones((65, 33)) * 4, np.zeros(65)), lambda a, out: np.full(65, 66.0)),
        (
            neighbours_in_row_loop,
            (np.arange(40.0).reshape(8, 5), np.arange(8.0), np.zeros(8)),
            lambda a, v, out: a.sum(axis=1) * v,
        ),
        (no_inner_loop, (np.arange(20.0).reshape(10, 2), np.zeros(10)), lambda a, out: a.sum(1)),
    ],
    ids=["math", "neighbours", "no inner loop"],
)
def test_vectorised_loops(python_function, arguments, numpy_result):
    function, _, after = run(python_function, arguments)
    assert loop_sub_group_sizes(function) == {0}
    np.testing.assert_allclose(after[-1], numpy_result(*arguments), rtol=1e-12)


L2_NORM = dk.offload(l2_norm_prange)  # compiled once for each dtype
ROW_WRITES = dk.offload(row_written_element_wise)


@settings(max_examples=15, deadline=None)
@given(
    rows=st.integers(1, 300),
    columns=st.integers(1, 20),
    dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64]),
)
def test_row_loops_match_numpy(rows, columns, dtype):
    a = (np.random.default_rng(rows * 31 + columns).random((rows, columns)) * 100).astype(dtype)
    out = dpnp.zeros(rows, dtype=np.float64, device=CPU)
    L2_NORM(dpnp.asarray(a, device=CPU), out)
    assert loop_sub_group_sizes(L2_NORM) == {1}
    squares = (a.astype(np.float64) ** 2).sum(axis=1)
    np.testing.assert_allclose(dpnp.asnumpy(out), np.sqrt(squares), rtol=1e-6)


@settings(max_examples=15, deadline=None)
@given(
    rows=st.integers(1, 300),
    columns=st.integers(1, 20),
    dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64]),
)
def test_rows_written_element_wise_are_row_loops(rows, columns, dtype):
    rng = np.random.default_rng(rows * 17 + columns)
    a = (rng.random((rows, columns)) * 100).astype(dtype)
    x = (rng.random(columns) * 10).astype(dtype)
    out = dpnp.zeros((rows, columns), dtype=dtype, device=CPU)
    ROW_WRITES(dpnp.asarray(a, device=CPU), dpnp.asarray(x, device=CPU), out)
    assert loop_sub_group_sizes(ROW_WRITES) == {1}
    expected = np.cumsum(a * x, axis=1, dtype=dtype)
    np.testing.assert_allclose(dpnp.asnumpy(out), expected, rtol=1e-5)


def neighbours_and_rows_written_in_a_loop(a, v, counts):
    for i in prange(a.shape[0]):
        for j in range(a.shape[1]):
            k = counts.shape[1] - 1
            while a[i, j] * v[i] <= k:  # v[i]: neighbouring work-items read neighbours
                counts[i, k] += 1
                k -= 1
                if k < 0:
                    break


@pytest.mark.parametrize("scatters", [True, False], ids=["AVX-512", "AVX2"])
@pytest.mark.parametrize("dtype", ["int64", "float64"], ids=param_id)
def test_rows_written_in_a_loop_are_row_loops_where_the_host_cannot_scatter(
    monkeypatch, scatters, dtype
):
    """Integer counts keep their loop (early_exit_loops.py takes floating-point updates), a
    row loop on an AVX2 host; float counts have it written out, vectorised on both hosts."""
    monkeypatch.setattr(host_simd, "vector_scatters", lambda: scatters)
    rng = np.random.default_rng(11)
    a, v = rng.random((70, 9)) * 8, rng.random(70) + 0.5
    arguments = (a, v, np.zeros((70, 6), dtype))
    function, _, after = run(neighbours_and_rows_written_in_a_loop, arguments)
    row_loop = not scatters and dtype == "int64"
    assert loop_sub_group_sizes(function) == ({1} if row_loop else {0})
    bins = np.arange(6)
    expected = ((a * v[:, None])[:, :, None] <= bins).sum(axis=1).astype(dtype)
    np.testing.assert_array_equal(after[-1], expected)


def doubled_in_chunks(a, out, chunk):
    for c in prange((a.shape[0] + 127) // 128):
        for t in range(c * 128, min(a.shape[0], c * 128 + 128)):
            out[t] = a[t] * 2.0


def doubled_in_short_chunks(a, out, chunk):
    for c in prange((a.shape[0] + 3) // 4):
        for t in range(4 * c, min(a.shape[0], 4 * c + 4)):
            out[t] = a[t] * 2.0


def doubled_in_chunks_of_an_argument(a, out, chunk):
    for c in prange((a.shape[0] + chunk - 1) // chunk):
        for t in range(c * chunk, min(a.shape[0], c * chunk + chunk)):
            out[t] = a[t] * 2.0


@pytest.mark.parametrize(
    ("python_function", "sizes"),
    [
        (doubled_in_chunks, {1}),  # chunks of 128 of its own: lane after lane 1 KiB apart
        (doubled_in_short_chunks, {0}),  # chunks of 4: neighbours side by side
        (doubled_in_chunks_of_an_argument, {0}),  # a size known only at run time
    ],
)
def test_loops_over_chunks_of_their_own_are_row_loops(python_function, sizes):
    a = np.random.default_rng(5).random(1000)
    function, _, after = run(python_function, (a, np.zeros(1000), 128))
    assert loop_sub_group_sizes(function) == sizes
    np.testing.assert_array_equal(after[1], a * 2.0)


def selected(x, m):
    return x[m]


def test_selections_are_row_loops_over_their_chunks():
    """masks.py's chunks of COMPRESS_CHUNK: counted and copied by row loops."""
    x = np.random.default_rng(6).random(10_000)
    function, result, _ = run(selected, (x, x > 0.3))
    np.testing.assert_array_equal(dpnp.asnumpy(result), x[x > 0.3])
    sizes = [k.attrs.compile_sub_group_size for k in function.inspect_kernels()]
    kinds = [k.kind for k in function.inspect_kernels()]
    # count the chunks, add up where each goes (one work-item), copy the chunks
    assert [s for s, kind in zip(sizes, kinds) if kind == "compress()"] == [1, 0, 1], sizes
