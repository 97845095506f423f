"""The kernel language (API.md §3): what runs inside @dk.kernel, each result checked with NumPy.

Kernels are module-level and lazy where they are reused across dtypes, so each distinct
argument-type tuple compiles once for the whole module.
"""

from __future__ import annotations

import math
import os
import re

import dpnp
import numpy as np
import pytest
from conftest_kernels import (
    ALL_DTYPES,
    COMPLEX_DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    assert_close,
    dk,
    only_signature,
    random_values,
    run_python,
    to_device,
    to_host,
)
from hypothesis import given, settings
from hypothesis import strategies as st

THIS_FILE = os.path.basename(__file__)

# ---------------------------------------------------------------------------------------------
# Index space
# ---------------------------------------------------------------------------------------------

# Fields written per dimension, in this order.
FIELDS = ("global_id", "global_size", "local_id", "group_id", "local_size", "num_groups")


@dk.kernel
def index_space_1d(out):
    i = dk.get_global_id(0)
    out[i, 0] = dk.get_global_id(0)
    out[i, 1] = dk.get_global_size(0)
    out[i, 2] = dk.get_local_id(0)
    out[i, 3] = dk.get_group_id(0)
    out[i, 4] = dk.get_local_size(0)
    out[i, 5] = dk.get_num_groups(0)
    out[i, 6] = dk.get_work_dim()


@dk.kernel
def index_space_2d(out):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    out[i, j, 0, 0] = dk.get_global_id(0)
    out[i, j, 0, 1] = dk.get_global_id(1)
    out[i, j, 1, 0] = dk.get_global_size(0)
    out[i, j, 1, 1] = dk.get_global_size(1)
    out[i, j, 2, 0] = dk.get_local_id(0)
    out[i, j, 2, 1] = dk.get_local_id(1)
    out[i, j, 3, 0] = dk.get_group_id(0)
    out[i, j, 3, 1] = dk.get_group_id(1)
    out[i, j, 4, 0] = dk.get_local_size(0)
    out[i, j, 4, 1] = dk.get_local_size(1)
    out[i, j, 5, 0] = dk.get_num_groups(0)
    out[i, j, 5, 1] = dk.get_num_groups(1)
    out[i, j, 6, 0] = dk.get_work_dim()
    out[i, j, 6, 1] = dk.get_work_dim()


@dk.kernel
def index_space_3d(out):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    k = dk.get_global_id(2)
    out[i, j, k, 0, 0] = dk.get_global_id(0)
    out[i, j, k, 0, 1] = dk.get_global_id(1)
    out[i, j, k, 0, 2] = dk.get_global_id(2)
    out[i, j, k, 1, 0] = dk.get_global_size(0)
    out[i, j, k, 1, 1] = dk.get_global_size(1)
    out[i, j, k, 1, 2] = dk.get_global_size(2)
    out[i, j, k, 2, 0] = dk.get_local_id(0)
    out[i, j, k, 2, 1] = dk.get_local_id(1)
    out[i, j, k, 2, 2] = dk.get_local_id(2)
    out[i, j, k, 3, 0] = dk.get_group_id(0)
    out[i, j, k, 3, 1] = dk.get_group_id(1)
    out[i, j, k, 3, 2] = dk.get_group_id(2)
    out[i, j, k, 4, 0] = dk.get_local_size(0)
    out[i, j, k, 4, 1] = dk.get_local_size(1)
    out[i, j, k, 4, 2] = dk.get_local_size(2)
    out[i, j, k, 5, 0] = dk.get_num_groups(0)
    out[i, j, k, 5, 1] = dk.get_num_groups(1)
    out[i, j, k, 5, 2] = dk.get_num_groups(2)
    for d in range(3):
        out[i, j, k, 6, d] = dk.get_work_dim()


def _expected_index_space(global_shape, local_shape):
    """(*global, 7, ndim) int64: what each work-item should see, computed with np.indices."""
    nd = len(global_shape)
    gid = np.indices(global_shape)  # (nd, *global)
    exp = np.zeros((*global_shape, 7, nd), dtype=np.int64)
    for d in range(nd):
        exp[..., 0, d] = gid[d]
        exp[..., 1, d] = global_shape[d]
        if local_shape is not None:
            exp[..., 2, d] = gid[d] % local_shape[d]
            exp[..., 3, d] = gid[d] // local_shape[d]
            exp[..., 4, d] = local_shape[d]
            exp[..., 5, d] = global_shape[d] // local_shape[d]
        exp[..., 6, d] = nd
    return exp


_INDEX_KERNELS = {1: index_space_1d, 2: index_space_2d, 3: index_space_3d}

_INDEX_CASES = [
    ((37,), None),
    ((48,), (16,)),
    ((5, 7), None),
    ((8, 12), (4, 3)),
    ((6, 8), (1, 8)),
    ((3, 4, 5), None),
    ((4, 6, 8), (2, 3, 4)),
]


@pytest.mark.parametrize(("global_shape", "local_shape"), _INDEX_CASES)
def test_index_functions(global_shape, local_shape):
    nd = len(global_shape)
    kern = _INDEX_KERNELS[nd]
    out = dpnp.full((*global_shape, 7, nd) if nd > 1 else (global_shape[0], 7), -1, dtype="i8")
    if local_shape is None:
        launch = dk.Range(*global_shape)
    else:
        launch = dk.NdRange(dk.Range(*global_shape), dk.Range(*local_shape))
    kern[launch](out).wait()
    got = to_host(out)
    exp = _expected_index_space(global_shape, local_shape)
    if nd == 1:
        exp = exp[..., 0]
    if local_shape is None:
        # Under a plain Range only the global ids, global sizes and work_dim are defined.
        fields = [0, 1, 6]
        axis = -1 if nd == 1 else -2
        got, exp = np.take(got, fields, axis=axis), np.take(exp, fields, axis=axis)
    np.testing.assert_array_equal(got, exp)


def test_index_functions_with_int_and_tuple_ranges():
    out1 = dpnp.full((10, 7), -1, dtype="i8")
    index_space_1d[10](out1).wait()
    np.testing.assert_array_equal(to_host(out1)[:, 0], np.arange(10))
    out2 = dpnp.full((3, 5, 7, 2), -1, dtype="i8")
    index_space_2d[(3, 5)](out2).wait()
    exp = _expected_index_space((3, 5), None)
    np.testing.assert_array_equal(to_host(out2)[..., 0, :], exp[..., 0, :])
    np.testing.assert_array_equal(to_host(out2)[..., 1, :], exp[..., 1, :])


@dk.kernel
def linear_ids(out, dims):
    # One kernel, launched with 1-, 2- and 3-d ranges: row-major linear id of the work-item,
    # branching on the rank (index dimensions are constants).
    ndim = dk.get_work_dim()
    lin = dk.get_global_id(0)
    if ndim >= 2:
        lin = lin * dk.get_global_size(1) + dk.get_global_id(1)
    if ndim == 3:
        lin = lin * dk.get_global_size(2) + dk.get_global_id(2)
    out[lin] = lin
    dims[lin] = dk.get_work_dim()


@pytest.mark.parametrize("shape", [(24,), (4, 6), (2, 3, 4)])
def test_one_kernel_many_range_ranks(shape):
    n = int(np.prod(shape))
    out = dpnp.full(n, -1, dtype="i8")
    dims = dpnp.zeros(n, dtype="i8")
    linear_ids[dk.Range(*shape)](out, dims)
    np.testing.assert_array_equal(to_host(out), np.arange(n))
    np.testing.assert_array_equal(to_host(dims), np.full(n, len(shape)))


@dk.kernel
def store_gid(out):
    i = dk.get_global_id(0)
    out[i] = i


def test_index_functions_return_intp():
    out = dpnp.zeros(4, dtype="i8")
    store_gid[4](out).wait()
    text = store_gid.inspect_types(only_signature(store_gid))
    assert re.search(r"\bi = call .*-> int64\s*$", text, re.M), text


def test_last_dimension_varies_fastest():
    # Every work-item records the order it sees itself in; for Range(n0, n1) neighbouring
    # work-items differ in dimension 1, so out[get_global_id(0), get_global_id(1)] = C order.
    out = dpnp.full((4, 9, 7, 2), -1, dtype="i8")
    index_space_2d[dk.Range(4, 9)](out).wait()
    got = to_host(out)
    np.testing.assert_array_equal(got[:, :, 0, 0], np.repeat(np.arange(4), 9).reshape(4, 9))
    np.testing.assert_array_equal(got[:, :, 0, 1], np.tile(np.arange(9), 4).reshape(4, 9))


# ---------------------------------------------------------------------------------------------
# Arithmetic and comparisons on every scalar dtype
# ---------------------------------------------------------------------------------------------


@dk.kernel
def int_ops(a, b, out, cmp):
    i = dk.get_global_id(0)
    x = a[i]
    y = b[i]
    out[i, 0] = x + y
    out[i, 1] = x - y
    out[i, 2] = x * y
    out[i, 3] = x // y
    out[i, 4] = x % y
    out[i, 5] = x & y
    out[i, 6] = x | y
    out[i, 7] = x ^ y
    out[i, 8] = x << 2
    out[i, 9] = x >> 1
    out[i, 10] = ~x
    cmp[i, 0] = x < y
    cmp[i, 1] = x <= y
    cmp[i, 2] = x == y
    cmp[i, 3] = x != y
    cmp[i, 4] = x > y
    cmp[i, 5] = x >= y


def _cmp_expected(x, y):
    return np.stack([x < y, x <= y, x == y, x != y, x > y, x >= y], axis=1)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_arithmetic(dtype):
    n = 64
    x = random_values(dtype, n, seed=1)
    y = random_values(dtype, n, seed=2)
    y[y == 0] = 3
    x[:4] = y[:4]  # some equal pairs for the comparisons
    out = dpnp.zeros((n, 11), dtype=dtype)
    cmp = dpnp.zeros((n, 6), dtype="bool")
    int_ops[n](to_device(x), to_device(y), out, cmp)
    with np.errstate(over="ignore"):
        exp = np.stack(
            [
                x + y,
                x - y,
                x * y,
                x // y,
                x % y,
                x & y,
                x | y,
                x ^ y,
                (x.astype(np.int64) << 2).astype(dtype),
                x >> 1,
                ~x,
            ],
            axis=1,
        ).astype(dtype)
    assert_close(out, exp)
    np.testing.assert_array_equal(to_host(cmp), _cmp_expected(x, y))


@dk.kernel
def _divmods(x, y, out):
    i = dk.get_global_id(0)
    out[i, 0] = x[i] // y[i]
    out[i, 1] = x[i] % y[i]
    quotient, remainder = divmod(x[i], y[i])
    out[i, 2] = quotient
    out[i, 3] = remainder
    out[i, 4] = x[i] // 16  # constant divisors take a shorter path
    out[i, 5] = x[i] % 7


def _floor_divmod(x: int, y: int, dtype) -> tuple[int, int]:
    """Python's floor division, with NumPy's edge cases: 0 and 0 for a zero divisor, and
    MIN // -1 wrapping around to MIN."""
    if y == 0:
        return 0, 0
    if x == np.iinfo(dtype).min and y == -1:
        return x, 0
    return divmod(x, y)


def _edge_ints(dtype):
    info = np.iinfo(dtype)
    edges = st.sampled_from([0, 1, -1, 2, -2, 7, -7, info.min, info.max, info.min + 1])
    edges = edges.filter(lambda v: info.min <= v <= info.max)
    return st.one_of(edges, st.integers(info.min, info.max))


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
@settings(max_examples=25)
@given(data=st.data())
def test_floor_division_and_modulo_are_pythons_with_numpys_edge_cases(dtype, data):
    pairs = data.draw(
        st.lists(st.tuples(_edge_ints(dtype), _edge_ints(dtype)), min_size=1, max_size=24)
    )
    x = np.array([p[0] for p in pairs], dtype=dtype)
    y = np.array([p[1] for p in pairs], dtype=dtype)
    out = dpnp.zeros((len(pairs), 6), dtype=dtype)
    _divmods[len(pairs)](to_device(x), to_device(y), out).wait()
    expected = np.array(
        [_floor_divmod(int(a), int(b), dtype) * 2 for a, b in pairs], dtype=object
    ).astype(dtype)
    got = to_host(out)
    np.testing.assert_array_equal(got[:, :4], expected)
    # x // 16 and x % 7 with an integer constant: int64 operands (uint64 ones wrap), as Numba
    # types a uint64 with an int literal
    signed = x.astype(np.int64)
    constants = [
        [_floor_divmod(int(a), 16, np.int64)[0], _floor_divmod(int(a), 7, np.int64)[1]]
        for a in signed
    ]
    np.testing.assert_array_equal(got[:, 4:], np.array(constants, np.int64).astype(dtype))


@dk.kernel
def float_ops(a, b, out, cmp):
    i = dk.get_global_id(0)
    x = a[i]
    y = b[i]
    out[i, 0] = x + y
    out[i, 1] = x - y
    out[i, 2] = x * y
    out[i, 3] = x / y
    out[i, 4] = x // y
    out[i, 5] = x % y
    out[i, 6] = -x
    out[i, 7] = abs(y) ** x
    cmp[i, 0] = x < y
    cmp[i, 1] = x <= y
    cmp[i, 2] = x == y
    cmp[i, 3] = x != y
    cmp[i, 4] = x > y
    cmp[i, 5] = x >= y


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_arithmetic(dtype):
    n = 64
    x = random_values(dtype, n, seed=3, low=-3, high=3)
    y = random_values(dtype, n, seed=4, low=0.5, high=4)
    y[::2] *= -1
    x[:4] = y[:4]
    out = dpnp.zeros((n, 8), dtype=dtype)
    cmp = dpnp.zeros((n, 6), dtype="bool")
    float_ops[n](to_device(x), to_device(y), out, cmp)
    exp = np.stack([x + y, x - y, x * y, x / y, x // y, x % y, -x, np.abs(y) ** x], axis=1).astype(
        dtype
    )
    assert_close(out, exp, scale=4)
    np.testing.assert_array_equal(to_host(cmp), _cmp_expected(x, y))
    # float32 arithmetic stays float32 (no promotion to double).
    if dtype == "float32":
        sig = [s for s in float_ops.signatures if s.args[0].dtype == dk.float32][0]
        assert " double" not in float_ops.inspect_llvm(sig)


@dk.kernel
def complex_ops(a, b, out, real_out, cmp):
    i = dk.get_global_id(0)
    x = a[i]
    y = b[i]
    out[i, 0] = x + y
    out[i, 1] = x - y
    out[i, 2] = x * y
    out[i, 3] = x / y
    out[i, 4] = -x
    out[i, 5] = x.conjugate()
    real_out[i, 0] = abs(x)
    real_out[i, 1] = x.real
    real_out[i, 2] = x.imag
    cmp[i, 0] = x == y
    cmp[i, 1] = x != y


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
def test_complex_arithmetic(dtype):
    n = 32
    real = "float32" if dtype == "complex64" else "float64"
    x = random_values(dtype, n, seed=5)
    y = random_values(dtype, n, seed=6)
    x[:3] = y[:3]
    out = dpnp.zeros((n, 6), dtype=dtype)
    real_out = dpnp.zeros((n, 3), dtype=real)
    cmp = dpnp.zeros((n, 2), dtype="bool")
    complex_ops[n](to_device(x), to_device(y), out, real_out, cmp)
    exp = np.stack([x + y, x - y, x * y, x / y, -x, np.conj(x)], axis=1).astype(dtype)
    assert_close(out, exp, scale=4)
    assert_close(real_out, np.stack([np.abs(x), x.real, x.imag], axis=1).astype(real), scale=4)
    np.testing.assert_array_equal(to_host(cmp), np.stack([x == y, x != y], axis=1))


@dk.kernel
def bool_ops(a, b, out, counts):
    i = dk.get_global_id(0)
    x = a[i]
    y = b[i]
    out[i, 0] = x & y
    out[i, 1] = x | y
    out[i, 2] = x ^ y
    out[i, 3] = not x
    out[i, 4] = x and y
    out[i, 5] = x or y
    out[i, 6] = x == y
    out[i, 7] = x != y
    counts[i] = x + y


def test_bool_arithmetic():
    x = np.array([False, False, True, True] * 4)
    y = np.array([False, True, False, True] * 4)
    out = dpnp.zeros((16, 8), dtype="bool")
    counts = dpnp.zeros(16, dtype="i8")
    bool_ops[16](to_device(x), to_device(y), out, counts)
    exp = np.stack([x & y, x | y, x ^ y, ~x, x & y, x | y, x == y, x != y], axis=1)
    np.testing.assert_array_equal(to_host(out), exp)
    np.testing.assert_array_equal(to_host(counts), x.astype(int) + y.astype(int))


@dk.kernel
def mixed_promotion(a, s, out):
    i = dk.get_global_id(0)
    out[i] = a[i] * s + i


@pytest.mark.parametrize(
    ("dtype", "scalar", "out_dtype"),
    [
        ("int32", 3, "int64"),
        ("int16", 2.5, "float64"),
        ("uint8", -1, "int64"),
        ("float32", 2, "float32"),
        ("float64", 0.25, "float64"),
        ("complex64", 2.0, "complex128"),
    ],
)
def test_mixed_type_arithmetic(dtype, scalar, out_dtype):
    n = 16
    x = random_values(dtype, n, seed=7, low=0, high=20)
    out = dpnp.zeros(n, dtype=out_dtype)
    mixed_promotion[n](to_device(x), scalar, out)
    exp = (x.astype(out_dtype) * scalar + np.arange(n)).astype(out_dtype)
    assert_close(out, exp)


# ---------------------------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------------------------


@dk.kernel
def casts_from_float(a, f32, i32, i64, py_int, sq32, np32):
    i = dk.get_global_id(0)
    x = a[i]
    f32[i] = dk.float32(x)
    i32[i] = dk.int32(x)
    i64[i] = dk.int64(x)
    py_int[i] = int(x)
    y = dk.float32(x)
    sq32[i] = y * y  # computed in float32, stored as float64
    np32[i] = np.float32(x)


def test_casts_from_float64():
    n = 32
    x = random_values("float64", n, seed=8, low=-100, high=100)
    outs = [dpnp.zeros(n, dtype=d) for d in ("f4", "i4", "i8", "i8", "f8", "f4")]
    casts_from_float[n](to_device(x), *outs)
    np.testing.assert_array_equal(to_host(outs[0]), x.astype(np.float32))
    np.testing.assert_array_equal(to_host(outs[1]), np.trunc(x).astype(np.int32))
    np.testing.assert_array_equal(to_host(outs[2]), np.trunc(x).astype(np.int64))
    np.testing.assert_array_equal(to_host(outs[3]), np.array([int(v) for v in x]))
    x32 = x.astype(np.float32)
    np.testing.assert_array_equal(to_host(outs[4]), (x32 * x32).astype(np.float64))
    np.testing.assert_array_equal(to_host(outs[5]), x32)


@dk.kernel
def casts_from_int(a, u8, i8, f32, f64, b):
    i = dk.get_global_id(0)
    x = a[i]
    u8[i] = dk.uint8(x)
    i8[i] = dk.int8(x)
    f32[i] = dk.float32(x)
    f64[i] = float(x)
    b[i] = bool(x)


def test_casts_from_int64():
    x = np.array([0, 1, -1, 127, 128, 255, 256, 300, -300, 2**40 + 7, 12345, -5], dtype=np.int64)
    n = x.size
    outs = [dpnp.zeros(n, dtype=d) for d in ("u1", "i1", "f4", "f8", "?")]
    casts_from_int[n](to_device(x), *outs)
    np.testing.assert_array_equal(to_host(outs[0]), x.astype(np.uint8))
    np.testing.assert_array_equal(to_host(outs[1]), x.astype(np.int8))
    np.testing.assert_array_equal(to_host(outs[2]), x.astype(np.float32))
    np.testing.assert_array_equal(to_host(outs[3]), x.astype(np.float64))
    np.testing.assert_array_equal(to_host(outs[4]), x != 0)


# ---------------------------------------------------------------------------------------------
# Control flow and tuples
# ---------------------------------------------------------------------------------------------


@dk.kernel
def control_flow(values, out):
    i = dk.get_global_id(0)
    n = values[i]
    if n % 3 == 0:
        c = 1
    elif n % 3 == 1:
        c = 2
    else:
        c = 3
    out[i, 0] = c
    s = 0
    for k in range(1, n, 2):
        s += k
    out[i, 1] = s
    steps = 0
    m = n
    while m > 1:
        if m % 2 == 0:
            m //= 2
        else:
            m = 3 * m + 1
        steps += 1
    out[i, 2] = steps
    d = n
    for k in range(2, n):
        if n % k == 0:
            d = k
            break
    out[i, 3] = d
    t = 0
    for k in range(n):
        if k % 2 == 0:
            continue
        t += k
    out[i, 4] = t
    u = 0
    for p in range(n, 0, -1):
        for q in range(p):
            u += (p * q) % 7
    out[i, 5] = u
    out[i, 6] = n if n > 10 else -n


def _control_flow_host(n):
    c = 1 if n % 3 == 0 else 2 if n % 3 == 1 else 3
    s = sum(range(1, n, 2))
    steps, m = 0, n
    while m > 1:
        m = m // 2 if m % 2 == 0 else 3 * m + 1
        steps += 1
    d = next((k for k in range(2, n) if n % k == 0), n)
    t = sum(k for k in range(n) if k % 2)
    u = sum((p * q) % 7 for p in range(n, 0, -1) for q in range(p))
    return [c, s, steps, d, t, u, n if n > 10 else -n]


def test_control_flow():
    values = np.arange(0, 40, dtype=np.int64)
    out = dpnp.zeros((values.size, 7), dtype="i8")
    control_flow[values.size](to_device(values), out)
    exp = np.array([_control_flow_host(int(v)) for v in values])
    np.testing.assert_array_equal(to_host(out), exp)


TRIANGULAR_SCRIPT = """
import dpex_kernels as dk
import dpnp
import numpy as np

@dk.kernel
def triangular(values, out):
    i = dk.get_global_id(0)
    n = values[i]
    u = 0
    for p in range(n, 0, -1):
        for q in range(p):
            u += q
    out[i] = u

values = dpnp.asarray(np.arange(40, dtype=np.int64))
out = dpnp.zeros(40, dtype="i8")
triangular[40](values, out)
print("RESULT", dpnp.asnumpy(out).tolist())
"""


def test_nested_loops_with_closed_form_sum():
    # LLVM rewrites this loop nest into a closed form computed in a 65-bit integer; the kernel
    # must still compile and run (in a subprocess: a back-end abort must fail only this test).
    proc = run_python(TRIANGULAR_SCRIPT)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")][-1]
    got = eval(line[len("RESULT ") :])
    exp = [sum(q for p in range(n, 0, -1) for q in range(p)) for n in range(40)]
    assert got == exp


@dk.func
def divmod_pair(a, b):
    return a // b, a % b


@dk.kernel
def tuples(a, out):
    i = dk.get_global_id(0)
    t = (a[i, 0], a[i, 1])
    x, y = t
    q, r = divmod_pair(x, y)
    out[i, 0] = q
    out[i, 1] = r
    n, m = a.shape
    out[i, 2] = n * 10 + m
    out[i, 3] = t[0] + t[1]
    swapped = (t[1], t[0])
    out[i, 4] = swapped[0] - swapped[1]
    out[i, 5] = a[(i, 1)]
    s = 0
    for c in (1, 2, 3):
        s += c * x
    out[i, 6] = s
    nested = ((x, 1), (y, 2))
    out[i, 7] = nested[0][0] * nested[1][1] + nested[1][0] * nested[0][1]


def test_tuples():
    a = np.array([[17, 5], [-7, 2], [9, 3], [100, 7], [0, 4]], dtype=np.int64)
    out = dpnp.zeros((5, 8), dtype="i8")
    tuples[5](to_device(a), out)
    x, y = a[:, 0], a[:, 1]
    exp = np.stack([x // y, x % y, np.full(5, 52), x + y, y - x, y, 6 * x, 2 * x + y], axis=1)
    np.testing.assert_array_equal(to_host(out), exp)


# ---------------------------------------------------------------------------------------------
# math.*, min/max/abs
# ---------------------------------------------------------------------------------------------

UNARY_MATH = [
    ("sqrt", math.sqrt, np.sqrt),
    ("exp", math.exp, np.exp),
    ("log", math.log, np.log),
    ("sin", math.sin, np.sin),
    ("cos", math.cos, np.cos),
    ("tan", math.tan, np.tan),
    ("tanh", math.tanh, np.tanh),
    ("fabs", math.fabs, np.fabs),
    ("floor", math.floor, np.floor),
    ("ceil", math.ceil, np.ceil),
    ("erf", math.erf, None),
    ("log10", math.log10, np.log10),
    ("expm1", math.expm1, np.expm1),
    ("log1p", math.log1p, np.log1p),
    ("asin", math.asin, np.arcsin),
    ("acos", math.acos, np.arccos),
    ("atan", math.atan, np.arctan),
    ("sinh", math.sinh, np.sinh),
    ("cosh", math.cosh, np.cosh),
    ("erfc", math.erfc, None),
    ("trunc", math.trunc, np.trunc),
]


@dk.kernel
def unary_math(a, out):
    i = dk.get_global_id(0)
    x = a[i]
    out[i, 0] = math.sqrt(x)
    out[i, 1] = math.exp(x)
    out[i, 2] = math.log(x)
    out[i, 3] = math.sin(x)
    out[i, 4] = math.cos(x)
    out[i, 5] = math.tan(x)
    out[i, 6] = math.tanh(x)
    out[i, 7] = math.fabs(x)
    out[i, 8] = math.floor(x)
    out[i, 9] = math.ceil(x)
    out[i, 10] = math.erf(x)
    out[i, 11] = math.log10(x)
    out[i, 12] = math.expm1(x)
    out[i, 13] = math.log1p(x)
    out[i, 14] = math.asin(x)
    out[i, 15] = math.acos(x)
    out[i, 16] = math.atan(x)
    out[i, 17] = math.sinh(x)
    out[i, 18] = math.cosh(x)
    out[i, 19] = math.erfc(x)
    out[i, 20] = math.trunc(x)


@dk.kernel
def binary_math(a, b, out):
    i = dk.get_global_id(0)
    x = a[i]
    y = b[i]
    out[i, 0] = math.pow(x, y)
    out[i, 1] = math.atan2(x, y)
    out[i, 2] = math.hypot(x, y)
    out[i, 3] = math.copysign(x, y)
    out[i, 4] = x**y


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_unary_math(dtype):
    n = 40
    x = np.linspace(0.05, 0.95, n).astype(dtype)
    x[::3] = np.linspace(1.5, 9.5, len(x[::3])).astype(dtype) % 1  # other fractions
    out = dpnp.zeros((n, len(UNARY_MATH)), dtype=dtype)
    unary_math[n](to_device(x), out)
    x64 = x.astype(np.float64)
    exp = np.stack(
        [
            np.array([pyf(float(v)) for v in x64]) if npf is None else npf(x64)
            for _, pyf, npf in UNARY_MATH
        ],
        axis=1,
    ).astype(dtype)
    got = to_host(out)
    for k, (name, _, _) in enumerate(UNARY_MATH):
        assert_close(got[:, k], exp[:, k], dtype, scale=8), name


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_binary_math(dtype):
    n = 32
    x = random_values(dtype, n, seed=9, low=0.25, high=3)
    y = random_values(dtype, n, seed=10, low=-2, high=2)
    out = dpnp.zeros((n, 5), dtype=dtype)
    binary_math[n](to_device(x), to_device(y), out)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    exp = np.stack(
        [x64**y64, np.arctan2(x64, y64), np.hypot(x64, y64), np.copysign(x64, y64), x64**y64],
        axis=1,
    ).astype(dtype)
    assert_close(out, exp, dtype, scale=8)


def test_float32_math_stays_float32():
    # Running the float32 versions first: the signature must exist.
    n = 8
    x = to_device(np.linspace(0.1, 0.9, n).astype("f4"))
    unary_math[n](x, dpnp.zeros((n, len(UNARY_MATH)), dtype="f4"))
    binary_math[n](x, x, dpnp.zeros((n, 5), dtype="f4"))
    for kern in (unary_math, binary_math):
        sig = [s for s in kern.signatures if s.args[0].dtype == dk.float32][0]
        ir = kern.inspect_llvm(sig)
        assert isinstance(ir, str) and ir
        assert " double" not in ir, f"{kern.__name__}: float32 kernel uses double"


F32 = dk.usm_array(dk.float32, 1)


@dk.kernel(dk.void(F32, F32))
def f32_only(a, out):
    i = dk.get_global_id(0)
    x = a[i]
    two = dk.float32(2)
    out[i] = math.sqrt(x) * two + math.exp(-x) - math.sin(x) * math.cos(x) + abs(x) / two


def test_eager_float32_kernel_has_no_double():
    x = np.linspace(0.1, 2, 16).astype("f4")
    out = dpnp.zeros(16, dtype="f4")
    f32_only[16](to_device(x), out)
    x64 = x.astype(np.float64)
    exp = np.sqrt(x64) * 2 + np.exp(-x64) - np.sin(x64) * np.cos(x64) + np.abs(x64) / 2
    assert_close(out, exp.astype("f4"), scale=8)
    sig = f32_only.signatures[0]
    assert " double" not in f32_only.inspect_llvm(sig)
    assert " double" not in f32_only.definitions[sig].llvm_ir


@dk.kernel
def builtin_abs(a, out):
    i = dk.get_global_id(0)
    out[i] = abs(a[i])


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "float32", "float64"])
def test_builtin_abs(dtype):
    x = random_values(dtype, 20, seed=11)
    out = dpnp.zeros(20, dtype=dtype)
    builtin_abs[20](to_device(x), out)
    assert_close(out, np.abs(x))


@dk.kernel
def builtin_min_max(a, b, out):
    i = dk.get_global_id(0)
    x = a[i]
    y = b[i]
    out[i, 0] = min(x, y)
    out[i, 1] = max(x, y)
    out[i, 2] = min(x, y, 0)
    out[i, 3] = max(x, y, 0)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_builtin_min_max(dtype):
    n = 20
    x = random_values(dtype, n, seed=12)
    y = random_values(dtype, n, seed=13)
    out = dpnp.zeros((n, 4), dtype=dtype)
    builtin_min_max[n](to_device(x), to_device(y), out)
    zero = np.zeros_like(x)
    exp = np.stack(
        [
            np.minimum(x, y),
            np.maximum(x, y),
            np.minimum(np.minimum(x, y), zero),
            np.maximum(np.maximum(x, y), zero),
        ],
        axis=1,
    )
    assert_close(out, exp.astype(dtype))


# ---------------------------------------------------------------------------------------------
# Device functions
# ---------------------------------------------------------------------------------------------


@dk.func
def square(x):
    return x * x


@dk.func(dk.float64(dk.float64, dk.float64))
def affine(x, y):
    return x * y + 1.0


@dk.func
def poly(x):
    # A lazy device function calling a lazy and an eager one.
    return square(x) + affine(x, 2.0)


@dk.func
def poly_twice(x):
    return poly(poly(x))


@dk.kernel
def use_device_functions(a, out):
    i = dk.get_global_id(0)
    out[i, 0] = square(a[i])
    out[i, 1] = affine(a[i], 3.0)
    out[i, 2] = poly(a[i])
    out[i, 3] = poly_twice(a[i])


@dk.kernel
def use_square_int(a, out):
    i = dk.get_global_id(0)
    out[i] = square(a[i]) + square(i)


def test_device_functions():
    x = np.linspace(-1, 1, 16)
    out = dpnp.zeros((16, 4))
    use_device_functions[16](to_device(x), out)

    def host_poly(v):
        return v * v + (v * 2.0 + 1.0)

    exp = np.stack([x * x, x * 3.0 + 1.0, host_poly(x), host_poly(host_poly(x))], axis=1)
    assert_close(out, exp)


def test_lazy_device_function_specialises_per_type():
    x = np.arange(-5, 5, dtype=np.int32)
    out = dpnp.zeros(10, dtype="i8")
    use_square_int[10](to_device(x), out)
    np.testing.assert_array_equal(to_host(out), x.astype(np.int64) ** 2 + np.arange(10) ** 2)


@pytest.mark.parametrize("fn", [square, affine, poly], ids=lambda f: f.__name__)
def test_device_function_called_from_host_raises_type_error(fn):
    with pytest.raises(TypeError):
        fn(1.0, 2.0) if fn is affine else fn(1.0)


# ---------------------------------------------------------------------------------------------
# Globals and closures
# ---------------------------------------------------------------------------------------------

SCALE = 3
OFFSET = 0.5
COEFFS = (1.0, -2.0, 0.5)
TABLE = np.array([10.0, 20.0, 30.0, 40.0])


@dk.kernel
def use_globals(a, out):
    i = dk.get_global_id(0)
    acc = 0.0
    for c in COEFFS:
        acc = acc * a[i] + c
    out[i, 0] = acc * SCALE + OFFSET
    out[i, 1] = TABLE[i % 4]


def test_closure_over_global_constants():
    x = np.linspace(-2, 2, 12)
    out = dpnp.zeros((12, 2))
    use_globals[12](to_device(x), out)
    horner = (1.0 * x - 2.0) * x + 0.5
    exp = np.stack([horner * 3 + 0.5, TABLE[np.arange(12) % 4]], axis=1)
    assert_close(out, exp)


def _make_scaler(factor):
    @dk.kernel
    def scale(a, out):
        i = dk.get_global_id(0)
        out[i] = a[i] * factor

    return scale


def test_closure_over_enclosing_variables():
    triple, half = _make_scaler(3.0), _make_scaler(0.5)
    x = to_device(np.arange(8.0))
    o1, o2 = dpnp.zeros(8), dpnp.zeros(8)
    triple[8](x, o1)
    half[8](x, o2)
    assert_close(o1, np.arange(8.0) * 3.0)
    assert_close(o2, np.arange(8.0) * 0.5)


# ---------------------------------------------------------------------------------------------
# Arrays: ndim 0..3, layouts, views, negative indices, attributes, slicing inside kernels
# ---------------------------------------------------------------------------------------------


@dk.kernel
def scale_0d(a, out):
    out[()] = a[()] * 2 + 1


@dk.kernel
def scale_1d(a, out):
    i = dk.get_global_id(0)
    out[i] = a[i] * 2 + 1


@dk.kernel
def scale_2d(a, out):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    out[i, j] = a[i, j] * 2 + 1


@dk.kernel
def scale_3d(a, out):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    k = dk.get_global_id(2)
    out[i, j, k] = a[i, j, k] * 2 + 1


def test_zero_dim_array():
    a = to_device(np.array(4.5))
    out = to_device(np.array(0.0))
    assert a.ndim == 0
    scale_0d[1](a, out)
    assert float(to_host(out)) == 10.0
    assert only_signature(scale_0d).args[0].ndim == 0


def _layout_cases():
    base1 = np.arange(20, dtype="f4")
    base2 = np.arange(30, dtype="f8").reshape(5, 6)
    base3 = np.arange(60, dtype="i4").reshape(3, 4, 5)
    return [
        ("1d-C", base1, lambda d: d, "C"),
        ("1d-step2", base1, lambda d: d[::2], "A"),
        ("1d-reversed", base1, lambda d: d[::-1], "A"),
        ("2d-C", base2, lambda d: d, "C"),
        ("2d-T", base2, lambda d: d.T, "F"),
        ("2d-cols", base2, lambda d: d[:, 1:], "A"),
        ("2d-step", base2, lambda d: d[::2, ::3], "A"),
        ("3d-C", base3, lambda d: d, "C"),
        ("3d-T", base3, lambda d: d.transpose(), "F"),
        ("3d-mid", base3, lambda d: d[:, 1:3, ::2], "A"),
    ]


_SCALE_KERNELS = {1: scale_1d, 2: scale_2d, 3: scale_3d}


@pytest.mark.parametrize(
    ("base", "view", "layout"),
    [c[1:] for c in _layout_cases()],
    ids=[c[0] for c in _layout_cases()],
)
def test_input_views_in_lazy_kernels(base, view, layout):
    src = view(to_device(base))
    exp_in = view(base)
    assert dk.typeof(src).layout == layout
    out = dpnp.zeros(exp_in.shape, dtype=base.dtype)
    kern = _SCALE_KERNELS[exp_in.ndim]
    kern[exp_in.shape](src, out)
    assert_close(out, exp_in * 2 + 1)
    # Lazy kernels specialise on the array's own layout.
    assert any(
        s.args[0].layout == layout and s.args[0].ndim == exp_in.ndim for s in kern.signatures
    )


_slice = st.tuples(
    st.one_of(st.none(), st.integers(-6, 6)),
    st.one_of(st.none(), st.integers(-6, 6)),
    st.one_of(st.none(), st.integers(-3, 3).filter(bool)),
).map(lambda t: slice(*t))


@settings(max_examples=30, deadline=None)
@given(rows=_slice, cols=_slice, transpose=st.booleans())
def test_random_2d_views(rows, cols, transpose):
    base = np.arange(42, dtype="f8").reshape(6, 7)
    dev = to_device(base)
    ref = base[rows, cols]
    src = dev[rows, cols]
    if transpose:
        ref, src = ref.T, src.T
    if ref.size == 0:
        return
    out = dpnp.zeros(ref.shape)
    scale_2d[ref.shape](src, out)
    assert_close(out, ref * 2 + 1)


@pytest.mark.parametrize(
    "make_out",
    [lambda z: z[::2], lambda z: z[::-1][1::3]],
    ids=["step2", "reversed-step3"],
)
def test_output_views_write_only_their_elements(make_out):
    base = dpnp.zeros(40, dtype="f4")
    host = np.zeros(40, dtype="f4")
    out_view = make_out(base)
    host_view = make_out(host)
    src = np.arange(host_view.size, dtype="f4")
    scale_1d[host_view.size](to_device(src), out_view)
    host_view[...] = src * 2 + 1
    np.testing.assert_array_equal(to_host(base), host)


F8_2D_A = dk.usm_array(dk.float64, 2, "A")
F8_2D_C = dk.usm_array(dk.float64, 2, "C")


@dk.kernel(dk.void(F8_2D_A, F8_2D_A))
def eager_scale_2d_any(a, out):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    out[i, j] = a[i, j] * 2 + 1


@pytest.mark.parametrize(
    "view",
    [lambda d: d, lambda d: d.T, lambda d: d[:, 1:], lambda d: d[::2, ::-1]],
    ids=["C", "F", "cols", "step-rev"],
)
def test_input_views_in_eager_layout_a_kernel(view):
    base = np.arange(48, dtype="f8").reshape(6, 8)
    src = view(to_device(base))
    exp_in = view(base)
    out_base = dpnp.zeros((exp_in.shape[1], exp_in.shape[0]), dtype="f8")
    out = out_base.T  # an F-ordered output through the same "A" parameter
    eager_scale_2d_any[exp_in.shape](src, out)
    assert_close(out, exp_in * 2 + 1)
    assert eager_scale_2d_any.stats.compiles == 1


@dk.kernel
def negative_indices(a, b, out):
    i = dk.get_global_id(0)
    n = a.shape[0]
    out[i, 0] = a[-1 - i]
    out[i, 1] = a[-1]
    out[i, 2] = b[-1, -2]
    out[i, 3] = b[-(i % 3) - 1, i % 4]
    out[-1 - i, 4] = a[i - n]


def test_negative_indices():
    a = np.arange(10, dtype=np.int64) * 3
    b = np.arange(12, dtype=np.int64).reshape(3, 4) + 100
    out = dpnp.zeros((10, 5), dtype="i8")
    negative_indices[10](to_device(a), to_device(b), out)
    i = np.arange(10)
    exp = np.stack(
        [a[-1 - i], np.full(10, a[-1]), np.full(10, b[-1, -2]), b[-(i % 3) - 1, i % 4], a[::-1]],
        axis=1,
    )
    exp[:, 4] = a[i - 10][::-1]
    np.testing.assert_array_equal(to_host(out), exp)


@dk.kernel
def array_attrs(a, out):
    out[0] = a.ndim
    out[1] = a.size
    for d in range(a.ndim):
        out[2 + d] = a.shape[d]
        out[2 + a.ndim + d] = a.strides[d]


@pytest.mark.parametrize(
    ("base", "view"),
    [c[1:3] for c in _layout_cases()],
    ids=[c[0] for c in _layout_cases()],
)
def test_array_attributes_inside_kernels(base, view):
    src = view(to_device(base))
    ref = view(base)
    out = dpnp.full(2 + 2 * ref.ndim, -999, dtype="i8")
    array_attrs[1](src, out)
    exp = [ref.ndim, ref.size, *ref.shape, *ref.strides]  # NumPy strides are in bytes
    np.testing.assert_array_equal(to_host(out), exp)


@dk.kernel
def views_inside(a, out, rows_out):
    i = dk.get_global_id(0)
    row = a[i]
    acc = 0.0
    for j in range(row.shape[0]):
        acc += row[j]
    out[i, 0] = acc
    tail = a[i, 1:]
    out[i, 1] = tail.shape[0]
    out[i, 2] = tail[0]
    col = a[:, i % a.shape[1]]
    out[i, 3] = col[col.shape[0] - 1]
    rev = a[i, ::-1]
    out[i, 4] = rev[0]
    sub = a[1:, 2:]
    out[i, 5] = sub[0, 0]
    dst = rows_out[i]
    for j in range(dst.shape[0]):
        dst[j] = row[j] * 10


def test_slicing_into_views_inside_kernels():
    a = np.arange(20, dtype="f8").reshape(4, 5)
    out = dpnp.zeros((4, 6))
    rows = dpnp.zeros((4, 5))
    views_inside[4](to_device(a), out, rows)
    i = np.arange(4)
    exp = np.stack(
        [a.sum(axis=1), np.full(4, 4.0), a[:, 1], a[-1, i % 5], a[:, -1], np.full(4, a[1, 2])],
        axis=1,
    )
    assert_close(out, exp)
    assert_close(rows, a * 10)


@dk.kernel
def views_inside_strided(a, out):
    i = dk.get_global_id(0)
    row = a[i]
    acc = 0.0
    for j in range(row.shape[0]):
        acc += row[j] * (j + 1)
    out[i] = acc


@pytest.mark.parametrize(
    "view", [lambda d: d, lambda d: d.T, lambda d: d[:, ::2]], ids=["C", "F", "A"]
)
def test_row_views_of_views(view):
    base = np.arange(42, dtype="f8").reshape(6, 7)
    ref = view(base)
    out = dpnp.zeros(ref.shape[0])
    views_inside_strided[ref.shape[0]](view(to_device(base)), out)
    assert_close(out, (ref * np.arange(1, ref.shape[1] + 1)).sum(axis=1))


# ---------------------------------------------------------------------------------------------
# Scalar arguments
# ---------------------------------------------------------------------------------------------


@dk.kernel
def store_scalar(out, s):
    out[0] = s


@pytest.mark.parametrize(
    ("value", "out_dtype", "lazy_type"),
    [
        (7, "int64", dk.int64),
        (-(2**40), "int64", dk.int64),
        (2.75, "float64", dk.float64),
        (True, "bool", dk.boolean),
        (False, "bool", dk.boolean),
        (3 - 4j, "complex128", dk.complex128),
        (np.float32(1.5), "float32", dk.float32),
        (np.float64(-0.125), "float64", dk.float64),
        (np.int8(-7), "int8", dk.int8),
        (np.int16(-300), "int16", dk.int16),
        (np.int32(123456), "int32", dk.int32),
        (np.int64(-(2**50)), "int64", dk.int64),
        (np.uint8(250), "uint8", dk.uint8),
        (np.uint16(65000), "uint16", dk.uint16),
        (np.uint32(2**31 + 5), "uint32", dk.uint32),
        (np.uint64(2**63 + 11), "uint64", dk.uint64),
        (np.complex64(1.5 + 2.5j), "complex64", dk.complex64),
        (np.bool_(True), "bool", dk.boolean),
    ],
    ids=lambda v: repr(v) if not isinstance(v, str) else v,
)
def test_scalar_arguments(value, out_dtype, lazy_type):
    out = dpnp.zeros(1, dtype=out_dtype)
    store_scalar[1](out, value)
    got = to_host(out)[0]
    assert got == value
    assert got.dtype == np.dtype(out_dtype)
    matching = [
        s
        for s in store_scalar.signatures
        if str(s.args[0].dtype) == out_dtype and s.args[1] == lazy_type
    ]
    assert matching, (store_scalar.signatures, lazy_type)


@dk.kernel
def axpy(alpha, x, y, out):
    i = dk.get_global_id(0)
    out[i] = alpha * x[i] + y[i]


@pytest.mark.parametrize("alpha", [2, 2.5, np.float32(0.5), True])
def test_scalar_in_arithmetic(alpha):
    x = np.linspace(0, 1, 10)
    y = np.linspace(-1, 0, 10)
    out = dpnp.zeros(10)
    axpy[10](alpha, to_device(x), to_device(y), out)
    assert_close(out, float(alpha) * x + y)


@dk.kernel
def copy_any(a, out):
    i = dk.get_global_id(0)
    out[i] = a[i]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_copy_every_dtype(dtype):
    # Every scalar dtype loads and stores through an array unchanged.
    x = random_values(dtype, 16, seed=14)
    out = dpnp.zeros(16, dtype=dtype)
    copy_any[16](to_device(x), out)
    np.testing.assert_array_equal(to_host(out), x)


# ---------------------------------------------------------------------------------------------
# Compile errors (API.md §3): KernelCompileError naming the kernel and the source file
# ---------------------------------------------------------------------------------------------


class Opaque:
    def __call__(self, x):
        return x


OPAQUE = Opaque()


def k_returns_value(a):
    i = dk.get_global_id(0)
    return a[i]


def k_prints_array(a):
    print(a)


def k_np_empty(a):
    tmp = np.empty(4)
    a[0] = tmp[0]


def k_np_zeros(a):
    tmp = np.zeros(4, dtype=np.float64)
    a[0] = tmp[1]


def k_unknown_object(a):
    i = dk.get_global_id(0)
    a[i] = OPAQUE(a[i])


def k_dynamic_raise(a):
    i = dk.get_global_id(0)
    if a[i] < 0:
        raise ValueError(f"negative value at {i}")
    a[i] = 1.0


def k_python_list(a):
    values = [a[0], a[1]]
    values.append(a[2])
    a[0] = values[2]


def k_dict(a):
    d = {1: a[0]}
    a[0] = d[1]


def k_array_copy(a):
    b = a.copy()
    a[0] = b[0]


def k_array_expression(a):
    a[0] = (a + 1)[0]


def k_python_object(a):
    o = object()
    a[0] = 1.0 if o is not None else 0.0


def k_try_except(a):
    try:
        a[0] = 1.0
    except Exception:
        a[0] = 2.0


def k_undefined_name(a):
    a[0] = undefined_name  # noqa: F821


def k_generator(a):
    yield a[0]


BAD_KERNELS = [
    k_returns_value,
    k_prints_array,
    k_np_empty,
    k_np_zeros,
    k_unknown_object,
    k_dynamic_raise,
    k_python_list,
    k_dict,
    k_array_copy,
    k_array_expression,
    k_python_object,
    k_try_except,
    k_undefined_name,
    k_generator,
]


def _check_compile_error(excinfo, py_func):
    msg = str(excinfo.value)
    assert py_func.__name__ in msg, msg
    assert THIS_FILE in msg, msg
    assert re.search(r":\d+|line \d+", msg), msg


@pytest.mark.parametrize("py_func", BAD_KERNELS, ids=lambda f: f.__name__)
def test_compile_errors_lazy(py_func):
    kern = dk.kernel(py_func)
    a = dpnp.zeros(4)
    for _ in range(2):  # a failed compile leaves nothing behind and fails the same way again
        with pytest.raises(dk.KernelCompileError) as excinfo:
            kern[4](a)
        _check_compile_error(excinfo, py_func)
        assert kern.definitions == {}
        assert kern.signatures == []


@pytest.mark.parametrize("py_func", BAD_KERNELS, ids=lambda f: f.__name__)
def test_compile_errors_eager(py_func):
    t = dk.usm_array(dk.float64, 1)
    with pytest.raises(dk.KernelCompileError) as excinfo:
        dk.kernel(dk.void(t))(py_func)
    _check_compile_error(excinfo, py_func)


def test_compile_error_in_device_function_names_the_kernel():
    @dk.func
    def bad_helper(x):
        return np.zeros(3)[0] + x

    def k_calls_bad_helper(a):
        a[0] = bad_helper(a[0])

    kern = dk.kernel(k_calls_bad_helper)
    with pytest.raises(dk.KernelCompileError) as excinfo:
        kern[1](dpnp.zeros(2))
    _check_compile_error(excinfo, k_calls_bad_helper)


@dk.kernel
def constant_raise(a, out):
    i = dk.get_global_id(0)
    if a[i] < 0:
        raise ValueError("negative input")
    out[i] = a[i] + 1


def test_raise_with_constant_message_compiles():
    # Only dynamic messages are refused; a constant one compiles and, untriggered, runs.
    x = np.arange(6.0)
    out = dpnp.zeros(6)
    constant_raise[6](to_device(x), out)
    assert_close(out, x + 1)
