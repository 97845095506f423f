"""Indexing USM arrays with arrays in offloaded functions (offloading/indexing.py, masks.py):
`a[indices]` is a gather, `x[mask]` a selection and `a[mask] = values` a store, kernels equal
to NumPy's; other array indices are a KernelCompileError naming the line."""

from __future__ import annotations

import dpnp
import numpy as np
import pytest
from conftest import CPU
from hypothesis import given, settings
from hypothesis import strategies as st

import dpex_kernels as dk
from dpex_kernels import KernelCompileError
from dpex_kernels.offloading import names
from dpex_kernels.offloading.masks import COMPRESS_CHUNK


def usm(values, **kwargs):
    return dpnp.asarray(values, device=CPU, **kwargs)


def picked(a, indices):
    return a[indices]


def nearest_offsets(points, centroids, labels):
    return points - centroids[labels]


@pytest.mark.parametrize("shape", [(10,), (10, 3), (6, 4, 5)])
@pytest.mark.parametrize("index_dtype", ["int64", "int32", "uint8"])
def test_a_gather_equals_numpy(shape, index_dtype):
    """Repeated, negative (signed types) and no indices at all, into 1-3-D arrays."""
    a = np.random.default_rng(3).random(shape)
    offloaded = dk.offload(picked)
    n = shape[0]
    signed = np.dtype(index_dtype).kind == "i"
    cases = [[1, n - 1, 3, 3, 0], [], [-1, -n, 2] if signed else [2, 2]]
    for indices in cases:
        indices = np.array(indices, index_dtype)
        got = offloaded(usm(a), usm(indices))
        assert isinstance(got, dpnp.ndarray)
        np.testing.assert_array_equal(dpnp.asnumpy(got), a[indices])
    assert any(k.kind == "take()" for k in offloaded.inspect_kernels())  # a kernel, not host code


def test_a_gather_in_an_expression_and_its_placement_follow_the_array():
    rng = np.random.default_rng(4)
    points, centroids = rng.random((500, 3)), rng.random((7, 3))
    labels = rng.integers(0, 7, 500)
    offloaded = dk.offload(nearest_offsets)
    got = offloaded(usm(points, usm_type="shared"), usm(centroids), usm(labels))
    np.testing.assert_allclose(dpnp.asnumpy(got), points - centroids[labels])
    gathered = dk.offload(picked)(usm(centroids, usm_type="host"), usm(labels))
    assert gathered.usm_type == "host" and gathered.sycl_queue == usm(centroids).sycl_queue


@pytest.mark.parametrize("index", [10, -11, 1 << 40])
def test_an_index_out_of_bounds_is_numpy_s_index_error(index):
    offloaded = dk.offload(picked)
    with pytest.raises(IndexError):
        np.arange(10.0)[np.array([1, index])]  # NumPy's, for the same indices
    with pytest.raises(IndexError, match="out of bounds"):
        offloaded(usm(np.arange(10.0)), usm(np.array([1, index])))


def masked(a):
    return a[a > 0.5]


def masked_planes(a, mask):
    return a[mask]


def stored_by_planes(a, mask):
    a[mask] = 0.0


def rows_and_columns(a, rows, columns):
    return a[rows, columns]


def by_matrix(a, indices):
    return a[indices]


def by_host_indices(a):
    return a[np.arange(2)]


@pytest.mark.parametrize(
    ("function", "arguments", "named"),
    [
        (masked_planes, (np.ones((2, 2, 2)), np.ones((2, 2), bool)), "bool, 2d"),
        (stored_by_planes, (np.ones((2, 2, 2)), np.ones((2, 2), bool)), "bool, 2d"),
        (rows_and_columns, (np.ones((3, 3)), np.array([0, 1]), np.array([1, 2])), "Tuple"),
        (by_matrix, (np.arange(4.0), np.array([[0, 1], [2, 3]])), "int64, 2d"),
        (by_host_indices, (np.arange(4.0),), "array(int64, 1d, C)"),
    ],
)
def test_other_array_indices_are_refused_naming_the_line(function, arguments, named):
    line = function.__code__.co_firstlineno + 1
    with pytest.raises(KernelCompileError, match=f"test_offload_indexing.py:{line}") as error:
        dk.offload(function)(*(usm(x) for x in arguments))
    assert named in str(error.value) and "a[indices]" in str(error.value)


PICKED = dk.offload(picked)


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(1, 300),
    columns=st.integers(1, 9),
    dtype=st.sampled_from(["float64", "float32", "int64", "int32", "bool"]),
    data=st.data(),
)
def test_random_gathers_equal_numpy(rows, columns, dtype, data):
    rng = np.random.default_rng(rows * 16 + columns)
    a = (rng.random((rows, columns)) * 100).astype(dtype)
    count = data.draw(st.integers(0, 400))
    indices = rng.integers(-rows, rows, count)
    got = PICKED(usm(a), usm(indices))
    np.testing.assert_array_equal(dpnp.asnumpy(got), a[indices])


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(0, 3 * COMPRESS_CHUNK + 5),
    share=st.sampled_from([0.0, 0.01, 0.5, 1.0]),
    dtype=st.sampled_from(["float64", "float32", "int64", "int32"]),
)
def test_random_selections_equal_numpy(n, share, dtype):
    """None, a few, half or all of the elements, in up to three chunks and a partial one."""
    rng = np.random.default_rng(n)
    x = (rng.random(n) * 100).astype(dtype)
    mask = rng.random(n) < share
    got = SELECTED(usm(x), usm(mask))
    np.testing.assert_array_equal(dpnp.asnumpy(got), x[mask])


def selected(x, mask):
    return x[mask]


SELECTED = dk.offload(selected)


def test_a_selection_is_a_kernel_and_a_mask_of_another_length_numpy_s_index_error():
    x = np.arange(10.0)
    offloaded = dk.offload(masked)
    np.testing.assert_array_equal(dpnp.asnumpy(offloaded(usm(x))), x[x > 0.5])
    assert any(k.kind == "compress()" for k in offloaded.inspect_kernels())
    with pytest.raises(IndexError):
        x[np.ones(4, bool)]  # NumPy's, for the same lengths
    with pytest.raises(IndexError, match="length does not match"):
        SELECTED(usm(x), usm(np.ones(4, bool)))


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(0, 2 * COMPRESS_CHUNK + 5),
    inner=st.sampled_from([(1,), (3,), (2, 3)]),
    share=st.sampled_from([0.0, 0.01, 0.5, 1.0]),
    dtype=st.sampled_from(["float64", "int32"]),
)
def test_random_row_selections_equal_numpy(rows, inner, share, dtype):
    """A 1-D mask over the rows of a 2-D or 3-D array selects whole rows, in order."""
    rng = np.random.default_rng(rows)
    x = (rng.random((rows, *inner)) * 100).astype(dtype)
    mask = rng.random(rows) < share
    got = SELECTED(usm(x), usm(mask))
    np.testing.assert_array_equal(dpnp.asnumpy(got), x[mask])


@settings(max_examples=25, deadline=None)
@given(
    shape=st.sampled_from([(0, 3), (70, 60), (3, 4, 5), (40, 1, 130)]),
    share=st.sampled_from([0.0, 0.01, 0.5, 1.0]),
    dtype=st.sampled_from(["float64", "int32"]),
    strided=st.booleans(),
)
def test_random_selections_by_masks_of_the_array_s_shape_equal_numpy(shape, share, dtype, strided):
    """A mask of the array's own rank selects elements in C order, a 1-D result (Numba types
    it as an array of rank 2n - 1 and cannot lower it), strided views too."""
    rng = np.random.default_rng(sum(shape))
    x = (rng.random(shape) * 100).astype(dtype)
    device_x = usm(x)
    if strided:
        x, device_x = x[..., ::2], device_x[..., ::2]
    mask = rng.random(x.shape) < share
    got = SELECTED(device_x, usm(mask))
    np.testing.assert_array_equal(dpnp.asnumpy(got), x[mask])


def test_a_mask_of_another_shape_is_numpy_s_index_error():
    x = np.ones((4, 5))
    with pytest.raises(IndexError):
        x[np.ones((4, 4), bool)]  # NumPy's, for the same shapes
    with pytest.raises(IndexError, match="shape does not match"):
        SELECTED(usm(x), usm(np.ones((4, 4), bool)))


def masked_store(a, mask, values):
    a[mask] = values


def fused_store(a, mask, source):
    a[mask] = source[mask]


MASKED_STORE = dk.offload(masked_store)
FUSED_STORE = dk.offload(fused_store)

#: (the array's shape, the mask's shape): masks of the array's shape and 1-D masks over rows.
MASKINGS = [
    ((50,), (50,)),
    ((6, 7), (6, 7)),
    ((3, 4, 5), (3, 4, 5)),
    ((9, 4), (9,)),
    ((5, 3, 2), (5,)),
]


@settings(max_examples=20, deadline=None)
@given(
    masking=st.sampled_from(MASKINGS),
    share=st.sampled_from([0.0, 0.3, 1.0]),
    dtype=st.sampled_from(["float64", "int64", "float32"]),
)
def test_a_store_of_a_selection_through_its_own_mask_is_one_kernel_equal_to_numpy(
    masking, share, dtype
):
    """`a[m] = x[m]` stores x's selected elements or rows in place, in one kernel (Numba's
    parfor fuses it), as NumPy stores them."""
    shape, mask_shape = masking
    rng = np.random.default_rng(len(shape) * 7 + int(share * 10))
    a, x = (rng.random((2, *shape)) * 100).astype(dtype)
    mask = rng.random(mask_shape) < share
    device_a = usm(a)
    FUSED_STORE(device_a, usm(mask), usm(x))
    a[mask] = x[mask]
    np.testing.assert_array_equal(dpnp.asnumpy(device_a), a)
    kinds = [k.kind for k in FUSED_STORE.inspect_kernels()]
    assert "masked_store()" in kinds and "compress()" not in kinds


def values_for(rng, kind: str, selected: int, items: tuple, dtype):
    """A value of `kind` NumPy can store into `selected` items of shape `items`."""
    if kind == "scalar":
        return dtype(7)
    shape = {"all": (selected, *items), "one": (1, *items), "item": items or (1,)}[kind]
    return (rng.random(shape) * 100).astype(dtype)


@settings(max_examples=25, deadline=None)
@given(
    masking=st.sampled_from(MASKINGS),
    share=st.sampled_from([0.0, 0.3, 1.0]),
    kind=st.sampled_from(["scalar", "all", "one", "item"]),
    dtype=st.sampled_from([np.float64, np.int64]),
)
def test_stores_through_masks_equal_numpy(masking, share, kind, dtype):
    """`a[mask] = values`: the selected elements (in C order) or rows take the values in order,
    broadcast as NumPy broadcasts them, in kernels on the array's queue."""
    shape, mask_shape = masking
    rng = np.random.default_rng(len(shape) * 5 + len(kind) + int(share * 10))
    a = (rng.random(shape) * 100).astype(dtype)
    mask = rng.random(mask_shape) < share
    items = shape[len(mask_shape) :]
    values = values_for(rng, kind, int(mask.sum()), items, dtype)
    device_a = usm(a)
    MASKED_STORE(device_a, usm(mask), values if kind == "scalar" else usm(values))
    a[mask] = values
    np.testing.assert_array_equal(dpnp.asnumpy(device_a), a)


def stored_selection(a, b):
    a[a > 0.5] = b[:3]


def test_a_store_through_a_mask_is_a_kernel_not_host_code():
    """Numba stores an array through a mask on the host, which cannot reach a GPU's device
    memory: here it is place()'s kernels, a 1-D mask included."""
    offloaded = dk.offload(stored_selection)
    a, b = np.array([0.1, 0.9, 0.7, 0.2, 0.8]), np.arange(5.0)
    device_a = usm(a)
    offloaded(device_a, usm(b))
    a[a > 0.5] = b[:3]
    np.testing.assert_array_equal(dpnp.asnumpy(device_a), a)
    line = stored_selection.__code__.co_firstlineno + 1
    assert any(k.kind == "place()" and k.line == line for k in offloaded.inspect_kernels())


def doubled_where_large(a):
    a[a > 0.5] *= 2.0


def test_a_selection_updated_in_place_equals_numpy():
    a = np.random.default_rng(6).random((30, 7))
    device_a = usm(a)
    dk.offload(doubled_where_large)(device_a)
    doubled_where_large(a)
    np.testing.assert_array_equal(dpnp.asnumpy(device_a), a)


def test_the_errors_of_stores_through_masks_are_numpy_s():
    a, mask = np.zeros((4, 5)), np.ones((4, 5), bool)
    with pytest.raises(IndexError):
        a[np.ones((4, 4), bool)] = np.ones(16)  # NumPy's, for the same shapes
    with pytest.raises(IndexError, match="shape does not match"):
        MASKED_STORE(usm(a), usm(np.ones((4, 4), bool)), usm(np.ones(16)))
    with pytest.raises(ValueError):
        a[mask] = np.ones(7)  # NumPy's, for the same shapes
    with pytest.raises(ValueError, match="do not broadcast"):
        MASKED_STORE(usm(a), usm(mask), usm(np.ones(7)))
    with pytest.raises(IndexError):
        a[mask] = np.ones((4, 4))[mask]  # NumPy's IndexError of x[mask]
    with pytest.raises(IndexError, match="shape does not match"):
        FUSED_STORE(usm(a), usm(mask), usm(np.ones((4, 4))))
    rows = np.ones(4, bool)
    with pytest.raises(ValueError):
        a[rows] = np.ones((4, 3))  # NumPy's: rows of 5 elements cannot take 3
    with pytest.raises(ValueError, match="do not broadcast"):
        MASKED_STORE(usm(a), usm(rows), usm(np.ones((4, 3))))
    with pytest.raises(ValueError, match="do not broadcast"):
        FUSED_STORE(usm(a), usm(rows), usm(np.ones((4, 3))))
    assert not dpnp.asnumpy(usm(a)).any()


def test_values_of_a_rank_above_the_selection_s_are_refused_naming_the_line():
    line = masked_store.__code__.co_firstlineno + 1
    with pytest.raises(KernelCompileError, match=f"test_offload_indexing.py:{line}") as error:
        dk.offload(masked_store)(
            usm(np.zeros((4, 5))), usm(np.ones((4, 5), bool)), usm(np.ones((4, 5)))
        )
    assert "at most 1 dimension" in str(error.value)


def centre_of(points, labels, c):
    return points[labels == c].mean(axis=0)


def test_a_cluster_s_centre_through_a_row_mask_equals_numpy():
    rng = np.random.default_rng(8)
    points, labels = rng.random((5000, 4)), rng.integers(0, 3, 5000)
    offloaded = dk.offload(centre_of)
    for c in range(3):
        got = offloaded(usm(points), usm(labels), c)
        np.testing.assert_allclose(dpnp.asnumpy(got), points[labels == c].mean(axis=0))
    with pytest.raises(IndexError, match="length does not match"):
        SELECTED(usm(points), usm(np.ones(4999, bool)))


def test_numpy_s_take_put_and_compress_are_not_the_indexing_kernels():
    """np.take and np.put flatten without axis= and np.compress takes the condition first:
    offload's gather, scatter and selection stand for `a[indices]` (and its store) and
    `x[mask]` only."""
    for function in (np.take, np.put, np.compress, dpnp.take, dpnp.put, dpnp.compress):
        assert names.replacement(function) is None


def scatter(a, indices, value):
    a[indices] = value


SCATTER = dk.offload(scatter)


@pytest.mark.parametrize("shape", [(10,), (10, 3), (6, 4, 5)])
def test_a_scatter_equals_numpy_and_a_repeated_index_keeps_its_last_value(shape):
    rng = np.random.default_rng(5)
    indices = np.array([1, -1, 3, 3, 0, 1])
    for value in (2.5, rng.random((indices.size, *shape[1:]))):
        a = rng.random(shape)
        device = usm(a)
        SCATTER(device, usm(indices), usm(value) if isinstance(value, np.ndarray) else value)
        expected = a.copy()
        expected[indices] = value
        np.testing.assert_array_equal(dpnp.asnumpy(device), expected)
    assert any(k.kind == "put()" for k in SCATTER.inspect_kernels())  # kernels, not host code


def test_a_scatter_s_errors_are_numpy_s():
    a, indices = np.zeros(10), np.array([1, 2])
    with pytest.raises(IndexError):
        a[np.array([1, 10])] = 1.0  # NumPy's, for the same indices
    with pytest.raises(IndexError, match="out of bounds"):
        SCATTER(usm(a), usm(np.array([1, 10])), 1.0)
    with pytest.raises(ValueError):
        a[indices] = np.ones(3)  # NumPy's, for the same shapes
    with pytest.raises(ValueError, match="shape mismatch"):
        SCATTER(usm(a), usm(indices), usm(np.ones(3)))
    assert not dpnp.asnumpy(usm(a)).any()


def store_by_matrix(a, indices):
    a[indices] = 1.0


def test_a_store_with_another_array_index_is_refused_naming_the_line():
    line = store_by_matrix.__code__.co_firstlineno + 1
    with pytest.raises(KernelCompileError, match=f"test_offload_indexing.py:{line}"):
        dk.offload(store_by_matrix)(usm(np.zeros(4)), usm(np.array([[0, 1], [2, 3]])))


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(1, 50),
    columns=st.integers(1, 5),
    count=st.integers(0, 200),
    dtype=st.sampled_from(["float64", "int64", "int32"]),
)
def test_random_scatters_with_repeated_indices_equal_numpy(rows, columns, count, dtype):
    """Many more indices than rows: most repeat, and the last value stored must win."""
    rng = np.random.default_rng(rows * 1000 + count)
    a = rng.integers(0, 100, (rows, columns)).astype(dtype)
    indices = rng.integers(-rows, rows, count)
    value = rng.integers(0, 100, (count, columns)).astype(dtype)
    device = usm(a)
    SCATTER(device, usm(indices), usm(value))
    a[indices] = value
    np.testing.assert_array_equal(dpnp.asnumpy(device), a)
