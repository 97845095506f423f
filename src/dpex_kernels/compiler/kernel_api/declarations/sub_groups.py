"""Declarations (see __init__.py) of dk.sub_group.*: the OpenCL-style sub-group calls."""

from __future__ import annotations

from ..spirv import LOCAL_MEM_FENCE
from . import declares


@declares("dk.sub_group.get_local_id")
def sub_group_get_local_id() -> int:
    """Give the work-item's lane in its sub-group, e.g. to pick a lane to broadcast from.

    Returns
    -------
    int
        The lane, an int64 from 0 to ``dk.sub_group.get_size() - 1``.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, with ``sub_group_size=1`` (no sub-group operations then).
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def lanes(out):
    ...     out[dk.get_global_id(0)] = dk.sub_group.get_local_id()
    >>> out = dpnp.empty(8, dtype="i8")
    >>> lanes[dk.NdRange(8, 8)](out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 1, 2, 3, 0, 1, 2, 3])
    """


@declares("dk.sub_group.get_size")
def sub_group_get_size() -> int:
    """Give the number of lanes of the work-item's sub-group.

    The last sub-group of a work-group may be smaller than the others.

    Returns
    -------
    int
        The lane count, an int64.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, with ``sub_group_size=1`` (no sub-group operations then).
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def sizes(out):
    ...     out[dk.get_global_id(0)] = dk.sub_group.get_size()
    >>> out = dpnp.empty(8, dtype="i8")
    >>> sizes[dk.NdRange(8, 8)](out).wait()
    >>> dpnp.asnumpy(out)
    array([4, 4, 4, 4, 4, 4, 4, 4])
    """


@declares("dk.sub_group.reduce_add")
def sub_group_reduce_add(x, /):
    """Sum `x` over the lanes of the sub-group, without local memory or barriers.

    Every lane of the sub-group must make the call.

    Parameters
    ----------
    x : int or float
        This lane's value: int32, int64, uint32, uint64, float32 or float64.

    Returns
    -------
    scalar
        The sum over the sub-group, of `x`'s type, the same in every lane.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `x` has another type, or with ``sub_group_size=1``.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def sums(a, out):
    ...     i = dk.get_global_id(0)
    ...     out[i] = dk.sub_group.reduce_add(a[i])
    >>> out = dpnp.empty(8, dtype="i4")
    >>> sums[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([ 6,  6,  6,  6, 22, 22, 22, 22], dtype=int32)
    """


@declares("dk.sub_group.shuffle")
def sub_group_shuffle(x, lane, /):
    """Give `x` as lane `lane` of the sub-group holds it: each lane may read another one.

    Every lane of the sub-group must make the call.

    Parameters
    ----------
    x : int or float
        This lane's value: int32, int64, uint32, uint64, float32 or float64.
    lane : int
        The lane to read from, 0 to ``dk.sub_group.get_size() - 1`` (may differ per lane).

    Returns
    -------
    scalar
        That lane's `x`, of `x`'s type.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `x` has another type, or with ``sub_group_size=1``.
    TypeError
        If called from host code.

    Examples
    --------
    Reverse the values of each sub-group of 4:

    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def reverse(a, out):
    ...     i = dk.get_global_id(0)
    ...     out[i] = dk.sub_group.shuffle(a[i], 3 - dk.sub_group.get_local_id())
    >>> out = dpnp.empty(8, dtype="i4")
    >>> reverse[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([3, 2, 1, 0, 7, 6, 5, 4], dtype=int32)
    """


@declares("dk.sub_group.broadcast")
def sub_group_broadcast(x, lane, /):
    """Give every lane of the sub-group lane `lane`'s `x`.

    Every lane of the sub-group must make the call, with the same `lane`.

    Parameters
    ----------
    x : int or float
        This lane's value: int32, int64, uint32, uint64, float32 or float64.
    lane : int
        The lane whose value all get, the same in every lane.

    Returns
    -------
    scalar
        Lane `lane`'s `x`, of `x`'s type.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `x` has another type, or with ``sub_group_size=1``.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def firsts(a, out):
    ...     i = dk.get_global_id(0)
    ...     out[i] = dk.sub_group.broadcast(a[i], 0)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> firsts[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 0, 0, 0, 4, 4, 4, 4], dtype=int32)
    """


@declares("dk.sub_group.barrier")
def sub_group_barrier(flags: int = LOCAL_MEM_FENCE) -> None:
    """Wait until every lane of the sub-group gets here: a barrier for sub-group memory.

    Parameters
    ----------
    flags : int, default dk.LOCAL_MEM_FENCE
        Which memory the barrier orders, as a constant: ``dk.LOCAL_MEM_FENCE``,
        ``dk.GLOBAL_MEM_FENCE`` or both or-ed.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `flags` is anything else, or with ``sub_group_size=1``.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def rotate(a):
    ...     i = dk.get_global_id(0)
    ...     lane = dk.sub_group.get_local_id()
    ...     tile = dk.local.array(8, dk.int32)
    ...     tile[dk.get_local_id(0)] = a[i]
    ...     dk.sub_group.barrier()
    ...     a[i] = tile[dk.get_local_id(0) - lane + (lane + 1) % 4]
    >>> a = dpnp.arange(8, dtype="i4")
    >>> rotate[dk.NdRange(8, 8)](a).wait()
    >>> dpnp.asnumpy(a)
    array([1, 2, 3, 0, 5, 6, 7, 4], dtype=int32)
    """
