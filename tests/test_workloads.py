"""The work-group examples against NumPy and scikit-learn (docs/workloads.md)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import dpctl
import dpnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans

from examples import histogram, kmeans, matmul_tiled, reduction, scan

ROOT = Path(__file__).resolve().parent.parent

# --- tiled matmul ---------------------------------------------------------------------------


@settings(max_examples=25)
@given(
    st.integers(0, 150),  # past two register-blocked tiles of 64
    st.integers(0, 70),
    st.integers(0, 150),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_matmul_any_shape_matches_numpy(rows, inner, cols, blocked, seed):
    rng = np.random.default_rng(seed)
    a = rng.random((rows, inner), dtype=np.float32)
    b = rng.random((inner, cols), dtype=np.float32)
    c = dpnp.asnumpy(matmul_tiled.matmul(dpnp.asarray(a), dpnp.asarray(b), blocked))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_matmul_rejects_shapes_that_do_not_multiply():
    with pytest.raises(ValueError, match=r"\(3, 4\) and \(5, 2\)"):
        matmul_tiled.matmul(dpnp.ones((3, 4), dtype="f4"), dpnp.ones((5, 2), dtype="f4"))


# --- sum reduction --------------------------------------------------------------------------


@settings(max_examples=20)
@given(
    st.one_of(st.integers(0, 5000), st.integers(500_000, 600_000)),
    st.sampled_from(["float32", "float64"]),
    st.booleans(),
)
def test_sum_matches_numpy(n, dtype, sub_groups):
    host = np.random.default_rng(n).standard_normal(n).astype(dtype) + 1
    total = reduction.device_sum(dpnp.asarray(host), sub_groups=sub_groups)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(total, host.sum(dtype=np.float64), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("sub_groups", [False, True])
def test_sum_reads_every_block_when_work_groups_are_fewer(monkeypatch, sub_groups):
    """Past MAX_GROUPS blocks a work-group reads several, a grid stride apart, and the last
    one also the rest: made to happen at a small size by lowering the cap."""
    monkeypatch.setattr(reduction, "MAX_GROUPS", 3)
    n = 10 * reduction.BLOCK + 123
    host = np.random.default_rng(9).standard_normal(n) + 1
    total = reduction.device_sum(dpnp.asarray(host), sub_groups=sub_groups)
    np.testing.assert_allclose(total, host.sum(), rtol=1e-12)


def test_sum_result_is_copied_after_the_last_stage_on_an_out_of_order_queue():
    """Only the second stage's event orders the copy of the result: on a queue with no
    program order a copy that ran early would read whatever the allocation held."""
    queue = dpctl.SyclQueue()
    assert not queue.is_in_order
    host = np.random.default_rng(7).random(1 << 22, dtype=np.float32)
    x = dpnp.asarray(host, sycl_queue=queue)
    for sub_groups in (False, True, False):
        total = reduction.device_sum(x, sub_groups)
        assert total.dtype == np.float32
        np.testing.assert_allclose(total, host.sum(dtype=np.float64), rtol=1e-5)


def test_sum_result_read_from_a_view_is_the_viewed_element():
    host = np.random.default_rng(8).random(100_000, dtype=np.float64)
    x = dpnp.asarray(host)
    partial = dpnp.empty(reduction.groups_for(x.size), dtype=x.dtype)
    results = dpnp.zeros(5, dtype=x.dtype)
    _, last = reduction.launch_sum(x, partial, results[3:4], False)
    np.testing.assert_allclose(reduction.read_result(results[3:4], last), host.sum(), rtol=1e-12)
    np.testing.assert_array_equal(dpnp.asnumpy(results)[[0, 1, 2, 4]], 0)


# --- histogram ------------------------------------------------------------------------------


@settings(max_examples=20)
@given(st.integers(0, 200_000), st.sampled_from(["int32", "int64", "uint8", "uint32"]))
def test_histogram_counts_match_numpy_and_skip_out_of_range(n, dtype):
    rng = np.random.default_rng(n)
    low = 0 if dtype.startswith("u") else -20
    values = rng.integers(low, 300, n).astype(dtype)
    counts = dpnp.asnumpy(histogram.histogram(dpnp.asarray(values)))
    inside = values[values < histogram.BINS].astype(np.int64)
    inside = inside[inside >= 0]
    np.testing.assert_array_equal(counts, np.bincount(inside, minlength=histogram.BINS))


@settings(max_examples=15)
@given(st.integers(0, 100_000), st.sampled_from(["int32", "int64", "float32", "float64"]))
def test_weighted_histogram_matches_bincount(n, weight_dtype):
    rng = np.random.default_rng(n)
    values = rng.integers(-5, 260, n).astype(np.int32)
    weights = (rng.random(n) * 10).astype(weight_dtype)
    sums = dpnp.asnumpy(histogram.histogram(dpnp.asarray(values), dpnp.asarray(weights)))
    inside = (values >= 0) & (values < histogram.BINS)
    expected = np.bincount(values[inside], weights[inside], minlength=histogram.BINS)
    assert sums.dtype == weight_dtype
    if weight_dtype.startswith("int"):
        np.testing.assert_array_equal(sums, expected.astype(weight_dtype))
    else:
        np.testing.assert_allclose(sums, expected, rtol=1e-5)


@pytest.mark.parametrize("values_dtype", ["int32", "uint64"])
def test_weights_of_skipped_values_reach_no_bin(values_dtype):
    # Out-of-range values carry NaN and inf weights: had any of them been added anywhere (bin 0
    # included, where the kernel sends skipped values with no weight), that bin would show it.
    n = 300_007  # whole rounds and a partial one
    rng = np.random.default_rng(11)
    values = rng.integers(0, histogram.BINS, n).astype(values_dtype)
    outside = rng.random(n) < 0.3
    values[outside] = 256 + rng.integers(0, 1000, int(outside.sum()))
    weights = rng.random(n, dtype=np.float32)
    weights[outside] = np.where(rng.random(int(outside.sum())) < 0.5, np.nan, np.inf)
    sums = dpnp.asnumpy(histogram.histogram(dpnp.asarray(values), dpnp.asarray(weights)))
    expected = np.bincount(values[~outside].astype(np.int64), weights[~outside], minlength=256)
    assert np.isfinite(sums).all()
    np.testing.assert_allclose(sums, expected, rtol=1e-4)


@pytest.mark.parametrize("one_lane", [False, True])
def test_histogram_never_writes_outside_its_bins(one_lane):
    """In vector lanes and, as on CPU devices, in sub-groups of one work-item."""
    values = np.array([-(2**31), -1, 256, 2**31 - 1, 3, 255, 0] * 1000, dtype=np.int32)
    guarded = dpnp.zeros(histogram.BINS + 64, dtype="i4")
    bins = guarded[32 : 32 + histogram.BINS]
    kernel = histogram.count_kernel(histogram.dk.int32, one_lane)
    kernel[histogram.launch_range(values.size)](dpnp.asarray(values), bins)
    out = dpnp.asnumpy(guarded)
    assert not out[:32].any() and not out[-32:].any()
    np.testing.assert_array_equal(out[32:35], [1000, 0, 0])
    assert out[32 + 3] == 1000 and out[32 + 255] == 1000 and out[32:-32].sum() == 3000


# --- exclusive scan -------------------------------------------------------------------------


@settings(max_examples=25)
@given(st.one_of(st.integers(0, 3000), st.sampled_from([65_536, 65_537, 196_613, 1_000_003])))
def test_exclusive_scan_int32_matches_numpy(n):
    host = np.random.default_rng(n).integers(-1000, 1000, n).astype(np.int32)
    out = dpnp.asnumpy(scan.exclusive_scan(dpnp.asarray(host)))
    expected = np.concatenate([[0], np.cumsum(host, dtype=np.int32)[:-1]]) if n else host
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("n", [1, 255, 257, 70_001])
def test_exclusive_scan_other_dtypes_match_numpy(dtype, n):
    host = np.random.default_rng(n).integers(0, 100, n).astype(dtype)  # exact in floats too
    out = dpnp.asnumpy(scan.exclusive_scan(dpnp.asarray(host)))
    np.testing.assert_array_equal(out, np.concatenate([[0], np.cumsum(host)[:-1]]).astype(dtype))


# --- k-means --------------------------------------------------------------------------------


def _sklearn(x, init, max_iter=300, tol=1e-4):
    return KMeans(
        len(init), init=init, n_init=1, max_iter=max_iter, tol=tol, algorithm="lloyd"
    ).fit(x)


@settings(max_examples=15)
@given(
    st.integers(20, 3000),
    st.sampled_from([1, 3, 14, 15, 40]),  # 15 and 40: padded to exactly 16 and to 48 columns
    st.integers(1, 20),
    st.integers(0, 2**32 - 1),
)
def test_kmeans_float64_labels_equal_scikit_learn(n, features, clusters, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, features)) + rng.integers(0, 4, (n, 1))  # a few blobs
    init = x[rng.choice(n, min(clusters, n), replace=False)]
    centres, labels, inertia, n_iter = kmeans.kmeans(x, init)
    ref = _sklearn(x, init)
    assert n_iter == ref.n_iter_
    np.testing.assert_array_equal(labels, ref.labels_)
    np.testing.assert_allclose(centres, ref.cluster_centers_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(inertia, ref.inertia_, rtol=1e-10)


@pytest.mark.parametrize("clusters", [8, 32, 127])
def test_kmeans_float32_inertia_within_1e5_of_scikit_learn(clusters):
    rng = np.random.default_rng(clusters)
    x = rng.random((20_000, 14), dtype=np.float32)
    init = x[rng.choice(len(x), clusters, replace=False)]
    _, _, inertia, _ = kmeans.kmeans(x, init, max_iter=15)
    ref = _sklearn(x, init, max_iter=15)
    assert inertia.dtype == np.float32
    np.testing.assert_allclose(inertia, ref.inertia_, rtol=1e-5)


def test_kmeans_relocates_empty_clusters_as_scikit_learn_does():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((500, 3))
    init = np.vstack([x[:3], [[50.0, 50, 50], [-60.0, 0, 0]]])  # two centres no sample is near
    centres, labels, inertia, n_iter = kmeans.kmeans(x, init)
    ref = _sklearn(x, init)
    assert len(set(labels)) == 5  # the empty ones were moved onto far samples
    assert n_iter == ref.n_iter_
    np.testing.assert_array_equal(labels, ref.labels_)
    np.testing.assert_allclose(centres, ref.cluster_centers_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(inertia, ref.inertia_, rtol=1e-10)


BAD_INPUT = {
    "more clusters than samples": (np.ones((3, 2)), np.zeros((4, 2))),
    "NaN": (np.array([[1.0, np.nan], [2.0, 3.0], [0.0, 1.0]]), np.zeros((2, 2))),
    "inf": (np.array([[1.0, np.inf], [2.0, 3.0], [0.0, 1.0]]), np.zeros((2, 2))),
    "zero features": (np.ones((5, 0)), np.ones((2, 0))),
    "centres of another width": (np.ones((5, 3)), np.ones((2, 2))),
}


@pytest.mark.parametrize("case", BAD_INPUT)
def test_kmeans_bad_input_raises_what_scikit_learn_raises_before_any_kernel(case, monkeypatch):
    x, init = BAD_INPUT[case]
    with pytest.raises(Exception) as theirs:
        _sklearn(x, init)

    def no_device_work(*args):
        raise AssertionError("a kernel would run")

    monkeypatch.setattr(kmeans.KMeansState, "start", no_device_work)
    with pytest.raises(type(theirs.value)) as mine:
        kmeans.kmeans(x, init)
    assert str(mine.value) == str(theirs.value)


# --- cache=True: a second process does no Numba or LLVM work --------------------------------

CACHED_LAUNCH = """
import sys

import dpnp
import numba.core.compiler
import numpy as np

import dpex_kernels as dk
from dpex_kernels.compiler.backend import emit, llvm
from dpex_kernels.dispatcher import jit_kernel
from examples import matmul_tiled


def refuse(*args, **kwargs):
    raise AssertionError("the compiler ran")


if sys.argv[1] == "hit":  # any Numba or LLVM work from here on fails the launch
    numba.core.compiler.compile_extra = refuse
    jit_kernel.compile_kernel = refuse
    for module, stage in ((llvm, "link_modules"), (llvm, "optimise"), (emit, "emit_spirv")):
        setattr(module, stage, refuse)
kernel = dk.kernel(cache=True)(matmul_tiled.matmul_kernel.py_func)
a = np.arange(20 * 20, dtype=np.float32).reshape(20, 20)
c = dpnp.empty((20, 20), dtype="f4")
kernel[matmul_tiled.launch_range(20, 20)](dpnp.asarray(a), dpnp.asarray(a), c)
np.testing.assert_allclose(dpnp.asnumpy(c), a @ a, rtol=1e-5)
print(kernel.stats.cache_hits, kernel.stats.compiles)
"""


def test_cached_kernel_in_a_second_process_runs_without_numba_or_llvm(tmp_path):
    env = {**os.environ, "DPEX_KERNELS_CACHE_DIR": str(tmp_path)}

    def run(mode: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", CACHED_LAUNCH, mode],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout.split()

    assert run("fill") == ["0", "1"]  # compiled, stored
    assert run("hit") == ["1", "0"]  # loaded: the refusing compiler was never called


def test_docs_workloads_snippets_run():
    text = (ROOT / "docs" / "workloads.md").read_text()
    snippets = re.findall(r"```python\n(.*?)```", text, re.S)
    assert snippets
    for snippet in snippets:
        exec(compile(snippet, "docs/workloads.md", "exec"), {})
