"""Integer arithmetic where Numba's rule differs from NumPy's: NumPy's wins in kernels.

Numba computes int64 `MIN // -1` (and divmod's quotient) as 0 to dodge the CPU's division
trap; NumPy wraps around to MIN. Division by zero already gives 0 and 0 as in NumPy, and
narrower integers compute in int64, where nothing overflows.
"""

from __future__ import annotations

import operator

from numba.core import cgutils, types
from numba.core.imputils import Registry
from numba.cpython import numbers

lowering_registry = Registry("dpex_kernels.arithmetic")

_MIN = types.int64.minval


def _wrapped_quotient(builder, x, y, quotient):
    """`quotient`, except MIN // -1, which is MIN (two's complement wrap-around)."""
    overflow = builder.and_(
        builder.icmp_signed("==", x, x.type(_MIN)), builder.icmp_signed("==", y, y.type(-1))
    )
    return builder.select(overflow, x.type(_MIN), quotient)


@lowering_registry.lower(operator.floordiv, types.int64, types.int64)
@lowering_registry.lower(operator.ifloordiv, types.int64, types.int64)
def _floordiv(context, builder, sig, args):
    quotient = numbers.int_floordiv_impl(context, builder, sig, args)
    return _wrapped_quotient(builder, *args, quotient)


@lowering_registry.lower(divmod, types.int64, types.int64)
def _divmod(context, builder, sig, args):
    pair = numbers.int_divmod_impl(context, builder, sig, args)
    quotient = _wrapped_quotient(builder, *args, builder.extract_value(pair, 0))
    return cgutils.pack_array(builder, (quotient, builder.extract_value(pair, 1)))
