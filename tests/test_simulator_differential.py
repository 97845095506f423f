"""The simulator against the device, NumPy as referee: every kernel of examples/ (at small
sizes) and a sample of the kernel fuzzer's random kernels give the same results in both.

The offload examples have no @dk.kernel of their own (their loops become kernels inside
@dk.offload), so they have nothing to simulate.
"""

from __future__ import annotations

import dpnp
import numpy as np
import pytest

import dpex_kernels as dk
from examples import (
    cfunc_callback,
    dask_partitions,
    histogram,
    jacobi_njit,
    kmeans,
    matmul_tiled,
    mpi_ranks,
    reduction,
    scan,
    scan_group_algorithms,
    single_launch_reduction,
    vecadd,
)
from tests import kernel_fuzzer as fuzzer

RNG = np.random.default_rng(35)


def both(kernel, launch_range, *host_args, device_args=None):
    """(results on the device, results in the simulator): each array argument after a launch
    on fresh copies, the simulator's on NumPy arrays."""
    device = [dpnp.asarray(a) if isinstance(a, np.ndarray) else a for a in host_args]
    if device_args is not None:
        device = device_args(device)
    kernel[launch_range](*device).wait()
    simulated = [a.copy() if isinstance(a, np.ndarray) else a for a in host_args]
    kernel.simulate[launch_range](*simulated)
    pick = [i for i, a in enumerate(host_args) if isinstance(a, np.ndarray)]
    return [dpnp.asnumpy(device[i]) for i in pick], [simulated[i] for i in pick]


def test_vecadd():
    a = RNG.random(100, dtype=np.float32)
    b = RNG.random(100, dtype=np.float32)
    on_device, simulated = both(vecadd.vecadd, 100, a, b, np.zeros_like(a))
    for c in (on_device[2], simulated[2]):
        np.testing.assert_array_equal(c, a + b)


def test_vecadd_in_the_simulator_on_usm_arrays():
    a = dpnp.arange(64, dtype="f4", device="opencl:cpu")
    c = dpnp.empty_like(a)
    vecadd.vecadd.simulate[64](a, a, c)
    np.testing.assert_array_equal(dpnp.asnumpy(c), 2 * np.arange(64, dtype="f4"))


@pytest.mark.parametrize("blocked", [False, True])
def test_matmul_tiled(blocked):
    rows, inner, cols = (20, 35, 18) if not blocked else (70, 12, 9)
    a = RNG.random((rows, inner), dtype=np.float32)
    b = RNG.random((inner, cols), dtype=np.float32)
    c = np.zeros((rows, cols), np.float32)
    if blocked:
        kernel, launch = matmul_tiled.matmul_blocked_kernel, matmul_tiled.blocked_launch_range
    else:
        kernel, launch = matmul_tiled.matmul_kernel, matmul_tiled.launch_range
    on_device, simulated = both(kernel, launch(rows, cols), a, b, c)
    np.testing.assert_allclose(on_device[2], a @ b, rtol=1e-5)
    np.testing.assert_allclose(simulated[2], a @ b, rtol=1e-5)


def test_histogram_counts_and_weights():
    values = RNG.integers(-10, histogram.BINS + 10, 3000).astype(np.int32)
    weights = RNG.random(3000, dtype=np.float32)
    inside = (values >= 0) & (values < histogram.BINS)
    launch = histogram.launch_range(values.size)
    counts = histogram.count_kernel(dk.int32, True)
    on_device, simulated = both(counts, launch, values, np.zeros(histogram.BINS, np.int32))
    expected = np.bincount(values[inside], minlength=histogram.BINS)
    np.testing.assert_array_equal(on_device[1], expected)
    np.testing.assert_array_equal(simulated[1], expected)
    sums = histogram.weighted_kernel(dk.float32)
    bins = np.zeros(histogram.BINS, np.float32)
    on_device, simulated = both(sums, launch, values, weights, bins)
    expected = np.bincount(values[inside], weights[inside], minlength=histogram.BINS)
    np.testing.assert_allclose(on_device[2], expected, rtol=1e-5)
    np.testing.assert_allclose(simulated[2], expected, rtol=1e-5)


@pytest.mark.parametrize("sub_groups", [False, True])
def test_reduction_two_stages(sub_groups):
    x = RNG.random(9000, dtype=np.float32)
    kernel = (reduction.sub_group_kernel if sub_groups else reduction.tree_kernel)(dk.float32)
    groups = reduction.groups_for(x.size)
    launch = dk.NdRange(groups * reduction.WORK_GROUP, reduction.WORK_GROUP)
    on_device, simulated = both(kernel, launch, x, np.zeros(groups, np.float32))
    final = dk.NdRange(reduction.WORK_GROUP, reduction.WORK_GROUP)
    for partial in (on_device[1], simulated[1]):
        out = np.zeros(1, np.float32)
        kernel.simulate[final](partial, out)
        np.testing.assert_allclose(out[0], x.sum(dtype=np.float64), rtol=1e-5)
    np.testing.assert_allclose(simulated[1], on_device[1], rtol=1e-5)


def test_exclusive_scan():
    x = RNG.integers(-100, 100, 1500).astype(np.int32)
    block_sums, scan_blocks = scan.scan_kernels(dk.int32)
    blocks, block = scan.plan(x.size)
    wide = dk.NdRange(blocks * scan.WORK_GROUP, scan.WORK_GROUP)
    sums = np.zeros(blocks, np.int32)
    on_device, simulated = both(block_sums, wide, x, block, sums)
    np.testing.assert_array_equal(simulated[1], on_device[1])
    offsets = np.concatenate([[0], np.cumsum(simulated[1])[:-1]]).astype(np.int32)
    out = np.zeros_like(x)
    on_device, simulated = both(scan_blocks, wide, x, block, offsets, out)
    expected = np.concatenate([[0], np.cumsum(x, dtype=np.int32)[:-1]])
    np.testing.assert_array_equal(on_device[2], expected)
    np.testing.assert_array_equal(simulated[2], expected)


@pytest.mark.parametrize("size", [1, 3 * single_launch_reduction.BLOCK + 5])
def test_single_launch_reduction(size):
    x = RNG.random(size, dtype=np.float32)
    kernel = single_launch_reduction.sum_kernel(dk.float32)
    groups = single_launch_reduction.groups_for(x.size)
    wg = single_launch_reduction.WORK_GROUP
    partials = np.zeros(single_launch_reduction.MAX_GROUPS, np.float32)
    ticket, out = np.zeros(1, np.int32), np.zeros(1, np.float32)
    on_device, simulated = both(kernel, dk.NdRange(groups * wg, wg), x, partials, ticket, out)
    for total, ticket_after in ((on_device[3], on_device[2]), (simulated[3], simulated[2])):
        np.testing.assert_allclose(total[0], x.sum(dtype=np.float64), rtol=1e-5)
        assert ticket_after[0] == 0  # put back for the next launch
    np.testing.assert_allclose(simulated[1][:groups], on_device[1][:groups], rtol=1e-5)


def test_exclusive_scan_with_group_algorithms():
    x = RNG.integers(-100, 100, 1500).astype(np.int64)
    block_sums, scan_blocks = scan_group_algorithms.scan_kernels(dk.int64)
    blocks, block = scan.plan(x.size)
    wide = dk.NdRange(blocks * scan.WORK_GROUP, scan.WORK_GROUP)
    on_device, simulated = both(block_sums, wide, x, block, np.zeros(blocks, np.int64))
    np.testing.assert_array_equal(simulated[1], on_device[1])
    offsets = np.concatenate([[0], np.cumsum(simulated[1])[:-1]])
    out = np.zeros_like(x)
    on_device, simulated = both(scan_blocks, wide, x, block, offsets, out)
    expected = np.concatenate([[0], np.cumsum(x)[:-1]])
    np.testing.assert_array_equal(on_device[2], expected)
    np.testing.assert_array_equal(simulated[2], expected)


def test_kmeans_steps():
    n, features, clusters = 300, 3, 4
    x = RNG.random((n, features), dtype=np.float32)
    centres = x[:clusters].copy()
    assign, partial_sums, sum_parts = kmeans.kernels(features, dk.float32)
    packed = np.concatenate([centres, (centres**2).sum(axis=1, keepdims=True)], axis=1)
    labels = np.full(n, -1, np.int32)
    launch = dk.NdRange(-(-n // kmeans.WORK_GROUP) * kmeans.WORK_GROUP, kmeans.WORK_GROUP)
    xt = np.ascontiguousarray(x.T)
    changed = np.zeros(1, np.int32)
    on_device, simulated = both(assign, launch, xt, packed, labels, changed, 1)
    distances = ((x[:, None, :] - centres[None]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(simulated[2], np.argmin(distances, axis=1))
    np.testing.assert_array_equal(simulated[2], on_device[2])
    assert simulated[3][0] == on_device[3][0] == 1
    width = kmeans.padded_width(features)
    padded = np.zeros((n, width), np.float32)
    padded[:, :features], padded[:, features] = x, 1
    parts = np.zeros((kmeans.PARTS, clusters, width), np.float32)
    parts_range = dk.NdRange(kmeans.PARTS * width, width)
    on_device, simulated = both(partial_sums, parts_range, padded, simulated[2], parts)
    np.testing.assert_allclose(simulated[2], on_device[2], rtol=1e-5)
    sums = np.zeros((clusters, features + 1), np.float32)
    on_device, simulated = both(sum_parts, sums.size, simulated[2], sums)
    labels = np.argmin(distances, axis=1)
    expected = np.stack([padded[labels == j, : features + 1].sum(axis=0) for j in range(4)])
    np.testing.assert_allclose(on_device[1], expected, rtol=1e-5)
    np.testing.assert_allclose(simulated[1], expected, rtol=1e-5)


def _shared(arrays):
    return [
        dpnp.asarray(dpnp.asnumpy(a), usm_type="shared") if isinstance(a, dpnp.ndarray) else a
        for a in arrays
    ]


def test_jacobi_kernels():
    u = jacobi_njit.initial(12)
    out = u.copy()
    on_device, simulated = both(jacobi_njit.sweep, (10, 10), u, out, device_args=_shared)
    expected = u.copy()
    expected[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    np.testing.assert_allclose(on_device[1], expected, rtol=1e-12)
    np.testing.assert_allclose(simulated[1], expected, rtol=1e-12)
    change = np.zeros(10)
    args = (u, simulated[1], change)
    on_device, simulated = both(jacobi_njit.row_change, 10, *args, device_args=_shared)
    worst = np.abs(expected - u)[1:-1, 1:-1].max(axis=1)
    np.testing.assert_allclose(on_device[2], worst)
    np.testing.assert_allclose(simulated[2], worst)


def test_device_functions_of_the_distributed_examples():
    data = RNG.uniform(-0.5, 1.5, 50)
    on_device, simulated = both(dask_partitions.transform, 50, data, np.zeros(50), 2.5)
    np.testing.assert_allclose(on_device[1], dask_partitions.expected(data, 2.5), rtol=1e-12)
    np.testing.assert_allclose(simulated[1], dask_partitions.expected(data, 2.5), rtol=1e-12)
    vector = dk.usm_array(dk.float64, 1, device="opencl:cpu")
    squares = dk.kernel(dk.void(vector, vector))(mpi_ranks.squares)
    on_device, simulated = both(squares, 50, data, np.zeros(50))
    np.testing.assert_allclose(on_device[1], data**2)
    np.testing.assert_allclose(simulated[1], data**2)


def test_axpy_of_the_cfunc_example():
    x = np.linspace(0, 1, 40, dtype=np.float32)
    on_device, simulated = both(cfunc_callback.axpy, 40, x, np.ones(40, np.float32), 2.0)
    expected = np.float32(2.0) * x + 1
    np.testing.assert_array_equal(on_device[1], expected)
    np.testing.assert_array_equal(simulated[1], expected)


# --- the kernel fuzzer's random kernels ---------------------------------------------------

FUZZ_SEED = 20261235
FUZZ_SAMPLE = 40


def _fuzz_cases():
    return [fuzzer.generate(fuzzer.case_seed(FUZZ_SEED, i)) for i in range(FUZZ_SAMPLE)]


@pytest.mark.parametrize("case", _fuzz_cases(), ids=lambda case: str(case["seed"]))
def test_fuzzer_kernels_match_their_model_in_the_simulator_and_on_the_device(case):
    arrays, scalars = fuzzer._inputs(case)
    namespace = fuzzer._define(case)
    kernel = dk.kernel(namespace["kern"], sub_group_size=case["sub_group_size"])
    expected = {name: array.copy() for name, array in arrays.items()}
    fuzzer.run_model(case, expected, scalars)
    simulated = {name: array.copy() for name, array in arrays.items()}
    for name in case.get("readonly", ()):  # SYCL 2020 cases (kernel_fuzzer.Generator.sycl)
        simulated[name].flags.writeable = False
    accessors = {n: dk.LocalAccessor(size, d) for n, (d, size) in case.get("accessors", {}).items()}
    values = {**scalars, **accessors, **simulated}
    args = [values[p] for p in case["params"]]
    launch = dk.NdRange(dk.Range(*case["global"]), dk.Range(*case["local"]))
    kernel.simulate[launch](*args)
    assert fuzzer._compare(simulated, expected) is None, case["kernel"]
    on_device = fuzzer._launched(case, kernel, arrays, scalars)
    assert fuzzer._compare(on_device, expected) is None, case["kernel"]
