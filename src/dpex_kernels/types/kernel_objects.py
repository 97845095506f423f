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
    """sycl::memory_order: how an atomic operation orders the memory accesses around it."""

    RELAXED = 0
    ACQUIRE = 1
    RELEASE = 3
    ACQ_REL = 4
    SEQ_CST = 5


class MemoryScope(IntEnum):
    """sycl::memory_scope: which work-items an atomic operation's ordering applies to."""

    WORK_ITEM = 0
    SUB_GROUP = 1
    WORK_GROUP = 2
    DEVICE = 3
    SYSTEM = 4


class AddressSpace(IntEnum):
    """SYCL's address spaces (numba-dpex's names): where an AtomicRef's element lives."""

    PRIVATE = 0
    GLOBAL = 1
    CONSTANT = 2
    LOCAL = 3
    GENERIC = 4


class GroupOperation(IntEnum):
    """The binary operations of the group algorithms (dk.plus, dk.minimum, ...)."""

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
    """Work-group local memory whose shape is given at launch: pass one as a kernel argument
    (launched with an NdRange); inside the kernel it is an array each work-group shares."""

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
        """The work-group memory one work-group gets."""
        return int(np.prod(self.shape)) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"LocalAccessor({self.shape}, {self.dtype.name})"
