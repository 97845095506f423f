"""Reading USM arrays without Numba: their ArraySpec and queue, for typeof and matching.

The compiled launcher reads dpnp arrays and usm_ndarrays itself; this module serves the slow
path (the first call of a type tuple, error messages, typeof) and turns any other object with a
`__sycl_usm_array_interface__` into a usm_ndarray view the launcher can read.
"""

from __future__ import annotations

from typing import NamedTuple

import dpctl
import dpctl.memory as dpmem
import numpy as np

from .spec import SCALAR_NAMES, ArraySpec, layout_of

_CONTIGUITY = {0: "", 1: "C", 2: "F", 3: "CF"}
#: usm_ndarray's flag bits: C- and F-contiguous (the layout), writable.
_LAYOUT_FLAGS, _WRITABLE = 3, 4


class USMArgument(NamedTuple):
    """One USM array argument as matching sees it."""

    spec: ArraySpec
    queue: dpctl.SyclQueue


def _spec(
    dtype: np.dtype, ndim: int, contig: str, usm_type: str, queue, readonly: bool
) -> ArraySpec:
    if dtype.name not in SCALAR_NAMES or dtype.byteorder == ">":
        raise TypeError(
            f"USM arrays of dtype {dtype} cannot be passed to a kernel; supported dtypes are "
            f"{', '.join(SCALAR_NAMES)} in native byte order"
        )
    device = root_device_name(queue)
    return ArraySpec(dtype.name, ndim, layout_of(contig), usm_type, device, contig, readonly)


def root_device_name(queue) -> str:
    """The canonical name of the root device of `queue`'s device.

    Types name root devices: an array on a sub-device (`create_sub_devices`) has its root's
    usm_array type, so one definition serves the root and all its sub-devices; the launch
    still runs on the array's own queue, and the kernel is built for that queue's device.
    """
    device = queue.sycl_device
    while device.parent_device is not None:
        device = device.parent_device
    return device.filter_string


def _read_usm_ndarray(x) -> USMArgument:
    queue = x.sycl_queue
    flags = x.flags.flags
    contig = _CONTIGUITY[flags & _LAYOUT_FLAGS]
    readonly = not flags & _WRITABLE
    return USMArgument(_spec(x.dtype, x.ndim, contig, x.usm_type, queue, readonly), queue)


def _read_dpnp(x) -> USMArgument:
    return _read_usm_ndarray(x.get_array())


class MalformedInterfaceError(TypeError):
    """An object's __sycl_usm_array_interface__ is not what the protocol describes."""


def usm_view(obj):
    """A usm_ndarray viewing the memory of any object with __sycl_usm_array_interface__."""
    import dpnp.tensor

    try:
        iface = obj.__sycl_usm_array_interface__
        shape = tuple(int(n) for n in iface["shape"])
        dtype = np.dtype(iface["typestr"])
        strides = iface.get("strides")
        strides = None if strides is None else tuple(int(s) for s in strides)
        data = int(iface["data"][0])
        readonly = bool(iface["data"][1])
        offset = int(iface.get("offset", 0))
    except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
        raise MalformedInterfaceError(
            f"its __sycl_usm_array_interface__ is malformed ({type(exc).__name__}: {exc}); it "
            f"needs 'data' (pointer, readonly), 'shape', 'typestr' and optionally 'strides', "
            f"'offset' and 'syclobj'"
        ) from None
    try:
        memory = dpmem.as_usm_memory(obj)
    except Exception as exc:
        raise MalformedInterfaceError(
            f"dpctl cannot find the USM allocation its __sycl_usm_array_interface__ names: {exc}"
        ) from None
    # The interface's data pointer may lie inside the allocation as_usm_memory found.
    byte_offset = data - int(memory._pointer) + offset * dtype.itemsize
    if byte_offset % dtype.itemsize:
        raise MalformedInterfaceError(
            f"its data pointer is not aligned to its {dtype} elements within the allocation"
        )
    view = dpnp.tensor.usm_ndarray(
        shape, dtype=dtype, strides=strides, buffer=memory, offset=byte_offset // dtype.itemsize
    )
    if readonly:
        view.flags.writable = False
    return view


def _read_interface(x) -> USMArgument:
    """Any object with __sycl_usm_array_interface__ (third-party arrays included)."""
    return _read_usm_ndarray(usm_view(x))


def not_passable_message(obj: object) -> str:
    """Why `obj` cannot be a kernel argument, and what to pass instead."""
    kind = type(obj).__name__
    if isinstance(obj, np.ndarray):
        hint = "copy it to a SYCL device first: dpnp.asarray(x, device='opencl:cpu')"
    elif isinstance(obj, (list, tuple)):
        hint = "make it a USM array first: dpnp.asarray(x, device=...)"
    else:
        hint = (
            "pass a USM array (dpnp.ndarray, usm_ndarray) or a scalar (int, float, bool, complex)"
        )
    return f"a {kind} cannot be passed to a kernel; {hint}"


def _known_readers() -> dict[type, object]:
    readers: dict[type, object] = dict.fromkeys((int, float, bool, complex, type(None)))
    try:
        import dpnp
        import dpnp.tensor

        readers[dpnp.ndarray] = _read_dpnp
        readers[dpnp.tensor.usm_ndarray] = _read_usm_ndarray
    except ImportError:  # pragma: no cover - dpnp is a dependency, but the AOT runtime may lack it
        pass
    return readers


_READERS: dict[type, object] = _known_readers()


def is_native_array(obj: object) -> bool:
    """True for the array types the compiled launcher reads itself."""
    reader = _READERS.get(type(obj))
    return reader is _read_dpnp or reader is _read_usm_ndarray


def read_usm_array(obj: object) -> USMArgument | None:
    """The USMArgument of `obj`, or None when it exposes no __sycl_usm_array_interface__."""
    reader = _READERS.get(type(obj))
    if reader is None and type(obj) not in _READERS:
        has_interface = hasattr(type(obj), "__sycl_usm_array_interface__")
        reader = _read_interface if has_interface else None
        _READERS[type(obj)] = reader
    if reader is None:
        if hasattr(obj, "__sycl_usm_array_interface__"):  # set on the instance only
            return _read_interface(obj)
        return None
    return reader(obj)


def array_spec_of(obj: object) -> ArraySpec | None:
    """typeof for USM arrays, without Numba."""
    arg = read_usm_array(obj)
    return None if arg is None else arg.spec


__all__ = [
    "MalformedInterfaceError",
    "USMArgument",
    "array_spec_of",
    "is_native_array",
    "not_passable_message",
    "read_usm_array",
    "usm_view",
]
