"""API.md §1 (types), §2's matching rules and §4 (errors): usm_array, typeof, ArraySpec, scalars."""

from __future__ import annotations

import math
from fractions import Fraction

import dpctl
import dpnp
import numba
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from numba.core import types as nbtypes

import dpex_kernels as dk
import dpex_kernels.errors as dk_errors
from dpex_kernels.types.arguments import array_spec_of, read_usm_array
from dpex_kernels.types.spec import ArraySpec, contiguity, explain_mismatch, scalar_matches
from dpex_kernels.types.usm_array_type import USMArrayType
from tests.conftest import param_id

CPU = "opencl:cpu:0"

#: name -> (dk scalar type, NumPy scalar class, short dtype string)
SCALARS = {
    "bool": (dk.boolean, np.bool_, "?"),
    "int8": (dk.int8, np.int8, "i1"),
    "int16": (dk.int16, np.int16, "i2"),
    "int32": (dk.int32, np.int32, "i4"),
    "int64": (dk.int64, np.int64, "i8"),
    "uint8": (dk.uint8, np.uint8, "u1"),
    "uint16": (dk.uint16, np.uint16, "u2"),
    "uint32": (dk.uint32, np.uint32, "u4"),
    "uint64": (dk.uint64, np.uint64, "u8"),
    "float32": (dk.float32, np.float32, "f4"),
    "float64": (dk.float64, np.float64, "f8"),
    "complex64": (dk.complex64, np.complex64, "c8"),
    "complex128": (dk.complex128, np.complex128, "c16"),
}
NAMES = list(SCALARS)
LAYOUTS = ("C", "F", "A")
USM_TYPES = ("device", "shared", "host")
INT_NAMES = [n for n in NAMES if np.dtype(n).kind in "iu"]


def spellings(name: str) -> list[object]:
    """Every accepted spelling of one dtype (API.md §1, row dtype)."""
    numba_type, np_class, short = SCALARS[name]
    return [numba_type, np_class, np.dtype(name), short, name]


def device_spellings() -> list[object]:
    """Every accepted spelling of this machine's only device (API.md §1, row device)."""
    return [
        None,
        "cpu",
        "opencl:cpu",
        "opencl:cpu:0",
        dpctl.SyclDevice("opencl:cpu:0"),
        dpctl.select_default_device(),
    ]


def expected_layout(np_view: np.ndarray) -> str:
    """typeof's layout rule, with NumPy's own contiguity flags as the oracle."""
    if np_view.flags.c_contiguous:
        return "C"
    if np_view.flags.f_contiguous:
        return "F"
    return "A"


class ForeignArray:
    """A third-party array: nothing but __sycl_usm_array_interface__, delegated to a USM array."""

    def __init__(self, base):
        self._base = base

    @property
    def __sycl_usm_array_interface__(self):
        return self._base.__sycl_usm_array_interface__


class InstanceInterface:
    """A third-party array whose interface is an instance attribute, not a class attribute."""

    def __init__(self, base):
        self.__sycl_usm_array_interface__ = base.__sycl_usm_array_interface__
        self._base = base  # keeps the allocation alive


@pytest.fixture(autouse=True)
def _needs_cpu(cpu_device):
    """Every test here expects opencl:cpu:0 to be visible."""


# --------------------------------------------------------------------------------------------
# usm_array: accepted inputs and their normalisation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_dtype_spelling_gives_the_same_type(name):
    numba_type = SCALARS[name][0]
    built = [dk.usm_array(spelling, 1) for spelling in spellings(name)]
    for t in built:
        assert t == built[0]
        assert hash(t) == hash(built[0])
        assert t.dtype == numba_type
        assert isinstance(t.dtype, nbtypes.Type)
        assert t.dtype == getattr(nbtypes, "boolean" if name == "bool" else name)


def test_intp_and_uintp_are_the_64_bit_integers():
    assert dk.usm_array(dk.intp, 2) == dk.usm_array("int64", 2)
    assert dk.usm_array(dk.uintp, 2) == dk.usm_array(np.uint64, 2)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("ndim", range(9))
def test_ndim_zero_to_eight_and_every_layout(ndim, layout):
    t = dk.usm_array(dk.float32, ndim, layout)
    assert t.ndim == ndim and type(t.ndim) is int
    assert t.layout == layout and type(t.layout) is str
    assert str(t) == f"usm_array(float32, {ndim}d, {layout}, device, {CPU})"


@pytest.mark.parametrize("ndim", [np.int8(3), np.int64(3), np.uint16(3)])
def test_numpy_integer_ndim_normalises_to_int(ndim):
    t = dk.usm_array("f4", ndim)
    assert t.ndim == 3 and type(t.ndim) is int
    assert t == dk.usm_array("f4", 3)


@pytest.mark.parametrize("usm_type", USM_TYPES)
def test_usm_types(usm_type):
    t = dk.usm_array(dk.int32, 2, "F", usm_type)
    assert t.usm_type == usm_type and type(t.usm_type) is str
    assert str(t) == f"usm_array(int32, 2d, F, {usm_type}, {CPU})"


def test_defaults():
    t = dk.usm_array(dk.float64, 3)
    assert (t.layout, t.usm_type, t.device) == ("C", "device", CPU)


@pytest.mark.parametrize("device", device_spellings(), ids=param_id)
def test_every_device_spelling_normalises_to_the_full_filter_string(device, cpu_device):
    t = dk.usm_array(dk.float32, 1, device=device)
    assert t.device == CPU and type(t.device) is str
    assert isinstance(t.sycl_device, dpctl.SyclDevice)
    assert t.sycl_device.filter_string == CPU
    assert t.sycl_device == cpu_device
    assert t == dk.usm_array(dk.float32, 1)


def test_keyword_arguments_as_in_the_contract():
    t = dk.usm_array(dtype=dk.float32, ndim=1, layout="C", usm_type="device", device="opencl:cpu")
    assert (t.dtype, t.ndim, t.layout, t.usm_type, t.device) == (dk.float32, 1, "C", "device", CPU)


def test_is_a_numba_array_type():
    t = dk.usm_array(dk.float32, 2, "F", "shared")
    assert isinstance(t, numba.types.Array)
    assert issubclass(type(t), numba.types.Array)
    assert t.dtype == numba.float32 and t.ndim == 2 and t.layout == "F"


def test_str_and_repr_show_every_field():
    t = dk.usm_array(dk.float32, 1)
    assert str(t) == "usm_array(float32, 1d, C, device, opencl:cpu:0)"
    assert repr(t) == "usm_array(float32, 1d, C, device, opencl:cpu:0)"
    t = dk.usm_array("c16", 0, "A", "host", "cpu")
    assert str(t) == repr(t) == "usm_array(complex128, 0d, A, host, opencl:cpu:0)"


@pytest.mark.parametrize("name", NAMES)
def test_str_names_the_dtype(name):
    t = dk.usm_array(name, 2, "A", "shared")
    assert str(t) == repr(t) == f"usm_array({t.dtype}, 2d, A, shared, {CPU})"


# --------------------------------------------------------------------------------------------
# equality and hashing
# --------------------------------------------------------------------------------------------


def test_contract_equality_example():
    a = dk.usm_array(dk.float32, 1, device="cpu")
    b = dk.usm_array("f4", 1, device="opencl:cpu:0")
    assert a == b
    assert (a != b) is False
    assert hash(a) == hash(b)
    assert len({a, b}) == 1
    assert {a: 1}[b] == 1


@pytest.mark.parametrize(
    "other",
    [
        dict(dtype="f8"),
        dict(ndim=2),
        dict(layout="F"),
        dict(layout="A"),
        dict(usm_type="shared"),
        dict(usm_type="host"),
    ],
    ids=param_id,
)
def test_types_differing_in_one_field_are_unequal(other):
    base = dict(dtype="f4", ndim=1, layout="C", usm_type="device", device="cpu")
    a = dk.usm_array(**base)
    b = dk.usm_array(**{**base, **other})
    assert a != b
    assert (a == b) is False
    assert len({a, b}) == 2


def test_types_differing_only_in_device_are_unequal():
    # Only one device exists here, so build the other type directly with another device name.
    a = dk.usm_array("f4", 1)
    b = USMArrayType(dk.float32, 1, "C", "device", "level_zero:gpu:0")
    assert a != b
    assert b.device == "level_zero:gpu:0"
    assert str(b) == "usm_array(float32, 1d, C, device, level_zero:gpu:0)"


def test_not_equal_to_a_plain_numba_array():
    t = dk.usm_array(dk.float32, 1, "C")
    assert t != numba.types.Array(numba.float32, 1, "C")
    assert numba.types.Array(numba.float32, 1, "C") != t


# --------------------------------------------------------------------------------------------
# rejected inputs
# --------------------------------------------------------------------------------------------

BAD_DTYPES = [
    None,
    object(),
    object,
    1.5,
    4,
    [],
    "bogus",
    "",
    "f2",  # float16: no kernel dtype
    np.float16,
    "O",
    "U8",
    "M8[s]",
    ">f4",  # non-native byte order
    np.dtype(">i8"),
    "f4,f4",
    "(2,)f4",
    ",",  # NumPy's comma-string parser: must not leak a SyntaxError
    "(,",
    "f4,(2",
    nbtypes.void,
    nbtypes.Array(nbtypes.float32, 1, "C"),
    np.zeros(3, dtype="f4"),  # an array, not a dtype
]


@pytest.mark.parametrize("dtype", BAD_DTYPES, ids=param_id)
def test_bad_dtype_raises_type_or_value_error_naming_dtype(dtype):
    with pytest.raises((TypeError, ValueError)) as info:
        dk.usm_array(dtype, 1)
    assert not isinstance(info.value, dk.DeviceNotFoundError)
    message = str(info.value)
    assert "dtype" in message
    assert "float32" in message  # the accepted values are named


@pytest.mark.parametrize("ndim", [-1, 9, 100, 2**70, -(2**70)])
def test_ndim_out_of_range(ndim):
    with pytest.raises((TypeError, ValueError)) as info:
        dk.usm_array("f4", ndim)
    assert "ndim" in str(info.value) and "8" in str(info.value)


@pytest.mark.parametrize("ndim", [None, 1.0, 2.5, "1", True, False, [1], (1,), np.float64(1)])
def test_ndim_not_an_int(ndim):
    with pytest.raises((TypeError, ValueError)) as info:
        dk.usm_array("f4", ndim)
    assert "ndim" in str(info.value)


@pytest.mark.parametrize("layout", ["c", "f", "K", "", "CF", None, 1, ["C"], b"C"], ids=param_id)
def test_bad_layout(layout):
    with pytest.raises((TypeError, ValueError)) as info:
        dk.usm_array("f4", 1, layout)
    message = str(info.value)
    assert "layout" in message
    assert all(f"{x}" in message for x in LAYOUTS)


@pytest.mark.parametrize(
    "usm_type", ["Device", "", "usm", "global", None, 0, b"device"], ids=param_id
)
def test_bad_usm_type(usm_type):
    with pytest.raises((TypeError, ValueError)) as info:
        dk.usm_array("f4", 1, "C", usm_type)
    message = str(info.value)
    assert "usm_type" in message
    assert all(x in message for x in USM_TYPES)


@pytest.mark.parametrize("device", [1, 0, 1.5, object(), b"cpu", ["cpu"], True], ids=param_id)
def test_device_of_wrong_type(device):
    with pytest.raises((TypeError, ValueError)) as info:
        dk.usm_array("f4", 1, device=device)
    assert "device" in str(info.value)


@pytest.mark.parametrize(
    "device", ["level_zero:gpu:0", "opencl:gpu", "cuda:gpu:0", "opencl:cpu:7", "bogus", "", "gpu"]
)
def test_unknown_or_absent_device_raises_device_not_found(device):
    with pytest.raises(dk.DeviceNotFoundError) as info:
        dk.usm_array("f4", 1, device=device)
    assert isinstance(info.value, ValueError)
    assert "device" in str(info.value).lower()


# --------------------------------------------------------------------------------------------
# errors (API.md §4) and re-exported scalar types
# --------------------------------------------------------------------------------------------


def test_error_classes():
    assert issubclass(dk.KernelSignatureError, TypeError)
    assert issubclass(dk.ExecutionQueueError, ValueError)
    assert issubclass(dk.DeviceNotFoundError, ValueError)
    assert issubclass(dk.InvalidRangeError, ValueError)
    assert issubclass(dk.InvalidRangeError, TypeError)
    assert issubclass(dk.KernelCompileError, Exception)
    assert issubclass(dk.KernelBoundsError, Exception)
    for name in (
        "KernelSignatureError",
        "KernelCompileError",
        "InvalidRangeError",
        "ExecutionQueueError",
        "DeviceNotFoundError",
        "KernelBoundsError",
    ):
        assert getattr(dk, name) is getattr(dk_errors, name)


def test_scalar_types_are_reexported():
    names = ["void", "boolean", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"]
    names += ["uint64", "float32", "float64", "complex64", "complex128", "intp", "uintp"]
    for name in names:
        assert getattr(dk, name) == getattr(nbtypes, name), name
        assert getattr(dk.types, name) is getattr(dk, name)
    assert dk.types.usm_array is dk.usm_array and dk.types.typeof is dk.typeof


def test_void_builds_a_signature():
    t = dk.usm_array(dk.float32, 1, "C", "device", "opencl:cpu")
    sig = dk.void(t, t, dk.int64)
    assert sig.return_type == dk.void
    assert sig.args == (t, t, dk.int64)
    assert dk.void(t, t, dk.int64) == sig
    assert dk.void(t, t) != sig


# --------------------------------------------------------------------------------------------
# typeof: USM arrays
# --------------------------------------------------------------------------------------------

SHAPE = (3, 4, 5, 2)


def _make_views(name: str, ndim: int, usm_type: str):
    """(kind, dpnp view, NumPy view of the same shape and strides) for C, F, strided, reversed."""
    shape = SHAPE[:ndim]
    views = []
    for kind in ("C", "F", "strided", "reversed"):
        order = "F" if kind == "F" else "C"
        x = dpnp.zeros(shape, dtype=name, order=order, device="opencl:cpu", usm_type=usm_type)
        y = np.zeros(shape, dtype=name, order=order)
        if kind == "strided" and ndim:
            x, y = x[..., ::2], y[..., ::2]
        elif kind == "reversed" and ndim:
            x, y = x[::-1], y[::-1]
        views.append((kind, x, y))
    return views


@pytest.mark.parametrize("usm_type", USM_TYPES)
@pytest.mark.parametrize("name", NAMES)
def test_typeof_dpnp_usm_ndarray_and_foreign_arrays(name, usm_type):
    for ndim in range(5):
        for kind, x, y in _make_views(name, ndim, usm_type):
            layout = expected_layout(y)
            if ndim >= 2 and kind in "CF":
                assert layout == kind  # the oracle itself: sanity
            if ndim >= 1 and kind == "strided":
                assert layout == "A"
            expected = dk.usm_array(name, ndim, layout, usm_type, CPU)
            where = (name, usm_type, ndim, kind)
            assert dk.typeof(x) == expected, where
            assert dk.typeof(x.get_array()) == expected, where
            assert dk.typeof(ForeignArray(x)) == expected, where
            assert dk.typeof(ForeignArray(x.get_array())) == expected, where
            assert dk.typeof(InstanceInterface(x)) == expected, where
            assert numba.typeof(x) == expected, where
            assert numba.typeof(x.get_array()) == expected, where
            t = dk.typeof(x)
            assert isinstance(t, numba.types.Array)
            assert t.device == CPU and t.usm_type == usm_type and t.ndim == ndim


@pytest.mark.parametrize(
    "shape, index",
    [
        ((1, 5), ()),
        ((5, 1), ()),
        ((1, 1, 1), ()),
        ((0, 3), ()),
        ((0, 3), (slice(None), slice(None, None, 2))),  # zero-size: contiguous whatever strides
        ((3, 4), (slice(None), slice(0, 1))),  # (3, 1) but stride 4: neither
        ((3, 4), (slice(0, 1), slice(None))),  # (1, 4): both
        ((6,), (slice(None, None, 3),)),
        ((6,), (slice(2, 3),)),  # size 1 at an offset: both
        ((), ()),
    ],
    ids=param_id,
)
def test_typeof_degenerate_shapes_follow_numpy_contiguity(shape, index):
    x = dpnp.arange(math.prod(shape), dtype="f4", device="opencl:cpu").reshape(shape)[index]
    y = np.arange(math.prod(shape), dtype="f4").reshape(shape)[index]
    assert x.shape == y.shape
    t = dk.typeof(x)
    assert t.layout == expected_layout(y)
    assert dk.typeof(ForeignArray(x)).layout == expected_layout(y)


@st.composite
def array_views(draw):
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    order = draw(st.sampled_from("CF"))
    index = tuple(
        slice(draw(st.integers(0, 2)), None, draw(st.sampled_from([1, 2, -1, -2])))
        for _ in range(ndim)
    )
    axes = tuple(draw(st.permutations(range(ndim))))
    name = draw(st.sampled_from(NAMES))
    usm_type = draw(st.sampled_from(USM_TYPES))
    return shape, order, index, axes, name, usm_type


@given(array_views())
def test_typeof_layout_matches_numpy_flags_for_random_views(params):
    shape, order, index, axes, name, usm_type = params
    x = dpnp.zeros(shape, dtype=name, order=order, device="opencl:cpu", usm_type=usm_type)
    y = np.zeros(shape, dtype=name, order=order)
    x, y = dpnp.transpose(x[index], axes), np.transpose(y[index], axes)
    assert x.shape == y.shape
    expected = dk.usm_array(name, len(shape), expected_layout(y), usm_type, CPU)
    assert dk.typeof(x) == expected
    assert dk.typeof(ForeignArray(x)) == expected
    spec = array_spec_of(x)
    assert spec.layout == expected.layout
    assert ("C" in spec.contiguity) == y.flags.c_contiguous
    assert ("F" in spec.contiguity) == y.flags.f_contiguous


def test_read_usm_array_of_non_arrays_is_none():
    for obj in (1, 1.0, None, [1], np.zeros(3), "x"):
        assert read_usm_array(obj) is None
        assert array_spec_of(obj) is None


# --------------------------------------------------------------------------------------------
# typeof: scalars and rejected objects
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (1, dk.int64),
        (0, dk.int64),
        (-(2**40), dk.int64),
        (1.0, dk.float64),
        (-0.0, dk.float64),
        (math.inf, dk.float64),
        (True, dk.boolean),
        (False, dk.boolean),
        (np.float32(1), dk.float32),
        (np.bool_(True), dk.boolean),
    ],
    ids=param_id,
)
def test_typeof_scalars(value, expected):
    assert dk.typeof(value) == expected


@pytest.mark.parametrize("name", NAMES)
def test_typeof_numpy_scalar_is_its_own_type(name):
    numba_type, np_class, _ = SCALARS[name]
    assert dk.typeof(np_class(1)) == numba_type


@pytest.mark.parametrize(
    "obj",
    [
        np.zeros(3, dtype="f4"),
        np.zeros((2, 2)),
        np.zeros(()),
        np.ma.masked_array([1.0, 2.0]),  # NumPy subclasses are NumPy arrays too
        np.zeros(4).view(type("MyArray", (np.ndarray,), {})),
        [1.0, 2.0],
        [],
    ],
    ids=lambda o: type(o).__name__,
)
def test_typeof_numpy_array_or_list_says_use_dpnp_asarray(obj):
    with pytest.raises(TypeError) as info:
        dk.typeof(obj)
    assert "dpnp.asarray" in str(info.value)


@pytest.mark.parametrize(
    "obj", [None, "abc", b"abc", object(), {}, np.float16(1), np.datetime64(1, "s")], ids=param_id
)
def test_typeof_other_objects_raise_type_error(obj):
    with pytest.raises(TypeError):
        dk.typeof(obj)


# --------------------------------------------------------------------------------------------
# ArraySpec matching (API.md §2: "layout equal or the signature's layout A")
# --------------------------------------------------------------------------------------------


def _param(layout="C", dtype="float32", ndim=2, usm_type="device", device=CPU) -> ArraySpec:
    return ArraySpec(dtype, ndim, layout, usm_type, device)


def _arg(kind: str, shape=(3, 4), dtype="f4", usm_type="device"):
    x = dpnp.zeros(
        shape,
        dtype=dtype,
        order="F" if kind == "F" else "C",
        device="opencl:cpu",
        usm_type=usm_type,
    )
    if kind == "A":
        x = x[..., ::2]
    return array_spec_of(x)


@pytest.mark.parametrize(
    "kind, shape, matches",
    [
        ("C", (3, 4), "CA"),
        ("F", (3, 4), "FA"),
        ("A", (3, 4), "A"),
        ("C", (12,), "CFA"),  # 1-d contiguous: C and F at once
        ("C", (1, 4), "CFA"),
        ("C", (4, 1), "CFA"),
        ("F", (1, 4), "CFA"),
        ("C", (0, 4), "CFA"),
    ],
)
def test_array_spec_layout_rule(kind, shape, matches):
    arg = _arg(kind, shape)
    for layout in LAYOUTS:
        param = _param(layout, ndim=len(shape))
        expected = None if layout in matches else "layout"
        assert param.mismatch(arg) == expected, (kind, shape, layout)


def test_array_spec_of_agrees_with_typeof():
    for kind in "CFA":
        x = dpnp.zeros((3, 4), dtype="i4", order="F" if kind == "F" else "C", device="opencl:cpu")
        if kind == "A":
            x = x[:, ::2]
        spec = array_spec_of(x)
        t = dk.typeof(x)
        assert (spec.dtype, spec.ndim, spec.layout, spec.usm_type, spec.device) == (
            "int32",
            2,
            t.layout,
            "device",
            CPU,
        )
        assert spec.describe() == str(t)


@pytest.mark.parametrize(
    "param, field",
    [
        (_param(dtype="float64"), "dtype"),
        (_param(ndim=3), "ndim"),
        (_param(usm_type="shared"), "usm_type"),
        (_param(device="level_zero:gpu:0"), "device"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_array_spec_names_the_field_that_differs(param, field):
    assert _param().mismatch(_arg("C")) is None
    assert param.mismatch(_arg("C")) == field


def test_array_spec_usm_types():
    for usm_type in USM_TYPES:
        arg = _arg("C", usm_type=usm_type)
        for declared in USM_TYPES:
            expected = None if declared == usm_type else "usm_type"
            assert _param(usm_type=declared).mismatch(arg) == expected


@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=4),
    order=st.sampled_from("CF"),
    steps=st.lists(st.sampled_from([1, 2, -1, 3]), min_size=4, max_size=4),
    itemsize=st.sampled_from([1, 2, 4, 8, 16]),
)
def test_contiguity_agrees_with_numpy(shape, order, steps, itemsize):
    y = np.zeros(shape, dtype=f"V{itemsize}", order=order)
    y = y[tuple(slice(None, None, s) for s in steps[: len(shape)])]
    got = contiguity(y.shape, y.strides, itemsize)
    assert ("C" in got) == y.flags.c_contiguous
    assert ("F" in got) == y.flags.f_contiguous


# --------------------------------------------------------------------------------------------
# Scalar matching (API.md §2)
# --------------------------------------------------------------------------------------------


def _int_range(name):
    info = np.iinfo(name)
    return int(info.min), int(info.max)


INT_BOUNDARIES = [b + d for name in INT_NAMES for b in _int_range(name) for d in (-1, 0, 1)]


@given(st.one_of(st.integers(-(2**70), 2**70), st.sampled_from(INT_BOUNDARIES)))
def test_python_int_matches_integer_types_holding_it_and_float_types(value):
    for name in INT_NAMES:
        low, high = _int_range(name)
        assert scalar_matches(name, value) == (low <= value <= high), (name, value)
    assert scalar_matches("float32", value)
    assert scalar_matches("float64", value)
    assert not scalar_matches("bool", value)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_python_float_matches_float32_and_float64_only(value):
    for name in NAMES:
        assert scalar_matches(name, value) == (name in ("float32", "float64")), name


@pytest.mark.parametrize("value", [True, False])
def test_python_bool_matches_only_bool(value):
    for name in NAMES:
        assert scalar_matches(name, value) == (name == "bool"), name


def _component(dtype: np.dtype) -> np.dtype:
    """The real type a value of `dtype` is made of (float32 for complex64)."""
    return np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype


def _lossless_for_every_value(source: str, target: str) -> bool:
    """Whether every value of NumPy type `source` converts to `target` exactly."""
    s, t = np.dtype(source), np.dtype(target)
    if s == t:
        return True
    if t.kind == "b" or s.kind == "b":
        return False
    if s.kind in "iu":
        low, high = _int_range(source)
        if t.kind in "iu":
            t_low, t_high = _int_range(target)
            return t_low <= low and high <= t_high
        exact = 2 ** (np.finfo(_component(t)).nmant + 1)  # every int up to this is exact
        return -exact <= low and high <= exact
    if s.kind == "f":
        return t.kind in "fc" and _component(t).itemsize >= s.itemsize
    return t.kind == "c" and t.itemsize >= s.itemsize  # complex


def _exact_parts(value: np.generic) -> tuple[Fraction, Fraction]:
    """The exact real and imaginary parts of a NumPy scalar."""
    v = value.item()
    if isinstance(v, complex):
        return Fraction(v.real), Fraction(v.imag)
    return Fraction(v), Fraction(0)


def _value_is_exact_in(value: np.generic, target: str) -> bool:
    """Whether this particular value survives a conversion to `target` unchanged."""
    re, im = _exact_parts(value)
    t = np.dtype(target)
    if t.kind == "b":
        return im == 0 and re in (0, 1)
    if t.kind in "iu":
        low, high = _int_range(target)
        return im == 0 and re.denominator == 1 and low <= re <= high
    if t.kind == "f" and im != 0:
        return False
    component = _component(t).type

    def fits(q: Fraction) -> bool:
        with np.errstate(all="ignore"):
            f = float(component(float(q)))
        return math.isfinite(f) and Fraction(f) == q

    return fits(re) and fits(im)


def _witnesses(name: str) -> list[np.generic]:
    """Values of type `name` that each lossy conversion visibly damages."""
    kind = np.dtype(name).kind
    cls = SCALARS[name][1]
    if kind in "iu":
        low, high = _int_range(name)
        return [cls(low), cls(high), cls(1)]
    if kind == "f":
        return [cls(0.1), cls(0.5), cls(np.finfo(name).max), cls(3.0)]
    return [cls(0.1 + 0.1j), cls(0.5 + 0.5j), cls(0.1)]


@pytest.mark.parametrize("source", [n for n in NAMES if n != "bool"])
def test_numpy_scalar_matches_its_own_type_and_lossless_conversions(source):
    for value in _witnesses(source):
        assert scalar_matches(source, value), (source, value)
        for target in NAMES:
            got = scalar_matches(target, value)
            if _lossless_for_every_value(source, target):
                assert got, f"{source} {value!r} should match {target}: no conversion loss"
            elif not _value_is_exact_in(value, target):
                assert not got, f"{source} {value!r} must not match {target}: it loses the value"


def test_numpy_float64_is_matched_as_a_numpy_scalar_not_as_a_python_float():
    # np.float64 subclasses Python float, but §2's NumPy-scalar rule applies to it.
    value = np.float64(0.1)
    assert not scalar_matches("float32", value)  # lossy: 0.1 is not a float32
    assert scalar_matches("float64", value)
    assert scalar_matches("complex128", value)  # lossless


def test_numpy_bool_matches_bool():
    assert scalar_matches("bool", np.bool_(True))
    assert scalar_matches("bool", np.bool_(False))


@pytest.mark.parametrize(
    "value",
    ["1", b"1", None, [1], (1,), np.float16(1), np.zeros(()), np.zeros(1), object()],
    ids=param_id,
)
def test_anything_else_mismatches_every_scalar_type(value):
    for name in NAMES:
        assert not scalar_matches(name, value), name


def test_explain_mismatch_names_kernel_parameter_position_and_field():
    a = dpnp.zeros(8, dtype="f8", device="opencl:cpu")
    arg_spec = array_spec_of(a)
    declared = (ArraySpec("float32", 1, "C", "device", CPU), "int64")
    text = explain_mismatch(
        "vecadd",
        ("src", "n"),
        [(declared, "(usm_array(float32, 1d, C, device, opencl:cpu:0), int64)")],
        (a, 5),
        (arg_spec, None),
    )
    assert "vecadd" in text
    assert "'src'" in text and "0" in text
    assert "dtype" in text
    assert str(dk.typeof(a)) in text  # what was given
    text = explain_mismatch(
        "vecadd",
        ("src", "n"),
        [(declared, "sig")],
        (dpnp.zeros(8, dtype="f4", device="opencl:cpu"), 1.5),
        (array_spec_of(dpnp.zeros(8, dtype="f4", device="opencl:cpu")), None),
    )
    assert "'n'" in text and "1" in text and "dtype" in text


# --------------------------------------------------------------------------------------------
# Hypothesis properties of usm_array
# --------------------------------------------------------------------------------------------

dtype_names = st.sampled_from(NAMES)
devices = st.sampled_from(range(len(device_spellings())))


@given(
    name=dtype_names,
    spelling_a=st.integers(0, 4),
    spelling_b=st.integers(0, 4),
    ndim=st.integers(0, 8),
    layout=st.sampled_from(LAYOUTS),
    usm_type=st.sampled_from(USM_TYPES),
    device_a=devices,
    device_b=devices,
)
def test_every_spelling_round_trips(
    name, spelling_a, spelling_b, ndim, layout, usm_type, device_a, device_b
):
    dev = device_spellings()
    a = dk.usm_array(spellings(name)[spelling_a], ndim, layout, usm_type, dev[device_a])
    b = dk.usm_array(
        dtype=spellings(name)[spelling_b],
        ndim=np.int64(ndim),
        layout=layout,
        usm_type=usm_type,
        device=dev[device_b],
    )
    assert a == b and hash(a) == hash(b)
    assert (a.dtype, a.ndim, a.layout, a.usm_type, a.device) == (
        SCALARS[name][0],
        ndim,
        layout,
        usm_type,
        CPU,
    )
    # Rebuilding from the normalised fields gives the same type again.
    assert dk.usm_array(a.dtype, a.ndim, a.layout, a.usm_type, a.device) == a
    assert dk.usm_array(a.dtype, a.ndim, a.layout, a.usm_type, a.sycl_device) == a
    assert str(a) == f"usm_array({a.dtype}, {ndim}d, {layout}, {usm_type}, {CPU})"


fields = st.tuples(
    dtype_names, st.integers(0, 8), st.sampled_from(LAYOUTS), st.sampled_from(USM_TYPES)
)


@given(fields, fields)
def test_equal_exactly_when_fields_equal_and_equal_hash(f, g):
    a, b = dk.usm_array(*f), dk.usm_array(*g)
    same = (np.dtype(f[0]), *f[1:]) == (np.dtype(g[0]), *g[1:])
    assert (a == b) == same
    assert (a != b) == (not same)
    if same:
        assert hash(a) == hash(b)


junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.complex_numbers(),
    st.text(max_size=12),
    st.binary(max_size=6),
    st.lists(st.integers(), max_size=3),
    st.tuples(st.integers(), st.integers()),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.sampled_from(
        [
            object(),
            object,
            type,
            np.ndarray,
            np.float16,
            nbtypes.void,
            nbtypes.pyobject,
            np.dtype("S4"),
            np.dtype(">f8"),
            np.zeros(2),
            ",",
            "(,",
            "f4,",
        ]
    ),
)


def _dtype_accepted(value: object) -> str | None:
    """The scalar name if `value` is one of §1's dtype spellings, else None (oracle: NumPy)."""
    if isinstance(value, nbtypes.Type):
        names = [n for n, spelled in SCALARS.items() if spelled[0] == value]
        return names[0] if names else None
    if not isinstance(value, (str, np.dtype, type)):
        return None
    try:
        dtype = np.dtype(value)
    except Exception:
        return None
    return dtype.name if dtype.name in SCALARS and dtype.byteorder != ">" else None


@given(position=st.integers(0, 4), value=junk)
@example(position=0, value=",")  # NumPy's dtype parser raises SyntaxError for this one
@example(position=1, value=-1)
@example(position=4, value="level_zero:gpu:0")
def test_junk_raises_only_type_or_value_error(position, value):
    args = ["f4", 1, "C", "device", None]
    args[position] = value
    name = ("dtype", "ndim", "layout", "usm_type", "device")[position]
    accepted = (
        _dtype_accepted(value) is not None,
        type(value) is int and 0 <= value <= 8,
        isinstance(value, str) and value in LAYOUTS,
        isinstance(value, str) and value in USM_TYPES,
        value is None,
    )[position]
    if accepted:
        t = dk.usm_array(*args)
        if position == 0:
            assert t.dtype == SCALARS[_dtype_accepted(value)][0]
        return
    if position == 4 and isinstance(value, str):
        # A filter string dpctl understands ("0", "cpu") is accepted; any other one is
        # DeviceNotFoundError.
        try:
            t = dk.usm_array(*args)
        except dk.DeviceNotFoundError:
            return
        assert t.device == CPU
        return
    with pytest.raises((TypeError, ValueError)) as info:
        dk.usm_array(*args)
    assert not isinstance(info.value, dk.DeviceNotFoundError)
    assert name in str(info.value)
