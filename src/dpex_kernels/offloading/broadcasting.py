"""Broadcasting of run-time size-1 dimensions in array expressions, as NumPy broadcasts.

Numba's parfors make the arrays of one rank in an array expression the same size in each
dimension (array analysis asserts it), so `(n, 1)` with `(1, m)` would be a shape error. Before
the parfor passes, this pass gives every array of the expression's rank, in an expression of 2
or more dimensions and 2 or more arrays, the expression's shape computed at run time with
NumPy's rules (`broadcast_shape`, NumPy's ValueError where they do not broadcast), as a view
with stride 0 along the dimensions it repeats (`broadcast_view`). The kernel of such an
expression is then built twice (ranges.py): for the views as they are and for C-contiguous
arrays, which a launch takes when no view repeats a dimension, so expressions without
broadcasting keep the contiguous kernel. Arrays of lower rank are left to Numba, which
broadcasts them along the trailing dimensions (one rank lower only: a 2-D array in a 3-D
expression is indexed with the 3-D index, a KernelCompileError).
"""

from __future__ import annotations

import numba
import numpy as np
from numba.core import cgutils, ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.extending import intrinsic
from numba.core.imputils import impl_ret_borrowed
from numba.core.ir_utils import mk_unique_var
from numba.core.typing.templates import signature
from numba.np.arrayobj import _broadcast_to_shape, make_array


@intrinsic
def _shapes(typingctx, arrays):
    """The tuple of the arrays' shapes."""
    shapes = types.Tuple([types.UniTuple(types.intp, a.ndim) for a in arrays])

    def codegen(context, builder, sig, args):
        items = cgutils.unpack_tuple(builder, args[0])
        made = [make_array(t)(context, builder, v).shape for t, v in zip(sig.args[0], items)]
        return context.make_tuple(builder, sig.return_type, made)

    return signature(shapes, arrays), codegen


@numba.njit(cache=False)
def broadcast_shape(*arrays):  # pragma: no cover (compiled)
    """The shape NumPy broadcasts the arrays to (NumPy's ValueError where it cannot)."""
    return np.broadcast_shapes(*_shapes(arrays))


@intrinsic
def broadcast_view(typingctx, array, shape):
    """`array` viewed with `shape` (stride 0 along the dimensions it repeats)."""
    result = array.copy(ndim=shape.count, layout="A")

    def codegen(context, builder, sig, args):
        source, target = args
        view = make_array(sig.args[0])(context, builder, source)
        _, made = _broadcast_to_shape(
            context, builder, sig.args[0], view, cgutils.unpack_tuple(builder, target)
        )
        return impl_ret_borrowed(context, builder, sig.return_type, made._getvalue())

    return signature(result, array, shape), codegen


def leaves(tree) -> list:
    """The variables of an array expression's tree."""
    if isinstance(tree, ir.Var):
        return [tree]
    if isinstance(tree, tuple):
        _, operands = tree
        return [v for operand in operands for v in leaves(operand)]
    return []


def replace(tree, names: dict):
    if isinstance(tree, ir.Var):
        return names.get(tree.name, tree)
    if isinstance(tree, tuple):
        op, operands = tree
        return op, [replace(operand, names) for operand in operands]
    return tree


@register_pass(mutates_CFG=False, analysis_only=False)
class RuntimeBroadcasts(FunctionPass):
    """Numba pass: array expressions' arrays as views of the broadcast shape (module
    docstring)."""

    _name = "dpex_offload_runtime_broadcasts"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        changed = False
        for block in state.func_ir.blocks.values():
            body = []
            for stmt in block.body:
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if isinstance(value, ir.Expr) and value.op == "arrayexpr":
                    made = _views(state, block.scope, stmt)
                    changed |= bool(made)
                    body += made
                body.append(stmt)
            block.body = body
        return changed


def _views(state, scope, stmt) -> list:
    """The statements making an expression's views, its tree rewritten to read them."""
    typemap, loc = state.typemap, stmt.loc
    result = typemap[stmt.target.name]
    if not isinstance(result, types.Array) or result.ndim < 2:
        return []
    arrays = []
    for var in leaves(stmt.value.expr):
        if isinstance(typemap.get(var.name), types.Array) and var.name not in arrays:
            arrays.append(var.name)
    if len(arrays) < 2:
        return []
    out = []
    shape = call(state, scope, loc, broadcast_shape, [ir.Var(scope, a, loc) for a in arrays], out)
    names = {}
    for name in arrays:
        if typemap[name].ndim == result.ndim:  # lower ranks: Numba broadcasts them already
            view = call(state, scope, loc, broadcast_view, [ir.Var(scope, name, loc), shape], out)
            names[name] = view
    stmt.value.expr = replace(stmt.value.expr, names)
    return out


def call(state, scope: ir.Scope, loc: ir.Loc, function, args: list, out: list) -> ir.Var:
    """`function(*args)` typed and assigned to a new variable, appended to `out`."""
    typingctx, typemap = state.typingctx, state.typemap
    fnty = typingctx.resolve_value_type(function)
    callee = ir.Var(scope, mk_unique_var("$dk_broadcast_fn"), loc)
    target = ir.Var(scope, mk_unique_var("$dk_broadcast"), loc)
    expr = ir.Expr.call(callee, args, (), loc)
    sig = fnty.get_call_type(typingctx, tuple(typemap[a.name] for a in args), {})
    typemap[callee.name] = fnty
    typemap[target.name] = sig.return_type
    state.calltypes[expr] = sig
    out.append(ir.Assign(ir.Global(function.__name__, function, loc), callee, loc))
    out.append(ir.Assign(expr, target, loc))
    return target
