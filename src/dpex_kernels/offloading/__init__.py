"""@dk.offload: prange loops and array expressions of a Numba-compiled function on the device."""

from .dispatcher import OffloadDispatcher, OffloadedKernel, OffloadFallbackWarning, offload

__all__ = ["OffloadDispatcher", "OffloadFallbackWarning", "OffloadedKernel", "offload"]
