"""usm_array: the Numba type of a USM-backed array argument (docs/dispatch.md)."""

from __future__ import annotations

import contextlib
import contextvars
import functools

import numpy as np
from numba.core import types
from numba.core.datamodel import models, register_default

from .._runtime import canonical_device, default_device, device_by_canonical_name
from .spec import LAYOUTS, MAX_NDIM, SCALAR_NAMES, USM_TYPES, ArraySpec

_SCALARS = {
    name: types.boolean if name == "bool" else getattr(types, name) for name in SCALAR_NAMES
}


#: Whether Numba, typing code now, makes element-wise results of USM arrays (ufuncs and array
#: operators) USM arrays on the inputs' device: only while @dk.offload types a function, whose
#: element-wise expressions become kernels. Elsewhere (@njit code launching kernels) they stay
#: NumPy arrays that the host computes, as before.
_ELEMENTWISE_ON_DEVICE = contextvars.ContextVar("dpex_elementwise_on_device", default=False)

#: dpnp's rule for the USM type of a result: the most restrictive of the inputs'.
_USM_PRECEDENCE = ("device", "shared", "host")


@contextlib.contextmanager
def elementwise_on_device():
    """While Numba types code in this block, element-wise results of USM arrays are USM
    arrays (compute follows data; docs/offload.md)."""
    token = _ELEMENTWISE_ON_DEVICE.set(True)
    try:
        yield
    finally:
        _ELEMENTWISE_ON_DEVICE.reset(token)


def coerced_placement(argtypes) -> tuple[str, str] | None:
    """(usm_type, device) of a result computed from these types' USM arrays, by dpnp's rules:
    one device for all, the most restrictive usm_type; None where the devices differ or a
    NumPy array is mixed in."""
    arrays = [t for t in argtypes if isinstance(t, types.Array)]
    if not all(isinstance(t, USMArrayType) for t in arrays):
        return None
    devices = {t.device for t in arrays}
    if len(devices) != 1:
        return None
    usm_type = min((t.usm_type for t in arrays), key=_USM_PRECEDENCE.index)
    return usm_type, devices.pop()


@functools.cache
def _result_class(usm_type: str, device: str, chosen: types.Type | None) -> type:
    """What Numba's ufunc typing calls as `cls(dtype=, ndim=, layout=)` for a result type: a
    class (it checks issubclass) whose construction makes the USMArrayType with `usm_type`,
    `device` and the dtype `chosen` where given (its instances are plain USMArrayTypes, so
    data models find them)."""

    def make(cls, dtype, ndim, layout):
        return USMArrayType(chosen or dtype, ndim, layout, usm_type, device)

    return type(f"USMResult_{usm_type}", (USMArrayType,), {"__new__": make})


def _numpy_example(argtype):
    """A stand-in NumPy gives the dtype of: an array, or a scalar of Python's kind where Numba
    types Python's scalars so (NumPy 2 promotes those weakly), else a NumPy scalar."""
    if isinstance(argtype, types.Array):
        return np.ones(1, dtype=str(argtype.dtype))
    argtype = types.unliteral(argtype)
    weak = {types.boolean: True, types.int64: 1, types.float64: 1.0, types.complex128: 1j}
    if argtype in weak:
        return weak[argtype]
    return np.dtype(str(argtype)).type(1)


def numpy_result_dtype(ufunc, inputs) -> types.Type | None:
    """The dtype NumPy gives a one-output ufunc of these argument types (Numba picks a loop
    of its own for some: int32 / float32 in float32); None where it cannot tell."""
    if ufunc.nout != 1:
        return None
    try:
        with np.errstate(all="ignore"):
            result = ufunc(*(_numpy_example(t) for t in inputs))
        return _SCALARS.get(np.asarray(result).dtype.name)
    except (TypeError, ValueError):
        return None


def device_result_type(result: types.Type, inputs) -> types.Type | None:
    """The USM array type of an element-wise result Numba typed as a plain array, while
    offload types a function and the inputs are USM arrays on one device; None otherwise."""
    if not _ELEMENTWISE_ON_DEVICE.get() or type(result) is not types.Array:
        return None
    placement = coerced_placement(inputs)
    if placement is None or not any(isinstance(t, USMArrayType) for t in inputs):
        return None
    return USMArrayType(result.dtype, result.ndim, result.layout, *placement)


def mask_read_type(array: types.Type, index: types.Type) -> types.Type | None:
    """NumPy's type of `array[mask]`, a boolean USM mask of the USM array's own rank of 2 or
    more, while offload types a function: 1-d (Numba counts such a mask as integer arrays, a
    rank of 2n - 1); None otherwise."""
    if not _ELEMENTWISE_ON_DEVICE.get():
        return None
    if not (isinstance(array, USMArrayType) and isinstance(index, USMArrayType)):
        return None
    if not isinstance(index.dtype, types.Boolean) or not index.ndim == array.ndim > 1:
        return None
    return array.copy(ndim=1, layout="C", readonly=False)


class USMArrayType(types.Array):
    """The type of a USM array parameter: a Numba array type that records where data lives.

    ``dk.usm_array(...)`` and ``dk.typeof(array)`` make them. Inside a kernel it is a Numba
    array (indexing, slicing, ``.shape``, ``.strides``, ``.size``, ``.ndim``). Two types are
    equal, and hash equal, exactly when all their fields are; ``str()`` shows every field.

    Attributes
    ----------
    dtype : numba.types.Type
        The element type, a Numba scalar type.
    ndim : int
        The number of dimensions, 0 to 8.
    layout : str
        ``"C"``, ``"F"`` or ``"A"`` (any strides).
    usm_type : str
        ``"device"``, ``"shared"`` or ``"host"``.
    device : str
        The device's full filter string, e.g. ``"opencl:cpu:0"``.
    readonly : bool
        Whether the parameter takes read-only arrays too (the kernel cannot write it); shown
        as a ``readonly`` prefix. Numba's ``mutable`` is its negation.
    sycl_device : dpctl.SyclDevice
        The device `device` names.

    Examples
    --------
    >>> import dpex_kernels as dk
    >>> t = dk.usm_array(dk.float32, 2, layout="F", usm_type="shared")
    >>> t
    usm_array(float32, 2d, F, shared, ...)
    >>> t.dtype, t.ndim, t.layout, t.usm_type
    (float32, 2, 'F', 'shared')
    >>> t == dk.usm_array("f4", 2, "F", "shared", device=t.device)
    True
    """

    def __init__(self, dtype, ndim, layout, usm_type, device, readonly=False, aligned=True):
        self.usm_type = usm_type
        self.device = device
        name = f"usm_array({dtype}, {ndim}d, {layout}, {usm_type}, {device})"
        if readonly:
            name = "readonly " + name
        super().__init__(dtype, ndim, layout, readonly=readonly, name=name, aligned=aligned)
        self._hash = hash(self.key)

    def __hash__(self) -> int:
        """Numba hashes the type of every argument of every call of a compiled function."""
        return self._hash

    def __repr__(self) -> str:
        return self.name

    @property
    def key(self):
        return (*super().key, self.usm_type, self.device)

    @property
    def mangling_args(self):
        return self.__class__.__name__, [*super().mangling_args[1], self.usm_type, self.device]

    @property
    def is_internal(self) -> bool:
        """Numba makes array expressions (`a + b * c`, fused into one loop) only of its own
        types: a USM array is one of its arrays."""
        return True

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """Numba's hook for the type of an element-wise result (elementwise_on_device)."""
        if not _ELEMENTWISE_ON_DEVICE.get():
            return types.Array
        placement = coerced_placement(inputs)
        if placement is None:
            return NotImplemented
        return _result_class(*placement, numpy_result_dtype(ufunc, inputs))

    @property
    def sycl_device(self):
        """The ``dpctl.SyclDevice`` the type's `device` names.

        Returns
        -------
        dpctl.SyclDevice
            The device, e.g. to allocate arrays of this type on it.

        Examples
        --------
        >>> import dpctl
        >>> import dpex_kernels as dk
        >>> t = dk.usm_array(dk.float32, 1)
        >>> t.sycl_device == dpctl.SyclDevice(t.device)
        True
        """
        return device_by_canonical_name(self.device)

    @property
    def spec(self) -> ArraySpec:
        """The numba-free description the dispatcher and AOT runtime match against."""
        return ArraySpec(
            str(self.dtype),
            self.ndim,
            self.layout,
            self.usm_type,
            self.device,
            readonly=not self.mutable,
        )

    def copy(self, dtype=None, ndim=None, layout=None, readonly=None):
        """Views and slices inside kernels keep the allocation's usm_type and device."""
        return USMArrayType(
            self.dtype if dtype is None else dtype,
            self.ndim if ndim is None else ndim,
            self.layout if layout is None else layout,
            self.usm_type,
            self.device,
            readonly=(not self.mutable) if readonly is None else readonly,
            aligned=self.aligned,
        )

    def _same_elements(self, other) -> bool:
        """Same dtype, ndim and allocation: views differing only in layout or mutability."""
        return (
            isinstance(other, USMArrayType)
            and other.ndim == self.ndim
            and other.dtype == self.dtype
            and other.usm_type == self.usm_type
            and other.device == self.device
        )

    def unify(self, typingctx, other):
        if self._same_elements(other):
            layout = self.layout if other.layout == self.layout else "A"
            readonly = not (self.mutable and other.mutable)
            return self.copy(layout=layout, readonly=readonly)
        return None

    def can_convert_to(self, typingctx, other):
        from numba.core.typeconv import Conversion

        if (
            self._same_elements(other)
            and other.layout in ("A", self.layout)
            and (self.mutable or not other.mutable)
        ):
            return Conversion.safe
        return None


register_default(USMArrayType)(models.ArrayModel)


def scalar_type(dtype: object, parameter: str = "dtype") -> types.Type:
    """The Numba scalar type for any accepted spelling of a dtype."""
    if isinstance(dtype, types.Type):
        if dtype in _SCALARS.values():
            return dtype
        raise TypeError(
            f"{parameter} {dtype} is not a supported scalar type; use one of "
            f"{', '.join(SCALAR_NAMES)}"
        )
    try:
        if isinstance(dtype, (str, np.dtype, type)):
            name = np.dtype(dtype).name
        else:
            raise TypeError
    except Exception:  # NumPy raises TypeError, ValueError, even SyntaxError for odd strings
        raise TypeError(
            f"{parameter} must be a Numba scalar type (dk.float32), a NumPy dtype or scalar class, "
            f"or a dtype string ('f4', 'float32'); got {dtype!r}"
        ) from None
    if name not in _SCALARS or np.dtype(dtype).byteorder == ">":
        raise TypeError(
            f"{parameter} {dtype!r} is not a supported kernel dtype; use one of "
            f"{', '.join(SCALAR_NAMES)}"
        )
    return _SCALARS[name]


def usm_array(
    dtype: object,
    ndim: int,
    layout: str = "C",
    usm_type: str = "device",
    device: object = None,
    readonly: bool = False,
) -> USMArrayType:
    """Describe a USM array parameter, for the signatures of eager kernels.

    Every field is validated and normalised, so equal descriptions give equal types:
    ``usm_array(dk.float32, 1, device="cpu") == usm_array("f4", 1, device="opencl:cpu:0")``
    where that is the CPU device. An array matches the type when its dtype, ndim, usm_type
    and device are equal and its layout is equal, or the type's layout is ``"A"``.

    Parameters
    ----------
    dtype : Numba type, NumPy dtype or str
        The element type: ``dk.float32``, ``numpy.float32``, ``numpy.dtype("f4")`` or
        ``"float32"``: a bool, integer, float or complex type.
    ndim : int
        The number of dimensions, 0 to 8.
    layout : {"C", "F", "A"}, default "C"
        C-contiguous, Fortran-contiguous, or any strides.
    usm_type : {"device", "shared", "host"}, default "device"
        The USM allocation kind.
    device : str or dpctl.SyclDevice, optional
        A filter string (``"cpu"``, ``"opencl:cpu"``, ``"opencl:cpu:0"``) or a device; the
        default SYCL device when None.
    readonly : bool, default False
        Take read-only arrays (``flags.writable`` false) too; the kernel cannot write it.

    Returns
    -------
    USMArrayType
        The type, with the normalised fields as attributes.

    Raises
    ------
    TypeError
        If `dtype` is not a supported scalar type, `ndim` not an int, `device` not a string
        or device, or `readonly` not a bool.
    ValueError
        If `ndim`, `layout` or `usm_type` is out of range.
    DeviceNotFoundError
        If no SYCL device matches `device`.

    Examples
    --------
    >>> import dpex_kernels as dk
    >>> matrix = dk.usm_array("f4", 2, device="cpu")
    >>> str(matrix)
    'usm_array(float32, 2d, C, device, opencl:cpu:0)'
    >>> @dk.kernel(dk.void(matrix, dk.float32))
    ... def scale(a, factor):
    ...     a[dk.get_global_id(0), dk.get_global_id(1)] *= factor
    """
    numba_dtype = scalar_type(dtype)
    if isinstance(ndim, bool) or not isinstance(ndim, (int, np.integer)):
        raise TypeError(f"ndim must be an int from 0 to {MAX_NDIM}; got {ndim!r}")
    if not 0 <= ndim <= MAX_NDIM:
        raise ValueError(f"ndim must be from 0 to {MAX_NDIM}; got {ndim}")
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(map(repr, LAYOUTS))}; got {layout!r}")
    if not isinstance(usm_type, str) or usm_type not in USM_TYPES:
        raise ValueError(
            f"usm_type must be one of {', '.join(map(repr, USM_TYPES))}; got {usm_type!r}"
        )
    if not isinstance(readonly, bool):
        raise TypeError(f"readonly must be True or False; got {readonly!r}")
    device = canonical_device(device)
    return USMArrayType(numba_dtype, int(ndim), layout, usm_type, device, readonly=readonly)


def from_spec(spec: ArraySpec) -> USMArrayType:
    """The Numba type of an ArraySpec (dispatch of lazy kernels goes spec -> type)."""
    dtype = _SCALARS[spec.dtype]
    return USMArrayType(
        dtype, spec.ndim, spec.layout, spec.usm_type, spec.device, readonly=spec.readonly
    )


def param_of(argtype: types.Type) -> object:
    """The numba-free description of a parameter type (types/params.py): an array's or a
    LocalAccessor's `spec` (from_spec's inverse for arrays), the scalar's name otherwise."""
    spec = getattr(argtype, "spec", None)
    return spec if spec is not None else str(argtype)


def device_of(argtypes) -> str:
    """The one device a signature's arrays name (the default device without arrays)."""
    devices = {t.device for t in argtypes if isinstance(t, USMArrayType)}
    if len(devices) > 1:
        raise TypeError(
            f"all usm_array parameters of a kernel must name one device; got {sorted(devices)}"
        )
    return devices.pop() if devices else default_device().filter_string


def scalar_from_name(name: str) -> types.Type:
    """The Numba scalar type for a dtype name from spec.SCALAR_NAMES."""
    return _SCALARS[name]
