"""dpex_kernels.numba_dpex (API.md §7): numba-dpex 0.21 kernel code, run through it, equals NumPy.

The kernels are numba-dpex 0.21's documented examples (vector add, matmul with local memory and
barriers, atomics, reductions, private arrays), written anew in numba-dpex's own spelling.
"""

from __future__ import annotations

import pickle

import cloudpickle
import dpctl
import dpnp
import numpy as np
import pytest
from conftest_kernels import CPU, assert_close, to_device
from numba import float32, int32

import dpex_kernels as dk
import dpex_kernels.numba_dpex as dpex
from tests.conftest import param_id

F4 = dpex.usm_ndarray(1, "C", dpex.float32)
I8 = dpex.usm_ndarray(1, "C", dpex.int64)


def _vector_add(a, b, c):
    i = dpex.get_global_id(0)
    c[i] = a[i] + b[i]


vector_add = dpex.kernel(_vector_add)


def _inputs(n=64, dtype="f4"):
    a = np.arange(n, dtype=dtype)
    b = np.arange(n, dtype=dtype)[::-1].copy() * 3
    return a, b, to_device(a), to_device(b), dpnp.zeros(n, dtype=dtype)


# --- launch forms -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "index",
    [
        64,
        (64,),
        [64],
        dpex.Range(64),
        (64, dpex.DEFAULT_LOCAL_SIZE),
        ((64,), dpex.DEFAULT_LOCAL_SIZE),
        (64, 16),  # numba-dpex 0.21: two ints are global and local size
        ((64,), (8,)),
        ([64], [32]),
        dpex.NdRange(dpex.Range(64), dpex.Range(16)),
        dpex.NdRange((64,), (4,)),
    ],
    ids=param_id,
)
def test_vector_add_launch_forms(index):
    a, b, da, db, dc = _inputs()
    assert vector_add[index](da, db, dc) is None
    assert_close(dc, a + b)


@pytest.mark.parametrize(
    ("index", "global_size", "local_size"),
    [
        (64, (64,), None),
        ((64, 16), (64,), (16,)),
        ([64, 16], (64,), (16,)),
        (((8, 4), (2, 2)), (8, 4), (2, 2)),
        (((8, 4, 2), dpex.DEFAULT_LOCAL_SIZE), (8, 4, 2), None),
        ((dpex.Range(8, 4), dpex.Range(4, 1)), (8, 4), (4, 1)),
    ],
    ids=param_id,
)
def test_launch_index_means_what_it_meant_in_numba_dpex(index, global_size, local_size):
    launch = dpex._launch_range("k", index)
    if local_size is None:
        assert launch == dk.Range(*global_size)
    else:
        assert launch == dk.NdRange(global_size, local_size)


@pytest.mark.parametrize("index", [(8, 4, 2), (), ((), 4), (64, 5), (1.5,), ("64",)], ids=param_id)
def test_bad_launch_index_raises_invalid_range(index):
    _, _, da, db, dc = _inputs()
    with pytest.raises(dk.InvalidRangeError):
        vector_add[index](da, db, dc)


def test_dpnp_tensor_arrays_as_numba_dpex_took_dpctl_tensor_arrays():
    import dpnp.tensor as dpt

    a, b = np.arange(64, dtype="i8"), np.arange(64, dtype="i8") * 5
    c = dpt.zeros(64, dtype="i8")
    vector_add[dpex.Range(64)](dpt.asarray(a), dpt.asarray(b), c)
    np.testing.assert_array_equal(dpt.asnumpy(c), a + b)


def test_launch_waits_for_the_kernel():
    # Read the shared allocation's bytes directly, bypassing every dpctl/dpnp synchronisation:
    # only a launch that waited shows the finished result.
    @dpex.kernel
    def slow_fill(out, steps):
        i = dpex.get_global_id(0)
        total = 0.0
        for k in range(steps):
            total += (k % 7) * 0.5
        out[i] = total + i

    n, steps = 32, 200_000
    out = dpnp.zeros(n, dtype="f8", usm_type="shared")
    slow_fill[n](out, steps)
    raw = np.frombuffer(memoryview(out.get_array().usm_data), dtype="f8")
    expected = sum((k % 7) * 0.5 for k in range(steps)) + np.arange(n)
    np.testing.assert_allclose(raw, expected)


def test_kernel_without_a_range_raises():
    _, _, da, db, dc = _inputs()
    with pytest.raises(TypeError, match="launch range"):
        vector_add(da, db, dc)


def test_two_dimensional_range_follows_numba_dpex_index_order():
    # numba-dpex: get_global_id(0) runs over the first extent of Range(X, Y).
    @dpex.kernel
    def coordinates(out):
        i = dpex.get_global_id(0)
        j = dpex.get_global_id(1)
        out[i, j] = i * 100 + j + dpex.get_global_size(0) * 10000

    rows, cols = 6, 5
    expected = np.add.outer(np.arange(rows) * 100, np.arange(cols)) + rows * 10000
    for index in (dpex.Range(rows, cols), ((rows, cols), dpex.DEFAULT_LOCAL_SIZE)):
        out = dpnp.zeros((rows, cols), dtype="i8")
        coordinates[index](out)
        np.testing.assert_array_equal(dpnp.asnumpy(out), expected)


# --- signature forms ----------------------------------------------------------------------


def test_eager_with_a_tuple_of_argument_types():
    k = dpex.kernel((I8, I8, I8))(_vector_add)
    assert k.signatures == [dk.void(I8, I8, I8)]
    a, b, da, db, dc = _inputs(dtype="i8")
    k[dpex.Range(64)](da, db, dc)
    assert_close(dc, a + b)
    with pytest.raises(dk.KernelSignatureError):
        k[64](*_inputs(dtype="f4")[2:])
    assert k.signatures == [dk.void(I8, I8, I8)]
    assert k.stats.compiles == 1


def test_eager_with_void_signature_and_a_list():
    k1 = dpex.kernel(dpex.void(F4, F4, F4))(_vector_add)
    k2 = dpex.kernel([(I8, I8, I8), dpex.void(F4, F4, F4)])(_vector_add)
    assert k1.signatures == [dk.void(F4, F4, F4)]
    assert k2.signatures == [dk.void(I8, I8, I8), dk.void(F4, F4, F4)]
    for dtype in ("f4", "i8"):
        a, b, da, db, dc = _inputs(dtype=dtype)
        k2[64](da, db, dc)
        assert_close(dc, a + b)
    assert k2.stats.compiles == 2


def test_decorator_with_options_and_no_signature():
    k = dpex.kernel(debug=False, enable_cache=True)(_vector_add)
    a, b, da, db, dc = _inputs()
    k[64](da, db, dc)
    assert_close(dc, a + b)
    assert dpex.kernel()(_vector_add).signatures == []


def test_debug_option_is_dk_debug_mode():
    @dpex.kernel(debug=True)
    def overrun(a):
        i = dpex.get_global_id(0)
        a[i + 1] = 1.0

    with pytest.raises(dk.KernelBoundsError):
        overrun[8](dpnp.zeros(8))


def test_numpy_array_signature_is_refused():
    with pytest.raises(TypeError, match="usm_array"):
        dpex.kernel((float32[::1], float32[::1], float32[::1]))(_vector_add)


def test_non_function_is_refused():
    with pytest.raises(TypeError, match="function"):
        dpex.kernel(42)


def test_usm_ndarray_is_dk_usm_array():
    assert dpex.usm_ndarray(2, "F", dpex.int32) == dk.usm_array(dk.int32, 2, "F")
    assert dpex.USMNdArray(1, dtype=dpex.f8, usm_type="shared", device="cpu") == dk.usm_array(
        "f8", 1, usm_type="shared", device=CPU
    )
    assert dpex.usm_ndarray(1) == dk.usm_array(dk.float64, 1)  # dpctl's default dtype here
    queue = dpctl.SyclQueue(CPU)
    assert dpex.DpnpNdArray(3, queue=queue).device == CPU
    with pytest.raises(TypeError, match="not both"):
        dpex.usm_ndarray(1, device="cpu", queue=queue)


def test_wrapped_kernel_exposes_dk_kernel_and_pickles():
    k = dpex.kernel((F4, F4, F4))(_vector_add)
    assert isinstance(k.dk_kernel, dk.JitKernel)
    assert k.__name__ == "_vector_add"
    assert list(k.definitions) == k.signatures
    a, b, da, db, dc = _inputs()
    ev = k.dk_kernel[dk.Range(64)](da, db, dc)  # dk's asynchronous launch stays reachable
    assert isinstance(ev, dpctl.SyclEvent)
    ev.wait()
    for dumps in (pickle.dumps, cloudpickle.dumps):
        clone = pickle.loads(dumps(k))
        assert isinstance(clone, dpex.Kernel)
        dc2 = dpnp.zeros(64, dtype="f4")
        clone[64](da, db, dc2)
        assert_close(dc2, a + b)
        assert clone.stats.compiles == 0


# --- the numba-dpex documentation's examples ----------------------------------------------

TILE = 4


@dpex.kernel
def tiled_matmul(a, b, c):
    row = dpex.get_global_id(0)
    col = dpex.get_global_id(1)
    lrow = dpex.get_local_id(0)
    lcol = dpex.get_local_id(1)
    a_tile = dpex.local.array((TILE, TILE), float32)
    b_tile = dpex.local.array((TILE, TILE), float32)
    acc = float32(0)
    for t in range(a.shape[1] // TILE):
        a_tile[lrow, lcol] = a[row, t * TILE + lcol]
        b_tile[lrow, lcol] = b[t * TILE + lrow, col]
        dpex.barrier(dpex.LOCAL_MEM_FENCE)
        for k in range(TILE):
            acc += a_tile[lrow, k] * b_tile[k, lcol]
        dpex.barrier(dpex.LOCAL_MEM_FENCE)
    c[row, col] = acc


@pytest.mark.parametrize(
    "index",
    [
        dpex.NdRange(dpex.Range(16, 12), dpex.Range(TILE, TILE)),
        ((16, 12), (TILE, TILE)),
    ],
    ids=["NdRange", "global-local"],
)
def test_matmul_with_local_memory_and_barriers(index):
    rng = np.random.default_rng(3)
    a = rng.random((16, 8), dtype=np.float32)
    b = rng.random((8, 12), dtype=np.float32)
    c = dpnp.zeros((16, 12), dtype="f4")
    tiled_matmul[index](to_device(a), to_device(b), c)
    np.testing.assert_allclose(dpnp.asnumpy(c), a @ b, rtol=1e-5)


def test_atomic_histogram():
    @dpex.kernel
    def histogram(values, bins):
        i = dpex.get_global_id(0)
        dpex.atomic.add(bins, values[i] % bins.shape[0], 1)

    values = np.random.default_rng(4).integers(0, 1000, size=5000).astype(np.int64)
    bins = dpnp.zeros(10, dtype="i4")
    histogram[values.size](to_device(values), bins)
    np.testing.assert_array_equal(dpnp.asnumpy(bins), np.bincount(values % 10, minlength=10))


def test_atomic_sum_and_subtract_return_old_values():
    @dpex.kernel
    def accumulate(a, total, negated, olds):
        i = dpex.get_global_id(0)
        olds[i] = dpex.atomic.add(total, 0, a[i])
        dpex.atomic.sub(negated, 0, a[i])

    a = np.arange(1, 101, dtype=np.float64)
    total, negated, olds = dpnp.zeros(1), dpnp.zeros(1), dpnp.zeros(100)
    accumulate[dpex.Range(100)](to_device(a), total, negated, olds)
    assert dpnp.asnumpy(total)[0] == a.sum()
    assert dpnp.asnumpy(negated)[0] == -a.sum()
    # Each old value is a partial sum of distinct elements: all different, each below the total.
    old = np.sort(dpnp.asnumpy(olds))
    assert old[0] == 0 and np.all(np.diff(old) > 0) and old[-1] < a.sum()


def _group_sums(a, partial_sums):
    lid = dpex.get_local_id(0)
    group_size = dpex.get_local_size(0)
    scratch = dpex.local.array(64, int32)
    scratch[lid] = a[dpex.get_global_id(0)]
    stride = group_size // 2
    while stride > 0:
        dpex.barrier(dpex.LOCAL_MEM_FENCE)
        if lid < stride:
            scratch[lid] += scratch[lid + stride]
        stride >>= 1
    if lid == 0:
        partial_sums[dpex.get_group_id(0)] = scratch[0]


group_sums = dpex.kernel(_group_sums)


@pytest.mark.parametrize("group", [64, 32, 8])
def test_work_group_sum_reduction(group):
    values = np.random.default_rng(5).integers(-50, 50, size=1024).astype(np.int32)
    partial = dpnp.zeros(1024 // group, dtype="i4")
    group_sums[dpex.NdRange(dpex.Range(1024), dpex.Range(group))](to_device(values), partial)
    np.testing.assert_array_equal(dpnp.asnumpy(partial), values.reshape(-1, group).sum(axis=1))
    partial2 = dpnp.zeros(1024 // group, dtype="i4")
    group_sums[1024, group](to_device(values), partial2)
    assert int(dpnp.asnumpy(partial2).sum()) == int(values.sum())


def test_private_array():
    @dpex.kernel
    def reverse_quads(a, out):
        i = dpex.get_global_id(0)
        scratch = dpex.private.array(4, float32)
        for k in range(4):
            scratch[k] = a[i * 4 + k] * (i + 1)
        dpex.barrier(dpex.LOCAL_MEM_FENCE)
        for k in range(4):
            out[i * 4 + k] = scratch[3 - k]

    a = np.arange(64, dtype=np.float32)
    out = dpnp.zeros(64, dtype="f4")
    reverse_quads[dpex.NdRange(dpex.Range(16), dpex.Range(16))](to_device(a), out)
    expected = (a.reshape(16, 4) * np.arange(1, 17)[:, None])[:, ::-1].ravel()
    assert_close(out, expected)


def test_private_array_keyword_form():
    # numba-dpex 0.21's private-memory example spells it with keywords.
    @dpex.kernel
    def twice(a):
        memory = dpex.private.array(shape=1, dtype=np.float32)
        i = dpex.get_global_id(0)
        memory[0] = i
        dpex.barrier(dpex.LOCAL_MEM_FENCE)
        a[i] = memory[0] * 2

    out = dpnp.zeros(16, dtype="f4")
    twice[dpex.NdRange(dpex.Range(16), dpex.Range(16))](out)
    assert_close(out, np.arange(16, dtype="f4") * 2)


@pytest.mark.parametrize("spelling", ["dtype-keyword", "both-keywords"])
def test_local_array_keyword_forms(spelling):
    if spelling == "dtype-keyword":

        def shifted(a, out):
            lid = dpex.get_local_id(0)
            tile = dpex.local.array(8, dtype=int32)
            tile[lid] = a[dpex.get_global_id(0)]
            dpex.barrier(dpex.LOCAL_MEM_FENCE)
            out[dpex.get_global_id(0)] = tile[(lid + 1) % 8]
    else:

        def shifted(a, out):
            lid = dpex.get_local_id(0)
            tile = dpex.local.array(shape=8, dtype=int32)
            tile[lid] = a[dpex.get_global_id(0)]
            dpex.barrier(dpex.LOCAL_MEM_FENCE)
            out[dpex.get_global_id(0)] = tile[(lid + 1) % 8]

    a = np.arange(32, dtype=np.int32)
    out = dpnp.zeros(32, dtype="i4")
    dpex.kernel(shifted)[32, 8](to_device(a), out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.roll(a.reshape(4, 8), -1, axis=1).ravel())


def test_barrier_without_flags_and_sub_group_barrier():
    @dpex.kernel
    def neighbours(a, out):
        lid = dpex.get_local_id(0)
        tile = dpex.local.array(16, float32)
        tile[lid] = a[dpex.get_global_id(0)]
        dpex.barrier()
        dpex.sub_group_barrier()
        out[dpex.get_global_id(0)] = tile[15 - lid]

    a = np.arange(32, dtype=np.float32)
    out = dpnp.zeros(32, dtype="f4")
    neighbours[32, 16](to_device(a), out)
    assert_close(out, a.reshape(2, 16)[:, ::-1].ravel())


# --- device functions ---------------------------------------------------------------------


@dpex.func
def _square(x):
    return x * x


@dpex.func(dpex.int64(dpex.int64))
def _plus_square(x):
    return x + _square(x)


def test_device_functions_lazy_eager_and_nested():
    @dpex.kernel
    def apply(a, out):
        i = dpex.get_global_id(0)
        out[i] = _plus_square(a[i]) - _square(a[i] - 1)

    assert isinstance(_square, dk.DeviceFunction)
    a = np.arange(-8, 8, dtype=np.int64)
    out = dpnp.zeros(16, dtype="i8")
    apply[16](to_device(a), out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), a + a * a - (a - 1) ** 2)


def test_device_function_signature_forms():
    def scale(x):
        return x * 3

    lazy = dpex.func()(scale)
    tupled = dpex.func((dpex.float64,))(scale)
    listed = dpex.func([dpex.float64(dpex.float64), dpex.int64(dpex.int64)])(scale)
    assert lazy.signatures == []
    assert tupled.signatures == [(dk.float64,)]
    assert listed.signatures == [(dk.float64,), (dk.int64,)]

    @dpex.kernel
    def use(a, out):
        i = dpex.get_global_id(0)
        out[i] = lazy(a[i]) + tupled(a[i]) + listed(a[i])

    a = np.linspace(-1, 1, 8)
    out = dpnp.zeros(8)
    use[8](to_device(a), out)
    assert_close(out, a * 9)
    with pytest.raises(TypeError, match="device function"):
        lazy(1.0)
