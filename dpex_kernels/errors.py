"""The error classes of the public contract (API.md §4)."""


class KernelSignatureError(TypeError):
    """A call matched none of an eager kernel's declared signatures."""


class KernelCompileError(Exception):
    """A kernel or device function cannot be compiled for a SYCL device."""


class InvalidRangeError(ValueError, TypeError):
    """A launch range is malformed; raised before anything is submitted."""


class ExecutionQueueError(ValueError):
    """USM array arguments live on different queues, contexts or devices."""


class DeviceNotFoundError(ValueError):
    """No SYCL device matches what was asked for."""


class KernelBoundsError(IndexError):
    """A kernel compiled with debug=True indexed an array out of bounds."""


__all__ = [
    "DeviceNotFoundError",
    "ExecutionQueueError",
    "InvalidRangeError",
    "KernelBoundsError",
    "KernelCompileError",
    "KernelSignatureError",
]
