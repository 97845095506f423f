"""Axis reductions of offloaded code (parallel.py's `sum(x, axis=k)` and its kin): a kernel
over the result, each work-item reducing the elements along the axis in a loop of its own.

The helpers are compiled functions chosen by (ndim, axis) when Numba types the call, held by
the implementation as closure variables (Numba's pre-parfor pass inlines it with the caller's
globals, so it reaches nothing through its own module's).
"""

from __future__ import annotations

import functools
import math

import dpnp
import numba

from .allocation import STAND_INS

#: dpnp.empty_like's stand-in.
_EMPTY_LIKE = STAND_INS[dpnp.empty_like]


# --- index helpers of axis reductions: (ndim, axis) -> compiled helpers -------------------------


@numba.njit(cache=False)
def _drop0(shape):  # pragma: no cover (compiled)
    return shape[1:]


@numba.njit(cache=False)
def _drop1(shape):  # pragma: no cover (compiled)
    return (shape[0],) + shape[2:]


@numba.njit(cache=False)
def _drop2(shape):  # pragma: no cover (compiled)
    return shape[:2]


_DROP = {0: _drop0, 1: _drop1, 2: _drop2}


@numba.njit(cache=False)
def _at_2_0(idx, t):  # pragma: no cover (compiled)
    return (t, idx)


@numba.njit(cache=False)
def _at_2_1(idx, t):  # pragma: no cover (compiled)
    return (idx, t)


@numba.njit(cache=False)
def _at_3_0(idx, t):  # pragma: no cover (compiled)
    return (t, idx[0], idx[1])


@numba.njit(cache=False)
def _at_3_1(idx, t):  # pragma: no cover (compiled)
    return (idx[0], t, idx[1])


@numba.njit(cache=False)
def _at_3_2(idx, t):  # pragma: no cover (compiled)
    return (idx[0], idx[1], t)


#: (ndim, axis) -> the index of element t along the axis at output index idx (an int where
#: the output is 1-d, a prange loop's index).
_AT = {(2, 0): _at_2_0, (2, 1): _at_2_1, (3, 0): _at_3_0, (3, 1): _at_3_1, (3, 2): _at_3_2}


# --- axis reductions: a kernel over the result, a loop along the axis in each work-item --------


@functools.cache
def _along(name: str, at):
    """A compiled function (a, idx, n, start): name's reduction of the n elements at(idx, t)."""
    if name in ("sum", "mean", "var", "std"):

        def total(a, idx, n, start):  # pragma: no cover (compiled)
            acc = start
            for t in range(n):
                acc += a[at(idx, t)]
            return acc

        if name == "sum":
            return numba.njit(total, cache=False)
        total = numba.njit(total, cache=False)
        if name == "mean":
            return numba.njit(lambda a, idx, n, start: total(a, idx, n, start) / n, cache=False)

        def variance(a, idx, n, start):  # pragma: no cover (compiled)
            mean = total(a, idx, n, start) / n
            acc = start
            for t in range(n):
                d = a[at(idx, t)] - mean
                acc += d * d
            return acc / n

        if name == "var":
            return numba.njit(variance, cache=False)
        variance = numba.njit(variance, cache=False)
        return numba.njit(lambda a, idx, n, start: math.sqrt(variance(a, idx, n, start)))
    if name == "prod":

        def product(a, idx, n, start):  # pragma: no cover (compiled)
            acc = start
            for t in range(n):
                acc *= a[at(idx, t)]
            return acc

        return numba.njit(product, cache=False)
    smallest = name in ("min", "argmin")
    position = name.startswith("arg")

    def extreme(a, idx, n, start):  # pragma: no cover (compiled)
        best = 0
        acc = a[at(idx, 0)]
        for t in range(1, n):
            if acc != acc:
                break  # NumPy's: the first NaN
            x = a[at(idx, t)]
            if (x < acc if smallest else x > acc) or x != x:
                acc, best = x, t
        return best if position else acc

    return numba.njit(extreme, cache=False)


NEEDS_ELEMENTS = ("min", "max", "argmin", "argmax")


def _refuser(name: str):
    """A compiled function raising NumPy's ValueError where a `name` reduction has nothing."""
    if name.startswith("arg"):
        message = f"attempt to get {name} of an empty sequence"
    else:
        message = f"zero-size array to reduction operation {name}imum which has no identity"

    def refuse_empty(n):  # pragma: no cover (compiled)
        if n == 0:
            raise ValueError(message)

    return numba.njit(refuse_empty, cache=False)


REFUSE_EMPTY = {name: _refuser(name) for name in ("min", "max", "argmin", "argmax")}


@numba.njit(cache=False)
def _nothing(n):  # pragma: no cover (compiled)
    """Reductions with an identity take empty arrays."""


def along_axis(name: str, array, axis: int, dtype):
    """out[idx] = name's reduction of the elements along `axis` at idx: a kernel over out."""
    along, drop, empty_like = _along(name, _AT[(array.ndim, axis)]), _DROP[axis], _EMPTY_LIKE
    start = dtype(1) if name == "prod" else dtype(0)
    refuse_empty = REFUSE_EMPTY.get(name, _nothing)

    def rows(a, axis):  # pragma: no cover (compiled)
        n = a.shape[axis]
        refuse_empty(n)
        out = empty_like(a, dtype=dtype, shape=drop(a.shape))
        for i in numba.prange(out.shape[0]):
            out[i] = along(a, i, n, start)
        return out

    def planes(a, axis):  # pragma: no cover (compiled)
        n = a.shape[axis]
        refuse_empty(n)
        out = empty_like(a, dtype=dtype, shape=drop(a.shape))
        for idx in numba.pndindex(out.shape):
            out[idx] = along(a, idx, n, start)
        return out

    return rows if array.ndim == 2 else planes
