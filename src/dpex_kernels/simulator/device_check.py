"""What the device compiler refuses, the simulator refuses: each launch is first compiled.

A lazy kernel compiles (once per argument types, kept in `definitions` like a device launch's,
so a later device launch reuses it) for the types the arguments would have on the default
device (NumPy arrays as USM arrays of the same dtype, ndim and layout); an eager kernel's
arguments must match one of its signatures. Anything the compiler refuses raises here, with
the compiler's error class (KernelCompileError, KernelSignatureError, TypeError).

Kernels that take an item or a LocalAccessor are not compiled here until the compiler has the
SYCL 2020 forms (launch.py skips them): the simulator runs them unchecked. A kernel that calls
breakpoint() is checked as a copy in which breakpoint() does nothing (devices have no debugger).
"""

from __future__ import annotations

import dataclasses
import types as pytypes

import numpy as np

from .._runtime import default_device
from ..errors import KernelSignatureError
from ..types.arguments import array_spec_of, not_passable_message
from ..types.spec import (
    ArraySpec,
    contiguity,
    explain_mismatch,
    first_difference,
    layout_of,
    scalar_name_of,
)


def numpy_spec(array: np.ndarray, device: str) -> ArraySpec:
    """A NumPy array as the USM array the device would see: same dtype, ndim and layout."""
    contig = contiguity(array.shape, array.strides, array.itemsize)
    return ArraySpec(array.dtype.name, array.ndim, layout_of(contig), "device", device, contig)


def argument_specs(kernel, args: tuple) -> tuple:
    """ArraySpec (or None for a scalar) of each argument; TypeError for what cannot be passed."""
    device = None
    specs = []
    for position, value in enumerate(args):
        spec = array_spec_of(value)
        if spec is None and isinstance(value, np.ndarray):
            device = device or default_device().filter_string
            spec = numpy_spec(value, device)
        if spec is None and scalar_name_of(value) is None:
            raise TypeError(
                f"kernel '{kernel.__name__}' argument {position} "
                f"'{kernel.param_names[position]}': {not_passable_message(value)} (the "
                f"simulator also takes NumPy arrays)"
            )
        specs.append(spec)
    return tuple(specs)


def _fitting(params: tuple, args: tuple, specs: tuple) -> tuple:
    """`specs` with NumPy arrays' usm_type and device taken from `params` (they have none)."""
    fitted = []
    for param, value, spec in zip(params, args, specs):
        if isinstance(value, np.ndarray) and isinstance(param, ArraySpec):
            spec = dataclasses.replace(spec, usm_type=param.usm_type, device=param.device)
        fitted.append(spec)
    return tuple(fitted)


def device_params(kernel, args: tuple) -> tuple:
    """The parameters (ArraySpec or scalar name) of the definition the device would run."""
    from numba.core import types

    from ..types.usm_array_type import from_spec, scalar_from_name

    specs = argument_specs(kernel, args)
    if kernel._eager:
        for compiled in kernel.definitions.values():
            if first_difference(compiled.params, args, _fitting(compiled.params, args, specs)):
                continue
            return compiled.params
        raise KernelSignatureError(
            explain_mismatch(
                kernel.__name__,
                kernel.param_names,
                [(c.params, str(sig)) for sig, c in kernel.definitions.items()],
                args,
                specs,
            )
        )
    argtypes = tuple(
        from_spec(spec) if spec is not None else scalar_from_name(scalar_name_of(value))
        for value, spec in zip(args, specs)
    )
    return _checked_kernel(kernel).compile(types.void(*argtypes)).params


def _skip_breakpoint():
    """breakpoint() as the device compiler sees it in a simulated kernel: nothing."""


def _checked_kernel(kernel):
    """The kernel the device compiler checks: itself, or a copy without its breakpoint()."""
    function = kernel.py_func
    if "breakpoint" not in function.__code__.co_names:
        return kernel
    found = getattr(kernel, "_simulator_checked", None)
    if found is None:
        from ..compiler.functions import DeviceFunction
        from ..dispatcher.jit_kernel import JitKernel

        namespace = {**function.__globals__, "breakpoint": DeviceFunction(_skip_breakpoint)}
        copy = pytypes.FunctionType(
            function.__code__, namespace, function.__name__, None, function.__closure__
        )
        found = kernel._simulator_checked = JitKernel(copy, None, **kernel.options)
    return found


def lazy_params(args: tuple) -> tuple:
    """The parameters a lazy kernel would give unchecked arguments (scalars only matter)."""
    return tuple(None if isinstance(a, np.ndarray) else scalar_name_of(a) for a in args)
