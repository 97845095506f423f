"""The kernel language's objects that exist outside kernels: memory orders and scopes, address
spaces, group operations, and LocalAccessor, the work-group memory a launch sizes.

Numba-free: host code makes them (a LocalAccessor is a launch argument) and the AOT runtime
takes them. Inside kernels they are compile-time constants (compiler/kernel_api/).
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from .spec import dtype_name


class MemoryOrder(IntEnum):
    """How an atomic operation orders the memory accesses around it (``sycl::memory_order``).

    Pass a member, as a constant, to ``dk.AtomicRef``, its methods and ``dk.atomic_fence``.
    Numbered as numba-dpex numbers them; ``dpex_kernels.numba_dpex`` uses the same enum.

    Attributes
    ----------
    RELAXED
        Atomicity only: no other access is ordered by the operation.
    ACQUIRE
        Accesses after the operation stay after it (for loads).
    RELEASE
        Accesses before the operation stay before it (for stores).
    ACQ_REL
        Both: for read-modify-write operations.
    SEQ_CST
        Both, and one order of all ``SEQ_CST`` operations that every work-item sees.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def count(total):
    ...     dk.AtomicRef(total, 0, memory_order=dk.MemoryOrder.ACQ_REL).fetch_add(1)
    >>> total = dpnp.zeros(1, dtype="i4")
    >>> count[16](total).wait()
    >>> int(total[0])
    16
    """

    RELAXED = 0
    ACQUIRE = 1
    RELEASE = 3
    ACQ_REL = 4
    SEQ_CST = 5


class MemoryScope(IntEnum):
    """Which work-items an atomic operation's ordering applies to (``sycl::memory_scope``).

    Pass a member, as a constant, to ``dk.AtomicRef``, ``dk.atomic_fence`` and
    ``dk.group_barrier``; a narrower scope can be cheaper.

    Attributes
    ----------
    WORK_ITEM
        This work-item alone.
    SUB_GROUP
        The work-items of its sub-group.
    WORK_GROUP
        The work-items of its work-group.
    DEVICE
        Every work-item on the device.
    SYSTEM
        Every work-item on every device, and the host.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def count(total):
    ...     ref = dk.AtomicRef(total, 0, memory_scope=dk.MemoryScope.DEVICE)
    ...     ref.fetch_add(1)
    >>> total = dpnp.zeros(1, dtype="i4")
    >>> count[16](total).wait()
    >>> int(total[0])
    16
    """

    WORK_ITEM = 0
    SUB_GROUP = 1
    WORK_GROUP = 2
    DEVICE = 3
    SYSTEM = 4


class AddressSpace(IntEnum):
    """Where memory lives, in SYCL's (and numba-dpex's) names.

    ``dk.AtomicRef`` accepts one as `address_space` for numba-dpex's code; dk reads the
    address space from the array itself.

    Attributes
    ----------
    PRIVATE
        A work-item's own memory (``dk.private.array``).
    GLOBAL
        Device memory: USM arrays.
    CONSTANT
        Read-only device memory.
    LOCAL
        A work-group's shared memory (``dk.local.array``, ``dk.LocalAccessor``).
    GENERIC
        Any of the above, resolved at run time.

    Examples
    --------
    >>> import dpex_kernels as dk
    >>> dk.AddressSpace.LOCAL.name, int(dk.AddressSpace.GLOBAL)
    ('LOCAL', 1)
    """

    PRIVATE = 0
    GLOBAL = 1
    CONSTANT = 2
    LOCAL = 3
    GENERIC = 4


class GroupOperation(IntEnum):
    """The operations the group algorithms combine values with (``dk.plus``, ...).

    Each member is also a top-level name, as SYCL spells them: ``dk.plus``, ``dk.multiplies``,
    ``dk.minimum``, ``dk.maximum``, ``dk.bit_and``, ``dk.bit_or``, ``dk.bit_xor``,
    ``dk.logical_and``, ``dk.logical_or``. Pass one, as a constant, to
    ``dk.reduce_over_group``, ``dk.inclusive_scan_over_group`` and
    ``dk.exclusive_scan_over_group``.

    Attributes
    ----------
    PLUS
        ``x + y`` (identity 0); ``dk.plus``.
    MULTIPLIES
        ``x * y`` (identity 1); ``dk.multiplies``.
    MINIMUM
        ``min(x, y)`` (identity: the type's largest value); ``dk.minimum``.
    MAXIMUM
        ``max(x, y)`` (identity: the type's smallest value); ``dk.maximum``.
    BIT_AND
        ``x & y`` on integers (identity: all bits set); ``dk.bit_and``.
    BIT_OR
        ``x | y`` on integers (identity 0); ``dk.bit_or``.
    BIT_XOR
        ``x ^ y`` on integers (identity 0); ``dk.bit_xor``.
    LOGICAL_AND
        ``x and y``, a bool (identity True); ``dk.logical_and``.
    LOGICAL_OR
        ``x or y``, a bool (identity False); ``dk.logical_or``.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def group_max(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.reduce_over_group(item.get_group(), a[i], dk.maximum)
    >>> out = dpnp.empty(4, dtype="i4")
    >>> group_max[dk.NdRange(4, 4)](dpnp.asarray([3, 9, 2, 7], dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([9, 9, 9, 9], dtype=int32)
    >>> dk.plus is dk.GroupOperation.PLUS
    True
    """

    PLUS = 0
    MULTIPLIES = 1
    MINIMUM = 2
    MAXIMUM = 3
    BIT_AND = 4
    BIT_OR = 5
    BIT_XOR = 6
    LOGICAL_AND = 7
    LOGICAL_OR = 8


plus = GroupOperation.PLUS
multiplies = GroupOperation.MULTIPLIES
minimum = GroupOperation.MINIMUM
maximum = GroupOperation.MAXIMUM
bit_and = GroupOperation.BIT_AND
bit_or = GroupOperation.BIT_OR
bit_xor = GroupOperation.BIT_XOR
logical_and = GroupOperation.LOGICAL_AND
logical_or = GroupOperation.LOGICAL_OR


class LocalAccessor:
    """Work-group local memory whose shape a launch gives, passed as a kernel argument.

    Inside the kernel the parameter is an array each work-group shares, as a
    ``dk.local.array`` is, but its size can depend on the launch (e.g. on the work-group
    size). Launch with a ``dk.NdRange``. A declared signature types the parameter with
    ``dk.local_accessor(dtype, ndim)``.

    Parameters
    ----------
    shape : int or tuple of int
        The shape of each work-group's array: 1 to 3 positive sizes.
    dtype : Numba type, NumPy dtype or str
        An integer or float element type.

    Attributes
    ----------
    shape : tuple of int
        The shape, as given.
    dtype : numpy.dtype
        The element type.
    ndim : int
        The number of dimensions.
    nbytes : int
        The local memory each work-group gets.

    Raises
    ------
    TypeError
        If the shape is not 1 to 3 positive ints, or the dtype not an integer or float type.
    AttributeError
        On setting an attribute: an accessor is immutable.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def reverse_groups(a, tile):
    ...     i, j = dk.get_global_id(0), dk.get_local_id(0)
    ...     tile[j] = a[i]
    ...     dk.barrier()
    ...     a[i] = tile[dk.get_local_size(0) - 1 - j]
    >>> a = dpnp.arange(8, dtype="f4")
    >>> tile = dk.LocalAccessor(4, dk.float32)
    >>> tile.nbytes
    16
    >>> reverse_groups[dk.NdRange(8, 4)](a, tile).wait()
    >>> dpnp.asnumpy(a)
    array([3., 2., 1., 0., 7., 6., 5., 4.], dtype=float32)
    """

    __slots__ = ("shape", "dtype", "_kind")

    def __init__(self, shape: int | tuple[int, ...], dtype: object):
        extents = shape if isinstance(shape, (tuple, list)) else (shape,)
        if not 1 <= len(extents) <= 3 or not all(
            isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n > 0 for n in extents
        ):
            raise TypeError(
                f"LocalAccessor shape must be a positive int or a tuple of 1 to 3 of them; "
                f"got {shape!r}"
            )
        name = dtype_name(dtype)
        if name is None or name == "bool" or name.startswith("complex"):
            raise TypeError(f"LocalAccessor dtype must be an integer or float type; got {dtype!r}")
        object.__setattr__(self, "shape", tuple(int(n) for n in extents))
        object.__setattr__(self, "dtype", np.dtype(name))
        # What the launcher's binding cache tells accessors apart by: ndim and element type.
        object.__setattr__(self, "_kind", (len(extents) << 8) | self.dtype.num)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a LocalAccessor cannot change; make a new one")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        """The local memory one work-group gets, in bytes."""
        return int(np.prod(self.shape)) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"LocalAccessor({self.shape}, {self.dtype.name})"
