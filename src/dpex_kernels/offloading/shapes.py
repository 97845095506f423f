"""Shape checks of array expressions, as NumPy's ValueError.

Numba's array analysis makes the arrays of an array expression one size per dimension at
run time with `assert_equiv` calls, an AssertionError where they differ. Offloaded code raises
NumPy's error class instead. Arrays of an expression's rank broadcast as NumPy's
(broadcasting.py); one of lower rank is broadcast by Numba along the trailing dimensions, which
takes no size-1 dimension of its run-time shape: the message says so.
"""

from __future__ import annotations

from numba.core import cgutils, ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.extending import intrinsic
from numba.core.typing.templates import signature
from numba.parfors import array_analysis

_HINT = (
    "; in an offloaded array expression an array of lower rank broadcasts along the trailing "
    "dimensions, but not a size-1 dimension of its own run-time shape (reshape it to the "
    "expression's rank: x.reshape((1, n)))"
)


def _sizes(context, builder, argtype, value) -> list:
    """The sizes a shape check compares: an array's shape, a tuple's items, an integer."""
    if isinstance(argtype, types.ArrayCompatible):
        return cgutils.unpack_tuple(
            builder, context.make_array(argtype)(context, builder, value).shape
        )
    if isinstance(argtype, types.BaseTuple):
        return cgutils.unpack_tuple(builder, value)
    return [value]


@intrinsic
def same_sizes(typingctx, *values):
    """(message, sizes...) -> None, a ValueError naming the message where the sizes differ.
    Typed as Numba types its assert_equiv (a tuple of the arguments, as it retypes one)."""
    if len(values) > 1:
        values = (types.StarArgTuple(values),)
    (arguments,) = values
    if not isinstance(arguments[0], types.StringLiteral):
        return None

    def codegen(context, builder, sig, args):
        (packed,) = args
        items = cgutils.unpack_tuple(builder, packed)
        argtypes = sig.args[0]
        message = argtypes[0].literal_value.replace("do not match", "differ") + _HINT
        for k in range(1, len(items) - 1):
            left = _sizes(context, builder, argtypes[k], items[k])
            right = _sizes(context, builder, argtypes[k + 1], items[k + 1])
            for m, n in zip(left, right):
                with builder.if_then(builder.icmp_unsigned("!=", m, n), likely=False):
                    context.call_conv.return_user_exc(builder, ValueError, (message,))
        return context.get_dummy_value()

    return signature(types.none, *values), codegen


@register_pass(mutates_CFG=False, analysis_only=False)
class ShapeChecks(FunctionPass):
    """Numba pass: array analysis' shape assertions as same_sizes (see the module docstring)."""

    _name = "dpex_offload_shape_checks"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        changed = False
        state.typingctx.refresh()
        fnty = state.typingctx.resolve_value_type(same_sizes)
        for block in _blocks(state.func_ir.blocks):
            for stmt in block.body:
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if isinstance(value, ir.Global) and value.value is array_analysis.assert_equiv:
                    stmt.value = ir.Global("same_sizes", same_sizes, value.loc)
                    state.typemap.pop(stmt.target.name)  # Numba's typemap refuses overwrites
                    state.typemap[stmt.target.name] = fnty
                    changed = True
        if changed:
            _retype_calls(state, fnty)
        return changed


def _blocks(blocks: dict):
    """Every block, those inside parfors too."""
    from numba.parfors.parfor import Parfor

    for block in blocks.values():
        yield block
        for stmt in block.body:
            if isinstance(stmt, Parfor):
                yield stmt.init_block
                yield from _blocks(stmt.loop_body)


def _retype_calls(state, fnty) -> None:
    """The calls of the replaced function typed as calls of same_sizes."""
    for block in _blocks(state.func_ir.blocks):
        for stmt in block.body:
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            call = isinstance(value, ir.Expr) and value.op == "call"
            if call and state.typemap.get(value.func.name) is fnty:
                argtypes = tuple(state.typemap[a.name] for a in value.args)
                state.calltypes.pop(value)  # Numba's calltypes refuse overwrites
                state.calltypes[value] = fnty.get_call_type(state.typingctx, argtypes, {})
