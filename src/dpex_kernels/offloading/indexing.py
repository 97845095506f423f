"""Indexing a USM array with an array, as NumPy's advanced indexing.

Numba indexes with an array on the host, into a NumPy array it allocates, which a USM array
cannot be, and stores with one on the host, which cannot reach a GPU's device memory. After
typing, `a[indices]` with a 1-D integer USM array `indices` becomes offload's parallel gather,
`a[indices] = value` its scatter, and `x[mask]` of a boolean USM mask of `x`'s shape, or of a
1-D one over its first axis (rows of a 2-D or 3-D `x`), its parallel selection (this module's
`_take`, `_put` and `_compress`, registered as parallel.py's stand-ins `take`, `put` and
`compress`): kernels on the array's queue. `a[mask] = b` of a mask of 2 dimensions or more
and `b` of its shape is a kernel of its own (`_masked_store`); other stores through a mask
(`a[mask] = 0`, 1-D masks) are Numba's parfor already.
Outside prange bodies only (a kernel cannot allocate a result). Any other index holding an
array (a mask of another rank, several index arrays, an index array of 2 dimensions, a NumPy
array), and an array of another rank stored through a mask of 2 dimensions or more, is a
KernelCompileError naming the line.
"""

from __future__ import annotations

from typing import NoReturn

import numba
import numpy as np
from numba.core import errors, ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.extending import overload
from numba.core.ir_utils import build_definitions

from ..errors import KernelCompileError
from ..types.usm_array_type import USMArrayType, coerced_placement
from .aliasing import prange_bodies
from .broadcasting import call
from .parallel import (
    EMPTY_LIKE,
    STAND_INS_BY_NAME,
    checked_array,
    element_at,
    inline_stand_ins,
    register,
)


def _gathers(index: types.Type) -> bool:
    """Whether an index is a 1-D integer USM array (a NumPy array's memory is the host's)."""
    integers = isinstance(index, USMArrayType) and isinstance(index.dtype, types.Integer)
    return integers and index.ndim == 1


def _selects(array: types.Type, index: types.Type) -> bool:
    """Whether an index is a boolean USM mask over the array's first axis (1-D) or of the
    array's own rank (typed as NumPy's 1-D result: types.usm_array_type.mask_read_type)."""
    booleans = isinstance(index, USMArrayType) and isinstance(index.dtype, types.Boolean)
    return booleans and index.ndim in (1, array.ndim)


def _holds_array(index: types.Type) -> bool:
    if isinstance(index, types.BaseTuple):
        return any(_holds_array(item) for item in index.types)
    return isinstance(index, types.Array)


@register_pass(mutates_CFG=True, analysis_only=False)
class IndexArrays(FunctionPass):
    """Numba pass: `a[indices]`, `a[indices] = value`, `x[mask]` and `a[mask] = b` of USM
    arrays as offload's gather, scatter, selection and masked store (module docstring)."""

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
                store = _store_kind(state, stmt) if isinstance(stmt, ir.SetItem) else None
                if store is not None:
                    arguments = [stmt.target, stmt.index, stmt.value]
                    call(state, block.scope, stmt.loc, STAND_INS_BY_NAME[store], arguments, body)
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


def _store_kind(state, stmt: ir.SetItem) -> str | None:
    """The stand-in a store into a USM array becomes: "put" for `a[indices] = value`,
    "masked_store" for an array stored through a mask of 2 dimensions or more (Numba's parfor
    takes one only where it proves the shapes equal, and its host code 1-D masks only), None
    for the others (a 1-D mask's store, or a scalar's, is Numba's parfor already); a
    KernelCompileError for other indices holding arrays, and for values of another rank."""
    array, index = state.typemap[stmt.target.name], state.typemap[stmt.index.name]
    if not isinstance(array, USMArrayType) or not _holds_array(index):
        return None
    if _gathers(index):
        return "put"
    if not _selects(array, index):
        _refuse(state, stmt.loc, index)
    value = state.typemap[stmt.value.name]
    if index.ndim == 1 or not isinstance(value, types.Array):
        return None
    if value.ndim == index.ndim == array.ndim:
        return "masked_store"
    loc = stmt.loc
    raise KernelCompileError(
        f"@dk.offload function '{state.func_id.func_name}' ({loc.filename}:{loc.line}): "
        f"storing an array of {value.ndim} dimension(s) through a boolean mask of "
        f"{index.ndim} (a[mask] = values, a[mask] *= 2) cannot run on a device; store a "
        f"scalar or an array of the mask's shape, or write a[:] = np.where(mask, new, a)"
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
        _copy_row,
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


def _copy_row(target, k, source, i):
    """target[k] = source[i] (the scalar `source` itself), element by element (typed: its
    overload)."""


@overload(_copy_row)
def _copy_row_overload(target, k, source, i):
    at = element_at

    def item(target, k, source, i):  # pragma: no cover (compiled)
        target[k] = at(source, i)

    def row(target, k, source, i):  # pragma: no cover (compiled)
        for j in range(target.shape[1]):
            target[k, j] = at(source, (i, j))

    def plane(target, k, source, i):  # pragma: no cover (compiled)
        for j in range(target.shape[1]):
            for h in range(target.shape[2]):
                target[k, j, h] = at(source, (i, j, h))

    return (item, row, plane)[target.ndim - 1]


#: Elements each work-item of a boolean selection counts, then copies (`_compress`).
COMPRESS_CHUNK = 4096


def _compress(a, mask):
    """`a[mask]`: the elements of `a` where a mask of its own shape is true, or its rows
    (elements, for a 1-D `a`) where a 1-D mask over its first axis is, in C order, as NumPy
    selects them (a mask of another shape is NumPy's IndexError). Work-item c counts the true
    elements of its chunk of COMPRESS_CHUNK, one work-item sums the counts before each chunk,
    and work-item c copies its chunk's elements or rows from there."""
    checked_array(a, "indexing")
    if coerced_placement((a, mask)) is None:
        raise errors.TypingError("an array and its boolean index in offloaded code on two devices")
    empty_like, length, shape_of = EMPTY_LIKE, _selection_length, _selection_shape
    at, put, chunk = _flat_item, _put_selected, COMPRESS_CHUNK

    def impl(a, mask):  # pragma: no cover (compiled)
        n = length(a, mask)
        chunks = (n + chunk - 1) // chunk
        counts = empty_like(mask, dtype=np.intp, shape=(chunks,))
        for c in numba.prange(chunks):
            found = 0
            for t in range(c * chunk, min(n, c * chunk + chunk)):
                found += at(mask, t)
            counts[c] = found
        starts = empty_like(counts)
        for _ in numba.prange(1):
            total = 0
            for c in range(chunks):
                starts[c] = total
                total += counts[c]
        selected = 0
        for c in numba.prange(chunks):
            selected += counts[c]
        out = empty_like(a, shape=shape_of(a, mask, selected))
        for c in numba.prange(chunks):
            position = starts[c]
            for t in range(c * chunk, min(n, c * chunk + chunk)):
                if at(mask, t):
                    put(out, position, a, t)
                    position += 1
        return out

    return impl


def _elementwise(a: types.Array, mask: types.Array) -> bool:
    """Whether a selection's mask has its array's shape (else it selects rows)."""
    return mask.ndim == a.ndim > 1


def _selection_length(a, mask):
    """The elements (a mask of `a`'s rank) or rows a mask selects among; NumPy's IndexError
    for a mask of another shape (typed: its overload)."""


@overload(_selection_length)
def _selection_length_overload(a, mask):
    if _elementwise(a, mask):

        def elements(a, mask):  # pragma: no cover (compiled)
            if a.shape != mask.shape:
                raise IndexError("the boolean index's shape does not match the indexed array's")
            return a.size

        return elements

    def rows(a, mask):  # pragma: no cover (compiled)
        if a.shape[0] != mask.shape[0]:
            raise IndexError("the boolean index's length does not match the indexed array's")
        return a.shape[0]

    return rows


def _selection_shape(a, mask, m):
    """The shape of a selection of m elements or rows (typed: its overload)."""


@overload(_selection_shape)
def _selection_shape_overload(a, mask, m):
    if _elementwise(a, mask):
        return lambda a, mask, m: (m,)
    return lambda a, mask, m: (m,) + a.shape[1:]


def _flat_item(x, t):
    """x's element t in C order (typed: its overload)."""


@overload(_flat_item)
def _flat_item_overload(x, t):
    def item(x, t):  # pragma: no cover (compiled)
        return x[t]

    def row(x, t):  # pragma: no cover (compiled)
        return x[t // x.shape[1], t % x.shape[1]]

    def plane(x, t):  # pragma: no cover (compiled)
        return x[t // (x.shape[1] * x.shape[2]), t // x.shape[2] % x.shape[1], t % x.shape[2]]

    return (item, row, plane)[x.ndim - 1]


def _put_selected(out, k, a, t):
    """out[k] = element t of `a` in C order (out 1-D), or its row t (typed: its overload)."""


@overload(_put_selected)
def _put_selected_overload(out, k, a, t):
    if out.ndim == 1 and a.ndim > 1:
        at = _flat_item

        def element(out, k, a, t):  # pragma: no cover (compiled)
            out[k] = at(a, t)

        return element
    copy = _copy_row
    return lambda out, k, a, t: copy(out, k, a, t)


def _masked_store(a, mask, value):
    """`a[mask] = value` of a mask of `a`'s shape, 2 dimensions or more, and an array of that
    shape: a's elements where the mask is true take the value's elements at the same place, as
    Numba's parfor stores them (NumPy takes only as many values as the mask selects); a mask
    of another shape is NumPy's IndexError, values of another shape a ValueError."""
    checked_array(a, "indexing")
    if coerced_placement((a, mask, value)) is None:
        raise errors.TypingError(
            "an array, its boolean index and the values stored in offloaded code are USM arrays "
            "on one device"
        )
    length, check = _selection_length, _check_values

    def impl(a, mask, value):  # pragma: no cover (compiled)
        length(a, mask)  # NumPy's IndexError for a mask of another shape
        check(value, mask.shape)
        for idx in numba.pndindex(a.shape):
            if mask[idx]:
                a[idx] = value[idx]

    return impl


register("take", _take)
register("put", _put)
register("compress", _compress)
register("masked_store", _masked_store)
