"""Declarations (see __init__.py) of SYCL 2020's atomic references, fences and group barriers."""

from __future__ import annotations

from ....types.kernel_objects import MemoryOrder, MemoryScope
from . import declares


@declares("dk.AtomicRef")
def AtomicRef(  # noqa: N802  (the public name is SYCL's class name)
    ref,
    index,
    memory_order: MemoryOrder = MemoryOrder.RELAXED,
    memory_scope: MemoryScope = MemoryScope.DEVICE,
    address_space=None,
):
    """Refer to one array element for atomic operations with a memory order and scope.

    SYCL 2020's ``sycl::atomic_ref``. Its methods, each one indivisible step:

    - ``fetch_add(v)``, ``fetch_sub(v)``, ``fetch_min(v)``, ``fetch_max(v)``, and on integers
      ``fetch_and(v)``, ``fetch_or(v)``, ``fetch_xor(v)``: update the element, give the old value;
    - ``load()``, ``store(v)``, ``exchange(v)`` (gives the old value);
    - ``compare_exchange(expected, desired)``: store `desired` if the element holds `expected`
      (bitwise); gives the old value, as ``dk.atomic.compare_exchange`` does.

    Each method takes an optional last argument, a ``dk.MemoryOrder`` constant for that call
    (the reference's own otherwise).

    Parameters
    ----------
    ref : array
        A USM array argument or a ``dk.local.array``, writable, of int32, int64, uint32,
        uint64, float32 or float64 (private arrays need no atomics).
    index : int or tuple of int
        The element: an integer for a 1-d array, a tuple of integers for an n-d one.
    memory_order : MemoryOrder, default dk.MemoryOrder.RELAXED
        How the operations order this work-item's other memory accesses, as a constant.
    memory_scope : MemoryScope, default dk.MemoryScope.DEVICE
        Which work-items that ordering applies to, as a constant.
    address_space : AddressSpace, optional
        Accepted for numba-dpex's signature; the array's own address space is used.

    Returns
    -------
    AtomicRef
        The reference, a value inside the kernel.

    Raises
    ------
    KernelCompileError
        When the kernel compiles: for an array of another dtype, a read-only or private array,
        an order or scope that is not a constant member of its enum, bitwise methods on
        floats, or an order or scope the device does not support.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def count(total):
    ...     ref = dk.AtomicRef(total, 0, memory_order=dk.MemoryOrder.RELAXED)
    ...     ref.fetch_add(2)
    >>> total = dpnp.zeros(1, dtype="i8")
    >>> count[100](total).wait()
    >>> int(total[0])
    200
    """


@declares("dk.atomic_fence")
def atomic_fence(memory_order: MemoryOrder, memory_scope: MemoryScope) -> None:
    """Order this work-item's memory accesses around the fence, as SYCL's atomic_fence does.

    A release fence before an atomic store, and an acquire fence after the atomic load that
    reads it, make the writes before the first visible after the second.

    Parameters
    ----------
    memory_order : MemoryOrder
        ``dk.MemoryOrder.ACQUIRE``, ``RELEASE``, ``ACQ_REL`` or ``SEQ_CST``, as a constant
        (``RELAXED`` orders nothing).
    memory_scope : MemoryScope
        Which work-items the ordering applies to, as a constant.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if an argument is not a constant member of its enum or the
        device does not support it in fences.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def publish(data, flag):
    ...     data[0] = 42
    ...     dk.atomic_fence(dk.MemoryOrder.RELEASE, dk.MemoryScope.DEVICE)
    ...     dk.AtomicRef(flag, 0).store(1)
    >>> data, flag = dpnp.zeros(1, dtype="i8"), dpnp.zeros(1, dtype="i4")
    >>> publish[1](data, flag).wait()
    >>> int(data[0]), int(flag[0])
    (42, 1)
    """


@declares("dk.group_barrier")
def group_barrier(group, fence_scope: MemoryScope | None = None) -> None:
    """Wait until every work-item of the group gets here, ordering memory as a barrier does.

    SYCL 2020's ``group_barrier``. Every work-item of the group must make the call.

    Parameters
    ----------
    group : group or sub-group
        ``item.get_group()`` or ``item.get_sub_group()`` of the kernel's nd-item.
    fence_scope : MemoryScope, optional
        Which work-items see the memory ordered, as a constant; by default the group's own
        scope (``WORK_GROUP`` for a work-group, ``SUB_GROUP`` for a sub-group).

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `fence_scope` is not a constant ``dk.MemoryScope`` member
        or the device does not support it in fences.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def rotate(item, a):
    ...     i, j = item.get_global_id(0), item.get_local_id(0)
    ...     tile = dk.local.array(4, dk.int64)
    ...     tile[j] = a[i]
    ...     dk.group_barrier(item.get_group())
    ...     a[i] = tile[(j + 1) % 4]
    >>> a = dpnp.arange(8)
    >>> rotate[dk.NdRange(8, 4)](a).wait()
    >>> dpnp.asnumpy(a)
    array([1, 2, 3, 0, 5, 6, 7, 4])
    """
