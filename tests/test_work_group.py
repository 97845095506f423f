"""Work-group features (API.md §3): local/private arrays, barriers, atomics, sub-groups."""

import dpnp
import numpy as np
import pytest

import dpex_kernels as dk

TILE = 8


@dk.kernel
def _tiled_matmul(a, b, c):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    li = dk.get_local_id(0)
    lj = dk.get_local_id(1)
    a_tile = dk.local.array((TILE, TILE), dk.float32)
    b_tile = dk.local.array((TILE, TILE), dk.float32)
    total = 0.0
    for t in range(a.shape[1] // TILE):
        a_tile[li, lj] = a[i, t * TILE + lj]
        b_tile[li, lj] = b[t * TILE + li, j]
        dk.barrier(dk.LOCAL_MEM_FENCE)
        for k in range(TILE):
            total += a_tile[li, k] * b_tile[k, lj]
        dk.barrier(dk.LOCAL_MEM_FENCE)
    c[i, j] = total


def test_tiled_matmul_with_local_memory_and_barriers_matches_numpy():
    rng = np.random.default_rng(0)
    a = rng.random((32, 24), dtype=np.float32)
    b = rng.random((24, 16), dtype=np.float32)
    c = dpnp.empty((32, 16), dtype="f4")
    _tiled_matmul[dk.NdRange((32, 16), (TILE, TILE))](dpnp.asarray(a), dpnp.asarray(b), c)
    np.testing.assert_allclose(dpnp.asnumpy(c), a @ b, rtol=1e-5)


def test_work_group_reduction_in_local_memory():
    @dk.kernel
    def group_sums(x, out):
        scratch = dk.local.array(64, dk.float64)
        lid = dk.get_local_id(0)
        scratch[lid] = x[dk.get_global_id(0)]
        dk.barrier(dk.LOCAL_MEM_FENCE | dk.GLOBAL_MEM_FENCE)
        stride = 32
        while stride > 0:
            if lid < stride:
                scratch[lid] += scratch[lid + stride]
            dk.barrier()
            stride //= 2
        if lid == 0:
            out[dk.get_group_id(0)] = scratch[0]

    host = np.random.default_rng(1).random(256)
    out = dpnp.empty(4)
    group_sums[dk.NdRange(256, 64)](dpnp.asarray(host), out)
    np.testing.assert_allclose(dpnp.asnumpy(out), host.reshape(4, 64).sum(axis=1))


def test_private_arrays_are_per_work_item():
    @dk.kernel
    def running(x, out):
        i = dk.get_global_id(0)
        history = dk.private.array(4, np.int64)
        for k in range(4):
            history[k] = x[i] * (k + 1)
        total = 0
        for k in range(4):
            total += history[k]
        out[i] = total

    host = np.arange(50, dtype=np.int64)
    out = dpnp.empty(50, dtype="i8")
    running[50](dpnp.asarray(host), out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), host * 10)


ATOMIC_DTYPES = ["int32", "int64", "uint32", "uint64", "float32", "float64"]


@pytest.mark.parametrize("dtype", ATOMIC_DTYPES)
def test_atomic_add_sub_min_max_on_global_arrays(dtype):
    @dk.kernel
    def accumulate(x, stats):
        i = dk.get_global_id(0)
        dk.atomic.add(stats, 0, x[i])
        dk.atomic.sub(stats, 1, x[i])
        dk.atomic.min(stats, 2, x[i])
        dk.atomic.max(stats, 3, x[i])

    host = np.random.default_rng(2).integers(1, 50, 300).astype(dtype)
    stats = dpnp.asarray(np.array([0, 20000, 1000, 0], dtype=dtype))
    accumulate[300](dpnp.asarray(host), stats)
    got = dpnp.asnumpy(stats)
    expected = np.array(
        [host.sum(), np.array(20000, dtype) - host.sum(), host.min(), host.max()], dtype=dtype
    )
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", ATOMIC_DTYPES)
def test_atomics_return_the_old_value_and_exchange(dtype):
    @dk.kernel
    def claim(slots, owners, previous):
        i = dk.get_global_id(0)
        previous[i] = dk.atomic.exchange(slots, 0, i + 1)
        dk.atomic.compare_exchange(owners, (i % 2, 0), 0, i + 1)

    n = 64
    slots = dpnp.zeros(1, dtype=dtype)
    owners = dpnp.zeros((2, 1), dtype=dtype)
    previous = dpnp.empty(n, dtype=dtype)
    claim[n](slots, owners, previous)
    seen = np.sort(np.append(dpnp.asnumpy(previous), dpnp.asnumpy(slots)))
    np.testing.assert_array_equal(seen, np.arange(n + 1, dtype=dtype))
    first, second = dpnp.asnumpy(owners)[:, 0]
    assert first % 2 == 1 and second % 2 == 0 and first > 0 and second > 0


def test_atomics_on_local_memory_and_negative_indices():
    @dk.kernel
    def histogram(x, bins):
        local_bins = dk.local.array(4, dk.int32)
        lid = dk.get_local_id(0)
        if lid < 4:
            local_bins[lid] = 0
        dk.barrier()
        dk.atomic.add(local_bins, x[dk.get_global_id(0)] % 4, 1)
        dk.barrier()
        if lid < 4:
            dk.atomic.add(bins, lid - 4, local_bins[lid])

    host = np.random.default_rng(3).integers(0, 100, 512).astype(np.int32)
    bins = dpnp.zeros(4, dtype="i4")
    histogram[dk.NdRange(512, 64)](dpnp.asarray(host), bins)
    np.testing.assert_array_equal(dpnp.asnumpy(bins), np.bincount(host % 4, minlength=4))


def test_sub_group_collectives_match_numpy():
    @dk.kernel
    def collectives(x, sums, shuffled, broadcast, lanes, sizes):
        i = dk.get_global_id(0)
        lane = dk.sub_group.get_local_id()
        sums[i] = dk.sub_group.reduce_add(x[i])
        shuffled[i] = dk.sub_group.shuffle(x[i], lane ^ 1)
        broadcast[i] = dk.sub_group.broadcast(x[i], 0)
        lanes[i] = lane
        sizes[i] = dk.sub_group.get_size()
        dk.sub_group.barrier()

    n = 64
    host = np.random.default_rng(4).random(n)
    outs = [dpnp.empty(n) for _ in range(3)] + [dpnp.empty(n, dtype="i8") for _ in range(2)]
    collectives[dk.NdRange(n, n)](dpnp.asarray(host), *outs)
    sums, shuffled, broadcast, lanes, sizes = (dpnp.asnumpy(o) for o in outs)
    size = int(sizes[0])
    assert size in (4, 8, 16, 32, 64) and (sizes == size).all()
    np.testing.assert_array_equal(lanes, np.arange(n) % size)
    groups = host.reshape(-1, size)
    np.testing.assert_allclose(sums, np.repeat(groups.sum(axis=1), size))
    np.testing.assert_array_equal(broadcast, np.repeat(groups[:, 0], size))
    np.testing.assert_array_equal(shuffled, host[np.arange(n) ^ 1])


@pytest.mark.parametrize(
    "body",
    [
        "t = dk.local.array(n, dk.float32)",
        "t = dk.local.array(4, 'no-such-dtype')",
        "dk.atomic.add(dk.private.array(2, np.int8), 0, 1)",
        "dk.atomic.add(a, (0, 0), 1.0)",
        "dk.barrier(1.5)",
    ],
)
def test_bad_work_group_calls_are_compile_errors(body):
    source = f"def bad(a, n):\n    {body}\n"
    namespace = {"dk": dk, "np": np}
    exec(source, namespace)
    kernel = dk.kernel(namespace["bad"])
    with pytest.raises(dk.KernelCompileError, match="bad"):
        kernel[1](dpnp.zeros(4, dtype="f4"), 4)


def test_work_group_functions_refuse_host_calls():
    with pytest.raises(TypeError, match="inside a @dk.kernel"):
        dk.local.array(4, dk.float32)
    with pytest.raises(TypeError, match="inside a @dk.kernel"):
        dk.barrier()


def test_barriers_take_their_flags_by_keyword():
    """The form docs/kernel-language.md shows: barrier(flags=...), sub_group.barrier too."""

    @dk.kernel
    def reverse_in_groups(a, out):
        i = dk.get_global_id(0)
        lid = dk.get_local_id(0)
        tile = dk.local.array(8, dk.float32)
        tile[lid] = a[i]
        dk.barrier(flags=dk.LOCAL_MEM_FENCE)
        dk.sub_group.barrier(flags=dk.LOCAL_MEM_FENCE)
        out[i] = tile[7 - lid]

    host = np.arange(32, dtype=np.float32)
    out = dpnp.empty(32, dtype="f4")
    reverse_in_groups[dk.NdRange(32, 8)](dpnp.asarray(host), out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), host.reshape(4, 8)[:, ::-1].ravel())


@pytest.mark.parametrize("call", ["dk.barrier(flag=1)", "dk.barrier(1, flags=1)"])
def test_barrier_keywords_other_than_flags_are_compile_errors(call):
    namespace = {"dk": dk}
    exec(f"def bad(a):\n    {call}\n    a[0] = 1.0\n", namespace)
    with pytest.raises(dk.KernelCompileError, match="barrier"):
        dk.kernel(namespace["bad"]).compile(dk.void(dk.usm_array(dk.float64, 1)))
