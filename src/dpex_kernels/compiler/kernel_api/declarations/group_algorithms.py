"""Declarations (see __init__.py) of SYCL 2020's group algorithms over groups and sub-groups."""

from __future__ import annotations

from . import declares

#: Sections of several declarations' docstrings, written once (see declares).
_GROUP_AND_VALUE = """\
Parameters
----------
group : group or sub-group
    ``item.get_group()`` or ``item.get_sub_group()`` of the kernel's nd-item; every
    work-item of it must make the call.
x : int, float or bool
    This work-item's value.
"""
_COLLECTIVE_PARAMETERS = (
    _GROUP_AND_VALUE
    + """\
init_or_op : GroupOperation or scalar
    With three arguments, the operation: ``dk.plus``, ``dk.multiplies``, ``dk.minimum``,
    ``dk.maximum``, ``dk.bit_and``, ``dk.bit_or``, ``dk.bit_xor`` (integers),
    ``dk.logical_and`` or ``dk.logical_or`` (whose results are bool), as a constant. With
    four, the initial value, combined before the first work-item's.
op : GroupOperation, optional
    With four arguments, the operation.
"""
)
_COLLECTIVE_RAISES = """\
Raises
------
KernelCompileError
    When the kernel compiles, if an argument has a type the algorithm does not take or the
    operation is not a constant ``dk.GroupOperation``.
InvalidRangeError
    From the launch, for work-groups larger than 1024 work-items with ``dk.multiplies``
    or a bitwise operation over a work-group (they combine values in local memory).
TypeError
    If called from host code.
"""
_VOTE_PARAMETERS = """\
Parameters
----------
group : group or sub-group
    ``item.get_group()`` or ``item.get_sub_group()`` of the kernel's nd-item; every
    work-item of it must make the call.
pred : bool or int
    This work-item's predicate (an integer counts as true when it is not 0).
"""
_VOTE_RAISES = """\
Raises
------
KernelCompileError
    When the kernel compiles, if `pred` is not a bool or integer.
TypeError
    If called from host code.
"""
_SHUFFLE_RAISES = """\
Raises
------
KernelCompileError
    When the kernel compiles, if the group is not a sub-group or `x` is not an integer,
    float or bool.
TypeError
    If called from host code.
"""


@declares("dk.reduce_over_group", parameters=_COLLECTIVE_PARAMETERS, raises=_COLLECTIVE_RAISES)
def reduce_over_group(group, x, init_or_op, op=None, /):
    """Combine the values of all work-items of a group with an operation, e.g. a sum.

    ``reduce_over_group(g, x, op)`` or, starting from an initial value,
    ``reduce_over_group(g, x, init, op)``, as in SYCL 2020.

    {parameters}

    Returns
    -------
    scalar
        The result, the same in every work-item of the group.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def group_sums(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.reduce_over_group(item.get_group(), a[i], dk.plus)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> group_sums[dk.NdRange(8, 4)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([ 6,  6,  6,  6, 22, 22, 22, 22], dtype=int32)
    """


@declares(
    "dk.inclusive_scan_over_group", group_and_value=_GROUP_AND_VALUE, raises=_COLLECTIVE_RAISES
)
def inclusive_scan_over_group(group, x, op, init=None, /):
    """Combine the values of the group's work-items up to this one, this one's included.

    A prefix sum (for ``dk.plus``) in the order of the work-items' linear local ids.

    {group_and_value}
    op : GroupOperation
        The operation, ``dk.plus``, ``dk.multiplies``, ``dk.minimum``, ``dk.maximum``,
        ``dk.bit_and``, ``dk.bit_or``, ``dk.bit_xor`` (integers), ``dk.logical_and`` or
        ``dk.logical_or`` (whose results are bool), as a constant.
    init : scalar, optional
        A value to start from, combined before the first work-item's.

    Returns
    -------
    scalar
        This work-item's prefix.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def prefix_sums(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.inclusive_scan_over_group(item.get_group(), a[i], dk.plus)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> prefix_sums[dk.NdRange(8, 4)](dpnp.ones(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([1, 2, 3, 4, 1, 2, 3, 4], dtype=int32)
    """


@declares(
    "dk.exclusive_scan_over_group", parameters=_COLLECTIVE_PARAMETERS, raises=_COLLECTIVE_RAISES
)
def exclusive_scan_over_group(group, x, init_or_op, op=None, /):
    """Combine the values of the group's work-items before this one, this one's excluded.

    ``exclusive_scan_over_group(g, x, op)`` or ``exclusive_scan_over_group(g, x, init, op)``,
    as in SYCL 2020. The first work-item gets the operation's identity (0 for ``dk.plus``), or
    `init`.

    {parameters}

    Returns
    -------
    scalar
        This work-item's prefix.

    {raises}

    Examples
    --------
    Where each work-item's items start in a packed output:

    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def offsets(item, counts, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.exclusive_scan_over_group(item.get_group(), counts[i], dk.plus)
    >>> out = dpnp.empty(4, dtype="i4")
    >>> offsets[dk.NdRange(4, 4)](dpnp.asarray([2, 0, 3, 1], dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 2, 2, 5], dtype=int32)
    """


@declares("dk.group_broadcast")
def group_broadcast(group, x, local_id=0, /):
    """Give every work-item of the group the value of one of them.

    Parameters
    ----------
    group : group or sub-group
        ``item.get_group()`` or ``item.get_sub_group()`` of the kernel's nd-item; every
        work-item of it must make the call.
    x : int, float or bool
        This work-item's value.
    local_id : int, default 0
        The linear local id (for a sub-group, the lane) of the work-item whose `x` all get.

    Returns
    -------
    scalar
        That work-item's `x`.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `x` is not an integer, float or bool.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def lasts(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.group_broadcast(item.get_group(), a[i], 3)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> lasts[dk.NdRange(8, 4)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([3, 3, 3, 3, 7, 7, 7, 7], dtype=int32)
    """


@declares("dk.any_of_group", parameters=_VOTE_PARAMETERS, raises=_VOTE_RAISES)
def any_of_group(group, pred, /) -> bool:
    """Tell whether `pred` holds for any work-item of the group.

    {parameters}

    Returns
    -------
    bool
        The vote, the same in every work-item of the group.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def vote(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.any_of_group(item.get_group(), a[i] > 2)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> vote[dk.NdRange(8, 4)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([1, 1, 1, 1, 1, 1, 1, 1], dtype=int32)
    """


@declares("dk.all_of_group", parameters=_VOTE_PARAMETERS, raises=_VOTE_RAISES)
def all_of_group(group, pred, /) -> bool:
    """Tell whether `pred` holds for every work-item of the group.

    {parameters}

    Returns
    -------
    bool
        The vote, the same in every work-item of the group.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def vote(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.all_of_group(item.get_group(), a[i] > 2)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> vote[dk.NdRange(8, 4)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 0, 0, 0, 1, 1, 1, 1], dtype=int32)
    """


@declares("dk.none_of_group", parameters=_VOTE_PARAMETERS, raises=_VOTE_RAISES)
def none_of_group(group, pred, /) -> bool:
    """Tell whether `pred` holds for no work-item of the group.

    {parameters}

    Returns
    -------
    bool
        The vote, the same in every work-item of the group.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def vote(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.none_of_group(item.get_group(), a[i] > 2)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> vote[dk.NdRange(8, 4)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 0, 0, 0, 0, 0, 0, 0], dtype=int32)
    """


@declares("dk.shift_group_left", raises=_SHUFFLE_RAISES)
def shift_group_left(sub_group, x, delta=1, /):
    """Give the `x` of the lane `delta` places after this one in the sub-group.

    Parameters
    ----------
    sub_group : sub-group
        ``item.get_sub_group()`` of the kernel's nd-item; every lane of it must make the
        call.
    x : int, float or bool
        This work-item's value.
    delta : int, default 1
        How many lanes further to read from, the same in every lane.

    Returns
    -------
    scalar
        Lane ``lane + delta``'s `x`; unspecified where that is beyond the sub-group.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def next_value(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.shift_group_left(item.get_sub_group(), a[i], 1)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> next_value[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)[[0, 1, 2, 4, 5, 6]]
    array([1, 2, 3, 5, 6, 7], dtype=int32)
    """


@declares("dk.shift_group_right", raises=_SHUFFLE_RAISES)
def shift_group_right(sub_group, x, delta=1, /):
    """Give the `x` of the lane `delta` places before this one in the sub-group.

    Parameters
    ----------
    sub_group : sub-group
        ``item.get_sub_group()`` of the kernel's nd-item; every lane of it must make the
        call.
    x : int, float or bool
        This work-item's value.
    delta : int, default 1
        How many lanes back to read from, the same in every lane.

    Returns
    -------
    scalar
        Lane ``lane - delta``'s `x`; unspecified where that is below lane 0.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def previous_value(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.shift_group_right(item.get_sub_group(), a[i], 1)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> previous_value[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)[[1, 2, 3, 5, 6, 7]]
    array([0, 1, 2, 4, 5, 6], dtype=int32)
    """


@declares("dk.permute_group_by_xor", raises=_SHUFFLE_RAISES)
def permute_group_by_xor(sub_group, x, mask, /):
    """Give the `x` of the lane whose id is this lane's xor `mask`, e.g. for butterflies.

    Parameters
    ----------
    sub_group : sub-group
        ``item.get_sub_group()`` of the kernel's nd-item; every lane of it must make the
        call.
    x : int, float or bool
        This work-item's value.
    mask : int
        The bits to flip in the lane id, the same in every lane.

    Returns
    -------
    scalar
        Lane ``lane ^ mask``'s `x`.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def swap_pairs(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.permute_group_by_xor(item.get_sub_group(), a[i], 1)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> swap_pairs[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([1, 0, 3, 2, 5, 4, 7, 6], dtype=int32)
    """


@declares("dk.select_from_group", raises=_SHUFFLE_RAISES)
def select_from_group(sub_group, x, remote_local_id, /):
    """Give the `x` of the sub-group's lane `remote_local_id`, which may differ per lane.

    Parameters
    ----------
    sub_group : sub-group
        ``item.get_sub_group()`` of the kernel's nd-item; every lane of it must make the
        call.
    x : int, float or bool
        This work-item's value.
    remote_local_id : int
        The lane to read from, 0 to the sub-group's size - 1.

    Returns
    -------
    scalar
        That lane's `x`.

    {raises}

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def reverse(item, a, out):
    ...     i = item.get_global_id(0)
    ...     sg = item.get_sub_group()
    ...     out[i] = dk.select_from_group(sg, a[i], 3 - sg.get_local_id())
    >>> out = dpnp.empty(8, dtype="i4")
    >>> reverse[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([3, 2, 1, 0, 7, 6, 5, 4], dtype=int32)
    """
