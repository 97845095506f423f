"""The arrays parfors allocate, as USM arrays on their inputs' queue.

Numba's parfor passes allocate an array expression's result with `np.empty(shape, dtype)`; its
type is a USM array (typing follows the inputs: types.usm_array_type), so here each such call
becomes an allocation of a dpnp array (allocation.allocator) with that type's usm_type, on the
queue of the first array of that device the parfor it feeds reads.
"""

from __future__ import annotations

import numpy as np
from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import mk_unique_var
from numba.parfors.parfor import Parfor

from ..types.usm_array_type import USMArrayType
from .allocation import allocator


def _is_allocation(stmt, typemap) -> bool:
    """Whether a statement is Numba's `np.empty(...)` of a USM array type."""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)):
        return False
    if stmt.value.op != "call" or not isinstance(typemap.get(stmt.target.name), USMArrayType):
        return False
    fnty = typemap.get(stmt.value.func.name)
    return isinstance(fnty, types.Function) and fnty.typing_key is np.empty


def _source(parfor: Parfor | None, device: str, typemap, made: set) -> str | None:
    """A USM array of `device` that the parfor reads, not one of those `made` in its init
    block: the new array goes on its queue."""
    for name in sorted(parfor.params if parfor is not None else ()):
        argtype = typemap.get(name)
        if name not in made and isinstance(argtype, USMArrayType) and argtype.device == device:
            return name
    return None


def _device_allocation(stmt, scope, source_name: str | None, state) -> list:
    """`x = np.empty(shape, dtype)` as `x = allocator(...)(shape, None, source, 0)`, typed."""
    typemap, loc = state.typemap, stmt.loc
    result = typemap[stmt.target.name]
    alloc = allocator("empty", str(result.dtype), result.usm_type, result.device)
    function = ir.Var(scope, mk_unique_var("$dk_alloc"), loc)
    none = ir.Var(scope, mk_unique_var("$dk_none"), loc)
    zero = ir.Var(scope, mk_unique_var("$dk_zero"), loc)
    source = ir.Var(scope, source_name, loc) if source_name else none
    shape = stmt.value.args[0]
    state.typingctx.refresh()  # the allocator may be new: its typing registered just now
    typemap[function.name] = state.typingctx.resolve_value_type(alloc)
    typemap[none.name] = types.none
    typemap[zero.name] = types.int64
    argtypes = (typemap[shape.name], types.none, typemap[source.name], types.int64)
    call = ir.Expr.call(function, [shape, none, source, zero], (), loc)
    state.calltypes[call] = typemap[function.name].get_call_type(state.typingctx, argtypes, {})
    return [
        ir.Assign(ir.Global("dk_alloc", alloc, loc), function, loc),
        ir.Assign(ir.Const(None, loc), none, loc),
        ir.Assign(ir.Const(0, loc), zero, loc),
        ir.Assign(call, stmt.target, loc),
    ]


def _rewrite(block: ir.Block, parfor: Parfor | None, state) -> bool:
    """Rewrite the allocations of `block` (placed after `parfor`'s inputs where it is that
    parfor's init block, else after the next parfor's in the block)."""
    changed = False
    statements = []
    made = {s.target.name for s in block.body if _is_allocation(s, state.typemap)}
    for position, stmt in enumerate(block.body):
        if isinstance(stmt, Parfor):
            changed |= _rewrite(stmt.init_block, stmt, state)
        if not _is_allocation(stmt, state.typemap):
            statements.append(stmt)
            continue
        feeds = parfor or next((s for s in block.body[position:] if isinstance(s, Parfor)), None)
        device = state.typemap[stmt.target.name].device
        source = _source(feeds, device, state.typemap, made)
        statements += _device_allocation(stmt, block.scope, source, state)
        changed = True
    block.body = statements
    return changed


@register_pass(mutates_CFG=False, analysis_only=False)
class DeviceAllocations(FunctionPass):
    """Numba pass: parfors' USM arrays allocated as dpnp arrays (see the module docstring)."""

    _name = "dpex_offload_device_allocations"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        changed = False
        for block in state.func_ir.blocks.values():
            changed |= _rewrite(block, None, state)
        return changed
