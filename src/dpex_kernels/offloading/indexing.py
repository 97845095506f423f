"""Indexing a USM array with an array, as NumPy's advanced indexing.

Numba indexes with an array on the host, into a NumPy array it allocates, which a USM array
cannot be, and stores with one on the host, which cannot reach a GPU's device memory. After
typing, `a[indices]` with a 1-D integer USM array `indices` becomes offload's parallel gather,
`a[indices] = value` its scatter, and `x[mask]` of a boolean USM mask of `x`'s shape, or of a
1-D one over its first axis (rows of a 2-D or 3-D `x`), its parallel selection: kernels on the
array's queue (this module's `_take` and `_put`, and masks.py's `_compress`, registered as
parallel.py's stand-ins `take`, `put` and `compress`). A store through a mask is NumPy's: the
selected elements or rows take the values in order, broadcast (masks.py's `_place`);
`a[m] = x[m]` through one mask is one kernel storing x's elements in place (`_masked_store`,
as Numba's parfor fuses it), and so is an element-wise expression of such selections
(`a[m] *= 2`, `a[m] = a[m] * x[m] + 1`: masked_updates.py); a scalar through a mask of the
array's shape is Numba's parfor already.
Outside prange bodies only (a kernel cannot allocate a result). Any other index holding an
array (a mask of another rank, several index arrays, an index array of 2 dimensions, a NumPy
array) is a KernelCompileError naming the line.
"""

from __future__ import annotations

from collections import Counter
from typing import NoReturn

import numba
from numba.core import errors, ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.extending import overload
from numba.core.ir_utils import build_definitions

from ..errors import KernelCompileError
from ..types.usm_array_type import USMArrayType, coerced_placement
from . import masked_updates
from .aliasing import prange_bodies
from .broadcasting import call
from .masks import copy_row, elementwise, selects
from .parallel import (
    EMPTY_LIKE,
    STAND_INS_BY_NAME,
    checked_array,
    inline_stand_ins,
    register,
)


def _gathers(index: types.Type) -> bool:
    """Whether an index is a 1-D integer USM array (a NumPy array's memory is the host's)."""
    integers = isinstance(index, USMArrayType) and isinstance(index.dtype, types.Integer)
    return integers and index.ndim == 1


def _holds_array(index: types.Type) -> bool:
    if isinstance(index, types.BaseTuple):
        return any(_holds_array(item) for item in index.types)
    return isinstance(index, types.Array)


@register_pass(mutates_CFG=True, analysis_only=False)
class IndexArrays(FunctionPass):
    """Numba pass: `a[indices]`, `a[indices] = value`, `x[mask]` and `a[mask] = b` of USM
    arrays as offload's gather, scatter, selection and stores through masks (module
    docstring)."""

    _name = "dpex_offload_index_arrays"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        blocks, typemap = state.func_ir.blocks, state.typemap
        in_prange = prange_bodies(blocks, build_definitions(blocks))
        updates = masked_updates.fuse(state, in_prange)
        fused = {**_fused_reads(state, in_prange), **updates}
        changed = bool(updates)
        for label, block in blocks.items():
            if label in in_prange:
                continue
            body = []
            for stmt in block.body:
                if isinstance(stmt, ir.Assign) and stmt.target.name in fused:
                    continue  # x[m] of a[m] = x[m], which masked_store reads itself
                store = _store_kind(state, stmt, fused) if isinstance(stmt, ir.SetItem) else None
                if store is not None:
                    arguments = [stmt.target, stmt.index, fused.get(stmt.value.name, stmt.value)]
                    call(state, block.scope, stmt.loc, STAND_INS_BY_NAME[store], arguments, body)
                    changed = True
                    continue
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if isinstance(value, ir.Expr) and value.op == "getitem":
                    array, index = typemap[value.value.name], typemap[value.index.name]
                    if isinstance(array, USMArrayType) and _holds_array(index):
                        if _gathers(index):
                            stand_in = STAND_INS_BY_NAME["take"]
                        elif selects(array, index):
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


def _fused_reads(state, in_prange: set) -> dict[str, ir.Var]:
    """The reads `x[m]` of stores `a[m] = x[m]` through one mask variable that nothing else
    reads, by their variable's name: the array `x`, which masked_store reads where it stores."""
    blocks, typemap = state.func_ir.blocks, state.typemap
    uses = Counter(v.name for block in blocks.values() for s in block.body for v in s.list_vars())
    fused = {}
    for label, block in blocks.items():
        if label in in_prange:
            continue
        reads = {}  # since the last statement that may store: variable -> its getitem
        for stmt in block.body:
            if isinstance(stmt, ir.SetItem):
                read = reads.get(stmt.value.name)
                if read is not None and read.index.name == stmt.index.name:
                    array, index = typemap[stmt.target.name], typemap[stmt.index.name]
                    source = typemap[read.value.name]
                    if (
                        uses[stmt.value.name] == 2
                        and isinstance(array, USMArrayType)
                        and isinstance(source, USMArrayType)
                        and source.ndim == array.ndim
                        and selects(array, index)
                    ):
                        fused[stmt.value.name] = read.value
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            if isinstance(value, ir.Expr) and value.op == "getitem":
                reads[stmt.target.name] = value
            elif not isinstance(value, (ir.Var, ir.Const, ir.Global, ir.FreeVar)):
                reads.clear()
    return fused


def _store_kind(state, stmt: ir.SetItem, fused: dict) -> str | None:
    """The stand-in a store into a USM array becomes: "put" for `a[indices] = value`,
    "masked_store" for `a[m] = x[m]` (`fused`), "place" for the other stores through a mask,
    None for a scalar through a mask of the array's shape (Numba's parfor) and indices
    without arrays; a KernelCompileError for other indices holding arrays, and for values of a
    rank above the selection's."""
    array, index = state.typemap[stmt.target.name], state.typemap[stmt.index.name]
    if not isinstance(array, USMArrayType) or not _holds_array(index):
        return None
    if _gathers(index):
        return "put"
    if not selects(array, index):
        _refuse(state, stmt.loc, index)
    if stmt.value.name in fused:
        return "masked_store"
    value = state.typemap[stmt.value.name]
    if not isinstance(value, types.Array):
        return None if index.ndim == array.ndim else "place"
    items = 1 if elementwise(array, index) else array.ndim  # the rank NumPy broadcasts to
    if value.ndim <= items:
        return "place"
    loc = stmt.loc
    raise KernelCompileError(
        f"@dk.offload function '{state.func_id.func_name}' ({loc.filename}:{loc.line}): "
        f"a[mask] = values takes a scalar or values of at most {items} dimension(s), the "
        f"selected elements' or rows' (NumPy broadcasts them to those); got {value}"
    )


def _refuse(state, loc: ir.Loc, index: types.Type) -> NoReturn:
    raise KernelCompileError(
        f"@dk.offload function '{state.func_id.func_name}' ({loc.filename}:{loc.line}): "
        f"indexing with {index} cannot run on a device; index with a 1-D integer array "
        f"(a[indices]), a boolean mask of the array's shape or a 1-D one over its first axis "
        f"(x[mask]), or with a boolean mask in a store (a[mask] = value)"
    )


# --- the parallel implementations: prange loops, inlined where the pass calls them ---------


@numba.njit(cache=False)
def _refuse_out_of_bounds(count):  # pragma: no cover (compiled)
    if count:
        raise IndexError("an index of the index array is out of bounds for the indexed array")


def _take(a, indices):
    """`a[indices]`, a 1-D integer array of indices into `a`'s first axis: NumPy's gather
    (negative indices count from the end; one out of bounds is NumPy's IndexError, counted by
    a kernel first). The result has `a`'s usm_type, the type Numba gives `a[indices]` (dpnp's
    has the more restrictive of the two arrays')."""
    checked_array(a, "indexing")
    if coerced_placement((a, indices)) is None:
        raise errors.TypingError("an array and its index array in offloaded code on two devices")
    empty_like, refuse = EMPTY_LIKE, _refuse_out_of_bounds
    shape_of, element = _gathered_shape, _gathered

    def impl(a, indices):  # pragma: no cover (compiled)
        n, m = a.shape[0], indices.shape[0]
        outside = 0
        for i in numba.prange(m):
            outside += (indices[i] < -n) | (indices[i] >= n)
        refuse(outside)
        out = empty_like(a, shape=shape_of(a, m))
        for idx in numba.pndindex(out.shape):
            out[idx] = element(a, indices, idx)
        return out

    return impl


def _gathered_shape(a, m):
    """(m, *a.shape[1:]) (typed: its overload)."""


@overload(_gathered_shape)
def _gathered_shape_overload(a, m):
    return lambda a, m: (m,) + a.shape[1:]


def _gathered(a, indices, idx):
    """Element idx of a[indices] (typed: its overload)."""


@overload(_gathered)
def _gathered_overload(a, indices, idx):
    if isinstance(idx, types.Integer):  # the index of a 1-D loop

        def item(a, indices, idx):  # pragma: no cover (compiled)
            k = indices[idx]
            return a[k + a.shape[0] if k < 0 else k]

        return item

    def element(a, indices, idx):  # pragma: no cover (compiled)
        k = indices[idx[0]]
        return a[(k + a.shape[0] if k < 0 else k,) + idx[1:]]

    return element


def _check_values(value, wanted):
    """A ValueError unless an array of values has the shape `wanted` (typed: its overload)."""


@overload(_check_values)
def _check_values_overload(value, wanted):
    if not isinstance(value, types.Array):
        return lambda value, wanted: None

    def check(value, wanted):  # pragma: no cover (compiled)
        if value.shape != wanted:
            raise ValueError("shape mismatch: the value array's shape is not the indexed elements'")

    return check


def _put(a, indices, value):
    """`a[indices] = value`, a 1-D integer array of indices into `a`'s first axis: NumPy's
    scatter, its indices checked as `_take`'s. A scalar is stored by a kernel, a work-item
    for each index; an array of the indexed elements' shape (indices.shape[0], *a.shape[1:])
    by one work-item, in order, so that a repeated index keeps its last value, as in NumPy
    (another shape is a ValueError)."""
    checked_array(a, "indexing")
    if coerced_placement((a, indices, value)) is None:
        raise errors.TypingError(
            "an array, its index array and the value stored in offloaded code are USM arrays "
            "on one device"
        )
    in_order = isinstance(value, types.Array)
    if in_order and value.ndim != a.ndim:
        raise errors.TypingError(
            "a[indices] = value in an offloaded function takes a scalar or an array of the "
            "indexed elements' shape"
        )
    refuse, check, shape_of, copy = (
        _refuse_out_of_bounds,
        _check_values,
        _gathered_shape,
        copy_row,
    )

    def impl(a, indices, value):  # pragma: no cover (compiled)
        n, m = a.shape[0], indices.shape[0]
        outside = 0
        for i in numba.prange(m):
            outside += (indices[i] < -n) | (indices[i] >= n)
        refuse(outside)
        check(value, shape_of(a, m))
        rounds, each = (1, m) if in_order else (m, 1)
        for r in numba.prange(rounds):
            for i in range(r * each, r * each + each):
                k = indices[i]
                copy(a, k + n if k < 0 else k, value, i)

    return impl


register("take", _take)
register("put", _put)
