"""The OpenCL runtime's own account of a failed program build (CL_PROGRAM_BUILD_LOG).

dpctl raises SyclProgramCompilationError with an empty message, so a kernel that a runtime
cannot build (PoCL, say) failed without a reason. On OpenCL devices the SPIR-V is built once
more through OpenCL itself, with the ICD loader that float_atomics.py asks, and the runtime's
build log is read back. Numba-free: device.py calls it when a build fails.
"""

from __future__ import annotations

import ctypes

import dpctl

from .float_atomics import opencl_devices

_CL_PROGRAM_BUILD_LOG = 0x1183
#: The most log lines a message carries: the runtime's errors come last.
MAX_LINES = 40
_ERRORS = {
    -5: "CL_OUT_OF_RESOURCES",
    -6: "CL_OUT_OF_HOST_MEMORY",
    -11: "CL_BUILD_PROGRAM_FAILURE",
    -30: "CL_INVALID_VALUE",
    -33: "CL_INVALID_DEVICE",
    -42: "CL_INVALID_BINARY",
    -43: "CL_INVALID_BUILD_OPTIONS",
    -59: "CL_INVALID_OPERATION",
}

_HANDLE, _UINT, _SIZE, _STATUS = ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t, ctypes.c_int32
_SIGNATURES = {
    "clCreateContext": (
        _HANDLE,
        [_HANDLE, _UINT, ctypes.POINTER(_HANDLE), _HANDLE, _HANDLE, ctypes.POINTER(_STATUS)],
    ),
    "clCreateProgramWithIL": (
        _HANDLE,
        [_HANDLE, ctypes.c_char_p, _SIZE, ctypes.POINTER(_STATUS)],
    ),
    "clBuildProgram": (
        _STATUS,
        [_HANDLE, _UINT, ctypes.POINTER(_HANDLE), ctypes.c_char_p, _HANDLE, _HANDLE],
    ),
    "clGetProgramBuildInfo": (
        _STATUS,
        [_HANDLE, _HANDLE, _UINT, _SIZE, _HANDLE, ctypes.POINTER(_SIZE)],
    ),
    "clReleaseProgram": (_STATUS, [_HANDLE]),
    "clReleaseContext": (_STATUS, [_HANDLE]),
}


def _error(code: int) -> str:
    return f"{code} ({_ERRORS[code]})" if code in _ERRORS else str(code)


def _read_log(lib, program: int, device: ctypes.c_void_p) -> str:
    size = ctypes.c_size_t()
    getter = lib.clGetProgramBuildInfo
    if getter(program, device, _CL_PROGRAM_BUILD_LOG, 0, None, ctypes.byref(size)) != 0:
        return ""
    buffer = ctypes.create_string_buffer(size.value)
    if getter(program, device, _CL_PROGRAM_BUILD_LOG, size, buffer, None) != 0:
        return ""
    return buffer.value.decode(errors="replace").strip()


def _format(log: str) -> str:
    lines = log.splitlines()
    dropped = len(lines) - MAX_LINES
    shown = [f"    {line}".rstrip() for line in lines[-MAX_LINES:]]
    head = "build log of the OpenCL runtime"
    head += f" (its last {MAX_LINES} lines of {len(lines)}):" if dropped > 0 else ":"
    return "\n".join([head, *shown])


def _build(lib, spirv: bytes, device: ctypes.c_void_p) -> str:
    """Build `spirv` in a context of its own; the log, or what OpenCL said instead."""
    status = ctypes.c_int32()
    devices = (ctypes.c_void_p * 1)(device)
    context = lib.clCreateContext(None, 1, devices, None, None, ctypes.byref(status))
    if not context:
        return f"no build log: OpenCL could not make a context ({_error(status.value)})"
    try:
        program = lib.clCreateProgramWithIL(context, spirv, len(spirv), ctypes.byref(status))
        if not program:
            return (
                f"no build log: the OpenCL runtime refused the SPIR-V module "
                f"(clCreateProgramWithIL: {_error(status.value)})"
            )
        try:
            built = lib.clBuildProgram(program, 1, devices, b"", None, None)
            log = _read_log(lib, program, device)
        finally:
            lib.clReleaseProgram(program)
    finally:
        lib.clReleaseContext(context)
    if built == 0:
        return "no build log: the OpenCL runtime builds this SPIR-V when asked directly"
    if not log:
        return f"no build log: the OpenCL runtime failed the build ({_error(built)}), said no more"
    return _format(log)


def build_log(spirv: bytes, device: dpctl.SyclDevice) -> str:
    """The runtime's build log of `spirv` on `device`, as lines for an error message, or one
    line saying why there is none: what a user needs when a kernel does not build."""
    if device.backend != dpctl.backend_type.opencl:
        backend = device.backend.name
        return f"no build log: it is read through OpenCL, and this is a {backend} device"
    lib, handles = opencl_devices(device)
    if not handles:
        return "no build log: the OpenCL ICD loader lists no device like this one"
    try:
        for name, (restype, argtypes) in _SIGNATURES.items():
            function = getattr(lib, name)
            function.restype, function.argtypes = restype, argtypes
    except AttributeError:
        return "no build log: the OpenCL ICD loader predates OpenCL 2.1 (clCreateProgramWithIL)"
    return _build(lib, spirv, handles[0])
