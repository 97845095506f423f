"""Indexing a USM array with an array, as NumPy's advanced indexing.

Numba indexes with an array on the host, into a NumPy array it allocates, which a USM array
cannot be, and stores with one on the host, which cannot reach a GPU's device memory. After
typing, `a[indices]` with a 1-D integer USM array `indices` becomes offload's parallel gather,
`a[indices] = value` its scatter, and `x[mask]` of a boolean USM mask of `x`'s shape, or of a
1-D one over its first axis (rows of a 2-D or 3-D `x`), its parallel selection (this module's
`_take`, `_put` and `_compress`, registered as parallel.py's stand-ins `take`, `put` and
`compress`): kernels on the array's queue. A store through a mask is NumPy's: the
selected elements or rows take the values in order, broadcast (`_place`, after the selection's
count); `a[m] = x[m]` through one mask is one kernel storing x's elements in place
(`_masked_store`, as Numba's parfor fuses it); a scalar through a mask of the array's shape is
Numba's parfor already.
Outside prange bodies only (a kernel cannot allocate a result). Any other index holding an
array (a mask of another rank, several index arrays, an index array of 2 dimensions, a NumPy
array) is a KernelCompileError naming the line.
"""

from __future__ import annotations

from collections import Counter
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
    arrays as offload's gather, scatter, selection and stores through masks (module
    docstring)."""

    _name = "dpex_offload_index_arrays"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        blocks, typemap = state.func_ir.blocks, state.typemap
        in_prange = prange_bodies(blocks, build_definitions(blocks))
        fused = _fused_reads(state, in_prange)
        changed = False
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
                        and _selects(array, index)
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
    if not _selects(array, index):
        _refuse(state, stmt.loc, index)
    if stmt.value.name in fused:
        return "masked_store"
    value = state.typemap[stmt.value.name]
    if not isinstance(value, types.Array):
        return None if index.ndim == array.ndim else "place"
    items = 1 if _elementwise(array, index) else array.ndim  # the rank NumPy broadcasts to
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


def _selection_starts(a, mask):
    """(the elements or rows the mask selects among, where each chunk's selected ones go, how
    many it selects) for `_compress` and `_place`: work-item c counts the true elements of its
    chunk of COMPRESS_CHUNK, one work-item sums the counts before each chunk."""
    empty_like, length, at, chunk = EMPTY_LIKE, _selection_length, _flat_item, COMPRESS_CHUNK

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
        return n, starts, selected

    return impl


def _compress(a, mask):
    """`a[mask]`: the elements of `a` where a mask of its own shape is true, or its rows
    (elements, for a 1-D `a`) where a 1-D mask over its first axis is, in C order, as NumPy
    selects them (a mask of another shape is NumPy's IndexError); work-item c copies its
    chunk's elements or rows to where `_selection_starts` says."""
    checked_array(a, "indexing")
    if coerced_placement((a, mask)) is None:
        raise errors.TypingError("an array and its boolean index in offloaded code on two devices")
    empty_like, shape_of, put = EMPTY_LIKE, _selection_shape, _put_selected
    starts_of, at, chunk = STAND_INS_BY_NAME["selection_starts"], _flat_item, COMPRESS_CHUNK

    def impl(a, mask):  # pragma: no cover (compiled)
        n, starts, selected = starts_of(a, mask)
        out = empty_like(a, shape=shape_of(a, mask, selected))
        for c in numba.prange(starts.shape[0]):
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
    if x.ndim == 1:
        return lambda x, t: x[t]
    unravel = _unravel
    return lambda x, t: x[unravel(x, t)]


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


def _selected(mask, idx):
    """Whether element idx of the masked array is selected: a mask of its rank or one over its
    first axis (typed: its overload)."""


@overload(_selected)
def _selected_overload(mask, idx):
    if isinstance(idx, types.Integer) or mask.ndim == len(idx):  # an integer: a 1-D loop's
        return lambda mask, idx: mask[idx]
    return lambda mask, idx: mask[idx[0]]


def _masked_store(a, mask, source):
    """`a[mask] = source[mask]` (one mask): a's selected elements or rows take source's at the
    same place, broadcast as NumPy broadcasts `source[mask]`, in one kernel, as Numba's parfor
    fuses it (NumPy's IndexError for a mask of another shape than a's or source's)."""
    checked_array(a, "indexing")
    if coerced_placement((a, mask, source)) is None:
        raise errors.TypingError(
            "an array, its boolean index and the values stored in offloaded code are USM arrays "
            "on one device"
        )
    length, fits, selected, item = _selection_length, _check_broadcast, _selected, _broadcast_item

    def impl(a, mask, source):  # pragma: no cover (compiled)
        length(a, mask)
        length(source, mask)
        fits(source, a.shape)
        for idx in numba.pndindex(a.shape):
            if selected(mask, idx):
                a[idx] = item(source, idx)

    return impl


def _place(a, mask, value):
    """`a[mask] = value` as NumPy stores it: the selected elements (a mask of a's shape) or rows
    (a 1-D mask over its first axis), in C order, take the value's items in order, the value
    broadcast to (selected, *rows' shape) (NumPy's ValueError where it does not); work-item c
    stores its chunk's from where `_selection_starts` says."""
    checked_array(a, "indexing")
    if coerced_placement((a, mask, value)) is None:
        raise errors.TypingError(
            "an array, its boolean index and the values stored in offloaded code are USM arrays "
            "on one device"
        )
    starts_of, at, chunk = STAND_INS_BY_NAME["selection_starts"], _flat_item, COMPRESS_CHUNK
    shape_of, fits, store = _selection_shape, _check_broadcast, _store_selected

    def impl(a, mask, value):  # pragma: no cover (compiled)
        n, starts, selected = starts_of(a, mask)
        fits(value, shape_of(a, mask, selected))
        for c in numba.prange(starts.shape[0]):
            position = starts[c]
            for t in range(c * chunk, min(n, c * chunk + chunk)):
                if at(mask, t):
                    store(a, mask, t, value, position)
                    position += 1

    return impl


def _check_broadcast(value, shape):
    """NumPy's ValueError unless the values broadcast to `shape` (typed: its overload)."""


@overload(_check_broadcast)
def _check_broadcast_overload(value, shape):
    if not isinstance(value, types.Array):
        return lambda value, shape: None
    lead = len(shape) - value.ndim

    def check(value, shape):  # pragma: no cover (compiled)
        for d in range(value.ndim):
            if value.shape[d] != 1 and value.shape[d] != shape[lead + d]:
                raise ValueError(
                    "the values stored through a boolean mask do not broadcast to the "
                    "selected elements (NumPy's 'cannot assign ... input values')"
                )

    return check


def _broadcast_item(value, idx):
    """The value's element for idx of the shape it is broadcast to, aligned on the right as in
    NumPy (a scalar itself; typed: its overload)."""


@overload(_broadcast_item)
def _broadcast_item_overload(value, idx):
    if not isinstance(value, types.Array):
        return lambda value, idx: value
    if isinstance(idx, types.Integer):  # a 1-D loop's index
        return lambda value, idx: value[0 if value.shape[0] == 1 else idx]
    lead = len(idx) - value.ndim

    def one(value, idx):  # pragma: no cover (compiled)
        return value[0 if value.shape[0] == 1 else idx[lead]]

    def two(value, idx):  # pragma: no cover (compiled)
        i = 0 if value.shape[0] == 1 else idx[lead]
        return value[i, 0 if value.shape[1] == 1 else idx[lead + 1]]

    def three(value, idx):  # pragma: no cover (compiled)
        i = 0 if value.shape[0] == 1 else idx[lead]
        j = 0 if value.shape[1] == 1 else idx[lead + 1]
        return value[i, j, 0 if value.shape[2] == 1 else idx[lead + 2]]

    return (one, two, three)[value.ndim - 1]


def _store_selected(a, mask, t, value, p):
    """a's element t in C order (a mask of a's shape), or its row t, takes the broadcast
    value's item p (typed: its overload)."""


@overload(_store_selected)
def _store_selected_overload(a, mask, t, value, p):
    item = _broadcast_item
    if _elementwise(a, mask):
        unravel = _unravel

        def element(a, mask, t, value, p):  # pragma: no cover (compiled)
            a[unravel(a, t)] = item(value, (p,))

        return element

    def one(a, mask, t, value, p):  # pragma: no cover (compiled)
        a[t] = item(value, (p,))

    def row(a, mask, t, value, p):  # pragma: no cover (compiled)
        for j in range(a.shape[1]):
            a[t, j] = item(value, (p, j))

    def plane(a, mask, t, value, p):  # pragma: no cover (compiled)
        for j in range(a.shape[1]):
            for h in range(a.shape[2]):
                a[t, j, h] = item(value, (p, j, h))

    return (one, row, plane)[a.ndim - 1]


def _unravel(x, t):
    """The index of x's element t in C order, x of 2 or 3 dimensions (typed: its overload)."""


@overload(_unravel)
def _unravel_overload(x, t):
    if x.ndim == 2:
        return lambda x, t: (t // x.shape[1], t % x.shape[1])

    def plane(x, t):  # pragma: no cover (compiled)
        rows, columns = x.shape[1], x.shape[2]
        return (t // (rows * columns), t // columns % rows, t % columns)

    return plane


register("take", _take)
register("put", _put)
register("selection_starts", _selection_starts)
register("compress", _compress)
register("masked_store", _masked_store)
register("place", _place)
