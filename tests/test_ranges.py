"""Launch ranges (API.md §2, "Launch"): Range, NdRange and as_launch_range."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpex_kernels as dk
from dpex_kernels.types.ranges import as_launch_range
from tests.conftest import param_id

NAMESPACE = {"Range": dk.Range, "NdRange": dk.NdRange}


def test_invalid_range_error_is_value_and_type_error():
    assert issubclass(dk.InvalidRangeError, ValueError)
    assert issubclass(dk.InvalidRangeError, TypeError)


# --------------------------------------------------------------------------------------------
# Range
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dims", [(1,), (0,), (1024,), (3, 4), (0, 5), (2, 3, 4), (7, 0, 1)])
def test_range_accepts_one_to_three_non_negative_ints(dims):
    r = dk.Range(*dims)
    assert tuple(r) == dims
    assert r.ndim == len(dims) and len(r) == len(dims)
    assert r.size == int(np.prod(dims))
    assert all(type(d) is int for d in r)
    assert r == dk.Range(*dims)
    assert hash(r) == hash(dk.Range(*dims))


@pytest.mark.parametrize("dims", [(3, 4), [3, 4], (5,), [1, 2, 3]])
def test_range_from_one_sequence(dims):
    assert dk.Range(dims) == dk.Range(*dims)


def test_range_accepts_numpy_integers():
    r = dk.Range(np.int64(8), np.uint8(2))
    assert r == dk.Range(8, 2)
    assert all(type(d) is int for d in r)


@pytest.mark.parametrize(
    "dims",
    [
        (),
        (1, 2, 3, 4),
        (1, 1, 1, 1, 1),
        (-1,),
        (4, -2),
        (True,),
        (False,),
        (3, True),
        (np.bool_(True),),
        (1.0,),
        (2.5,),
        (np.float32(2),),
        ("4",),
        (None,),
        (object(),),
        ((1, 2), 3),
    ],
    ids=param_id,
)
def test_range_rejects(dims):
    with pytest.raises(dk.InvalidRangeError) as info:
        dk.Range(*dims)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


def test_range_equality_and_hash():
    assert dk.Range(3, 4) == dk.Range(3, 4)
    assert dk.Range(3, 4) != dk.Range(4, 3)
    assert dk.Range(3) != dk.Range(3, 1)
    assert len({dk.Range(3, 4), dk.Range(3, 4), dk.Range(4, 3)}) == 2
    assert {dk.Range(2, 2): "x"}[dk.Range(2, 2)] == "x"


@pytest.mark.parametrize("dims", [(1,), (0,), (3, 4), (2, 3, 4)])
def test_range_repr_round_trips(dims):
    r = dk.Range(*dims)
    assert repr(r) == f"Range({', '.join(map(str, dims))})"
    assert eval(repr(r), NAMESPACE) == r


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("dims", [(0,), (5,), (3, 4), (2, 3, 4)])
def test_range_pickles(dims, protocol):
    r = dk.Range(*dims)
    back = pickle.loads(pickle.dumps(r, protocol))
    assert back == r and type(back) is dk.Range and hash(back) == hash(r)
    assert back.ndim == r.ndim and back.size == r.size
    assert copy.copy(r) == r and copy.deepcopy(r) == r


# --------------------------------------------------------------------------------------------
# NdRange
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "global_range, local_range",
    [
        ((8,), (4,)),
        (8, 4),
        (dk.Range(8), dk.Range(8)),
        ((16, 6), (4, 3)),
        ([16, 6], [4, 3]),
        ((8, 8, 8), (2, 4, 8)),
        ((0,), (4,)),  # zero global size: launches nothing, but valid
        ((1024,), (1,)),
    ],
    ids=param_id,
)
def test_ndrange_accepts_local_sizes_dividing_global(global_range, local_range):
    nd = dk.NdRange(global_range, local_range)
    g = global_range if not isinstance(global_range, int) else (global_range,)
    loc = local_range if not isinstance(local_range, int) else (local_range,)
    assert isinstance(nd.global_range, dk.Range) and tuple(nd.global_range) == tuple(g)
    assert isinstance(nd.local_range, dk.Range) and tuple(nd.local_range) == tuple(loc)
    assert nd.ndim == len(g)


@pytest.mark.parametrize(
    "global_range, local_range",
    [
        ((8,), (3,)),  # 3 does not divide 8
        ((8, 8), (4, 3)),
        ((8,), (0,)),  # zero local size
        ((8,), (16,)),  # larger than global: does not divide
        ((8, 8), (4,)),  # dimension counts differ
        ((8,), (4, 1)),
        ((8, 8, 8, 8), (1, 1, 1, 1)),
        ((), ()),
        ((-8,), (4,)),
        ((8,), (-4,)),
        ((8.0,), (4,)),
        ((True,), (True,)),
        (8, None),
        (None, 4),
        ("8", "4"),
        (8.0, 4.0),
    ],
    ids=param_id,
)
def test_ndrange_rejects(global_range, local_range):
    with pytest.raises(dk.InvalidRangeError) as info:
        dk.NdRange(global_range, local_range)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


def test_ndrange_equality_and_hash():
    a = dk.NdRange((8, 4), (2, 2))
    assert a == dk.NdRange(dk.Range(8, 4), dk.Range(2, 2))
    assert a == dk.NdRange([8, 4], [2, 2])
    assert hash(a) == hash(dk.NdRange((8, 4), (2, 2)))
    assert a != dk.NdRange((8, 4), (4, 2))
    assert a != dk.NdRange((4, 8), (2, 2))
    assert a != dk.Range(8, 4)
    assert len({a, dk.NdRange((8, 4), (2, 2)), dk.NdRange((8, 4), (1, 1))}) == 2


def test_ndrange_repr_round_trips():
    for nd in (dk.NdRange(8, 4), dk.NdRange((8, 4), (2, 2)), dk.NdRange((2, 4, 6), (1, 2, 3))):
        assert eval(repr(nd), NAMESPACE) == nd
        assert "NdRange" in repr(nd)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_ndrange_pickles(protocol):
    nd = dk.NdRange((8, 6), (4, 3))
    back = pickle.loads(pickle.dumps(nd, protocol))
    assert back == nd and type(back) is dk.NdRange and hash(back) == hash(nd)
    assert back.global_range == dk.Range(8, 6) and back.local_range == dk.Range(4, 3)
    assert copy.copy(nd) == nd and copy.deepcopy(nd) == nd


# --------------------------------------------------------------------------------------------
# as_launch_range: what kernel[...] accepts
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (5, dk.Range(5)),
        (0, dk.Range(0)),
        ((5,), dk.Range(5)),
        ((3, 4), dk.Range(3, 4)),
        ((3, 4, 5), dk.Range(3, 4, 5)),
        ((3, 0), dk.Range(3, 0)),
        (dk.Range(7, 2), dk.Range(7, 2)),
        (dk.NdRange(8, 4), dk.NdRange(8, 4)),
        (dk.NdRange((8, 4), (2, 2)), dk.NdRange((8, 4), (2, 2))),
    ],
    ids=param_id,
)
def test_as_launch_range_accepts(value, expected):
    got = as_launch_range(value)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        -1,
        (),
        (1, 2, 3, 4),
        (-1,),
        (2, -3),
        (1.0,),
        1.5,
        "5",
        b"5",
        (True,),
        ("4",),
        {4},
        {"global": 4},
        object(),
        ((8,), (4,)),  # an NdRange spelled as a tuple of tuples is not one
    ],
    ids=param_id,
)
def test_as_launch_range_rejects(value):
    with pytest.raises(dk.InvalidRangeError) as info:
        as_launch_range(value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


@pytest.mark.parametrize("value", [np.int64(5), np.int32(5), np.uint16(5)], ids=param_id)
def test_numpy_integer_is_an_int_range_as_it_is_inside_a_tuple(value):
    # (np.int64(5),) is a valid "tuple of 1-3 ints" (Range takes NumPy integers), so the bare
    # NumPy integer must be a valid "int" range as well, and NdRange must take it likewise.
    assert as_launch_range((value,)) == dk.Range(5)
    assert as_launch_range(value) == dk.Range(5)
    assert dk.NdRange(value, 1) == dk.NdRange(5, 1)
    assert dk.NdRange(10, value) == dk.NdRange(10, 5)


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

dim_values = st.one_of(
    st.integers(-5, 2**62 + 5),
    st.booleans(),
    st.floats(allow_nan=False),
    st.none(),
    st.text(max_size=2),
)


def _valid_dim(value) -> bool:
    return type(value) is int and 0 <= value < 2**62


@given(st.lists(dim_values, max_size=5))
def test_range_accepts_exactly_one_to_three_non_negative_ints(dims):
    valid = 1 <= len(dims) <= 3 and all(_valid_dim(d) for d in dims)
    if valid:
        r = dk.Range(*dims)
        assert tuple(r) == tuple(dims)
        assert pickle.loads(pickle.dumps(r)) == r
        assert eval(repr(r), NAMESPACE) == r
        assert as_launch_range(tuple(dims)) == r
    else:
        with pytest.raises(dk.InvalidRangeError):
            dk.Range(*dims)
        with pytest.raises(dk.InvalidRangeError):
            as_launch_range(tuple(dims))


@pytest.mark.parametrize("make", [dk.Range, lambda n: dk.NdRange(n, 1)], ids=["Range", "NdRange"])
def test_a_dimension_of_2_to_the_62_is_refused_with_what_to_do(make):
    assert tuple(dk.Range(2**62 - 1)) == (2**62 - 1,)
    with pytest.raises(
        dk.InvalidRangeError,
        match=r"dimension 4611686018427387904 is not below "
        r"2\*\*62 .*: split the work into several launches",
    ):
        make(2**62)


@given(st.lists(st.tuples(st.integers(0, 64), st.integers(0, 64)), min_size=1, max_size=3))
def test_ndrange_valid_exactly_when_each_local_divides_its_global(pairs):
    global_range = tuple(g for g, _ in pairs)
    local_range = tuple(loc for _, loc in pairs)
    valid = all(loc >= 1 and g % loc == 0 for g, loc in pairs)
    if valid:
        nd = dk.NdRange(global_range, local_range)
        assert tuple(nd.global_range) == global_range
        assert tuple(nd.local_range) == local_range
        assert pickle.loads(pickle.dumps(nd)) == nd
        assert hash(pickle.loads(pickle.dumps(nd))) == hash(nd)
        assert eval(repr(nd), NAMESPACE) == nd
        assert as_launch_range(nd) == nd
    else:
        with pytest.raises(dk.InvalidRangeError):
            dk.NdRange(global_range, local_range)


@given(
    st.lists(st.integers(0, 50), min_size=1, max_size=3),
    st.lists(st.integers(0, 50), min_size=1, max_size=3),
)
def test_range_equal_exactly_when_dims_equal(a, b):
    ra, rb = dk.Range(*a), dk.Range(*b)
    assert (ra == rb) == (a == b)
    assert (ra != rb) == (a != b)
    if a == b:
        assert hash(ra) == hash(rb)


@pytest.mark.parametrize("value", [np.array([16]), np.array([[2, 3]]), np.float64(4.0), [4]])
def test_arrays_floats_and_lists_as_a_launch_range_are_invalid_range_errors(value):
    with pytest.raises(dk.InvalidRangeError, match="launch range"):
        as_launch_range(value)


def test_a_zero_dimensional_integer_array_is_a_launch_range():
    assert as_launch_range(np.array(16)) == dk.Range(16)
