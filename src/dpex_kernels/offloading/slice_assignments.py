"""Assignments into part of an array's dimensions as Numba's parfor passes take them.

Numba's parfor passes make a kernel of `c[index] = e` only where the index has one slice per
dimension of `e`: `c[:] = e` with `c` and `e` of two dimensions, `c[...] = e` and `c[0] = row`
are instead Numba's host setitem, an element-by-element copy on one thread of an array the
parfor wrote first (a 2^22 float64 `c[:] = a * 2.0 + 1.0` of 16 columns took 42 ms where
`c[:, :] = ...` took 3.2 ms), which on a GPU's device memory could not run at all. NumPy reads
a missing trailing index as `:` and `...` as many `:` as the dimensions it stands for, so here,
after typing, such an index becomes the tuple of its slices and integers with a full slice for
each dimension it leaves out. A value of fewer dimensions than it is stored into (`c[:] = row`
of a 2-D `c`, `c += row`) becomes a view of the shape it is stored to (`broadcast_to`, NumPy's
ValueError where it does not broadcast to it), whose repeated dimensions have stride 0: Numba's
parfor then indexes it as an array of that rank.

The parfor stores through the view `c[index]`, which Numba types as of any layout once the
index has a slice after the first position: it cannot know that a trailing slice is full. The
padded slices are, so after the parfor passes a view that Numba types C-contiguous without
them is retyped C-contiguous (`ContiguousViews`): its loop then needs no second kernel for
strided views (ranges.py).
"""

from __future__ import annotations

import operator

import numba
import numpy as np
from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import build_definitions, mk_unique_var
from numba.core.typing.arraydecl import get_array_index_type
from numba.core.typing.templates import signature
from numba.parfors.parfor import Parfor

from .aliasing import retype_store
from .broadcasting import broadcast_view, call
from .ir_values import access

#: state.metadata's key of the full slices the padding added (their variables' names)
_FULL_SLICES = "dk_full_slices"


def _items(index: ir.Var, index_type, definitions: dict) -> list[ir.Var] | None:
    """The index's items as variables (a bare slice or integer is one, `...` none), or None
    where it holds something else (an array, None, an ellipsis among others)."""
    if isinstance(index_type, types.EllipsisType):
        return []
    if isinstance(index_type, (types.SliceType, types.Integer)):
        return [index]
    if not isinstance(index_type, types.BaseTuple):
        return None
    values = definitions.get(index.name) or []
    if len(values) != 1 or not isinstance(values[0], ir.Expr) or values[0].op != "build_tuple":
        return None
    return list(values[0].items)


def _full_slice(state, scope: ir.Scope, loc: ir.Loc) -> tuple[list[ir.Assign], ir.Var]:
    """The statements of `slice(None, None)`, typed, and its variable."""
    typemap, typingctx = state.typemap, state.typingctx
    function = ir.Var(scope, mk_unique_var("$dk_slice"), loc)
    none = ir.Var(scope, mk_unique_var("$dk_none"), loc)
    result = ir.Var(scope, mk_unique_var("$dk_full_slice"), loc)
    typemap[function.name] = typingctx.resolve_value_type(slice)
    typemap[none.name] = types.none
    call = ir.Expr.call(function, [none, none], (), loc)
    state.calltypes[call] = typemap[function.name].get_call_type(
        typingctx, (types.none, types.none), {}
    )
    typemap[result.name] = state.calltypes[call].return_type
    statements = [
        ir.Assign(ir.Global("slice", slice, loc), function, loc),
        ir.Assign(ir.Const(None, loc), none, loc),
        ir.Assign(call, result, loc),
    ]
    return statements, result


@numba.njit(cache=False)
def broadcast_to(value, shape):  # pragma: no cover (compiled)
    """`value` viewed with `shape`; NumPy's ValueError where it does not broadcast to it."""
    if np.broadcast_shapes(value.shape, shape) != shape:
        raise ValueError("could not broadcast the assigned array into the shape it is stored to")
    return broadcast_view(value, shape)


@numba.njit(cache=False)
def assigned_view(value, target, index):  # pragma: no cover (compiled)
    """`value` viewed with the shape of `target[index]`, so that the store is a parfor."""
    return broadcast_to(value, target[index].shape)


@numba.njit(cache=False)
def operand_view(value, target):  # pragma: no cover (compiled)
    """`value` viewed with the shape of `target`, so that `target op= value` is a parfor."""
    return broadcast_to(value, target.shape)


def _broadcast_operand(state, stmt) -> list[ir.Stmt] | None:
    """`c op= e` with `e` of fewer dimensions than `c`, `e` viewed with `c`'s shape (Numba's
    parfor indexes `e` with `c`'s index), or None where it stays."""
    expr = stmt.value
    if not (isinstance(expr, ir.Expr) and expr.op == "inplace_binop"):
        return None
    target_type, value_type = state.typemap[expr.lhs.name], state.typemap[expr.rhs.name]
    if not isinstance(target_type, types.Array) or not isinstance(value_type, types.Array):
        return None
    if value_type.ndim >= target_type.ndim:
        return None
    statements = []
    expr.rhs = call(state, expr.lhs.scope, stmt.loc, operand_view, [expr.rhs, expr.lhs], statements)
    retype_store(state, stmt)
    return [*statements, stmt]


def _padded(state, stmt, definitions: dict) -> list[ir.Stmt] | None:
    """The statements of `stmt` with its index padded and a value of fewer dimensions than
    it stores into broadcast (see the module docstring), or None where it stays."""
    typemap = state.typemap
    target_type = typemap[stmt.target.name]
    value_type = typemap[stmt.value.name]
    if not isinstance(target_type, types.Array) or not isinstance(value_type, types.Array):
        return None
    _, index = access(stmt)
    if index is None:
        return None
    items = _items(index, typemap[index.name], definitions)
    if items is None or len(items) > target_type.ndim:
        return None
    slices = sum(isinstance(typemap[item.name], types.SliceType) for item in items)
    missing = target_type.ndim - len(items)
    if slices + missing < value_type.ndim or (not missing and slices == value_type.ndim):
        return None  # Numba's error, or Numba's parfor as it is
    scope, loc = stmt.target.scope, stmt.loc
    statements = []
    if missing:
        made, full = _full_slice(state, scope, loc)
        statements += made
        state.metadata.setdefault(_FULL_SLICES, set()).add(full.name)
        items = items + [full] * missing
    padded = ir.Var(scope, mk_unique_var("$dk_index"), loc)
    index_type = types.BaseTuple.from_types([typemap[item.name] for item in items])
    typemap[padded.name] = index_type
    statements.append(ir.Assign(ir.Expr.build_tuple(items, loc), padded, loc))
    value = stmt.value
    if slices + missing > value_type.ndim:
        value = call(state, scope, loc, assigned_view, [value, stmt.target, padded], statements)
    store = ir.SetItem(stmt.target, padded, value, loc)
    state.calltypes[store] = state.typingctx.resolve_function_type(
        operator.setitem, (target_type, index_type, typemap[value.name]), {}
    )
    return [*statements, store]


def pad(state) -> bool:
    """Pad the indices of the function's assignments into arrays; whether any changed."""
    definitions = build_definitions(state.func_ir.blocks)
    changed = False
    for block in state.func_ir.blocks.values():
        body = []
        for stmt in block.body:
            replaced = None
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                replaced = _padded(state, stmt, definitions)
            elif isinstance(stmt, ir.Assign):
                replaced = _broadcast_operand(state, stmt)
            body.extend(replaced or [stmt])
            changed |= replaced is not None
        block.body = body
    if changed:
        state.func_ir._definitions = build_definitions(state.func_ir.blocks)
    return changed


@register_pass(mutates_CFG=False, analysis_only=False)
class SliceAssignments(FunctionPass):
    """Numba pass: assignments into part of an array's dimensions with one slice per dimension
    of their value (see the module docstring)."""

    _name = "dpex_offload_slice_assignments"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        return pad(state)


def _contiguous_view(stmt: ir.Stmt, definitions: dict, state) -> types.Array | None:
    """The C-contiguous type of a view `c[index]` whose index ends in padded full slices and
    whose other items make a C-contiguous view, or None."""
    value = stmt.value if isinstance(stmt, ir.Assign) else None
    if not (isinstance(value, ir.Expr) and value.op == "getitem"):
        return None
    view_type, array_type = state.typemap[stmt.target.name], state.typemap[value.value.name]
    if not isinstance(view_type, types.Array) or view_type.layout == "C":
        return None
    found = definitions.get(value.index.name) or []
    if len(found) != 1 or not isinstance(found[0], ir.Expr) or found[0].op != "build_tuple":
        return None
    items = [item.name for item in found[0].items]
    full = state.metadata.get(_FULL_SLICES, set())
    while items and items[-1] in full:
        items.pop()
    if len(items) == len(found[0].items):
        return None
    if items:
        index_type = types.BaseTuple.from_types([state.typemap[item] for item in items])
        layout = get_array_index_type(array_type, index_type).result.layout
    else:
        layout = array_type.layout
    return view_type.copy(layout="C") if layout == "C" else None


def _retype_views(block: ir.Block, definitions: dict, state) -> bool:
    """Retype the views of padded indices in `block` and the parfors in it."""
    changed = False
    for stmt in block.body:
        if isinstance(stmt, Parfor):
            for inner in [stmt.init_block, *stmt.loop_body.values()]:
                changed |= _retype_views(inner, definitions, state)
            continue
        contiguous = _contiguous_view(stmt, definitions, state)
        if contiguous is None:
            continue
        arguments = state.calltypes.pop(stmt.value).args  # dicts that refuse to overwrite
        state.calltypes[stmt.value] = signature(contiguous, *arguments)
        state.typemap.pop(stmt.target.name)
        state.typemap[stmt.target.name] = contiguous
        changed = True
    return changed


@register_pass(mutates_CFG=False, analysis_only=False)
class ContiguousViews(FunctionPass):
    """Numba pass: the views parfors store into through padded indices, C-contiguous where
    the unpadded index's view is (see the module docstring)."""

    _name = "dpex_offload_contiguous_views"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        if not state.metadata.get(_FULL_SLICES):
            return False
        definitions = build_definitions(state.func_ir.blocks)  # parfors' blocks included
        changed = False
        for block in state.func_ir.blocks.values():
            changed |= _retype_views(block, definitions, state)
        return changed
