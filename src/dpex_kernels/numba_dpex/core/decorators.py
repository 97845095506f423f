"""numba-dpex 0.23's import path of its decorators."""

from ..kernels import device_func, kernel

__all__ = ["device_func", "kernel"]
