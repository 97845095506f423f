"""Arrays as simulated kernels see them: every index checked, every access recorded.

A SimArray stands for a global array argument, a local or private array or a LocalAccessor; a
view of one shares its Memory. The Memory keeps, per element, the last plain write and the reads
and atomic updates since, each with its work-item, barrier epochs and line, so that an access
that conflicts with an earlier one no barrier orders is reported at once (races.py says what
conflicts). Integers narrower than 64 bits read as int64, as the device computes with them;
stores convert to the array's dtype with wrap-around, as the device's stores do.
"""

from __future__ import annotations

import operator
import sys

import numpy as np

from ..errors import KernelSignatureError
from . import races
from .scheduler import running

_WIDENED = {np.dtype(t) for t in ("int8", "int16", "int32", "uint8", "uint16", "uint32")}
_INT64_RANGE = range(-(2**63), 2**63)


class Memory:
    """One buffer of a launch (an argument, a local or private array) and its access records."""

    __slots__ = ("name", "space", "checker", "cells", "written", "writable", "root_shape")

    def __init__(self, name, space: str, checker, writable: bool = True, shape=()):
        self.name = name  # None for local and private arrays: found in the frame when needed
        self.space = space  # "global", "local" or "private"
        self.checker = checker
        self.writable = writable
        self.root_shape = shape
        checking = checker.mode != "off"
        self.cells = {} if checking and space != "private" else None
        self.written = set() if checking and space != "global" else None

    def read(self, array, flat: int, index, frame) -> None:
        if self.written is not None and flat not in self.written:
            self.checker.unwritten(array, index, frame)
        if self.cells is not None:
            races.read(self, array, flat, index, frame)

    def write(self, array, flat: int, index, frame, same_value) -> None:
        if self.cells is not None:
            races.write(self, array, flat, index, frame, same_value)
        if self.written is not None:
            self.written.add(flat)

    def atomic(self, array, flat: int, index, frame, sync: races.Sync) -> None:
        if sync.uses_old and self.written is not None and flat not in self.written:
            self.checker.unwritten(array, index, frame)
        if self.cells is not None:
            races.atomic(self, array, flat, index, frame, sync)
        if self.written is not None:
            self.written.add(flat)


class SimArray:
    """An array inside a simulated kernel: NumPy data behind checked, recorded indexing."""

    __slots__ = ("data", "memory", "origin", "steps", "shape", "ndim", "size", "dtype", "widen")

    def __init__(self, data: np.ndarray, memory: Memory, origin: int = 0, steps=None):
        self.data = data
        self.memory = memory
        self.origin = origin  # element offset of data[0, ...] in the memory's buffer
        itemsize = data.itemsize or 1
        self.steps = steps if steps is not None else tuple(s // itemsize for s in data.strides)
        self.shape = data.shape
        self.ndim = data.ndim
        self.size = data.size
        self.dtype = data.dtype
        self.widen = np.int64 if data.dtype in _WIDENED else None

    # --- what Numba's arrays offer in kernels --------------------------------------------

    @property
    def strides(self) -> tuple[int, ...]:
        return self.data.strides

    @property
    def itemsize(self) -> int:
        return self.data.itemsize

    @property
    def T(self) -> SimArray:
        return self._view_of(self.data.T)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        frame = sys._getframe(1)
        for i in range(len(self)):
            yield self._get(i, frame)

    def __repr__(self) -> str:
        return f"<simulated {self.memory.space} array {self.dtype} {self.shape}>"

    def __getitem__(self, index):
        return self._get(index, sys._getframe(1))

    def __setitem__(self, index, value) -> None:
        self._set(index, value, sys._getframe(1))

    # --- element access ------------------------------------------------------------------

    def _get(self, index, frame):
        located = self._locate(index, frame)
        if located is None:
            return self._view(index, frame)
        key, flat = located
        value = self.data[key]
        if self.memory.checker.mode != "off":
            self.memory.read(self, flat, key, frame)
        return value if self.widen is None else self.widen(value)

    def _set(self, index, value, frame) -> None:
        located = self._locate(index, frame)
        if located is None:
            view = self._view(index, frame)
            for element in np.ndindex(view.shape):
                view._set(element, value, frame)
            return
        key, flat = located
        memory = self.memory
        if not memory.writable:
            raise self._read_only(frame)
        value = self.convert(value)
        if memory.checker.mode != "off":
            memory.write(self, flat, key, frame, lambda: _same_bits(self.data[key], value))
        self.data[key] = value

    def locate(self, index, frame) -> tuple[tuple[int, ...], int]:
        """(NumPy index, element number) of one element, for atomics; bounds are checked."""
        located = self._locate(index, frame)
        if located is None:
            raise TypeError(
                f"an atomic needs the index of one element of {self.display_name(frame)} "
                f"(an int, or a tuple of {self.ndim} ints); got {index!r}"
            )
        return located

    def _locate(self, index, frame):
        """(key, element number) for an index of one element; None for a view's index."""
        if type(index) is not tuple:
            index = (index,)
        shape = self.shape
        if len(index) != len(shape):
            return None
        flat = self.origin
        key = []
        for axis, i in enumerate(index):
            try:
                i = operator.index(i)
            except TypeError:
                return None
            n = shape[axis]
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise self.memory.checker.out_of_bounds(self, index[axis], axis, n, frame)
            flat += i * self.steps[axis]
            key.append(i)
        return tuple(key), flat

    def _view(self, index, frame) -> SimArray:
        parts = index if type(index) is tuple else (index,)
        for part in parts:
            if isinstance(part, (list, np.ndarray, SimArray)):
                raise TypeError(
                    f"{self.display_name(frame)} indexed with an array: kernels index with "
                    f"integers and slices (an array index would allocate a copy)"
                )
        try:
            view = self.data[index]
        except IndexError as exc:
            raise self.memory.checker.out_of_bounds_text(self, str(exc), frame) from None
        return self._view_of(view)

    def _view_of(self, view: np.ndarray) -> SimArray:
        offset = view.__array_interface__["data"][0] - self.data.__array_interface__["data"][0]
        itemsize = self.data.itemsize or 1
        return SimArray(view, self.memory, self.origin + offset // itemsize)

    def convert(self, value):
        """`value` as the array's dtype, wrapped around where it does not fit (as stored)."""
        scalar = self.dtype.type
        if type(value) is scalar:
            return value
        if isinstance(value, np.generic):
            return value.astype(self.dtype)
        if isinstance(value, bool):
            return scalar(value)
        if isinstance(value, int):
            wide = np.int64(value) if value in _INT64_RANGE else np.uint64(value % 2**64)
            return wide.astype(self.dtype)
        if isinstance(value, (float, complex)):
            return np.asarray(value).astype(self.dtype)[()]
        raise TypeError(
            f"cannot store a {type(value).__name__} in a {self.dtype} array: kernels store "
            f"numbers only"
        )

    def display_name(self, frame) -> str:
        """The array as messages name it: its parameter or variable name."""
        name = self.memory.name
        if name is None and frame is not None:
            for variable, value in frame.f_locals.items():
                if value is self:
                    name = variable
                    break
        kind = {"global": "", "local": "local array ", "private": "private array "}
        return f"{kind[self.memory.space]}'{name or '?'}'"

    def _read_only(self, frame) -> KernelSignatureError:
        return KernelSignatureError(
            f"kernel '{self.memory.checker.kernel_name}' writes into argument "
            f"{self.display_name(frame)}, whose flags.writable is false "
            f"({races.location(frame)}); pass a writable array"
        )


def _same_bits(old, new) -> bool:
    return np.asarray(old).tobytes() == np.asarray(new).tobytes()


def current_item():
    """The work-item this thread runs (for the implementations of kernel calls)."""
    return running.item
