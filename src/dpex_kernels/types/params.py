"""How each kernel parameter flattens into kernel arguments: the one description of the layout.

A parameter becomes a short run of scalar kernel arguments, its *slots*:
  usm_array: data (global pointer to element 0), shape[ndim], and for layout "A" only
             strides[ndim] in bytes ("C" and "F" strides follow from the shape);
  bool:      one 8-bit value;
  complex:   its real and imaginary parts;
  item:      nothing (an item kernel's first parameter: the work-item's own ids);
  LocalAccessor: its work-group memory (sized at launch) and its shape[ndim];
  any other scalar: itself.
Lowering turns the slots into LLVM parameters (compiler/lowering.py), the compiled launcher into
packing steps (dispatcher/launch.py hands them to _launcher.c), and the benchmarks into the
argument lists of dpctl's submit_async. Numba-free.
"""

from __future__ import annotations

from typing import NamedTuple

from .spec import ArraySpec, LocalAccessorSpec

#: Slot fields; _launcher.c numbers them in this order.
DATA, SHAPE, STRIDE, VALUE, REAL, IMAG, LOCAL, LOCAL_SHAPE = range(8)

#: The kind of an array's data pointer; every other array slot is an "int64".
POINTER = "pointer"
#: The kind of a LocalAccessor's memory: a local pointer, its size given at launch.
LOCAL_MEMORY = "local"
#: The description of an item parameter (compiler/kernel_api/items.py): no kernel argument.
ITEM = "item"


class Slot(NamedTuple):
    """One kernel argument: which field of which parameter, and its machine kind."""

    field: int
    param: int
    axis: int
    kind: str  # POINTER, "bool", or a scalar dtype name ("int64", "float32", ...)


def param_slots(position: int, param: ArraySpec | LocalAccessorSpec | str) -> list[Slot]:
    """The slots of the parameter at `position`, described by an ArraySpec, a
    LocalAccessorSpec or a scalar name."""
    if isinstance(param, LocalAccessorSpec):
        slots = [Slot(LOCAL, position, 0, LOCAL_MEMORY)]
        return slots + [Slot(LOCAL_SHAPE, position, axis, "int64") for axis in range(param.ndim)]
    if isinstance(param, ArraySpec):
        slots = [Slot(DATA, position, 0, POINTER)]
        slots += [Slot(SHAPE, position, axis, "int64") for axis in range(param.ndim)]
        if param.layout == "A":
            slots += [Slot(STRIDE, position, axis, "int64") for axis in range(param.ndim)]
        return slots
    if param == ITEM:
        return []
    if param.startswith("complex"):
        part = "float32" if param == "complex64" else "float64"
        return [Slot(REAL, position, 0, part), Slot(IMAG, position, 0, part)]
    return [Slot(VALUE, position, 0, param)]


def kernel_slots(params: tuple[ArraySpec | str, ...]) -> tuple[Slot, ...]:
    """Every kernel argument of a signature, in order."""
    return tuple(slot for i, p in enumerate(params) for slot in param_slots(i, p))


__all__ = ["ITEM", "LOCAL_MEMORY", "POINTER", "Slot", "kernel_slots", "param_slots"]
