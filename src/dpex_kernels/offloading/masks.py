"""Boolean masks of USM arrays in offloaded code, as NumPy's: the selection `x[mask]` and the
stores through a mask, parallel implementations that indexing.py's pass calls as stand-ins
(parallel.py), inlined where it calls them.

A mask of the array's shape selects elements in C order, a 1-D mask over its first axis rows.
`_selection_starts` counts: work-item c counts the true elements of its chunk of
COMPRESS_CHUNK, one work-item sums the counts before each chunk. `_compress` then copies each
chunk's elements or rows to a new array, `_place` stores the values into them in order,
broadcast as NumPy broadcasts them; `_masked_store` stores `a[m] = x[m]` in one kernel, in
place, as Numba's parfor fuses it.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.core import errors, types
from numba.core.extending import overload

from ..types.usm_array_type import USMArrayType, coerced_placement
from .parallel import EMPTY_LIKE, STAND_INS_BY_NAME, checked_array, element_at, register


def copy_row(target, k, source, i):
    """target[k] = source[i] (the scalar `source` itself), element by element (typed: its
    overload)."""


@overload(copy_row)
def copy_row_overload(target, k, source, i):
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
    empty_like, length, at, chunk = EMPTY_LIKE, selection_length, _flat_item, COMPRESS_CHUNK

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

    def rows(a, mask):  # pragma: no cover (compiled)
        n, starts, selected = starts_of(a, mask)
        out = empty_like(a, shape=shape_of(a, mask, selected))
        for c in numba.prange(starts.shape[0]):
            position = starts[c]
            for t in range(c * chunk, min(n, c * chunk + chunk)):
                if at(mask, t):
                    put(out, position, a, t)
                    position += 1
        return out

    def elements(a, mask):  # pragma: no cover (compiled)
        n, starts, selected = starts_of(a, mask)
        out = empty_like(a, shape=shape_of(a, mask, selected))
        chunks = starts.shape[0]
        for c in numba.prange(chunks):
            position, end = starts[c], starts[c + 1] if c + 1 < chunks else selected
            for t in range(c * chunk, min(n, c * chunk + chunk)):
                if position < end:  # the next selected element overwrites an unselected one
                    put(out, position, a, t)
                position += at(mask, t)
        return out

    # Elements are copied whether selected or not, without a branch on the mask
    return elements if a.ndim == 1 or elementwise(a, mask) else rows


def selects(array: types.Type, index: types.Type) -> bool:
    """Whether an index is a boolean USM mask over the array's first axis (1-D) or of the
    array's own rank (typed as NumPy's 1-D result: types.usm_array_type.mask_read_type)."""
    booleans = isinstance(index, USMArrayType) and isinstance(index.dtype, types.Boolean)
    return booleans and index.ndim in (1, array.ndim)


def elementwise(a: types.Array, mask: types.Array) -> bool:
    """Whether a selection's mask has its array's shape (else it selects rows)."""
    return mask.ndim == a.ndim > 1


def selection_length(a, mask):
    """The elements (a mask of `a`'s rank) or rows a mask selects among; NumPy's IndexError
    for a mask of another shape (typed: its overload)."""


@overload(selection_length)
def selection_length_overload(a, mask):
    if elementwise(a, mask):

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
    if elementwise(a, mask):
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
    copy = copy_row
    return lambda out, k, a, t: copy(out, k, a, t)


def _selected(mask, idx):
    """Whether element idx of the masked array is selected: a mask of its rank or one over its
    first axis (typed: its overload)."""


@overload(_selected)
def _selected_overload(mask, idx):
    if isinstance(idx, types.Integer) or mask.ndim == len(idx):  # an integer: a 1-D loop's
        return lambda mask, idx: mask[idx]
    return lambda mask, idx: mask[idx[0]]


def _check_store(a, mask, values) -> None:
    """A TypingError unless a store through a mask has a 1-3-D array and all on one device."""
    checked_array(a, "indexing")
    if coerced_placement((a, mask, values)) is None:
        raise errors.TypingError(
            "an array, its boolean index and the values stored in offloaded code are USM arrays "
            "on one device"
        )


def _masked_store(a, mask, source):
    """`a[mask] = source[mask]` (one mask): a's selected elements or rows take source's at the
    same place, broadcast as NumPy broadcasts `source[mask]`, in one kernel, as Numba's parfor
    fuses it (NumPy's IndexError for a mask of another shape than a's or source's)."""
    _check_store(a, mask, source)
    length, fits, selected, item = selection_length, _check_broadcast, _selected, _broadcast_item

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
    _check_store(a, mask, value)
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
    if elementwise(a, mask):
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


register("selection_starts", _selection_starts)
register("compress", _compress)
register("masked_store", _masked_store)
register("place", _place)
