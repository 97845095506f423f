"""numba-dpex 0.23's import path of its launchers."""

from ..kernels import call_kernel, call_kernel_async

__all__ = ["call_kernel", "call_kernel_async"]
