"""The error classes users catch (docs/reference.md), and what a debug launch reports."""

from __future__ import annotations

import struct


class KernelSignatureError(TypeError):
    """A launch's arguments match none of an eager kernel's declared signatures.

    Raised before anything is compiled or submitted. The message names the kernel, the types
    of the arguments given, and for each signature the first argument that differs (by name
    and position) and in which field: dtype, ndim, layout, usm_type or device. Also raised for
    a launch that would write an array whose ``flags.writable`` is false.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(dk.void(dk.usm_array(dk.float32, 1)))
    ... def fill(a):
    ...     a[dk.get_global_id(0)] = 1
    >>> fill[4](dpnp.zeros(4, dtype="i4"))
    Traceback (most recent call last):
    ...
    dpex_kernels.errors.KernelSignatureError: kernel 'fill' has no signature for arguments ...
    """


class KernelCompileError(Exception):
    """A kernel or device function cannot be compiled for its SYCL device.

    Raised where the kernel compiles: at decoration for an eager kernel, at the first launch
    with new argument types for a lazy one. The message names the kernel, the file and line
    of the statement and its source, with a hint where one helps: Python objects, array
    allocation, host-only calls, recursion, a non-constant index dimension, or more local
    memory than the device has. A failure inside dpex_kernels itself says "internal error" and
    keeps the original exception as its ``__cause__``.

    Examples
    --------
    >>> import dpnp
    >>> import numpy as np
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def allocates(a):
    ...     a[0] = np.empty(3)[0]
    >>> allocates[1](dpnp.zeros(1))
    Traceback (most recent call last):
    ...
    dpex_kernels.errors.KernelCompileError: cannot compile kernel 'allocates' for a SYCL device: ...
    """


class InvalidRangeError(ValueError, TypeError):
    """A launch range is malformed or too large for the device or the kernel.

    Raised before anything is submitted: by ``dk.Range`` and ``dk.NdRange``, by
    ``kernel[range]`` for what is not a range, and by the launch for a range beyond the
    device's limits or the kernel's ``max_work_group_size``. It is a ``ValueError`` and a
    ``TypeError``, so code catching either sees it.

    Examples
    --------
    >>> import dpex_kernels as dk
    >>> dk.Range(4, -1)
    Traceback (most recent call last):
    ...
    dpex_kernels.errors.InvalidRangeError: Range dimensions must be >= 0; got -1
    """


class ExecutionQueueError(ValueError):
    """A launch's USM arrays live on different queues, contexts or devices.

    A kernel runs where its data is (compute follows data), so its arrays must share one
    queue; the message names the arguments and their devices. Copy the arrays to one queue
    first (``x.to_device(y.sycl_queue)``).

    Examples
    --------
    >>> import dpctl
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def add(a, b):
    ...     a[dk.get_global_id(0)] += b[dk.get_global_id(0)]
    >>> a = dpnp.zeros(2, sycl_queue=dpctl.SyclQueue())
    >>> b = dpnp.zeros(2, sycl_queue=dpctl.SyclQueue())
    >>> add[2](a, b)
    Traceback (most recent call last):
    ...
    dpex_kernels.errors.ExecutionQueueError: kernel 'add' got USM arrays on different SYCL ...
    """


class DeviceNotFoundError(ValueError):
    """No SYCL device matches the filter string or device asked for.

    Raised by ``dk.usm_array`` (and wherever a device is named); the message lists the
    devices this process sees, with their filter strings.

    Examples
    --------
    >>> import dpex_kernels as dk
    >>> dk.usm_array(dk.float32, 1, device="level_zero:gpu:7")
    Traceback (most recent call last):
    ...
    dpex_kernels.errors.DeviceNotFoundError: No SYCL device matches 'level_zero:gpu:7'. ...
    """


class KernelBoundsError(IndexError):
    """A kernel indexed an array out of bounds, seen by ``debug=True`` or the simulator.

    A ``debug=True`` launch waits for the kernel and raises this from the launch call: the
    first work-item out of bounds stops before the access, so nothing beyond the array was
    written. The message names the kernel, the array, the index, the axis' size and the
    source line.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(debug=True)
    ... def shift(a):
    ...     i = dk.get_global_id(0)
    ...     a[i + 1] = a[i]
    >>> shift[4](dpnp.zeros(4))
    Traceback (most recent call last):
    ...
    dpex_kernels.errors.KernelBoundsError: kernel 'shift' (...): index 4 is out of bounds for ...
    """


class KernelRaceError(RuntimeError):
    """The simulator saw a data race, a divergent barrier or a read of unwritten memory.

    Raised by simulated launches (``kernel.simulate[range](...)``): two work-items writing the
    same element, or one writing and one reading it, with no atomic and no barrier between
    them; a barrier or group algorithm that not every work-item of the group reached; a read
    of local or private memory never written. The message names the array, the element and
    the work-items with their source lines.

    Examples
    --------
    >>> import numpy as np
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def last_wins(a):
    ...     a[0] = dk.get_global_id(0)
    >>> last_wins.simulate[4](np.zeros(1))
    Traceback (most recent call last):
    ...
    dpex_kernels.errors.KernelRaceError: data race on 'a'[0] in kernel 'last_wins' ...
    """


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
