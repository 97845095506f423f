"""numba-dpex 0.21's import path of Range and NdRange (kernel_api's, as in numba-dpex 0.23)."""

from ...kernel_api import NdRange, Range

__all__ = ["NdRange", "Range"]
