"""SPIR-V -> dpctl program -> SyclKernel, built once per (SPIR-V, context, device).

Numba-free: the AOT runtime builds its kernels here too.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import hashlib
import os
import queue
import struct
import threading
import weakref
from collections import OrderedDict
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, fields

import dpctl
import dpctl.program as dpctl_program

from . import program_binaries
from ._runtime import default_device, device_by_canonical_name, device_label
from .build_log import build_log
from .errors import DeviceNotFoundError, KernelCompileError
from .program_binaries import SYCL_INTERFACE_LIBRARY, release_leaked_references


@dataclass(frozen=True)
class KernelAttributes:
    """What the device says about one compiled kernel: ``kernel.definitions[sig].attrs``.

    Read once from the built ``SyclKernel``; frozen.

    Attributes
    ----------
    preferred_work_group_size_multiple : int
        Work-group sizes that are a multiple of this run best.
    max_work_group_size : int
        The largest work-group this kernel can run in on its device.
    private_mem_size : int
        The private memory one work-item uses, in bytes.
    max_sub_group_size : int
        The largest sub-group the kernel may run in.
    max_num_sub_groups : int
        The most sub-groups a work-group may have.
    compile_num_sub_groups : int
        The number of sub-groups the kernel requires, 0 when it requires none.
    compile_sub_group_size : int
        The sub-group size the kernel requires (``@dk.kernel(sub_group_size=n)``), 0 when it
        leaves it to the runtime.
    num_args : int
        The number of the kernel's OpenCL arguments (an array takes several).
    """

    preferred_work_group_size_multiple: int
    max_work_group_size: int
    private_mem_size: int
    max_sub_group_size: int
    max_num_sub_groups: int
    compile_num_sub_groups: int
    compile_sub_group_size: int
    num_args: int

    @classmethod
    def of(cls, kernel: dpctl_program.SyclKernel) -> KernelAttributes:
        values = {f.name: getattr(kernel, f.name, None) for f in fields(cls)}
        values["max_work_group_size"] = kernel.work_group_size
        return cls(**values)


_lock = threading.RLock()  # re-entrant: a collection inside the lock may run _forget
_kernels: dict[tuple, dpctl_program.SyclKernel] = {}
_owners: dict[tuple, int] = {}  # build key -> how many live owners asked for it
#: Builds no owner holds any more, oldest first: the newest few stay, so a kernel redefined
#: in a loop (a function that defines it on each call) reuses its build.
_unowned: OrderedDict[tuple, None] = OrderedDict()
KEEP_UNOWNED = 8


def check_sub_group_size(kernel_name: str, size: int, device_name: str) -> None:
    """A KernelCompileError unless the device takes sub-groups of `size` work-items: one of
    its sub_group_sizes, or 1 on a CPU device, where the OpenCL CPU runtime then runs the
    work-items one after another instead of as vector lanes (docs/kernel-language.md)."""
    device = device_by_canonical_name(device_name)
    sizes = list(device.sub_group_sizes)
    if size in sizes or (size == 1 and device.is_cpu):
        return
    allowed = sizes + [1] if device.is_cpu else sizes
    raise KernelCompileError(
        f"kernel '{kernel_name}': sub_group_size={size} is not a sub-group size of "
        f"{device_label(device)} (it takes {sorted(allowed)}); pick one of those or None"
    )


def _forget(key: tuple) -> None:
    """One owner of a build is gone; after the last one the build is kept for a while only."""
    with _lock:
        _owners[key] -= 1
        if _owners[key] > 0:
            return
        del _owners[key]
        _unowned[key] = None
        while len(_unowned) > KEEP_UNOWNED:
            _kernels.pop(_unowned.popitem(last=False)[0], None)


def _missing_aspects(device: dpctl.SyclDevice, aspects: tuple[str, ...]) -> list[str]:
    return [a for a in aspects if not getattr(device, f"has_aspect_{a}", True)]


#: The OpenCL CPU runtime spends ~100 ms more on the first program a thread builds than on the
#: next ones (measured: 130-160 ms against 32-48 ms for the same SPIR-V), and a build in another
#: thread does not spare it. So one thread builds every program, and it pays that cost while
#: the program goes on: warm_up_builds starts it on an empty kernel as soon as a kernel is
#: made, so that even a first launch from the cache finds it paid (the ten kernels of
#: benchmarks/work_group_worker.py from the cache, six processes each: median 620 ms warmed at
#: their decoration, 714 ms warmed by nothing, 604 ms the bare builds of the same SPIR-V).
class _BuildThread:
    """One daemon thread that runs every build. It is never joined: it lives as long as the
    process, so no thread that has built a program ends while kernels are in flight. (With a
    thread pool, whose worker ends as the interpreter exits, one exit in the test suite waited
    for ever on its kernels; not reproduced in 40 runs since, so the cause is not proven.)

    The interpreter's exit waits for the build in progress, though: the runtime's C++ objects
    are destroyed as the process exits, and a build still running then aborted the process
    ("Pure virtual function called!") in a script that made a kernel and ended at once.
    """

    def __init__(self):
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._run, name="dpex_kernels-build", daemon=True).start()
        atexit.register(self.finish, _EXIT_WAIT_SECONDS)

    def _run(self) -> None:
        while True:
            future, function, args = self._jobs.get()
            try:
                future.set_result(function(*args))
            except BaseException as exc:  # the caller's result() raises it, traceback and all
                future.set_exception(exc)

    def submit(self, function, *args) -> Future:
        future: Future = Future()
        self._jobs.put((future, function, args))
        return future

    def finish(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) until every build submitted so far has ended."""
        if self is not _builder:  # a forked child's copy: its thread did not survive the fork
            return
        with contextlib.suppress(FutureTimeout):
            self.submit(int).result(timeout)


#: How long the interpreter's exit waits for a build in progress.
_EXIT_WAIT_SECONDS = 60.0


_builder: _BuildThread | None = None
_warmed: set[str] = set()


def _build_thread() -> _BuildThread:
    global _builder
    with _lock:
        if _builder is None:
            _builder = _BuildThread()
        return _builder


def _forget_build_thread() -> None:
    """A forked child has no build thread (only the forking thread survives a fork)."""
    global _builder
    _builder = None
    _warmed.clear()


os.register_at_fork(after_in_child=_forget_build_thread)


def _empty_kernel_spirv() -> bytes:
    """SPIR-V 1.0 of `kernel void dk_warm_up() {}`: the smallest program the runtime builds."""
    name = struct.unpack("<3I", b"dk_warm_up\0\0")  # the entry point's name, 4 bytes a word

    def op(code: int, *operands: int) -> list[int]:
        return [(len(operands) + 1) << 16 | code, *operands]

    void, function_type, function, label = 1, 2, 3, 4  # the module's ids
    words = [0x07230203, 0x00010000, 0, 5, 0]  # magic, version 1.0, generator, id bound, schema
    words += op(17, 4) + op(17, 6)  # OpCapability Addresses, OpCapability Kernel
    words += op(14, 2, 2)  # OpMemoryModel Physical64 OpenCL
    words += op(15, 6, function, *name)  # OpEntryPoint Kernel %function "dk_warm_up"
    words += op(19, void) + op(33, function_type, void)  # OpTypeVoid, OpTypeFunction
    words += op(54, void, function, 0, function_type)  # OpFunction %void None %function_type
    words += op(248, label) + op(253) + op(56)  # OpLabel, OpReturn, OpFunctionEnd
    return struct.pack(f"<{len(words)}I", *words)


def _build_empty_program(device: dpctl.SyclDevice) -> bool:
    """Build and drop the empty kernel through dpctl's C API, which (unlike dpctl.program's
    Python API) lets Python run meanwhile."""
    library = ctypes.CDLL(str(SYCL_INTERFACE_LIBRARY))
    create, delete = library.DPCTLKernelBundle_CreateFromSpirv, library.DPCTLKernelBundle_Delete
    create.restype = ctypes.c_void_p
    create.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_size_t, ctypes.c_char_p]
    delete.argtypes = [ctypes.c_void_p]
    context = device.sycl_platform.default_context
    spirv = _empty_kernel_spirv()
    bundle = create(context.addressof_ref(), device.addressof_ref(), spirv, len(spirv), b"")
    if bundle:
        delete(bundle)
    return bool(bundle)


def warm_up_builds(device_name: str | None = None) -> None:
    """Set the build thread up for this device's runtime (None: the default device's) in the
    background, once: called as a kernel is made and as a compile starts, so that the set-up
    overlaps the program's own work and Numba's."""
    if device_name is None:
        if _warmed:  # some device's runtime is set up; a compile for another warms that one
            return
        try:
            device_name = default_device().filter_string
        except DeviceNotFoundError:
            return  # nothing to warm up: the first launch says what to install
    with _lock:
        if device_name in _warmed:
            return
        _warmed.add(device_name)
    _build_thread().submit(_build_empty_program, device_by_canonical_name(device_name))


def build_kernel(
    spirv: bytes,
    symbol: str,
    queue: dpctl.SyclQueue,
    aspects: tuple[str, ...] = (),
    owner: object = None,
    keep_binary: bool = False,
) -> dpctl_program.SyclKernel:
    """The SyclKernel `symbol` of `spirv` for `queue`'s context and device, built at most once.

    `aspects` names device features the code needs ("fp64", "fp16"); a device lacking one
    gets an error naming it rather than the runtime's empty build failure. Builds are kept
    while an `owner` that asked for them lives (a deleted kernel frees its device build),
    and for the whole process when asked without one. With `keep_binary` (cache=True), the
    device binary goes on disk and later processes load it instead (program_binaries.py).
    """
    key = (hashlib.sha256(spirv).digest(), symbol, queue.sycl_context, queue.sycl_device)
    with _lock:
        kernel = _kernels.get(key)
    if kernel is None:  # built outside the lock: the build thread may collect an owner
        # A kept binary loads in this thread (~2 ms), not behind the build thread's warm-up.
        built = keep_binary and program_binaries.load(spirv, symbol, queue)
        if not built:
            job = _build_thread().submit(_build, spirv, symbol, queue, aspects, keep_binary)
            built = job.result()
    with _lock:
        kernel = _kernels.setdefault(key, built) if kernel is None else kernel
        if owner is not None:
            _unowned.pop(key, None)
            _owners[key] = _owners.get(key, 0) + 1
            weakref.finalize(owner, _forget, key)
        return kernel


def _build(spirv: bytes, symbol: str, queue, aspects, keep_binary) -> dpctl_program.SyclKernel:
    device = queue.sycl_device
    missing = _missing_aspects(device, aspects)
    if missing:
        raise KernelCompileError(
            f"kernel '{symbol}' needs device aspect(s) {', '.join(missing)}, which "
            f"{device_label(device)} ({device.name}) does not have; use float32 data or "
            f"another device"
        )
    try:
        program = dpctl_program.create_program_from_spirv(queue, spirv)
        kernel = program.get_sycl_kernel(symbol)
    except Exception as exc:  # dpctl's message is empty: the runtime's own log says why
        raise KernelCompileError(
            f"the SYCL runtime could not build kernel '{symbol}' for "
            f"{device_label(device)} ({device.name}): {str(exc) or type(exc).__name__}\n"
            f"{build_log(spirv, device)}"
        ) from exc
    if device.backend == dpctl.backend_type.opencl:  # while `program` holds the cl_program
        release_leaked_references(kernel)
    if keep_binary:
        program_binaries.store(spirv, symbol, kernel, device)
    return kernel
