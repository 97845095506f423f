"""@dk.offload (API.md §9): prange nests, array expressions, reductions and allocation inside a
Numba-compiled function run on the device; every result is checked against NumPy."""

from __future__ import annotations

import math
import subprocess
import warnings
from pathlib import Path

import dpctl
import dpnp
import numba
import numpy as np
import pytest
from conftest import CPU, launched
from conftest_kernels import run_python
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes
from numba import prange

import dpex_kernels as dk
from dpex_kernels.offloading.allocation import HUGE_PAGE_THRESHOLD
from dpex_kernels.offloading.reduction_kernels import MAX_GROUPS as REDUCTION_MAX_GROUPS
from dpex_kernels.offloading.reduction_kernels import PER_ITEM as REDUCTION_PER_ITEM
from dpex_kernels.offloading.reduction_kernels import WORK_GROUP as REDUCTION_WORK_GROUP

RNG = np.random.default_rng(7)


def usm(values):
    return dpnp.asarray(values, device=CPU)


def host(array):
    return dpnp.asnumpy(array)


def sample(shape, dtype):
    if np.issubdtype(np.dtype(dtype), np.integer):
        return RNG.integers(-50, 50, size=shape).astype(dtype)
    return RNG.random(shape).astype(dtype)


def plain_kernels(function) -> list:
    """The kernels a function launches in every case: all but the streaming kernels a CPU
    device's large loops take instead of the plain one (test_offload_streaming.py) and the
    flat kernels element-wise nests take where their arrays fit (test_offload_flat.py)."""
    alternatives = ("_stream_", "_flat_")
    return [k for k in function.inspect_kernels() if not any(a in k.name for a in alternatives)]


# --- prange nests ----------------------------------------------------------------------------


@dk.offload
def vecadd(a, b, c):
    for i in prange(a.shape[0]):
        c[i] = a[i] + b[i]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_1d_prange_equals_numpy(dtype):
    a, b = sample(1000, dtype), sample(1000, dtype)
    c = usm(np.zeros(1000, dtype))
    vecadd(usm(a), c=c, b=usm(b))  # keywords bind as in Python
    np.testing.assert_array_equal(host(c), a + b)


@dk.offload
def strided(a, out, start, stop, step):
    for i in prange(start, stop, step):
        out[i] = a[i] * 2


@given(
    start=st.integers(0, 99),
    stop=st.integers(0, 99),
    step=st.integers(-7, 7).filter(bool),
)
def test_prange_bounds_follow_python_range(start, stop, step):
    a = sample(100, "float64")
    out = usm(np.full(100, -1.0))
    strided(usm(a), out, start, stop, step)
    expected = np.full(100, -1.0)
    index = np.arange(start, stop, step)
    expected[index] = a[index] * 2
    np.testing.assert_array_equal(host(out), expected)


def test_prange_step_zero_is_a_value_error():
    with pytest.raises(ValueError, match="must not be zero"):
        strided(usm(np.ones(4)), usm(np.ones(4)), 0, 4, 0)


def test_arguments_compiled_code_cannot_take_are_a_type_error():
    with pytest.raises(TypeError, match="argument 'b' is a object"):
        vecadd(usm(np.ones(4)), object(), usm(np.ones(4)))


@dk.offload
def plain_bounds(a, out, n):
    """Only prange nests with integer bounds of the arguments: no host function to compile."""
    for i in prange(len(a) - n):
        out[i] = a[i] + n
    for i in prange(n, a.shape[-1] // 2 * 2, 2):
        out[i] = out[i] * 3
    return


@dk.offload
def host_bounds(a, out, n):
    m = max(n, 0)  # host code: a call Numba compiles
    for i in prange(len(a) - m):
        out[i] = a[i] + m
    for i in prange(m, a.shape[-1] // 2 * 2, 2):
        out[i] = out[i] * 3


@pytest.mark.parametrize("n", [3, np.int32(5), np.int64(40), 0])
def test_loops_of_plain_bounds_equal_the_compiled_host_function(n):
    a = sample(37, "float64")
    expected = np.full(37, -1.0)
    for i in range(len(a) - n):
        expected[i] = a[i] + n
    expected[n:36:2] *= 3
    results = []
    for function in (plain_bounds, host_bounds):
        out = usm(np.full(37, -1.0))
        function(usm(a), out, n)
        results.append(host(out))
    np.testing.assert_array_equal(results[0], expected)
    np.testing.assert_array_equal(results[1], expected)
    # Both are Numba-compiled host functions (parfor design); the kernels compiled for the
    # argument types are the ones the launches use.
    assert all(len(k.kernel.definitions) == 1 for k in plain_bounds.inspect_kernels())


@dk.offload
def plain_stencil(x, y):
    n0, n1 = x.shape
    inner = n1 - 1
    for i in prange(1, n0 - 1):
        for j in prange(1, inner):
            y[i, j] = x[i - 1, j] + x[i + 1, j] - x[i, j - 1] * x[i, j + 1] + inner


def test_plain_integer_names_in_bounds_make_one_2d_kernel():
    x = sample((9, 12), "float64")
    y = usm(np.zeros_like(x))
    plain_stencil(usm(x), y)
    expected = np.zeros_like(x)
    expected[1:-1, 1:-1] = x[:-2, 1:-1] + x[2:, 1:-1] - x[1:-1, :-2] * x[1:-1, 2:] + 11
    np.testing.assert_allclose(host(y), expected)
    (kernel,) = plain_kernels(plain_stencil)
    assert kernel.kind == "2-D prange nest"


@dk.offload
def nest2(a, out):
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            out[i, j] = a[i, j] * 2 + i - j


def test_2d_nest_equals_numpy():
    a = sample((33, 17), "float32")
    out = usm(np.zeros_like(a))
    nest2(usm(a), out)
    i, j = np.indices(a.shape)
    np.testing.assert_allclose(host(out), a * 2 + i - j, rtol=1e-6)
    (kernel,) = plain_kernels(nest2)
    assert kernel.kind == "2-D prange nest"


@dk.offload
def nest3(a, out):
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            for k in prange(1, a.shape[2], 2):
                out[i, j, k] = a[i, j, k] + i * 100 + j * 10 + k


def test_3d_nest_equals_numpy():
    a = sample((4, 5, 7), "float64")
    out = usm(np.zeros_like(a))
    nest3(usm(a), out)
    expected = np.zeros_like(a)
    i, j, k = np.indices(a.shape)
    expected[:, :, 1::2] = (a + i * 100 + j * 10 + k)[:, :, 1::2]
    np.testing.assert_allclose(host(out), expected)


@dk.offload
def row_sums(a, out):
    for i in prange(a.shape[0]):
        total = 0.0
        for j in range(a.shape[1]):
            total += a[i, j]
        out[i] = total


def test_inner_sequential_loop_runs_in_each_work_item():
    a = sample((20, 30), "float64")
    out = usm(np.zeros(20))
    row_sums(usm(a), out)
    np.testing.assert_allclose(host(out), a.sum(axis=1))


@dk.offload
def steps(a, b, count):
    for _ in range(count):
        for i in prange(1, a.shape[0] - 1):
            b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0
        for i in prange(1, a.shape[0] - 1):
            a[i] = b[i]
    return a[1]


def test_loops_inside_host_loops_run_in_program_order():
    a0 = sample(64, "float64")
    a, b = usm(a0.copy()), usm(a0.copy())
    middle = steps(a, b, 5)
    expected = a0.copy()
    for _ in range(5):
        smoothed = expected.copy()
        smoothed[1:-1] = (expected[:-2] + expected[1:-1] + expected[2:]) / 3.0
        expected = smoothed
    np.testing.assert_allclose(host(a), expected)
    assert middle == pytest.approx(expected[1])  # host code read what the kernels wrote


@dk.offload
def jacobi_1d(u, new, tol):
    n = u.shape[0]
    change = 1.0
    sweeps = 0
    while change > tol:
        change = 0.0
        for i in prange(1, n - 1):
            new[i] = 0.5 * (u[i - 1] + u[i + 1])
            change = max(change, abs(new[i] - u[i]))
        for i in prange(1, n - 1):
            u[i] = new[i]
        sweeps += 1
    return sweeps, change


def test_reduction_steers_a_host_while_loop():
    start = np.zeros(20)
    start[0], start[-1] = 1.0, 2.0
    sweeps, change = jacobi_1d(usm(start), usm(start), 1e-6)
    u, count, worst = start.copy(), 0, 1.0
    while worst > 1e-6:
        new = u.copy()
        new[1:-1] = 0.5 * (u[:-2] + u[2:])
        worst = np.abs(new - u).max()
        u, count = new, count + 1
    assert (sweeps, change) == (count, pytest.approx(worst))


# --- array expressions -----------------------------------------------------------------------


@dk.offload
def expressions(a, b, c, s):
    d = a + b * c - s
    e = np.sqrt(d * d) + abs(-a)
    d += 1
    c[:] = a * 2.0
    return d, e


def test_array_expressions_equal_numpy():
    a, b, c = (sample(257, "float32") for _ in range(3))
    c_usm = usm(c)
    d, e = expressions(usm(a), usm(b), c_usm, 0.5)
    assert isinstance(d, dpnp.ndarray) and d.sycl_device.filter_string == CPU
    assert d.dtype == (a + b * c - 0.5).dtype == np.float32
    np.testing.assert_allclose(host(d), a + b * c - 0.5 + 1, rtol=1e-5)
    np.testing.assert_allclose(host(e), np.sqrt((a + b * c - 0.5) ** 2) + np.abs(a), rtol=1e-5)
    np.testing.assert_allclose(host(c_usm), a * 2.0)
    kinds = {k.kind for k in expressions.inspect_kernels()}
    assert kinds == {"array expression"}


@dk.offload
def fills(c, s):
    c[:] = 0.0
    c += s
    c /= math.sqrt(s)
    c[...] = c * c


def test_scalar_expressions_stored_into_whole_arrays_run_on_the_device():
    c = usm(np.ones((3, 4), "f4"))
    fills(c, 4.0)
    np.testing.assert_allclose(host(c), np.full((3, 4), 4.0, "f4"))
    kinds = [k.kind for k in plain_kernels(fills)]
    assert kinds == ["array expression"]  # Numba fuses the four statements' loops: one kernel


@numba.vectorize
def smooth_step(x):
    """A ufunc of the user's: its scalar body runs in the kernel as a device function."""
    if x <= 0.0:
        return 0.0 * x
    if x >= 1.0:
        return 1.0 + 0.0 * x
    return x * x * (3.0 - 2.0 * x)


@dk.offload
def user_ufunc(a, b):
    return smooth_step(a) * b + smooth_step(b - a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_user_vectorize_functions_in_array_expressions_equal_numpy(dtype):
    a, b = sample((4, 50), dtype) * 1.4 - 0.2, sample((4, 50), dtype)
    got = user_ufunc(usm(a), usm(b))
    assert isinstance(got, dpnp.ndarray) and got.sycl_device.filter_string == CPU

    def reference(x):
        return np.where(x <= 0, 0, np.where(x >= 1, 1, x * x * (3 - 2 * x)))

    np.testing.assert_allclose(host(got), reference(a) * b + reference(b - a), rtol=1e-6)


@dk.offload
def mixed(a, b):
    return a / b + 1


@pytest.mark.parametrize(
    ("da", "db"), [("int32", "int32"), ("int32", "float32"), ("float32", "float64")]
)
def test_array_expression_dtype_follows_numpy(da, db):
    a = sample((6, 7), da)
    b = sample((6, 7), db)
    b[b == 0] = 3
    result = mixed(usm(a), usm(b))
    expected = a / b + 1
    assert result.dtype == expected.dtype and result.shape == (6, 7)
    np.testing.assert_allclose(host(result), expected, rtol=1e-6)


#: Arrays of one rank broadcast (broadcasting.py); an array of lower rank is Numba's to
#: broadcast, which takes no size-1 dimension of its run-time shape (a ValueError) and no array
#: two ranks lower (a KernelCompileError).
RUNTIME_SIZE_1 = pytest.mark.xfail(
    strict=True,
    raises=(ValueError, dk.KernelCompileError),
    reason="a lower-rank array with a run-time size-1 dimension, or two ranks lower",
)


@settings(max_examples=30, deadline=None)
@given(
    shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=5).filter(
        lambda s: all(1 not in shape for shape in s.input_shapes)
    )
)
def test_array_expressions_broadcast_trailing_dimensions_like_numpy(shapes):
    (shape_a, shape_b), result_shape = shapes
    a, b = sample(shape_a, "float64"), sample(shape_b, "float64") + 1
    result = mixed(usm(a), usm(b))
    assert result.shape == result_shape
    np.testing.assert_allclose(host(result), a / b + 1)


@dk.offload
def outer_sum(column, row):
    return column[:, None] + row[None, :]


def test_constant_size_1_dimensions_broadcast_like_numpy():
    column, row = sample(5, "float64"), sample(3, "float64")
    np.testing.assert_allclose(host(outer_sum(usm(column), usm(row))), column[:, None] + row)


@settings(max_examples=30, deadline=None)
@given(
    shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=2, max_dims=3, max_side=5).filter(
        lambda s: len(s.input_shapes[0]) == len(s.input_shapes[1])
    )
)
def test_run_time_size_1_dimensions_of_arrays_of_one_rank_broadcast_like_numpy(shapes):
    (shape_a, shape_b), result_shape = shapes
    a, b = sample(shape_a, "float64"), sample(shape_b, "float64") + 1
    result = mixed(usm(a), usm(b))
    assert result.shape == result_shape
    np.testing.assert_allclose(host(result), a / b + 1)


def test_expressions_without_broadcasting_take_the_flat_kernel():
    @dk.offload
    def ratio(a, b):
        return a / b + 1

    @dk.offload
    def root(a, b):
        return np.sqrt(a / b)

    a, b = sample((4, 3), "float64"), sample((4, 1), "float64") + 1
    np.testing.assert_allclose(host(ratio(usm(a), usm(a + 1))), a / (a + 1) + 1)
    assert launched(ratio) == {"ratio_flat"}  # C-contiguous arrays of the expression's shape
    np.testing.assert_allclose(host(ratio(usm(a), usm(b))), a / b + 1)
    # a view that repeats a dimension: rows looped in each work-item, or with math in the
    # body, the 2-D range over the views
    assert launched(ratio) == {"ratio_flat", "ratio_sequential"}
    a, b = sample((4, 20), "float64"), sample((4, 1), "float64") + 1
    np.testing.assert_allclose(host(root(usm(a), usm(b))), np.sqrt(a / b))
    assert launched(root) == {"root_broadcast"}


@RUNTIME_SIZE_1
@settings(max_examples=30, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=5))
def test_array_expressions_broadcast_like_numpy(shapes):
    (shape_a, shape_b), result_shape = shapes
    a, b = sample(shape_a, "float64"), sample(shape_b, "float64") + 1
    result = mixed(usm(a), usm(b))
    assert result.shape == result_shape
    np.testing.assert_allclose(host(result), a / b + 1)


def test_array_expressions_that_do_not_broadcast_are_numpy_s_value_error():
    with pytest.raises(ValueError, match="cannot be broadcast"):
        mixed(usm(np.ones((2, 4))), usm(np.ones((3, 4))))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        mixed(usm(np.ones((2, 4))), usm(np.ones(5)))


@dk.offload
def stores_broadcast(c, row, column):
    c[:] = row
    c += column * 2


@dk.offload
def stores_rows(c, row):
    c[:] = row
    c += row * 2


def test_stores_into_an_array_broadcast_trailing_dimensions_to_it():
    c = usm(np.zeros((4, 3)))
    row = sample(3, "float64")
    stores_rows(c, usm(row))
    np.testing.assert_allclose(host(c), np.broadcast_to(row * 3, (4, 3)))
    assert {"stores_rows_sequential"} <= launched(stores_rows)  # no copy on the host
    with pytest.raises(ValueError, match="cannot be broadcast"):
        stores_rows(usm(np.zeros((4, 3))), usm(np.ones(2)))


@RUNTIME_SIZE_1
def test_stores_into_an_array_broadcast_the_expression_to_it():
    c = usm(np.zeros((4, 3)))
    row, column = sample(3, "float64"), sample((4, 1), "float64")
    stores_broadcast(c, usm(row), usm(column))
    np.testing.assert_allclose(host(c), row + column * 2)
    with pytest.raises(ValueError, match="do not broadcast to the shape of 'c'"):
        stores_broadcast(usm(np.zeros((1, 3))), usm(row), usm(column))


# --- reductions ------------------------------------------------------------------------------


@dk.offload
def dot(a, b):
    s = 0.0
    for i in prange(a.shape[0]):
        s += a[i] * b[i]
    return s


@dk.offload
def all_kinds(a):
    total = 0
    product = 1
    lo = a[0]
    hi = a[0]
    for i in prange(a.shape[0]):
        total += a[i]
        product *= a[i]
        lo = min(lo, a[i])
        hi = max(a[i], hi)
    return total, product, lo, hi


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_reductions_equal_numpy(dtype):
    a = sample(3000, dtype)
    if np.issubdtype(np.dtype(dtype), np.integer):
        small = RNG.choice([-1, 1], size=40).astype(dtype)  # a product that cannot overflow
    else:
        small = (1 + RNG.random(40) / 100).astype(dtype)
    total, _, lo, hi = all_kinds(usm(a))
    np.testing.assert_allclose(total, a.astype("f8").sum(), rtol=1e-5)
    assert lo == a.min() and hi == a.max()
    product = all_kinds(usm(small))[1]
    np.testing.assert_allclose(product, np.prod(small.astype("f8")), rtol=1e-5)


@given(n=st.integers(1, REDUCTION_WORK_GROUP * REDUCTION_MAX_GROUPS * 2 + 37))
def test_dot_of_any_length(n):
    a = RNG.random(n)
    b = RNG.random(n)
    assert dot(usm(a), usm(b)) == pytest.approx(np.dot(a, b), rel=1e-9)


def test_reductions_reuse_their_partial_results_buffer_and_any_longer_one():
    """A call's buffer of partial results goes back to host._SCRATCH after its final pass;
    the next call takes it if it is long enough (shorter calls ignore the rest of it)."""
    from dpex_kernels.offloading import allocation as offload_host

    offload_host._SCRATCH.clear()
    big, small = RNG.random(40 * REDUCTION_WORK_GROUP), RNG.random(REDUCTION_WORK_GROUP + 3)
    assert dot(usm(big), usm(big)) == pytest.approx(big @ big, rel=1e-9)
    (kept,) = offload_host._SCRATCH.values()
    (buffer,) = kept
    for x in (small, big, small):
        assert dot(usm(x), usm(x)) == pytest.approx(x @ x, rel=1e-9)
        assert kept == [buffer]  # taken, then given back: no second buffer was made
    huge = RNG.random(REDUCTION_WORK_GROUP * REDUCTION_MAX_GROUPS * 4)
    assert dot(usm(huge), usm(huge)) == pytest.approx(huge @ huge, rel=1e-9)
    assert len(kept) == 2 and kept[0] is buffer and kept[1].size > buffer.size
    for _ in range(offload_host._SCRATCH_KEYS + 3):  # a new queue each call: old keys go
        queue = dpctl.SyclQueue(CPU)
        x = dpnp.asarray(small, sycl_queue=queue)
        assert dot(x, x) == pytest.approx(small @ small, rel=1e-9)
    assert len(offload_host._SCRATCH) == offload_host._SCRATCH_KEYS


THREADED_REDUCTIONS = """
import threading

import dpctl
import dpnp
import numpy as np
from numba import prange

import dpex_kernels as dk


@dk.offload
def dot(a, b):
    s = 0.0
    for i in prange(a.shape[0]):
        s += a[i] * b[i]
    return s


rng = np.random.default_rng(7)
queues = [dpctl.SyclQueue("{device}"), dpctl.SyclQueue("{device}")]
inputs = [rng.random(size) for size in (70_000, 3_000, 1_500_000, 123)]
expected = [np.dot(a, a) for a in inputs]
arrays = [[dpnp.asarray(a, sycl_queue=queues[w % 2]) for a in inputs] for w in range(4)]
for queue in queues:
    queue.wait()
for queue_arrays in arrays[:2]:  # compiled and built here, for both queues' context
    dot(queue_arrays[0], queue_arrays[0])
failures = []


def run(worker):
    for _ in range(15):
        for array, want in zip(arrays[worker], expected, strict=True):
            got = dot(array, array)
            if not np.isclose(got, want, rtol=1e-9, atol=0):
                failures.append((worker, array.size, got, want))


threads = [threading.Thread(target=run, args=(w,)) for w in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("failures", failures)
"""


def test_reductions_in_threads_and_on_two_queues_equal_numpy(tmp_path):
    """Threads running reductions at once, on two queues of one device: each call's buffer
    and launches stay its own (a pool that lent one buffer to two calls gave wrong sums here).

    In a fresh interpreter, with the arrays made and the function compiled before the
    threads start: the OpenCL CPU runtime itself hangs now and then with threads on two
    queues, dpnp's copies (docs/offload.md) and, after a process has run much else, kernel
    launches too (2 runs in 8 after a few large loops, also before dk had host-SIMD
    kernels). A run that hangs is run once more; a wrong sum never is.
    """
    script = tmp_path / "threaded_reductions.py"
    script.write_text(THREADED_REDUCTIONS.replace("{device}", CPU))
    code = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"
    for attempt in range(2):
        try:
            result = run_python(code, str(script), timeout=120)
            break
        except subprocess.TimeoutExpired:
            if attempt:
                raise
    assert result.returncode == 0, result.stderr[-3000:]
    assert "failures []" in result.stdout, result.stdout


def test_reduction_loop_indexes_its_arrays_by_element():
    """Loop strength reduction off in SPIR-V emission: its byte offsets over several arrays
    kept the OpenCL CPU runtime from vectorising a dot product's loop (4-6x slower)."""
    dot(usm(np.ones(8, "f4")), usm(np.ones(8, "f4")))
    (reduce,) = [
        k for k in dot.inspect_kernels() if "reduce" in k.name and "float32" in str(k.signature)
    ]
    chains = [
        line
        for line in reduce.spirv.splitlines()
        if "CrossWorkgroup" in line and "AccessChain" in line
    ]
    assert chains and not [line for line in chains if "_uchar" in line], chains


@dk.offload
def reduce_2d(a, start):
    s = start
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            s += a[i, j] * (i + 1)
    return s


def test_2d_reduction_and_initial_value():
    a = sample((37, 45), "float64")
    expected = 10.0 + (a * (np.arange(37) + 1)[:, None]).sum()
    assert reduce_2d(usm(a), 10.0) == pytest.approx(expected)


def test_reduction_over_an_empty_range_is_the_initial_value():
    assert dot(usm(np.zeros(0)), usm(np.zeros(0))) == 0.0
    assert reduce_2d(usm(np.zeros((0, 3))), 2.5) == 2.5


def test_reduction_runs_on_the_device():
    dot(usm(np.ones(8)), usm(np.ones(8)))
    names = {k.name for k in dot.inspect_kernels()}
    assert {"dot_reduce_line" + str(_line_of(dot, "prange")), "dk_final_sum_float64"} <= names


@dk.offload
def int_total(a):
    s = 0
    for i in prange(a.shape[0]):
        s += a[i]
    return s


@dk.offload
def grid_total(a):
    s = 0
    for i in prange(a.shape[0]):
        j = 0
        while j < a.shape[1]:
            for _ in range(1):
                s += a[i, j]
            j += 1
    return s


def test_accumulator_updated_inside_inner_loops_takes_their_type():
    a = sample((17, 9), "float64")
    assert grid_total(usm(a)) == pytest.approx(a.sum())


def test_reduction_accumulator_type_is_numba_unified_type():
    # s starts as an int; the loop adds floats, so the sum is a float (as on the host).
    assert int_total(usm(np.full(10, 0.25))) == pytest.approx(2.5)
    assert int_total(usm(np.arange(10, dtype="i4"))) == 45


# --- whole-array reductions -------------------------------------------------------------------


@dk.offload
def array_reductions(a, b):
    return a.sum(), dpnp.sum(a * b) + np.max(b), (a - b).min(), np.prod(a), dpnp.amax(a)


@pytest.mark.parametrize(
    ("dtype", "shape"),
    [("float32", (1000,)), ("float64", (17, 33)), ("int32", (3, 5, 7)), ("int64", (1000,))],
)
def test_array_reductions_equal_numpy(dtype, shape):
    a = RNG.integers(1, 4, size=shape) if "int" in dtype else RNG.random(shape) + 0.5
    a = a.astype(dtype)
    b = sample(shape, dtype)
    got = array_reductions(usm(a), usm(b))
    expected = (a.sum(), np.sum(a * b) + np.max(b), (a - b).min(), np.prod(a), a.max())
    for value, want in zip(got, expected):
        assert isinstance(value, int) == np.issubdtype(want.dtype, np.integer)
        np.testing.assert_allclose(value, want, rtol=1e-4 if dtype == "float32" else 1e-10)
    kinds = {k.kind for k in array_reductions.inspect_kernels()}
    # Numba's parfor fusion leaves `a * b` and `a - b` loops of their own before the reduction
    assert kinds == {
        "array expression",
        "array reduction (+)",
        "array reduction (max)",
        "array reduction (min)",
        "array reduction (*)",
    }


@given(n=st.integers(0, REDUCTION_WORK_GROUP * 20 + 3))
def test_array_sum_of_any_length(n):
    a = np.arange(n, dtype=np.int64)
    assert sum_of(usm(a)) == a.sum()


@pytest.mark.parametrize("where", [0, 1, 699])
def test_array_min_and_max_are_nan_where_numpy_s_are(where):
    a, b = sample(700, "float32"), sample(700, "float32")
    a[where] = np.nan
    got = array_reductions(usm(a), usm(b))
    expected = (a.sum(), np.sum(a * b) + np.max(b), (a - b).min(), np.prod(a), a.max())
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    assert np.isnan(got[2]) and np.isnan(got[4])


@dk.offload
def sum_of(a):
    return a.sum()


def test_max_of_an_empty_array_is_numpy_s_value_error():
    empty = np.ones((0, 3))
    with pytest.raises(ValueError) as numpy_error:
        (empty.sum(), np.sum(empty * empty) + np.max(empty))
    with pytest.raises(ValueError, match=str(numpy_error.value)):
        array_reductions(usm(empty), usm(empty))


@dk.offload
def normalise_in_place(x, weights):
    x[:] = x * weights / (x * weights).sum()


def test_an_array_reduction_inside_an_expression_runs_before_it():
    x, w = sample(300, "float64"), sample(300, "float64")
    x_usm = usm(x)
    normalise_in_place(x_usm, usm(w))
    np.testing.assert_allclose(host(x_usm), x * w / (x * w).sum())
    kinds = sorted(k.kind for k in plain_kernels(normalise_in_place))
    # the work-groups' kernel, the remainder's, the host-SIMD one (a CPU device's) and the
    # final pass
    # (and the temporary `x * weights` of the sum: Numba does not fuse it into the reduction)
    assert kinds == ["array expression"] * 2 + ["array reduction (+)"] * 4


def test_array_reduction_of_different_shapes_is_a_value_error():
    with pytest.raises(ValueError, match="Sizes of a, b differ"):
        array_reductions(usm(np.ones(4)), usm(np.ones(5)))


# --- allocation inside -----------------------------------------------------------------------


@dk.offload
def allocate(a):
    empty = dpnp.empty(a.shape, dtype=a.dtype)
    zeros = dpnp.zeros((2, 3), dtype="f4")
    ones = dpnp.ones(4)
    full = dpnp.full(5, 7)
    for i in prange(a.shape[0]):
        empty[i] = a[i] * 3
    return empty, zeros, ones, full


def test_allocations_are_dpnp_arrays_on_the_arguments_device():
    a = sample(10, "float32")
    empty, zeros, ones, full = allocate(usm(a))
    for array in (empty, zeros, ones, full):
        assert isinstance(array, dpnp.ndarray)
        assert array.sycl_queue == usm(a).sycl_queue or array.sycl_device.filter_string == CPU
    np.testing.assert_allclose(host(empty), a * 3)
    np.testing.assert_array_equal(host(zeros), np.zeros((2, 3), "f4"))
    assert zeros.dtype == np.float32
    np.testing.assert_array_equal(host(ones), np.ones(4))
    assert ones.dtype == dpnp.ones(4, device=CPU).dtype
    np.testing.assert_array_equal(host(full), np.full(5, 7))
    assert full.dtype == dpnp.full(5, 7, device=CPU).dtype


@dk.offload
def made_here(n):
    out = dpnp.empty(n, dtype="f8", device=CPU)
    for i in prange(n):
        out[i] = math.sqrt(i)
    return out


def test_allocation_with_device_and_no_array_arguments():
    out = made_here(50)
    assert out.sycl_device.filter_string == CPU and out.usm_type == "device"
    np.testing.assert_allclose(host(out), np.sqrt(np.arange(50)))


@dk.offload
def allocate_large(n):
    filled = dpnp.full(n, 2.5, dtype="f4", device=CPU)
    ones = dpnp.ones(n, dtype="i8", device=CPU)
    empty = dpnp.empty(n, dtype="f4", device=CPU)
    for i in prange(n):
        empty[i] = filled[i] + ones[i]
    return filled, ones, empty


def _huge_kib(array) -> int:
    """AnonHugePages of the mapping that holds the middle of `array` (smaps is per mapping)."""
    middle = array.__sycl_usm_array_interface__["data"][0] + array.nbytes // 2
    kib, inside = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= middle < hi
            elif inside and head == "AnonHugePages:":
                kib = int(line.split()[1])
    return kib


def test_large_allocations_ask_for_huge_pages_before_they_are_written():
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    n = HUGE_PAGE_THRESHOLD  # float32 elements: 4 x the threshold's bytes
    filled, ones, empty = allocate_large(n)
    np.testing.assert_array_equal(host(filled), np.full(n, 2.5, "f4"))
    np.testing.assert_array_equal(host(ones), np.ones(n, "i8"))
    np.testing.assert_array_equal(host(empty), np.full(n, 3.5, "f4"))
    if "[never]" not in thp:  # huge pages are the kernel's to give; advice must get some
        assert all(_huge_kib(a) > 0 for a in (filled, ones, empty))


def test_full_allocations_small_and_large_keep_dpnp_s_casting_errors():
    @dk.offload
    def negative_unsigned(n):
        return dpnp.full(n, -1, dtype="u1", device=CPU)

    with pytest.raises(OverflowError):
        negative_unsigned(8)
    with pytest.raises(OverflowError):
        negative_unsigned(2 * HUGE_PAGE_THRESHOLD)


# --- errors ----------------------------------------------------------------------------------


def python_only(x):
    return x + 1


@dk.offload
def calls_host_function(a):
    for i in prange(a.shape[0]):
        a[i] = python_only(a[i])


def _line_of(function, text: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(function.py_func)
    return first + next(n for n, line in enumerate(lines) if text in line)


def test_host_only_call_in_a_loop_is_a_compile_error_naming_the_line():
    line = _line_of(calls_host_function, "prange")
    with pytest.raises(dk.KernelCompileError, match=f"prange loop at line {line}") as info:
        calls_host_function(usm(np.ones(4)))
    assert f"test_offload.py:{line + 1}" in str(info.value)  # the statement itself
    assert "python_only" in str(info.value)


@dk.offload
def allocates_numpy(a):
    for i in prange(a.shape[0]):
        scratch = np.empty(a.shape[0])  # a size known only at run time: no private array
        scratch[0] = a[i]
        a[i] = scratch[0]


def test_numpy_allocation_of_a_run_time_size_in_a_loop_is_a_compile_error():
    line = _line_of(allocates_numpy, "prange")
    with pytest.raises(dk.KernelCompileError, match=f"prange loop at line {line}.*private array"):
        allocates_numpy(usm(np.ones(4)))


@dk.offload
def private_scratch(a, out):
    for i in prange(a.shape[0]):
        scratch = np.zeros(3)  # a constant shape: each work-item's private array
        for k in range(3):
            scratch[k] = a[i] * (k + 1)
        out[i] = scratch[0] + scratch[1] * scratch[2]


def test_numpy_allocation_of_a_constant_shape_in_a_loop_is_a_private_array():
    a = sample(50, "float64")
    out = usm(np.zeros(50))
    private_scratch(usm(a), out)
    np.testing.assert_allclose(host(out), a + (2 * a) * (3 * a))


@dk.offload
def subtracts(a):
    s = 0.0
    for i in prange(a.shape[0]):
        s -= a[i]
    return s


@dk.offload
def divides(a):
    s = 1.0
    for i in prange(a.shape[0]):
        s = s / a[i]
    return s


@pytest.mark.parametrize("n", [1, 7, REDUCTION_WORK_GROUP * 3 + 5])
def test_reductions_numba_parallelises_by_subtracting_and_dividing_equal_numpy(n):
    """Numba's parfor passes take `s -= x` and `s = s / x` as reductions (a sum subtracted, a
    product divided by): offloaded too."""
    a = (1 + RNG.random(n) / 100).astype("f8")
    assert subtracts(usm(a)) == pytest.approx(-a.sum(), rel=1e-12)
    assert divides(usm(a)) == pytest.approx(1 / np.prod(a), rel=1e-9)


@dk.offload
def reads_accumulator(a):
    s = 0.0
    for i in prange(a.shape[0]):
        s += a[i]
        a[i] = s
    return s


def test_a_reduction_variable_read_in_the_loop_is_a_compile_error():
    """Each work-item holds part of the sum: no value it reads is the sequential loop's."""
    with pytest.raises(dk.KernelCompileError, match="reads the reduction variable 's'"):
        reads_accumulator(usm(np.ones(4)))


@dk.offload
def any_positive(a):
    found = False
    for i in prange(a.shape[0]):
        found = max(found, a[i] > 0)
    return found


def test_reduction_into_a_bool_is_a_compile_error_and_others_still_compile():
    with pytest.raises(dk.KernelCompileError, match="numeric accumulator"):
        any_positive(usm(np.ones(4)))
    assert all_kinds(usm(np.arange(1.0, 5.0)))[3] == 4.0  # the shared max pass still builds


@dk.offload
def skips(a):
    for i in prange(a.shape[0]):
        if a[i] > 0:
            continue
        a[i] = 0


def test_continue_in_a_loop_body_equals_numpy():
    """Numba's passes take `continue` in a prange body: the work-item ends its iteration."""
    a = sample(100, "float64") - 0.5
    a_usm = usm(a)
    skips(a_usm)
    np.testing.assert_array_equal(host(a_usm), np.where(a > 0, a, 0))


def test_numpy_arguments_are_a_type_error():
    with pytest.raises(TypeError, match=r"argument 'a' is a numpy.ndarray.*dpnp.asarray"):
        vecadd(np.ones(4), usm(np.ones(4)), usm(np.ones(4)))


def test_arrays_on_two_queues_are_an_execution_queue_error():
    device = dpctl.SyclDevice(CPU)
    a = dpnp.ones(4, sycl_queue=dpctl.SyclQueue(device))
    b = dpnp.ones(4, sycl_queue=dpctl.SyclQueue(device))
    with pytest.raises(dk.ExecutionQueueError, match="'a'.*'b'"):
        vecadd(a, b, b)


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="fallback"):
        dk.offload(fallback="gpu")
    with pytest.raises(TypeError, match="signature"):
        dk.offload(42)
    with pytest.raises(TypeError, match="Python function"):
        dk.offload()(42)
    with pytest.raises(TypeError, match=r"\*args"):
        dk.offload(lambda *arrays: None)


@dk.offload(fallback="host")
def falls_back(a):
    for i in prange(a.shape[0]):
        scratch = np.ones(a.shape[0])  # of a run-time size: no private array
        a[i] = a[i] + scratch[1]
    for i in prange(a.shape[0]):
        a[i] = a[i] * 2


def test_fallback_host_runs_that_loop_on_the_host_with_a_warning():
    a = usm(np.arange(6.0))
    with pytest.warns(dk.OffloadFallbackWarning, match="runs on the host"):
        falls_back(a)
    np.testing.assert_array_equal(host(a), (np.arange(6.0) + 1) * 2)
    lines = [k.line for k in plain_kernels(falls_back)]
    assert lines == [_line_of(falls_back, "a[i] * 2") - 1]  # only the second loop offloaded
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        falls_back(a)  # compiled once: no second warning


def test_a_function_without_parallel_loops_compiles_without_numbas_parallel_warning():
    """Numba warns that `parallel=True` found nothing to parallelise; offload's users never
    wrote `parallel=True`, and a function that only allocates is not a mistake."""

    @dk.offload
    def made(n):
        return dpnp.full(n, 2.5)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = made(7)
    np.testing.assert_array_equal(host(out), np.full(7, 2.5))


# --- signatures, caching, inspection ---------------------------------------------------------


vector = dk.usm_array(dk.float64, 1, device=CPU)


@dk.offload(dk.void(vector, vector, vector))
def eager(a, b, c):
    for i in prange(a.shape[0]):
        c[i] = a[i] - b[i]


def test_eager_signatures_compile_at_decoration_and_kernels_build_once():
    assert len(eager.signatures) == 1
    before = plain_kernels(eager)
    assert len(before) == 1 and before[0].name.startswith("eager_loop_line")
    a = usm(np.arange(5.0))
    c = usm(np.zeros(5))
    for _ in range(3):
        eager(a, a, c)
    assert len(plain_kernels(eager)) == 1 and len(eager.signatures) == 1
    np.testing.assert_array_equal(host(c), np.zeros(5))


def test_inspect_kernels_gives_spirv_and_attributes():
    vecadd(usm(np.ones(3)), usm(np.ones(3)), usm(np.ones(3)))
    kernels = plain_kernels(vecadd)
    assert kernels and all(k.line == _line_of(vecadd, "prange") for k in kernels)
    for k in kernels:
        assert "OpEntryPoint" in k.spirv or "SPIR-V binary" in k.spirv
        assert k.attrs.max_work_group_size > 0
        assert k.kind == "prange loop"


CACHED_SOURCE = """
import numpy as np
from numba import prange

import dpex_kernels as dk


@dk.offload(cache=True)
def scaled_sum(a, out):
    for i in prange(a.shape[0]):
        out[i] = a[i] * {factor}
    s = 0.0
    for i in prange(out.shape[0]):
        s += out[i]
    return s
"""


def _cached_function(folder, factor):
    import importlib.util

    path = folder / f"cached_{factor}.py"
    path.write_text(CACHED_SOURCE.format(factor=factor))
    spec = importlib.util.spec_from_file_location(f"cached_{factor}_{id(path)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.scaled_sum


def test_cache_true_loads_the_kernels_of_a_second_definition(tmp_path, monkeypatch):
    monkeypatch.setenv("DPEX_KERNELS_CACHE_DIR", str(tmp_path / "cache"))
    a = np.arange(100.0)
    stats = []
    for factor in (3, 3, 5):
        function = _cached_function(tmp_path, factor)
        out = usm(np.zeros(100))
        assert np.isclose(function(usm(a), out), (a * factor).sum())
        np.testing.assert_array_equal(host(out), a * factor)
        own = [k.kernel for k in plain_kernels(function) if not k.name.startswith("dk_final")]
        stats.append([(k.stats.compiles, k.stats.cache_hits) for k in own])
    # the loop's kernel, then the reduction's three (work-groups, remainder, host SIMD)
    assert stats[0] == [(1, 0), (1, 0), (1, 0), (1, 0)]
    assert stats[1] == [(0, 1), (0, 1), (0, 1), (0, 1)]  # the same source: loaded
    # the edited loop compiles again; the reduction loads
    assert stats[2] == [(1, 0), (0, 1), (0, 1), (0, 1)]


@dk.offload
def sum_count_product(a):
    s = np.float32(0)
    c = 0
    p = np.float32(1)
    for i in prange(a.shape[0]):
        s += a[i]
        c += 1
        p *= a[i]
    return s, c, p


def test_sums_add_within_sub_groups_and_other_reductions_take_the_tree():
    """Sums of the types sub-groups add finish each work-group with `dk.sub_group.reduce_add`
    and one barrier; a product keeps the tree in local memory. Both agree with NumPy, also
    with accumulators of two types in one loop."""
    host_values = (1 + (RNG.random(REDUCTION_WORK_GROUP * 37 + 5) - 0.5) / 500).astype("f4")
    s, c, p = sum_count_product(usm(host_values))
    np.testing.assert_allclose(s, host_values.astype("f8").sum(), rtol=1e-5)
    assert c == host_values.size
    np.testing.assert_allclose(p, np.prod(host_values.astype("f8")), rtol=1e-3)
    # SPIRV-Tools is a dependency: the SPIR-V is disassembled, never skipped
    kernels = {k.name: k.spirv for k in sum_count_product.inspect_kernels()}
    (reduce,) = [text for name, text in kernels.items() if "_reduce_" in name]
    assert "OpGroupFAdd" in reduce and "OpGroupIAdd" in reduce
    assert "OpGroup" not in kernels["dk_final_product_float32"]


@pytest.mark.parametrize("extra", [-1, 0, 1, REDUCTION_WORK_GROUP + 3])
@pytest.mark.parametrize("shares", [1, 3])
def test_reductions_right_at_and_around_whole_rounds(shares, extra):
    """Work-items take whole rounds; the iterations past the last multiple of the launch's
    size are the remainder kernel's (launched only when there are some)."""
    n = REDUCTION_WORK_GROUP * REDUCTION_PER_ITEM * shares + extra
    values = RNG.integers(-1000, 1000, n)
    assert int_total(usm(values)) == values.sum()
    kinds = [k.name for k in int_total.inspect_kernels()]
    assert any("tail" in name for name in kinds) and any("reduce" in name for name in kinds)


# --- issue 36: what offloaded loops did wrong silently or with an internal error ------------


@dk.offload
def raises_past_a_threshold(a, limit):
    for i in prange(a.shape[0]):
        if a[i] > limit:
            raise ValueError("an element is past the limit")
        a[i] = a[i] * 2


def test_a_raise_in_an_offloaded_loop_raises_on_the_host_as_numba_does():
    a = usm(np.arange(8.0))
    with pytest.raises(ValueError, match="an element is past the limit"):
        raises_past_a_threshold(a, 5.0)
    b = usm(np.arange(8.0))
    raises_past_a_threshold(b, 100.0)  # nothing raised: every element written
    np.testing.assert_array_equal(host(b), np.arange(8.0) * 2)


def test_prange_of_a_float_through_the_numba_module_is_a_compile_error():
    @dk.offload
    def float_bound(a):
        for i in numba.prange(2.5):
            a[i] = 1.0

    with pytest.raises(dk.KernelCompileError, match=r"prange\(\) takes integers.*got 2.5"):
        float_bound(usm(np.zeros(3)))


def test_prange_steps_through_the_numba_module_count_like_range():
    @dk.offload
    def odd_elements(a):
        for i in numba.prange(1, a.shape[0], 2):
            a[i] = 1.0

    a = usm(np.zeros(7))
    odd_elements(a)
    expected = np.zeros(7)
    expected[1::2] = 1.0
    np.testing.assert_array_equal(host(a), expected)


def _libm_cos():
    import ctypes
    import ctypes.util

    cos = ctypes.CDLL(ctypes.util.find_library("m")).cos
    cos.restype, cos.argtypes = ctypes.c_double, [ctypes.c_double]
    return cos


LIBM_COS = _libm_cos()


@dk.offload(fallback="host")
def ctypes_cosines(a):
    for i in prange(a.shape[0]):
        a[i] = LIBM_COS(a[i])


def test_a_ctypes_call_falls_back_to_the_host_naming_why():
    a = usm(np.arange(5.0))
    with pytest.warns(dk.OffloadFallbackWarning, match="address of the host process"):
        ctypes_cosines(a)
    np.testing.assert_allclose(host(a), np.cos(np.arange(5.0)))


def test_a_ctypes_call_in_a_kernel_is_the_user_s_compile_error():
    @dk.kernel
    def cosines(a):
        i = dk.get_global_id(0)
        a[i] = LIBM_COS(a[i])

    with pytest.raises(dk.KernelCompileError) as caught:
        cosines[3](usm(np.zeros(3)))
    message = str(caught.value)
    assert "ctypes or cffi function cannot run in a kernel" in message
    assert "internal error" not in message


# --- no synchronisation on the way in ----------------------------------------------------------


@dk.offload
def scaled_tail(a):
    b = dpnp.empty_like(a)  # past HUGE_PAGE_THRESHOLD: advised huge pages
    b[:] = a * 2.0
    return b[1:]  # a view of the new array


def test_a_call_reads_no_usm_array_interface(monkeypatch):
    """dpnp's `__sycl_usm_array_interface__` waits for the array's queue: a call that read it
    would wait for all the work before it (and build a dict per array)."""
    a = usm(np.arange(HUGE_PAGE_THRESHOLD // 8 + 1, dtype=np.float64))
    scaled_tail(a)  # compiled before counting
    reads = []
    interface = dpnp.ndarray.__sycl_usm_array_interface__

    def counted(array):
        reads.append(type(array).__name__)
        return interface.fget(array)

    monkeypatch.setattr(dpnp.ndarray, "__sycl_usm_array_interface__", property(counted))
    tail = scaled_tail(a)
    assert reads == []
    monkeypatch.undo()
    np.testing.assert_array_equal(host(tail), 2.0 * host(a)[1:])
