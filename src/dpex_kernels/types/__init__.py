"""Kernel parameter types: usm_array, scalars, signatures, typeof and launch ranges.

Range, NdRange and ArraySpec need no Numba; the Numba types load on first use.
"""

from .._lazy import lazy_attributes
from .ranges import NdRange, Range
from .spec import ArraySpec

_SCALARS = [
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

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        **dict.fromkeys(_SCALARS, "numba.core.types"),
        "typeof": ".inference",
        "USMArrayType": ".usm_array_type",
        "usm_array": ".usm_array_type",
    },
)

__all__ = ["ArraySpec", "NdRange", "Range", "USMArrayType", "typeof", "usm_array", *_SCALARS]
