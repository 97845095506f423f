"""Python float constants in kernels follow NumPy 2's rule: they take the other operand's type.

Numba types `1.5` as float64, so `a[i] * 1.5` on a float32 array computes in float64: slower,
and impossible on devices without fp64. Here a Python float constant has the type WeakFloat,
which converts to float32 as readily as to float64, so float32 code stays float32 while
`1.5 * 2.0` or `int_value * 1.5` still compute in float64.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import types
from numba.core.datamodel import models
from numba.core.typeconv import Conversion


class WeakFloat(types.Float):
    """The type of a Python float constant: float64, unless it meets a narrower float."""

    def __init__(self):
        # Named float64 so NumPy-based typing (as_dtype) reads it as one; the key tells apart.
        types.Number.__init__(self, "float64")
        self.bitwidth = 64

    @property
    def key(self):
        return "weak float64"

    def cast_python_value(self, value):
        return float(value)

    def can_convert_to(self, typingctx, other):
        if other == types.float64:
            return Conversion.exact
        if other == types.float32:
            return Conversion.promote
        if isinstance(other, types.Complex):
            return Conversion.safe
        if isinstance(other, (types.Integer, types.Boolean)):
            return Conversion.unsafe
        return None

    def unify(self, typingctx, other):
        if isinstance(other, (types.Float, types.Complex)):
            return types.float64 if isinstance(other, WeakFloat) else other
        if isinstance(other, types.Integer):
            return types.float64
        return None


weak_float = WeakFloat()


class WeakFloatModel(models.PrimitiveModel):
    """Held as a double until a cast narrows it."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.DoubleType())


def strengthen(argtypes) -> tuple:
    """The argument types with every WeakFloat made float64 (for typing that needs dtypes)."""
    return tuple(types.float64 if isinstance(t, WeakFloat) else t for t in argtypes)
