"""What the device's atomics can do, as OpenCL reports it: which float atomics compile to the
device's own (OpenCL's cl_ext_float_atomics), per dtype, address space and operation (the rest
compile to compare-and-swap loops), and which memory orders and scopes its atomics and fences
take (OpenCL 3.0's atomic capabilities).

dpctl exposes neither, so the OpenCL device with the same platform, name, vendor and driver
version is asked through the OpenCL ICD loader that dpctl's runtime uses. Devices of other back
ends (Level Zero), or a device the loader cannot name, get the loops, and their orders and
scopes are not known (so not checked). DPEX_KERNELS_FLOAT_ATOMICS=cas forces the loops
everywhere. Numba-free.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

import dpctl

#: The environment variable that chooses: "native" (the default) or "cas".
FORCE_VARIABLE = "DPEX_KERNELS_FLOAT_ATOMICS"
MODES = ("native", "cas")

_EXTENSION = "cl_ext_float_atomics"
_CL_PLATFORM_NAME = 0x0902
_CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
_CL_DEVICE_NAME = 0x102B
_CL_DEVICE_VENDOR = 0x102C
_CL_DRIVER_VERSION = 0x102D
_CL_DEVICE_EXTENSIONS = 0x1030
_CAPABILITIES = {"float32": 0x4231, "float64": 0x4232}  # CL_DEVICE_{SINGLE,DOUBLE}_FP_...
_CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES = 0x1063
_CL_DEVICE_ATOMIC_FENCE_CAPABILITIES = 0x1064
#: Bits of cl_device_atomic_capabilities -> the orders and scopes (dk.MemoryOrder and
#: dk.MemoryScope member names) each allows. OpenCL has no sub-group scope of its own: a
#: sub-group is part of its work-group, so work-group scope covers it.
_ORDER_AND_SCOPE_BITS = {
    1 << 0: ("RELAXED",),
    1 << 1: ("ACQUIRE", "RELEASE", "ACQ_REL"),
    1 << 2: ("SEQ_CST",),
    1 << 3: ("WORK_ITEM",),
    1 << 4: ("SUB_GROUP", "WORK_GROUP"),
    1 << 5: ("DEVICE",),
    1 << 6: ("SYSTEM",),
}
#: Capability bits of cl_ext_float_atomics: (space, operation) -> bit.
_BITS = {
    ("global", "add"): 1 << 1,
    ("global", "minmax"): 1 << 2,
    ("local", "add"): 1 << 17,
    ("local", "minmax"): 1 << 18,
}


_HANDLE, _UINT, _SIZE = ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t
_SIGNATURES = {
    "clGetPlatformIDs": [_UINT, ctypes.POINTER(_HANDLE), ctypes.POINTER(_UINT)],
    "clGetPlatformInfo": [_HANDLE, _UINT, _SIZE, ctypes.c_void_p, ctypes.POINTER(_SIZE)],
    "clGetDeviceIDs": [
        _HANDLE,
        ctypes.c_uint64,
        _UINT,
        ctypes.POINTER(_HANDLE),
        ctypes.POINTER(_UINT),
    ],
    "clGetDeviceInfo": [_HANDLE, _UINT, _SIZE, ctypes.c_void_p, ctypes.POINTER(_SIZE)],
}


def _load(name: str):
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    for function, argtypes in _SIGNATURES.items():
        getattr(lib, function).argtypes = argtypes
        getattr(lib, function).restype = ctypes.c_int
    return lib


def _opencl():
    """The OpenCL ICD loader (the one dpctl's runtime has loaded), or None."""
    lib = _load("libOpenCL.so.1")  # already loaded by the runtime, as a rule
    if lib is None:
        found = ctypes.util.find_library("OpenCL")
        lib = None if found is None else _load(found)
    return lib


def _info(getter, handle, param: int) -> bytes | None:
    size = ctypes.c_size_t()
    if getter(handle, param, 0, None, ctypes.byref(size)) != 0:
        return None
    buffer = ctypes.create_string_buffer(size.value)
    if getter(handle, param, size, buffer, None) != 0:
        return None
    return buffer.raw[: size.value]


def _text(getter, handle, param: int) -> str:
    raw = _info(getter, handle, param)
    return "" if raw is None else raw.rstrip(b"\0").decode(errors="replace")


def _handles(lib, count_getter, *args) -> list[ctypes.c_void_p]:
    count = ctypes.c_uint()
    if count_getter(*args, 0, None, ctypes.byref(count)) != 0 or count.value == 0:
        return []
    handles = (ctypes.c_void_p * count.value)()
    if count_getter(*args, count.value, handles, None) != 0:
        return []
    return [ctypes.c_void_p(h) for h in handles]


def _capabilities(lib, device) -> frozenset[str]:
    getter = lib.clGetDeviceInfo
    if _EXTENSION not in _text(getter, device, _CL_DEVICE_EXTENSIONS).split():
        return frozenset()
    found = set()
    for dtype, param in _CAPABILITIES.items():
        raw = _info(getter, device, param)
        if raw is None or len(raw) != 8:
            continue
        bits = int.from_bytes(raw, "little")
        for (space, operation), bit in _BITS.items():
            if bits & bit:
                found.add(f"{dtype}.{space}.{operation}")
    return frozenset(found)


def opencl_devices(device: dpctl.SyclDevice) -> tuple[ctypes.CDLL | None, list[ctypes.c_void_p]]:
    """The OpenCL ICD loader and the cl_device_ids that are `device` (same platform, name,
    vendor and driver): how OpenCL is asked what dpctl does not tell. (None, []) without one."""
    lib = _opencl()
    if lib is None:
        return None, []
    wanted = (device.sycl_platform.name, device.name, device.vendor, device.driver_version)
    matches = []
    for platform in _handles(lib, lib.clGetPlatformIDs):
        platform_name = _text(lib.clGetPlatformInfo, platform, _CL_PLATFORM_NAME)
        for handle in _handles(lib, lib.clGetDeviceIDs, platform, _CL_DEVICE_TYPE_ALL):
            getter = lib.clGetDeviceInfo
            names = (
                platform_name,
                _text(getter, handle, _CL_DEVICE_NAME),
                _text(getter, handle, _CL_DEVICE_VENDOR),
                _text(getter, handle, _CL_DRIVER_VERSION),
            )
            if names == wanted:
                matches.append(handle)
    return lib, matches


def _opencl_capabilities(device: dpctl.SyclDevice) -> frozenset[str]:
    lib, handles = opencl_devices(device)
    matches = [_capabilities(lib, handle) for handle in handles]
    # Several devices alike (two equal GPUs): what all of them can do.
    return frozenset.intersection(*matches) if matches else frozenset()


@functools.cache
def _device_capabilities(filter_string: str) -> frozenset[str]:
    device = dpctl.SyclDevice(filter_string)
    if device.backend != dpctl.backend_type.opencl:
        return frozenset()
    return _opencl_capabilities(device)


def native_float_atomics(filter_string: str) -> frozenset[str]:
    """The float atomics to compile natively for `filter_string`'s device, as
    "float32.global.add", "float64.local.minmax", …; none with DPEX_KERNELS_FLOAT_ATOMICS=cas."""
    mode = os.environ.get(FORCE_VARIABLE, "native").strip().lower() or "native"
    if mode not in MODES:
        raise ValueError(
            f"{FORCE_VARIABLE}={os.environ[FORCE_VARIABLE]!r} is not one of {', '.join(MODES)}: "
            f"unset it (native float atomics where the device has them) or set it to 'cas' "
            f"(compare-and-swap loops everywhere)"
        )
    return frozenset() if mode == "cas" else _device_capabilities(filter_string)


def _orders_and_scopes(lib, device, param: int) -> frozenset[str] | None:
    raw = _info(lib.clGetDeviceInfo, device, param)
    if raw is None or len(raw) != 8:  # before OpenCL 3.0: not reported
        return None
    bits = int.from_bytes(raw, "little")
    return frozenset(
        name for bit, names in _ORDER_AND_SCOPE_BITS.items() if bits & bit for name in names
    )


@functools.cache
def atomic_orders_and_scopes(
    filter_string: str,
) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """The memory orders and scopes (dk.MemoryOrder and dk.MemoryScope member names) that
    `filter_string`'s device takes in atomic operations and in fences; None where OpenCL
    does not say (another back end, an OpenCL before 3.0)."""
    device = dpctl.SyclDevice(filter_string)
    if device.backend != dpctl.backend_type.opencl:
        return None, None
    lib, handles = opencl_devices(device)
    found = []
    for param in (_CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, _CL_DEVICE_ATOMIC_FENCE_CAPABILITIES):
        each = [_orders_and_scopes(lib, handle, param) for handle in handles]
        known = [names for names in each if names is not None]
        # Several devices alike (two equal GPUs): what all of them take.
        found.append(frozenset.intersection(*known) if known and len(known) == len(each) else None)
    return found[0], found[1]
