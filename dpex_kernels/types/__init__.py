"""Kernel parameter types: usm_array, scalars, signatures, typeof and launch ranges."""

from numba.core.types import (
    boolean,
    complex64,
    complex128,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    intp,
    uint8,
    uint16,
    uint32,
    uint64,
    uintp,
    void,
)

from .ranges import NdRange, Range
from .spec import ArraySpec
from .typeof import typeof
from .usm_array import USMArrayType, usm_array

__all__ = [
    "ArraySpec",
    "NdRange",
    "Range",
    "USMArrayType",
    "boolean",
    "complex64",
    "complex128",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "intp",
    "typeof",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintp",
    "usm_array",
    "void",
]
