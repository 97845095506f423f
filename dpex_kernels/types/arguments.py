"""Reading USM arrays without Numba: their ArraySpec and what a launch passes to the kernel.

One reader per Python type, chosen once and cached, so the launch path never rebuilds the
`__sycl_usm_array_interface__` dict for the array types it knows (dpnp, usm_ndarray).
"""

from __future__ import annotations

import ctypes
import itertools
import weakref
from functools import partial
from typing import NamedTuple

import dpctl
import dpctl.memory as dpmem
import numpy as np

from .spec import SCALAR_NAMES, ArraySpec, contiguity, layout_of


class USMArgument(NamedTuple):
    """One USM array argument as a launch sees it."""

    #: (np.dtype, ndim, contiguity, usm_type, device name): what dispatch matches on.
    fingerprint: tuple
    #: A small int standing for the fingerprint, so launch-plan keys hash fast.
    key: int
    queue: dpctl.SyclQueue
    memory: object  # a dpctl.memory._Memory holding the allocation
    offset: int  # bytes from the allocation's start to element 0
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # bytes
    #: The kernel arguments this array flattens to for a "C"/"F" parameter, and for "A".
    packed: tuple
    packed_strided: tuple

    @property
    def spec(self) -> ArraySpec:
        return spec_of_fingerprint(self.fingerprint)


def spec_of_fingerprint(fingerprint: tuple) -> ArraySpec:
    """The ArraySpec a fingerprint stands for (off the hot path)."""
    dtype, ndim, contig, usm_type, device = fingerprint
    name = dtype.name
    if name not in SCALAR_NAMES or dtype.byteorder == ">":
        raise TypeError(
            f"USM arrays of dtype {dtype} cannot be passed to a kernel; supported dtypes are "
            f"{', '.join(SCALAR_NAMES)} in native byte order"
        )
    return ArraySpec(name, ndim, layout_of(contig), usm_type, device, contig)


class _DeviceNames:
    """queue -> canonical device name, remembering the last queue seen (the common case)."""

    def __init__(self) -> None:
        self.last = (None, "")  # one tuple, replaced whole: safe to read from any thread

    def __call__(self, queue: dpctl.SyclQueue) -> str:
        last_queue, name = self.last
        if queue is not last_queue:
            name = queue.sycl_device.filter_string
            self.last = (queue, name)
        return name


device_name_of_queue = _DeviceNames()

_CONTIGUITY = {0: "", 1: "C", 2: "F", 3: "CF"}


_fingerprint_keys: dict[tuple, int] = {}
_new_keys = itertools.count()  # next() is atomic: threads never share a key


def _argument(fingerprint, queue, memory, offset, shape, strides) -> USMArgument:
    key = _fingerprint_keys.get(fingerprint)
    if key is None:
        key = _fingerprint_keys.setdefault(fingerprint, next(_new_keys))
    packed = (memory, ctypes.c_longlong(offset), *map(ctypes.c_longlong, shape))
    packed_strided = packed + tuple(map(ctypes.c_longlong, strides))
    return USMArgument(
        fingerprint, key, queue, memory, offset, shape, strides, packed, packed_strided
    )


def _describe_usm_ndarray(x) -> USMArgument:
    itemsize = x.itemsize
    shape = x.shape
    queue = x.sycl_queue
    fingerprint = (
        x.dtype,
        len(shape),
        _CONTIGUITY[x.flags.flags & 3],
        x.usm_type,
        device_name_of_queue(queue),
    )
    strides = tuple(s * itemsize for s in x.strides)
    return _argument(fingerprint, queue, x.usm_data, x._element_offset * itemsize, shape, strides)


# id(usm_ndarray) -> (weak reference, shape, strides, USMArgument). An array's allocation,
# dtype, queue and offset never change; shape and strides can (in-place reshape), so they
# are compared on every hit. The weak reference's callback drops the entry with the array.
_described: dict[int, tuple] = {}


def _forget(key: int, _ref: object) -> None:
    _described.pop(key, None)


def _read_usm_ndarray(x) -> USMArgument:
    entry = _described.get(id(x))
    if entry is not None and entry[0]() is x and entry[1] == x.shape and entry[2] == x.strides:
        return entry[3]
    argument = _describe_usm_ndarray(x)
    _described[id(x)] = (weakref.ref(x, partial(_forget, id(x))), x.shape, x.strides, argument)
    return argument


def _read_dpnp(x) -> USMArgument:
    array = x.get_array()  # the memo check is repeated here: one call less per launch argument
    entry = _described.get(id(array))
    if (
        entry is not None
        and entry[0]() is array
        and entry[1] == array.shape
        and entry[2] == array.strides
    ):
        return entry[3]
    return _read_usm_ndarray(array)


def _read_interface(x) -> USMArgument:
    """Any object with __sycl_usm_array_interface__ (third-party arrays included)."""
    iface = x.__sycl_usm_array_interface__
    dtype = np.dtype(iface["typestr"])
    shape = tuple(int(n) for n in iface["shape"])
    memory = dpmem.as_usm_memory(x)
    itemsize = dtype.itemsize
    strides = iface.get("strides")
    if strides is None:
        strides, step = [], itemsize
        for n in reversed(shape):
            strides.append(step)
            step *= n
        strides = tuple(reversed(strides))
    else:
        strides = tuple(int(s) * itemsize for s in strides)
    queue = memory.sycl_queue
    offset = int(iface.get("offset", 0)) * itemsize
    # The interface's data pointer may lie inside the allocation that as_usm_memory found.
    offset += int(iface["data"][0]) - int(memory._pointer)
    fingerprint = (
        dtype,
        len(shape),
        contiguity(shape, strides, itemsize),
        memory.get_usm_type(),
        device_name_of_queue(queue),
    )
    return _argument(fingerprint, queue, memory, offset, shape, strides)


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


def reader_for(cls: type):
    """The reader for instances of `cls`, or None when they are not USM arrays."""
    reader = _READERS.get(cls)
    if reader is None and cls not in _READERS:
        reader = _read_interface if hasattr(cls, "__sycl_usm_array_interface__") else None
        _READERS[cls] = reader
    return reader


def read_usm_array(obj: object) -> USMArgument | None:
    """The USMArgument of `obj`, or None when it exposes no __sycl_usm_array_interface__."""
    reader = reader_for(type(obj))
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
    "USMArgument",
    "array_spec_of",
    "not_passable_message",
    "read_usm_array",
    "reader_for",
    "spec_of_fingerprint",
]
