"""Device binaries on disk, so that a cache=True kernel's next process skips the program build.

The OpenCL CPU runtime builds a kernel's SPIR-V in 40-180 ms, and from the binary that build
leaves in 1-2 ms (a first build in a process pays ~100 ms more; a binary does not). So once a
cache=True kernel is built, its program's binary (clGetProgramInfo) is kept beside the cache
entries, and a later process makes the cl_program from it (clCreateProgramWithBinary) and the
SyclKernel through SYCL's own OpenCL interop, as dpctl does for SPIR-V.

The runtime does not check a binary: a corrupt one ends the process inside its LLVM ("Invalid
encoding"). So a file holds the binary's SHA-256 and is handed to the runtime only when that
matches, and its name hashes the SPIR-V, the entry point, the device's name and driver, and the
host CPU's features, so that a new runtime or another machine's binary is never read. Other
backends keep building from SPIR-V. A checksum does not stop someone who can write the files
(docs/security.md): binaries are kept and loaded only where the cache directory and its
binaries/ belong to this user and neither group nor others can write them.

Numba-free: device.py reads it for every build.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import shutil
import stat
import tempfile
import warnings
from pathlib import Path
from typing import NamedTuple

import dpctl
import dpctl.program as dpctl_program
import platformdirs

from .file_checks import RefusedFile, directory_problem, read_file

MAGIC = b"dpex_kernels device binary 1\n"
#: DPEX_KERNELS_DEVICE_BINARIES=0: cache=True kernels keep and load no device binaries.
ENABLE_VARIABLE = "DPEX_KERNELS_DEVICE_BINARIES"
#: The largest binary file read (those of the OpenCL CPU runtime take 10-500 KB).
MAX_BINARY_BYTES = 256 * 2**20
#: A symbol that may stand in a file name as it is; any other is hashed only.
_FILE_STEM = re.compile(r"[A-Za-z0-9_]{1,64}")

#: dpctl's C API library, which also exports SYCL's own C++ symbols.
SYCL_INTERFACE_LIBRARY = Path(dpctl.__file__).with_name("libDPCTLSyclInterface.so")

CL_QUEUE_CONTEXT = 0x1090
CL_QUEUE_DEVICE = 0x1091
CL_PROGRAM_REFERENCE_COUNT = 0x1160
CL_PROGRAM_BINARY_SIZES = 0x1165
CL_PROGRAM_BINARIES = 0x1166
CL_KERNEL_REFERENCE_COUNT = 0x1192
CL_KERNEL_PROGRAM = 0x1194
_SYCL_EXECUTABLE = 2  # sycl::bundle_state::executable
_SYCL_OPENCL = 1  # sycl::backend::opencl
_SYCL_BUNDLE_BYTES = 16  # sizeof(sycl::kernel_bundle): one std::shared_ptr


def cache_dir() -> Path:
    """$DPEX_KERNELS_CACHE_DIR, else the user's cache directory for dpex_kernels."""
    configured = os.environ.get("DPEX_KERNELS_CACHE_DIR")
    return Path(configured) if configured else Path(platformdirs.user_cache_dir("dpex_kernels"))


class NativeAPI(NamedTuple):
    """The OpenCL and SYCL entry points (C++ ABI of intel-sycl-rt 2026.1) that builds use."""

    kernel_native: ctypes._CFuncPtr  # sycl::kernel::getNative() const: a retained cl_kernel
    queue_native: ctypes._CFuncPtr  # sycl::queue::getNative(int&) const: retained
    make_kernel_bundle: ctypes._CFuncPtr  # sycl::detail::make_kernel_bundle (returned by pointer)
    new_bytes: ctypes._CFuncPtr  # operator new, for what dpctl's C API deletes
    make_sycl_program: ctypes._CFuncPtr  # dpctl's SyclProgram_Make(KernelBundleRef): copies it
    delete_bundle: ctypes._CFuncPtr  # DPCTLKernelBundle_Delete
    kernel_info: ctypes._CFuncPtr
    program_info: ctypes._CFuncPtr
    queue_info: ctypes._CFuncPtr
    program_with_binary: ctypes._CFuncPtr
    build_program: ctypes._CFuncPtr
    release_kernel: ctypes._CFuncPtr
    release_program: ctypes._CFuncPtr
    release_queue: ctypes._CFuncPtr


def _capsule_function(capsule, signature):
    python = ctypes.pythonapi
    get_name, get_pointer = python.PyCapsule_GetName, python.PyCapsule_GetPointer
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return signature(get_pointer(capsule, get_name(capsule)))


@functools.cache
def native_api() -> NativeAPI | None:
    """The entry points, or None where a library or symbol is missing (builds use SPIR-V)."""
    handle, size, status, uint = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int32, ctypes.c_uint32
    try:
        sycl = ctypes.CDLL(str(SYCL_INTERFACE_LIBRARY))
        opencl = ctypes.CDLL("libOpenCL.so.1", mode=os.RTLD_NOLOAD | os.RTLD_NOW)
        make_sycl_program = _capsule_function(
            dpctl_program._program.__pyx_capi__["SyclProgram_Make"],
            ctypes.PYFUNCTYPE(ctypes.py_object, handle),
        )
        api = NativeAPI(
            sycl._ZNK4sycl3_V16kernel9getNativeEv,
            sycl._ZNK4sycl3_V15queue9getNativeERi,
            sycl._ZN4sycl3_V16detail18make_kernel_bundleEmRKNS0_7contextEbNS0_12bundle_stateENS0_7backendE,
            sycl._Znwm,
            make_sycl_program,
            sycl.DPCTLKernelBundle_Delete,
            opencl.clGetKernelInfo,
            opencl.clGetProgramInfo,
            opencl.clGetCommandQueueInfo,
            opencl.clCreateProgramWithBinary,
            opencl.clBuildProgram,
            opencl.clReleaseKernel,
            opencl.clReleaseProgram,
            opencl.clReleaseCommandQueue,
        )
    except (OSError, AttributeError, KeyError, ValueError):
        return None
    signatures = [
        (api.kernel_native, handle, [handle]),
        (api.queue_native, handle, [handle, ctypes.POINTER(ctypes.c_int32)]),
        (api.make_kernel_bundle, handle, [handle, handle, handle, ctypes.c_bool, ctypes.c_int]),
        (api.new_bytes, handle, [size]),
        (api.delete_bundle, None, [handle]),
        (
            api.program_with_binary,
            handle,
            [handle, uint, ctypes.POINTER(handle), ctypes.POINTER(size)]
            + [ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(status), ctypes.POINTER(status)],
        ),
        (api.build_program, status, [handle, uint, ctypes.POINTER(handle), handle, handle, handle]),
    ]
    for info in (api.kernel_info, api.program_info, api.queue_info):
        signatures.append((info, status, [handle, uint, size, handle, handle]))
    for release in (api.release_kernel, api.release_program, api.release_queue):
        signatures.append((release, status, [handle]))
    for function, restype, argtypes in signatures:
        function.restype, function.argtypes = restype, argtypes
    return api


def query(info, handle: int, name: int, value) -> None:
    """One OpenCL clGet*Info of a fixed-size value."""
    if info(handle, name, ctypes.sizeof(value), ctypes.byref(value), None) != 0:
        raise OSError(f"OpenCL query {name:#x} failed")


# dpctl 0.22 keeps, of one create_program_from_spirv + get_sycl_kernel, one cl_kernel and two
# cl_program references nobody releases; with SYCL's own and getNative's, the counts are these.
_LEAKED_STATE = (3, 3)


def release_leaked_references(kernel: dpctl_program.SyclKernel) -> None:
    """Release what dpctl's OpenCL build keeps of a program nobody holds any more.

    dpctl 0.22's create_program_from_spirv never releases the cl_program it creates (SYCL
    retains its own), and get_sycl_kernel neither the cl_kernel it creates nor the program
    reference that its get_native takes: every build stayed resident, 1.9 MB on the CPU
    runtime, after its program and kernel were dropped (tests/test_memory.py). The reference
    counts say whether they are there; a dpctl that releases them is left alone.
    """
    api = native_api()
    if api is None:
        return
    handle = api.kernel_native(kernel.addressof_ref())
    try:
        kernel_refs, program = ctypes.c_uint32(), ctypes.c_void_p()
        program_refs = ctypes.c_uint32()
        query(api.kernel_info, handle, CL_KERNEL_REFERENCE_COUNT, kernel_refs)
        query(api.kernel_info, handle, CL_KERNEL_PROGRAM, program)
        query(api.program_info, program.value, CL_PROGRAM_REFERENCE_COUNT, program_refs)
        if (kernel_refs.value, program_refs.value) == _LEAKED_STATE:
            api.release_kernel(handle)
            api.release_program(program.value)
            api.release_program(program.value)
    finally:
        api.release_kernel(handle)  # getNative's own reference


@functools.cache
def _cpu_features() -> str:
    """The host CPU's feature flags: a binary for the CPU is native code for its ISA."""
    try:
        with open("/proc/cpuinfo") as info:
            return next((line for line in info if line.startswith("flags")), "")
    except OSError:
        return ""


def binary_path(spirv: bytes, symbol: str, device: dpctl.SyclDevice) -> Path:
    """Where the device binary of `symbol` in `spirv` for `device` is kept."""
    hasher = hashlib.sha256(spirv)
    identity = (symbol, device.name, device.driver_version, device.sycl_platform.version)
    hasher.update(repr(identity).encode())
    if device.is_cpu:
        hasher.update(_cpu_features().encode())
    stem = symbol if _FILE_STEM.fullmatch(symbol) else "kernel"  # a name, never a path
    return cache_dir() / "binaries" / f"{stem}-{hasher.hexdigest()[:40]}.bin"


_warned: set[str] = set()


def untrusted_directory() -> Path | None:
    """The cache directory or its binaries/ when others than this user could change what they
    hold (file_checks.directory_problem), else None; says so once per directory and process."""
    root = cache_dir()
    for directory, follow in ((root, True), (root / "binaries", False)):
        problem = directory_problem(directory, follow_symlinks=follow)
        if problem is None:
            continue
        if problem not in _warned:
            _warned.add(problem)
            warnings.warn(
                f"dpex_kernels keeps and loads no device binaries in {directory}: {problem}, "
                f"so others could put code there that the runtime would run unchecked; "
                f"cache=True kernels build from their SPIR-V instead. Make it yours alone "
                f"(chmod go-w {directory}), or set DPEX_KERNELS_CACHE_DIR to a directory "
                f"only you can write",
                RuntimeWarning,
                stacklevel=3,
            )
        return directory
    return None


def _read_checked(path: Path) -> bytes | None:
    """The binary kept at `path`, or None when absent, not a regular file (file_checks.py) or
    not exactly what was written."""
    try:
        data = read_file(path, MAX_BINARY_BYTES)
    except (OSError, RefusedFile):
        return None
    header = len(MAGIC) + hashlib.sha256().digest_size
    if len(data) <= header or not data.startswith(MAGIC):
        return None
    binary = data[header:]
    return binary if hashlib.sha256(binary).digest() == data[len(MAGIC) : header] else None


def kept(spirv: bytes, symbol: str, device: dpctl.SyclDevice) -> bool:
    """Whether load() would find a binary for `symbol` of `spirv` on `device` (it may still
    refuse it): one exists only for a module the runtime has built before."""
    if native_api() is None or not _enabled(device):
        return False
    try:
        return stat.S_ISREG(os.lstat(binary_path(spirv, symbol, device)).st_mode)
    except OSError:
        return False


def _opencl_queue(api: NativeAPI, queue: dpctl.SyclQueue) -> tuple[int, int]:
    """The cl_context and cl_device_id under a SYCL queue on OpenCL."""
    backend = ctypes.c_int32()
    native_queue = api.queue_native(queue.addressof_ref(), ctypes.byref(backend))
    try:
        context, device = ctypes.c_void_p(), ctypes.c_void_p()
        query(api.queue_info, native_queue, CL_QUEUE_CONTEXT, context)
        query(api.queue_info, native_queue, CL_QUEUE_DEVICE, device)
        return context.value, device.value
    finally:
        api.release_queue(native_queue)


def _enabled(device: dpctl.SyclDevice) -> bool:
    return (
        os.environ.get(ENABLE_VARIABLE, "1") != "0"
        and device.backend == dpctl.backend_type.opencl
        and untrusted_directory() is None
    )


def load(spirv: bytes, symbol: str, queue: dpctl.SyclQueue) -> dpctl_program.SyclKernel | None:
    """The SyclKernel made from a kept binary, or None (then the caller builds the SPIR-V).

    Made as dpctl's create_program_from_spirv and get_sycl_kernel make theirs, with the
    program from the binary: the same objects and references, and dpctl's leaked ones
    released the same way."""
    api = native_api()
    if api is None or not _enabled(queue.sycl_device):
        return None
    binary = _read_checked(binary_path(spirv, symbol, queue.sycl_device))
    if binary is None:
        return None
    context, device = _opencl_queue(api, queue)
    devices = (ctypes.c_void_p * 1)(device)
    sizes = (ctypes.c_size_t * 1)(len(binary))
    binaries = (ctypes.c_char_p * 1)(binary)
    status, error = ctypes.c_int32(), ctypes.c_int32()
    program = api.program_with_binary(
        context, 1, devices, sizes, binaries, ctypes.byref(status), ctypes.byref(error)
    )
    if not program:
        return None
    if api.build_program(program, 1, devices, None, None, None) != 0:
        api.release_program(program)
        return None
    sycl_context = queue.sycl_context  # alive while SYCL reads it
    bundle = api.new_bytes(_SYCL_BUNDLE_BYTES)  # a kernel_bundle<executable>, as dpctl's are
    api.make_kernel_bundle(
        bundle, program, sycl_context.addressof_ref(), False, _SYCL_EXECUTABLE, _SYCL_OPENCL
    )
    try:
        sycl_program = api.make_sycl_program(bundle)  # holds a copy of the bundle
        kernel = sycl_program.get_sycl_kernel(symbol)
    except dpctl_program.SyclProgramCompilationError:
        api.release_program(program)
        return None
    finally:
        api.delete_bundle(bundle)
    release_leaked_references(kernel)  # while its program lives, as after a SPIR-V build
    return kernel


def store(
    spirv: bytes, symbol: str, kernel: dpctl_program.SyclKernel, device: dpctl.SyclDevice
) -> None:
    """Keep the binary of a just-built kernel's program; failures are ignored (atomic write)."""
    api = native_api()
    if api is None or not _enabled(device):
        return
    cl_kernel = api.kernel_native(kernel.addressof_ref())
    try:
        program, size = ctypes.c_void_p(), ctypes.c_size_t()
        query(api.kernel_info, cl_kernel, CL_KERNEL_PROGRAM, program)
        query(api.program_info, program.value, CL_PROGRAM_BINARY_SIZES, size)
        buffer = ctypes.create_string_buffer(size.value)
        pointers = ctypes.c_char_p(ctypes.addressof(buffer))  # one device: one binary
        query(api.program_info, program.value, CL_PROGRAM_BINARIES, pointers)
    except OSError:
        return
    finally:
        api.release_kernel(cl_kernel)
    binary = buffer.raw
    if not binary:
        return
    payload = MAGIC + hashlib.sha256(binary).digest() + binary
    write_atomically(binary_path(spirv, symbol, device), payload)


def write_atomically(path: Path, data: bytes) -> None:
    """Write a cache file whole or not at all (a temporary file renamed into place): readers
    in other processes never see part of one, and whatever was at `path` (a damaged file, a
    named pipe, a link, a directory) is replaced. Directories it makes are the user's alone.
    Failures are ignored: the cache is optional."""
    temporary = None
    try:
        for directory in (cache_dir(), path.parent):
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".tmp") as handle:
            temporary = handle.name
            handle.write(data)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)  # rename cannot replace a directory
        os.replace(temporary, path)
    except OSError:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
