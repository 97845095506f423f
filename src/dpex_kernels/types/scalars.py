"""The scalar types of kernel signatures: Numba's own, re-exported as dk.float32 & co."""

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

__all__ = [
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
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintp",
    "void",
]
