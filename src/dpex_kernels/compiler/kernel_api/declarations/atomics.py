"""Declarations (see __init__.py) of dk.atomic.*: relaxed atomic updates of one array element."""

from __future__ import annotations

from . import declares

#: Sections of several declarations' docstrings, written once (see declares).
_ELEMENT_PARAMETERS = """\
Parameters
----------
arr : array
    A USM array argument or a ``dk.local.array`` of int32, int64, uint32, uint64, float32
    or float64.
idx : int or tuple of int
    The element's index: an integer for a 1-d array, a tuple of integers for an n-d one;
    negative indices count from the end.
"""
_UPDATE_PARAMETERS = (
    _ELEMENT_PARAMETERS
    + """\
val : int, float or bool
    The operand, converted to the array's dtype.
"""
)
_ELEMENT_RAISES = """\
Raises
------
KernelCompileError
    When the kernel compiles, if `arr` is not such an array or `idx` does not index one
    element of it.
KernelBoundsError
    From the launch, with ``debug=True``, if `idx` is out of bounds.
TypeError
    If called from host code.
"""


@declares("dk.atomic.add", parameters=_UPDATE_PARAMETERS, raises=_ELEMENT_RAISES)
def atomic_add(arr, idx, val, /):
    """Add `val` to ``arr[idx]`` atomically, e.g. to count or sum from many work-items.

    The update is one indivisible step: concurrent updates of the element by other work-items
    are never lost. Ordering is relaxed (``dk.AtomicRef`` orders other accesses too).

    {parameters}

    Returns
    -------
    scalar
        The element's value before the update, of the array's dtype.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def histogram(values, counts):
    ...     dk.atomic.add(counts, values[dk.get_global_id(0)], 1)
    >>> counts = dpnp.zeros(3, dtype="i4")
    >>> histogram[6](dpnp.asarray([0, 2, 2, 1, 2, 0]), counts).wait()
    >>> dpnp.asnumpy(counts)
    array([2, 1, 3], dtype=int32)
    """


@declares("dk.atomic.sub", parameters=_UPDATE_PARAMETERS, raises=_ELEMENT_RAISES)
def atomic_sub(arr, idx, val, /):
    """Subtract `val` from ``arr[idx]`` atomically, e.g. to take from a shared budget.

    The update is one indivisible step: concurrent updates of the element by other work-items
    are never lost. Ordering is relaxed (``dk.AtomicRef`` orders other accesses too).

    {parameters}

    Returns
    -------
    scalar
        The element's value before the update, of the array's dtype.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def take(budget):
    ...     dk.atomic.sub(budget, 0, 2)
    >>> budget = dpnp.full(1, 100, dtype="i8")
    >>> take[10](budget).wait()
    >>> int(budget[0])
    80
    """


@declares("dk.atomic.min", parameters=_UPDATE_PARAMETERS, raises=_ELEMENT_RAISES)
def atomic_min(arr, idx, val, /):
    """Store the smaller of ``arr[idx]`` and `val` atomically, e.g. for a minimum over items.

    The update is one indivisible step: concurrent updates of the element by other work-items
    are never lost. Ordering is relaxed (``dk.AtomicRef`` orders other accesses too).

    {parameters}

    Returns
    -------
    scalar
        The element's value before the update, of the array's dtype.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def smallest(values, out):
    ...     dk.atomic.min(out, 0, values[dk.get_global_id(0)])
    >>> out = dpnp.full(1, 1e30, dtype="f4")
    >>> smallest[4](dpnp.asarray([3.0, -1.5, 2.0, 7.0], dtype="f4"), out).wait()
    >>> float(out[0])
    -1.5
    """


@declares("dk.atomic.max", parameters=_UPDATE_PARAMETERS, raises=_ELEMENT_RAISES)
def atomic_max(arr, idx, val, /):
    """Store the larger of ``arr[idx]`` and `val` atomically, e.g. for a maximum over items.

    The update is one indivisible step: concurrent updates of the element by other work-items
    are never lost. Ordering is relaxed (``dk.AtomicRef`` orders other accesses too).

    {parameters}

    Returns
    -------
    scalar
        The element's value before the update, of the array's dtype.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def largest(values, out):
    ...     dk.atomic.max(out, 0, values[dk.get_global_id(0)])
    >>> out = dpnp.zeros(1, dtype="i8")
    >>> largest[4](dpnp.asarray([3, 9, 2, 7]), out).wait()
    >>> int(out[0])
    9
    """


@declares("dk.atomic.exchange", parameters=_UPDATE_PARAMETERS, raises=_ELEMENT_RAISES)
def atomic_exchange(arr, idx, val, /):
    """Store `val` in ``arr[idx]`` atomically and give the value it replaced.

    The update is one indivisible step: concurrent updates of the element by other work-items
    are never lost. Ordering is relaxed (``dk.AtomicRef`` orders other accesses too).

    {parameters}

    Returns
    -------
    scalar
        The element's value before the update, of the array's dtype.

    {raises}

    Examples
    --------
    Which work-item wrote last is the device's choice; each gets what it replaced:

    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def swap_in(slot, seen):
    ...     i = dk.get_global_id(0)
    ...     seen[i] = dk.atomic.exchange(slot, 0, i + 1)
    >>> slot = dpnp.zeros(1, dtype="i8")
    >>> seen = dpnp.empty(4, dtype="i8")
    >>> swap_in[4](slot, seen).wait()
    >>> sorted(dpnp.asnumpy(seen).tolist() + dpnp.asnumpy(slot).tolist())
    [0, 1, 2, 3, 4]
    """


@declares("dk.atomic.compare_exchange", element=_ELEMENT_PARAMETERS, raises=_ELEMENT_RAISES)
def atomic_compare_exchange(arr, idx, expected, desired, /):
    """Store `desired` in ``arr[idx]`` only if it holds `expected`, atomically.

    The building block of lock-free updates: read the old value, compute a new one, and retry
    while another work-item changed the element in between. Floats are compared by their bits
    (``-0.0`` is not ``0.0``; a NaN equals the same NaN). Ordering is relaxed.

    {element}
    expected : int, float or bool
        The value the element must hold for the store to happen (converted to the dtype).
    desired : int, float or bool
        The value to store (converted to the dtype).

    Returns
    -------
    scalar
        The element's value before the call: equal to `expected` exactly when `desired` was
        stored.

    {raises}

    Examples
    --------
    Let exactly one work-item claim a slot:

    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def claim(owner, won):
    ...     i = dk.get_global_id(0)
    ...     won[i] = dk.atomic.compare_exchange(owner, 0, -1, i) == -1
    >>> owner = dpnp.full(1, -1, dtype="i8")
    >>> won = dpnp.zeros(8, dtype="i8")
    >>> claim[8](owner, won).wait()
    >>> int(won.sum()), int(won[int(owner[0])])
    (1, 1)
    """
