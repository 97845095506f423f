"""The SYCL side: the device queue, kernel types, raw SyclKernels and pre-flattened arguments."""

from __future__ import annotations

import ctypes
import types

import dpex_kernels as dk  # first: it points the OpenCL ICD loader at the CPU runtime

# isort: split
import dpctl
import dpctl.program
import dpnp
import numpy as np

from dpex_kernels.types import params
from dpex_kernels.types.usm_array_type import param_of

from .kernels import PY_KERNELS

DEVICE = "opencl:cpu"
NO_DISPATCHER = "dpex_kernels dispatcher not available (dk.kernel is missing)"


def dispatcher_available() -> bool:
    """Whether `dk.kernel` exists in the installed dpex_kernels."""
    return callable(getattr(dk, "kernel", None))


def scalar_type(dtype: np.dtype):
    """The Numba scalar type of a NumPy dtype."""
    return {"float32": dk.float32, "float64": dk.float64}[np.dtype(dtype).name]


def argtypes(name: str, dtype: np.dtype) -> tuple:
    """The argument types of kernel `name` for arrays of `dtype` on the benchmark device."""
    a1 = dk.usm_array(scalar_type(dtype), 1, "C", "device", DEVICE)
    a2 = dk.usm_array(scalar_type(dtype), 2, "C", "device", DEVICE)
    s = scalar_type(dtype)
    return {
        "vecadd": (a1, a1, a1),
        "triad": (a1, a1, a1, s),
        "add10": (a1,) * 10,
        "axpb": (a1, a1, s, s),
        "stencil": (a2, a2, s, s),
    }[name]


def fresh_function(name: str) -> types.FunctionType:
    """A new function object with the kernel's code, so nothing compiled before is reused."""
    f = PY_KERNELS[name]
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)


def compile_raw(name: str, dtype: np.dtype, queue: dpctl.SyclQueue) -> dpctl.program.SyclKernel:
    """Compile kernel `name` to SPIR-V with the compiler alone and build it on `queue`."""
    from dpex_kernels.compiler.compile import compile_kernel

    art = compile_kernel(fresh_function(name), argtypes(name, dtype))
    program = dpctl.program.create_program_from_spirv(queue, art.spirv)
    return program.get_sycl_kernel(art.symbol)


def jit_kernel(name: str, dtype: np.dtype, mode: str):
    """A `@dk.kernel` of kernel `name`: eager (declared signature) or lazy."""
    if mode == "eager":
        return dk.kernel(dk.void(*argtypes(name, dtype)))(fresh_function(name))
    return dk.kernel(fresh_function(name))


def sycl_kernel_of(kernel) -> dpctl.program.SyclKernel:
    """The SyclKernel a `@dk.kernel` compiled (its only definition)."""
    (compiled,) = kernel.definitions.values()
    return compiled.sycl_kernel


def _usm(x):
    return x.get_array() if isinstance(x, dpnp.ndarray) else x


_CTYPES = {
    "bool": ctypes.c_uint8,
    "int8": ctypes.c_int8,
    "uint8": ctypes.c_uint8,
    "int16": ctypes.c_int16,
    "uint16": ctypes.c_uint16,
    "int32": ctypes.c_int32,
    "uint32": ctypes.c_uint32,
    "int64": ctypes.c_int64,
    "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
}


def _slot_value(slot, arg):
    """One submit_async argument, read as types/params.py describes the slot."""
    if slot.field == params.DATA:
        u = _usm(arg)
        if u.__sycl_usm_array_interface__.get("offset", 0):
            raise ValueError("submit_async passes allocations: flatten whole arrays only")
        return u.usm_data
    if slot.field == params.SHAPE:
        return ctypes.c_int64(arg.shape[slot.axis])
    if slot.field == params.STRIDE:
        u = _usm(arg)
        return ctypes.c_int64(u.strides[slot.axis] * u.itemsize)
    value = complex(arg) if slot.field in (params.REAL, params.IMAG) else arg
    if slot.field == params.REAL:
        value = value.real
    elif slot.field == params.IMAG:
        value = value.imag
    return _CTYPES[slot.kind](value)


def flatten(args: tuple, types_: tuple) -> list:
    """Kernel arguments for submit_async, in the order types/params.py gives the compiler."""
    specs = tuple(param_of(t) for t in types_)
    return [_slot_value(slot, args[slot.param]) for slot in params.kernel_slots(specs)]


def device_array(host: np.ndarray, queue: dpctl.SyclQueue) -> dpnp.ndarray:
    """A device-USM dpnp copy of `host` on `queue`."""
    return dpnp.asarray(host, usm_type="device", sycl_queue=queue)


def device_description(queue: dpctl.SyclQueue) -> str:
    """Device name, backend and driver version, for the report."""
    d = queue.sycl_device
    return f"{d.name} ({d.filter_string}, driver {d.driver_version}, {d.max_compute_units} CUs)"
