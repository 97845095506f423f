"""numba-dpex 0.23's index space types for kernel signatures: `ItemType(ndim)`,
`NdItemType(ndim)`, `GroupType(ndim)`.

They name the first argument type of a specialised item kernel,
`dpex.kernel((ItemType(1), arrty, arrty))`, or a device function's item or group parameter;
dpex.kernel and dpex.device_func read them. dk compiles one item type for every rank (the
launch's rank is a constant when the kernel is specialised for it), so `ndim` says what
numba-dpex would have compiled and nothing more.
"""

from __future__ import annotations

from numba.core import errors, types


class IndexSpaceType(types.Type):
    """An index space id type of a given rank, as signatures name it."""

    kind = "IndexSpace"

    def __init__(self, ndim: int):
        if isinstance(ndim, bool) or not isinstance(ndim, int) or not 1 <= ndim <= 3:
            raise errors.TypingError(f"{self.kind}Type has 1, 2 or 3 dimensions; got {ndim!r}")
        self.ndim = ndim
        super().__init__(name=f"{self.kind}<{ndim}>")


class ItemType(IndexSpaceType):
    """The type of a Range kernel's kapi.Item."""

    kind = "Item"


class NdItemType(IndexSpaceType):
    """The type of an NdRange kernel's kapi.NdItem."""

    kind = "NdItem"


class GroupType(IndexSpaceType):
    """The type of an NdItem's kapi.Group."""

    kind = "Group"


__all__ = ["GroupType", "ItemType", "NdItemType"]
