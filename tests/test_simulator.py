"""The simulator (API.md §10): kernels run in Python with the device's semantics.

Each result is checked against NumPy computing the same thing independently.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import dpctl
import dpnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dpex_kernels as dk
from dpex_kernels.simulator import SimulatedKernel, SimulationSizeWarning, launch

ROOT = Path(__file__).resolve().parent.parent


@dk.kernel
def axpy(a, x, y, out):
    i = dk.get_global_id(0)
    out[i] = a * x[i] + y[i]


@given(
    hnp.arrays(np.float32, st.integers(1, 40), elements=st.floats(-1e3, 1e3, width=32)),
    st.floats(-10, 10, width=32),
)
def test_axpy_matches_numpy_on_numpy_arrays(x, a):
    y = np.arange(x.size, dtype=np.float32)
    out = np.zeros_like(x)
    event = axpy.simulate[x.size](np.float32(a), x, y, out)
    assert isinstance(event, dpctl.SyclEvent)
    np.testing.assert_array_equal(out, np.float32(a) * x + y)


def test_usm_arrays_are_read_and_written_back():
    x = dpnp.arange(16, dtype="f4")
    y = dpnp.ones(16, dtype="f4")
    out = dpnp.zeros(16, dtype="f4")
    axpy.simulate[16](2.0, x, y, out).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), 2 * np.arange(16, dtype="f4") + 1)
    np.testing.assert_array_equal(dpnp.asnumpy(y), np.ones(16, "f4"))  # read, not written


def test_simulate_true_routes_every_launch():
    @dk.kernel(simulate=True)
    def fill(out, value):
        out[dk.get_global_id(0)] = value

    assert isinstance(fill, SimulatedKernel)
    out = np.zeros(5, np.int64)
    fill[5](out, 7)
    np.testing.assert_array_equal(out, np.full(5, 7))
    assert "simulated" in repr(fill)


def test_environment_variable_simulates_every_kernel():
    script = (
        "import numpy as np, dpex_kernels as dk\n"
        "@dk.kernel\n"
        "def k(out):\n"
        "    out[dk.get_global_id(0)] = dk.get_global_id(0) * 3\n"
        "out = np.zeros(4, np.int64)\n"
        "k[4](out)\n"  # a NumPy array: only the simulator takes one
        "print(type(k).__name__, out.tolist())\n"
    )
    env = {**os.environ, "DPEX_KERNELS_SIMULATE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["SimulatedKernel", "[0,", "3,", "6,", "9]"]


def test_two_dimensional_ids_follow_sycl_order():
    @dk.kernel
    def ids(out):
        i = dk.get_global_id(0)
        j = dk.get_global_id(1)
        out[i, j, 0] = dk.get_local_id(1)
        out[i, j, 1] = dk.get_group_id(0)
        out[i, j, 2] = dk.get_num_groups(1)
        out[i, j, 3] = dk.get_global_size(0) * 10 + dk.get_work_dim()

    out = np.zeros((4, 6, 4), np.int64)
    ids.simulate[dk.NdRange((4, 6), (2, 3))](out)
    i, j = np.meshgrid(np.arange(4), np.arange(6), indexing="ij")
    np.testing.assert_array_equal(out[..., 0], j % 3)
    np.testing.assert_array_equal(out[..., 1], i // 2)
    np.testing.assert_array_equal(out[..., 2], np.full((4, 6), 2))
    np.testing.assert_array_equal(out[..., 3], np.full((4, 6), 42))


def test_integers_wrap_around_and_float32_stays_float32():
    @dk.kernel
    def arithmetic(a, f, out_i, out_f, kinds):
        i = dk.get_global_id(0)
        out_i[i] = a[i] * a[i] + 1  # int64 wraps at 64 bits
        half = f[i] * 0.5
        out_f[i] = half / 3
        kinds[i] = 1 if isinstance(half, np.float32) else 0

    a = np.array([2**40, -(2**62), 3], dtype=np.int64)
    f = np.array([1.0, 3.0, 7.0], dtype=np.float32)
    out_i, out_f, kinds = np.zeros(3, np.int64), np.zeros(3, np.float32), np.zeros(3, np.int8)
    arithmetic.simulate[3](a, f, out_i, out_f, kinds)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out_i, a * a + 1)
    np.testing.assert_array_equal(out_f, (f * np.float32(0.5)) / np.float32(3))
    np.testing.assert_array_equal(kinds, [1, 1, 1])


def test_narrow_integers_compute_in_int64_and_store_wrapped():
    @dk.kernel
    def widen(a, wide, narrow):
        i = dk.get_global_id(0)
        wide[i] = a[i] * 4  # int32 * 4 computes in int64 on the device
        narrow[i] = a[i] * 4  # and wraps when stored to int32

    a = np.array([2**30, -(2**30) - 5, 7], dtype=np.int32)
    wide, narrow = np.zeros(3, np.int64), np.zeros(3, np.int32)
    widen.simulate[3](a, wide, narrow)
    np.testing.assert_array_equal(wide, a.astype(np.int64) * 4)
    np.testing.assert_array_equal(narrow, (a.astype(np.int64) * 4).astype(np.int32))


def test_integer_division_follows_numpy():
    @dk.kernel
    def divide(a, b, q, r):
        i = dk.get_global_id(0)
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]

    a = np.array([7, -7, 7, -7, 5], np.int64)
    b = np.array([2, 2, -2, -2, 0], np.int64)
    q, r = np.zeros(5, np.int64), np.zeros(5, np.int64)
    divide.simulate[5](a, b, q, r)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(q, a // b)
        np.testing.assert_array_equal(r, a % b)


def test_math_keeps_the_argument_float_type():
    @dk.kernel
    def roots(x32, x64, out32, out64, kinds):
        i = dk.get_global_id(0)
        s = math.sqrt(x32[i])
        out32[i] = math.exp(s) - s
        out64[i] = math.sqrt(x64[i])
        kinds[i] = isinstance(s, np.float32) + 2 * isinstance(math.floor(x64[i]), np.int64)

    x32 = np.array([1, 2, 9], np.float32)
    x64 = np.array([1, 2, 9], np.float64)
    out32, out64, kinds = np.zeros(3, np.float32), np.zeros(3), np.zeros(3, np.int64)
    roots.simulate[3](x32, x64, out32, out64, kinds)
    s = np.sqrt(x32)
    np.testing.assert_allclose(out32, np.exp(s) - s, rtol=1e-6)
    np.testing.assert_array_equal(out64, np.sqrt(x64))
    np.testing.assert_array_equal(kinds, [3, 3, 3])


def test_local_memory_and_barriers_reverse_each_group():
    @dk.kernel
    def reverse(a, out):
        lid = dk.get_local_id(0)
        n = dk.get_local_size(0)
        tile = dk.local.array(16, dk.float64)
        tile[lid] = a[dk.get_global_id(0)]
        dk.barrier(dk.LOCAL_MEM_FENCE)
        out[dk.get_global_id(0)] = tile[n - 1 - lid]

    a = np.random.default_rng(1).random(64)
    out = np.zeros_like(a)
    reverse.simulate[dk.NdRange(64, 16)](a, out)
    np.testing.assert_array_equal(out, a.reshape(4, 16)[:, ::-1].ravel())


def test_private_arrays_and_device_functions():
    @dk.func
    def poly(x, coefficients, n):
        total = coefficients[n - 1] * 0
        for k in range(n - 1, -1, -1):
            total = total * x + coefficients[k]
        return total

    @dk.kernel
    def evaluate(xs, out):
        i = dk.get_global_id(0)
        c = dk.private.array(3, dk.float64)
        for k in range(3):
            c[k] = k + 1.0
        out[i] = poly(xs[i], c, 3)

    xs = np.linspace(-2, 2, 9)
    out = np.zeros_like(xs)
    evaluate.simulate[9](xs, out)
    np.testing.assert_allclose(out, 1 + 2 * xs + 3 * xs**2)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "float32", "float64"])
def test_atomics_return_old_values_and_count(dtype):
    @dk.kernel
    def count(values, bins, olds):
        i = dk.get_global_id(0)
        olds[i] = dk.atomic.add(bins, values[i] % 4, 1)
        dk.atomic.max(bins, 4, values[i])
        dk.atomic.min(bins, 5, values[i])
        dk.atomic.sub(bins, 6, 1)

    values = np.random.default_rng(2).integers(0, 50, 30)
    bins = np.zeros(7, dtype)
    bins[5] = 100
    olds = np.zeros(30, dtype)
    count.simulate[30](values, bins, olds)
    np.testing.assert_array_equal(bins[:4], np.bincount(values % 4, minlength=4))
    assert bins[4] == values.max() and bins[5] == values.min()
    assert bins[6] == np.array(-30).astype(dtype)
    # each old value is how many earlier work-items counted into the same bin
    for i, v in enumerate(values):
        assert olds[i] == np.count_nonzero(values[:i] % 4 == v % 4)


def test_compare_exchange_loop_adds_like_an_atomic():
    @dk.kernel
    def add_by_cas(values, total):
        v = values[dk.get_global_id(0)]
        old = total[0]
        while True:
            seen = dk.atomic.compare_exchange(total, 0, old, old + v)
            if seen == old:
                break
            old = seen

    values = np.arange(1, 41, dtype=np.float32)
    total = np.zeros(1, np.float32)
    add_by_cas.simulate[dk.NdRange(40, 8)](values, total)
    assert total[0] == values.sum()


def test_sub_group_collectives():
    @dk.kernel(sub_group_size=4)
    def sub_groups(a, sums, shuffled, first, lanes):
        i = dk.get_global_id(0)
        lane = dk.sub_group.get_local_id()
        size = dk.sub_group.get_size()
        sums[i] = dk.sub_group.reduce_add(a[i])
        shuffled[i] = dk.sub_group.shuffle(a[i], (lane + 1) % size)
        first[i] = dk.sub_group.broadcast(a[i], 0)
        lanes[i] = lane * 10 + size
        dk.sub_group.barrier()

    a = np.arange(16, dtype=np.int64) ** 2
    sums, shuffled, first, lanes = (np.zeros(16, np.int64) for _ in range(4))
    sub_groups.simulate[dk.NdRange(16, 8)](a, sums, shuffled, first, lanes)
    runs = a.reshape(4, 4)
    np.testing.assert_array_equal(sums, np.repeat(runs.sum(axis=1), 4))
    np.testing.assert_array_equal(shuffled, np.roll(runs, -1, axis=1).ravel())
    np.testing.assert_array_equal(first, np.repeat(runs[:, 0], 4))
    np.testing.assert_array_equal(lanes, np.tile(np.arange(4) * 10 + 4, 4))


def test_print_and_raise_run_as_python(capsys):
    @dk.kernel
    def talk(a):
        i = dk.get_global_id(0)
        print("item", i, "holds", a[i])

    talk.simulate[2](np.array([5, 6], np.int64))
    assert capsys.readouterr().out.splitlines() == ["item 0 holds 5", "item 1 holds 6"]


def test_views_and_shapes():
    @dk.kernel
    def rows(m, out):
        i = dk.get_global_id(0)
        row = m[i]
        total = 0.0
        for j in range(row.shape[0]):
            total += row[j]
        out[i] = total + m.shape[1] * 100 + m.ndim * 1000 + m[i, 1:].size

    m = np.arange(12.0).reshape(3, 4)
    out = np.zeros(3)
    rows.simulate[3](m, out)
    np.testing.assert_array_equal(out, m.sum(axis=1) + 400 + 2000 + 3)


def test_empty_range_launches_nothing():
    out = np.zeros(3)
    event = axpy.simulate[0](1.0, out, out, out)
    assert isinstance(event, dpctl.SyclEvent)


def test_device_compiler_refusals_are_the_simulators():
    @dk.kernel
    def allocates(out):
        tmp = np.empty(4)
        out[dk.get_global_id(0)] = tmp[0]

    with pytest.raises(dk.KernelCompileError, match="allocates"):
        allocates.simulate[4](np.zeros(4))

    @dk.kernel
    def uses_an_object(out):
        out[dk.get_global_id(0)] = len({"a": 1})

    with pytest.raises(dk.KernelCompileError):
        uses_an_object.simulate[4](np.zeros(4))


def test_eager_signatures_are_checked():
    vector = dk.usm_array(dk.float32, 1, device="opencl:cpu")

    @dk.kernel(dk.void(vector), simulate=True)
    def scale(x):
        x[dk.get_global_id(0)] *= 2

    x = np.arange(4, dtype=np.float32)
    scale[4](x)  # a NumPy array matches by dtype, ndim and layout
    np.testing.assert_array_equal(x, [0, 2, 4, 6])
    with pytest.raises(dk.KernelSignatureError, match="dtype"):
        scale[4](np.arange(4, dtype=np.float64))


def test_bad_arguments_are_type_errors():
    with pytest.raises(TypeError, match="takes 4 positional"):
        axpy.simulate[4](1.0, np.zeros(4))
    with pytest.raises(TypeError, match="list cannot be passed"):
        axpy.simulate[4](1.0, [1, 2], np.zeros(4), np.zeros(4))
    with pytest.raises(dk.InvalidRangeError):
        axpy.simulate[dk.NdRange(10, 3)]
    with pytest.raises(ValueError, match="races must be"):
        axpy.simulate(races="sometimes")


def test_read_only_arrays_are_refused_when_written():
    out = np.zeros(4)
    out.flags.writeable = False
    with pytest.raises(dk.KernelSignatureError, match="out.*writable"):
        axpy.simulate[4](1.0, np.ones(4), np.ones(4), out)


def test_large_launches_warn_with_their_expected_time(monkeypatch):
    monkeypatch.setattr(launch, "WARN_WORK_ITEMS", 10)
    out = np.zeros(20)
    with pytest.warns(SimulationSizeWarning, match=r"20 work-items .* about \d+ s"):
        axpy.simulate[20](1.0, out, out, out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        axpy.simulate[10](1.0, out, out, out)
