"""Integer arithmetic in kernels as NumPy's: wrap-around at the type's width, Python's floor
division and modulo with NumPy's edge cases.

Numba marks signed integer add, subtract and multiply `nsw` (no signed wrap), which lets LLVM
assume overflow never happens: `v = gid + 5; v *= -2147483647` twice became INT64_MAX for
every work-item, where NumPy and `numba.njit` wrap. Here they wrap (no flags), in kernels and
device functions alike.

Numba computes `x // y` and `x % y` in two stack slots behind three branches, and its
`MIN // -1` is 0 (to dodge the CPU's division trap) where NumPy wraps around to MIN. Here they
are computed in registers with selects: the same results as Numba's for every other input (a
zero divisor gives 0 and 0, as under NumPy's error model), NumPy's MIN for `MIN // -1`, and a
fraction of the IR for LLVM to optimise.
"""

from __future__ import annotations

import itertools
import operator

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import Registry

lowering_registry = Registry("dpex_kernels.arithmetic")

#: the argument types Numba's integer typing gives these operators (typing/builtins.py)
_MACHINE_INTS = (types.int64, types.uint64)


def _wrapping(operation: str):
    """Numba's integer add/sub/mul, without the `nsw` flag: two's complement wrap-around."""

    def implementation(context, builder, sig, args):
        x, y = (context.cast(builder, v, t, sig.return_type) for v, t in zip(args, sig.args))
        return getattr(builder, operation)(x, y)

    return implementation


#: operation -> the Python operators and the NumPy ufunc that compute it
_WRAPPING = {
    "add": ((operator.add, operator.iadd), np.add),
    "sub": ((operator.sub, operator.isub), np.subtract),
    "mul": ((operator.mul, operator.imul), np.multiply),
}
_WRAPPING_UFUNCS = {ufunc: _wrapping(op) for op, (_, ufunc) in _WRAPPING.items()}

for _x, _y in itertools.product(_MACHINE_INTS, repeat=2):
    for _operation, (_operators, _) in _WRAPPING.items():
        for _operator in _operators:
            lowering_registry.lower(_operator, _x, _y)(_wrapping(_operation))


def wrapping_ufunc_loops(ufunc, loops: dict) -> dict:
    """NumPy's ufunc loops for `ufunc` (Numba's ufunc_db), its signed integer add, subtract and
    multiply wrapping as everywhere else in kernels."""
    implementation = _WRAPPING_UFUNCS.get(ufunc)
    if implementation is None:
        return loops
    signed = "bhilq"  # NumPy's type characters of the signed integers
    return {
        key: implementation if key[0] in signed and key[1] == key[0] else loop
        for key, loop in loops.items()
    }


def _divmod(context, builder, sig, args) -> tuple:
    """(quotient, remainder) of Python's floor division of the arguments, in the result type."""
    ty = sig.return_type.dtype if isinstance(sig.return_type, types.UniTuple) else sig.return_type
    x = context.cast(builder, args[0], sig.args[0], ty)
    y = context.cast(builder, args[1], sig.args[1], ty)
    if isinstance(y, ir.Constant) and y.constant != 0 and not (ty.signed and y.constant == -1):
        return _floor_divmod(builder, ty, x, y)  # `x // 16`: no special case can arise
    zero, one = y.type(0), y.type(1)
    by_zero = builder.icmp_unsigned("==", y, zero)
    if not ty.signed:
        quotient, remainder = _floor_divmod(builder, ty, x, builder.select(by_zero, one, y))
        return builder.select(by_zero, zero, quotient), builder.select(by_zero, zero, remainder)
    minimum = y.type(ty.minval)
    overflow = builder.and_(
        builder.icmp_signed("==", x, minimum), builder.icmp_signed("==", y, y.type(-1))
    )
    special = builder.or_(by_zero, overflow)  # divisions LLVM leaves undefined
    quotient, remainder = _floor_divmod(builder, ty, x, builder.select(special, one, y))
    quotient = builder.select(overflow, minimum, builder.select(by_zero, zero, quotient))
    return quotient, builder.select(special, zero, remainder)


def _floor_divmod(builder, ty, x, divisor) -> tuple:
    """Floor division by a divisor that is neither 0 nor, for signed types, -1."""
    if not ty.signed:
        return builder.udiv(x, divisor), builder.urem(x, divisor)
    zero, one = divisor.type(0), divisor.type(1)
    quotient, remainder = builder.sdiv(x, divisor), builder.srem(x, divisor)
    # C rounds towards zero; the floor is one lower where the remainder's sign is not y's
    towards_floor = builder.and_(
        builder.icmp_signed("!=", remainder, zero),
        builder.icmp_signed("<", builder.xor(divisor, remainder), zero),
    )
    quotient = builder.select(towards_floor, builder.sub(quotient, one), quotient)
    remainder = builder.select(towards_floor, builder.add(remainder, divisor), remainder)
    return quotient, remainder


def _floordiv(context, builder, sig, args):
    return _divmod(context, builder, sig, args)[0]


def _mod(context, builder, sig, args):
    return _divmod(context, builder, sig, args)[1]


def _divmod_pair(context, builder, sig, args):
    return cgutils.pack_array(builder, _divmod(context, builder, sig, args))


for _x, _y in itertools.product(_MACHINE_INTS, repeat=2):
    for _function, _implementation in (
        (operator.floordiv, _floordiv),
        (operator.ifloordiv, _floordiv),
        (operator.mod, _mod),
        (operator.imod, _mod),
        (divmod, _divmod_pair),
    ):
        lowering_registry.lower(_function, _x, _y)(_implementation)
