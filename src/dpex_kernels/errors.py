"""The error classes users catch (docs/reference.md), and what a debug launch reports."""

from __future__ import annotations

import struct


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
    """A kernel compiled with debug=True (or simulated) indexed an array out of bounds."""


class KernelRaceError(RuntimeError):
    """The simulator saw a data race, a divergent barrier or a read of unwritten memory."""


#: A debug launch passes the kernel one error record: int32 status code (0: no error; the
#: first failing work-item claims it), 4 spare bytes, int64 index, int64 bound (bounds errors).
ERROR_RECORD_BYTES = 24
ERROR_RECORD_INDEX, ERROR_RECORD_BOUND = 8, 16
_ERROR_RECORD = struct.Struct("<i4xqq")
#: First argument of a bounds error in a kernel's exception table; the rest: array name,
#: axis (-1 when unknown), "file:line", the line's source.
BOUNDS_MARK = "dpex_kernels.bounds"


def launch_error(kernel_name: str, exceptions: dict, record: bytes) -> Exception | None:
    """The exception a debug launch's error record stands for; None when nothing failed."""
    code, index, bound = _ERROR_RECORD.unpack_from(record)
    if code == 0:
        return None
    exc_class, args = exceptions.get(code, (None, ()))
    if args and args[0] == BOUNDS_MARK:
        _mark, array, axis, location, source = args
        axis_of = f"axis {axis} of " if int(axis) >= 0 else ""
        named = f"'{array}'" if array else "an array"
        return KernelBoundsError(
            f"kernel '{kernel_name}' ({location}): index {index} is out of bounds for "
            f"{axis_of}{named} with size {bound}\n    {source}\nThe launch ran with "
            f"debug=True, so nothing beyond the array was written"
        )
    message = args[0] if args else "no message"
    if exc_class is None or issubclass(exc_class, IndexError):
        return KernelBoundsError(
            f"kernel '{kernel_name}' indexed an array out of bounds ({message}); the "
            f"launch ran with debug=True, so nothing beyond the array was written"
        )
    return exc_class(f"raised inside kernel '{kernel_name}': {message}")


__all__ = [
    "DeviceNotFoundError",
    "ExecutionQueueError",
    "InvalidRangeError",
    "KernelBoundsError",
    "KernelCompileError",
    "KernelRaceError",
    "KernelSignatureError",
]
