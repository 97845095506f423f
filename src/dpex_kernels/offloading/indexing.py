"""Indexing a USM array with an array, as NumPy's advanced indexing.

Numba indexes with an array on the host, into a NumPy array it allocates, which a USM array
cannot be, and stores with one on the host, which cannot reach a GPU's device memory. After
typing, `a[indices]` with a 1-D integer USM array `indices` becomes offload's parallel gather,
`a[indices] = value` its scatter, and `x[mask]` of a 1-D array and a 1-D boolean USM mask its
parallel selection (parallel.py, `take`, `put` and `compress`): kernels on the array's queue.
Outside prange bodies only (a kernel cannot allocate a result). Any other index holding an
array (a mask of 2 dimensions or more in a read, several index arrays, an index array of 2
dimensions, a NumPy array) is a KernelCompileError naming the line; a mask's store
(`a[mask] = 0`) is Numba's parfor already.
"""

from __future__ import annotations

from typing import NoReturn

from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import build_definitions

from ..errors import KernelCompileError
from ..types.usm_array_type import USMArrayType
from .aliasing import prange_bodies
from .broadcasting import call
from .parallel import STAND_INS_BY_NAME, inline_stand_ins


def _gathers(index: types.Type) -> bool:
    """Whether an index is a 1-D integer USM array (a NumPy array's memory is the host's)."""
    integers = isinstance(index, USMArrayType) and isinstance(index.dtype, types.Integer)
    return integers and index.ndim == 1


def _selects(array: types.Type, index: types.Type) -> bool:
    """Whether an array and its index are 1-D, the index a boolean USM array. (Numba types
    a mask of 2 dimensions or more as integer indices, a result of the wrong rank.)"""
    booleans = isinstance(index, USMArrayType) and isinstance(index.dtype, types.Boolean)
    return booleans and index.ndim == array.ndim == 1


def _holds_array(index: types.Type) -> bool:
    if isinstance(index, types.BaseTuple):
        return any(_holds_array(item) for item in index.types)
    return isinstance(index, types.Array)


@register_pass(mutates_CFG=True, analysis_only=False)
class IndexArrays(FunctionPass):
    """Numba pass: `a[indices]`, `a[indices] = value` and `x[mask]` of USM arrays as offload's
    gather, scatter and selection (module docstring)."""

    _name = "dpex_offload_index_arrays"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        blocks, typemap = state.func_ir.blocks, state.typemap
        in_prange = prange_bodies(blocks, build_definitions(blocks))
        changed = False
        for label, block in blocks.items():
            if label in in_prange:
                continue
            body = []
            for stmt in block.body:
                if isinstance(stmt, ir.SetItem) and _scatters(state, stmt):
                    arguments = [stmt.target, stmt.index, stmt.value]
                    put = STAND_INS_BY_NAME["put"]
                    call(state, block.scope, stmt.loc, put, arguments, body)
                    changed = True
                    continue
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if isinstance(value, ir.Expr) and value.op == "getitem":
                    array, index = typemap[value.value.name], typemap[value.index.name]
                    if isinstance(array, USMArrayType) and _holds_array(index):
                        if _gathers(index):
                            stand_in = STAND_INS_BY_NAME["take"]
                        elif _selects(array, index):
                            stand_in = STAND_INS_BY_NAME["compress"]
                        else:
                            _refuse(state, stmt.loc, index)
                        arguments = [value.value, value.index]
                        stmt.value = call(state, block.scope, stmt.loc, stand_in, arguments, body)
                        changed = True
                body.append(stmt)
            block.body = body
        if changed:  # after the pre-parfor pass, which inlines the others
            inline_stand_ins(state)
            state.func_ir._definitions = build_definitions(blocks)
        return changed


def _scatters(state, stmt: ir.SetItem) -> bool:
    """Whether a store into a USM array is `a[indices] = value` (a boolean mask's store is
    Numba's parfor already); a KernelCompileError for other indices holding arrays."""
    array, index = state.typemap[stmt.target.name], state.typemap[stmt.index.name]
    if not isinstance(array, USMArrayType) or not _holds_array(index):
        return False
    if _gathers(index):
        return True
    if isinstance(index, USMArrayType) and isinstance(index.dtype, types.Boolean):
        return False
    _refuse(state, stmt.loc, index)


def _refuse(state, loc: ir.Loc, index: types.Type) -> NoReturn:
    raise KernelCompileError(
        f"@dk.offload function '{state.func_id.func_name}' ({loc.filename}:{loc.line}): "
        f"indexing with {index} cannot run on a device; index with a 1-D integer array "
        f"(a[indices]), a 1-D boolean mask of a 1-D array (x[mask]), or with a boolean mask "
        f"in a store (a[mask] = value)"
    )
