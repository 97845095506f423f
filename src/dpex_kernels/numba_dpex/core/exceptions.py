"""numba-dpex 0.23's exception classes, at their import path `numba_dpex.core.exceptions`.

Each takes numba-dpex's constructor arguments and subclasses the dpex_kernels error (or the
built-in one) raised in its place, so `except` clauses written for either catch it. The compat
layer raises the range errors from `NdRange`, and a launch through `call_kernel` or
`kernel[range]` raises `ExecutionQueueInferenceError` and `MissingSpecializationError` for
dk's `ExecutionQueueError` and `KernelSignatureError`; dk's own errors stay what they are.
"""

from __future__ import annotations

from ...errors import (
    ExecutionQueueError,
    InvalidRangeError,
    KernelCompileError,
    KernelSignatureError,
)


class KernelHasReturnValueError(TypeError):
    """A kernel returns a value, or its signature declares one."""

    def __init__(self, kernel_name, return_type, sig=None) -> None:
        self.return_type = return_type
        where = f"signature {sig}" if sig else f"kernel '{kernel_name}'"
        super().__init__(f"{where} returns {return_type}; a kernel returns nothing (void)")


class InvalidKernelLaunchArgsError(InvalidRangeError):
    """A kernel was launched without a valid global and local range."""

    def __init__(self, kernel_name) -> None:
        super().__init__(
            f"kernel '{kernel_name}' was launched without a valid range: pass a Range or an NdRange"
        )


class UnknownGlobalRangeError(InvalidRangeError):
    """A kernel was launched without a global range."""

    def __init__(self, kernel_name) -> None:
        super().__init__(f"kernel '{kernel_name}' was launched without a global range")


class IllegalRangeValueError(InvalidRangeError):
    """A launch range is empty or not made of ints."""

    def __init__(self, kernel_name) -> None:
        super().__init__(f"the range of kernel '{kernel_name}' is not 1 to 3 ints")


class UnsupportedNumberOfRangeDimsError(InvalidRangeError):
    """A range has more dimensions than the device takes."""

    def __init__(self, kernel_name, ndims, max_work_item_dims) -> None:
        super().__init__(
            f"the range of kernel '{kernel_name}' has {ndims} dimensions; the device takes "
            f"{max_work_item_dims} at most"
        )


class UnmatchedNumberOfRangeDimsError(InvalidRangeError):
    """An NdRange's global and local ranges differ in rank."""

    def __init__(self, kernel_name, global_ndims, local_ndims) -> None:
        owner = f"kernel '{kernel_name}': " if kernel_name else ""
        super().__init__(
            f"{owner}the global range has {global_ndims} dimensions and the local range "
            f"{local_ndims}; give both the same number"
        )


class UnsupportedWorkItemSizeError(InvalidRangeError):
    """A dimension asks for more work-items than the device has."""

    def __init__(self, kernel_name, dim, requested_work_items, supported_work_items) -> None:
        super().__init__(
            f"kernel '{kernel_name}' asks for {requested_work_items} work-items in dimension "
            f"{dim}; the device takes {supported_work_items} at most"
        )


class UnsupportedGroupWorkItemSizeError(InvalidRangeError):
    """A local size does not divide its global size."""

    def __init__(self, kernel_name, dim, work_groups, work_items) -> None:
        owner = f"kernel '{kernel_name}': " if kernel_name else ""
        super().__init__(
            f"{owner}the local size {work_items} does not divide the global size "
            f"{work_groups} in dimension {dim}; pad the global range to a multiple of it"
        )


class ExecutionQueueInferenceError(ExecutionQueueError):
    """The arrays of a launch are not on one queue (compute follows data)."""

    def __init__(self, kernel_name, *, usmarray_argnum_list) -> None:
        if usmarray_argnum_list is None:
            detail = "it has no USM array argument"
        else:
            detail = f"arguments {', '.join(map(str, usmarray_argnum_list))} are on other queues"
        super().__init__(f"kernel '{kernel_name}' has no one queue to run on: {detail}")


class UnsupportedBackendError(Exception):
    """A device of a backend the compiler does not target."""

    def __init__(self, kernel_name, backend, supported_backends) -> None:
        super().__init__(
            f"kernel '{kernel_name}' cannot run on a {backend} device; backends: "
            f"{', '.join(supported_backends)}"
        )


class UncompiledKernelError(Exception):
    """A compiled kernel's attribute was read before it was compiled."""

    def __init__(self, kernel_name) -> None:
        super().__init__(f"kernel '{kernel_name}' is not compiled yet")


class UnreachableError(Exception):
    """The compiler took a path it should never take."""

    def __init__(self) -> None:
        super().__init__("internal error: unreachable code ran")


class UnsupportedKernelArgumentError(TypeError):
    """A kernel argument of a type kernels cannot take."""

    def __init__(self, type, value, kernel_name="") -> None:  # noqa: A002  (numba-dpex's name)
        super().__init__(
            f"kernel '{kernel_name}' cannot take argument {value!r} of type {type}: pass a "
            f"dpnp array, a usm_ndarray or a scalar"
        )


class SUAIProtocolError(TypeError):
    """An array argument without __sycl_usm_array_interface__."""

    def __init__(self, kernel_name, arg) -> None:
        super().__init__(
            f"kernel '{kernel_name}': {arg!r} has no __sycl_usm_array_interface__; pass a USM "
            f"array (dpnp.asarray(x, device=...))"
        )


class UnsupportedCompilationModeError(Exception):
    """Object mode was asked for; kernels compile in nopython mode only."""

    def __init__(self) -> None:
        super().__init__("kernels cannot compile in object mode (force_pyobject)")


class InvalidKernelSpecializationError(TypeError):
    """A kernel signature has argument types kernels cannot take."""

    def __init__(self, kernel_name, invalid_sig, unsupported_argnum_list) -> None:
        positions = ", ".join(map(str, unsupported_argnum_list))
        super().__init__(
            f"kernel '{kernel_name}' cannot be specialised for {invalid_sig}: arguments "
            f"{positions} are not usm_ndarray types or scalars (declare arrays with "
            f"dpex.usm_ndarray(ndim, layout, dtype), the dk.usm_array they stand for)"
        )


class MissingSpecializationError(KernelSignatureError):
    """A specialised kernel was launched with argument types none of its signatures has."""

    def __init__(self, kernel_name, argtypes) -> None:
        super().__init__(f"kernel '{kernel_name}' has no specialisation for {argtypes}")


class UnsupportedParforError(KernelCompileError):
    """A parallel loop cannot be offloaded."""

    def __init__(self, extra_msg=None) -> None:
        super().__init__(
            "the expression cannot be offloaded" + (f": {extra_msg}" if extra_msg else "")
        )


class IllegalIntEnumLiteralValueError(Exception):
    """An enum literal made from something other than a kernel API enum member."""

    def __init__(self) -> None:
        super().__init__("an enum literal is made from a MemoryOrder, MemoryScope or AddressSpace")


class InternalError(Exception):
    """Something failed inside the compiler."""

    def __init__(self, extra_msg=None) -> None:
        super().__init__(extra_msg or "internal error: the compile failed")


__all__ = [
    "ExecutionQueueInferenceError",
    "IllegalIntEnumLiteralValueError",
    "IllegalRangeValueError",
    "InternalError",
    "InvalidKernelLaunchArgsError",
    "InvalidKernelSpecializationError",
    "KernelHasReturnValueError",
    "MissingSpecializationError",
    "SUAIProtocolError",
    "UncompiledKernelError",
    "UnknownGlobalRangeError",
    "UnmatchedNumberOfRangeDimsError",
    "UnreachableError",
    "UnsupportedBackendError",
    "UnsupportedCompilationModeError",
    "UnsupportedGroupWorkItemSizeError",
    "UnsupportedKernelArgumentError",
    "UnsupportedNumberOfRangeDimsError",
    "UnsupportedParforError",
    "UnsupportedWorkItemSizeError",
]
