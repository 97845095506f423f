"""kernel[range](*args): the Python half of the launch path.

The compiled launcher (_launcher.c) does every launch whose argument types it has seen. The
first call of a tuple of argument types comes here (KernelBase._bind): the arguments are read,
matched against the definitions (or compiled for, if lazy), the launch is checked against the
device's limits, and a Binding records what the launcher needs from then on. Numba-free, so AOT
bundles launch through it too.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import math
import os
import threading

import dpctl
import dpctl.memory as dpmem

from .._runtime import DeviceLimits
from ..device import KernelAttributes
from ..errors import ERROR_RECORD_BYTES, InvalidRangeError, KernelSignatureError, launch_error
from ..types.ranges import NdRange, Range, as_launch_range, is_ragged
from ..types.spec import ArraySpec, LocalAccessorSpec, explain_mismatch, first_difference
from ._native import launcher
from .compiled import CompiledKernel, KernelStats
from .matching import match, read_arguments
from .ordering import order_of


class KernelBase(launcher.KernelCore):
    """What every launchable kernel has: definitions, matching and kernel[range].

    JitKernel adds compilation; the AOT runtime's bundled kernels only load definitions.
    """

    def __init__(self, name: str, param_names: tuple[str, ...]):
        self.__name__ = name
        self.param_names = tuple(param_names)
        self.nparams = len(self.param_names)
        self.definitions: dict = {}
        self.stats = KernelStats()
        self._lock = threading.RLock()

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"kernel '{self.__name__}' needs a launch range: call it as "
            f"{self.__name__}[dk.Range(n)](...) or {self.__name__}[dk.NdRange(g, l)](...)"
        )

    @property
    def signatures(self) -> list:
        """The signatures the kernel has definitions for, in compile order.

        Returns
        -------
        list
            The keys of ``definitions``: as declared or inferred (an AOT bundle's are their
            text).

        Examples
        --------
        >>> import dpnp
        >>> import dpex_kernels as dk
        >>> @dk.kernel
        ... def fill(a):
        ...     a[dk.get_global_id(0)] = 1
        >>> fill[2](dpnp.zeros(2, dtype="f4")).wait()
        >>> fill[2](dpnp.zeros(2, dtype="i8")).wait()
        >>> [str(sig.args[0].dtype) for sig in fill.signatures]
        ['float32', 'int64']
        """
        return list(self.definitions)

    def _compile_for(self, args, arg_specs) -> CompiledKernel | None:
        """A new definition for arguments no definition matches; None refuses the call."""
        return None

    def _new_launcher(self, launch_range) -> launcher.Launcher:
        """kernel[range] for a range not seen before (the C __getitem__ remembers it)."""
        value = as_launch_range(launch_range)
        if isinstance(value, NdRange):
            global_size, local_size = tuple(value.global_range), tuple(value.local_range)
        else:
            global_size, local_size = tuple(value), None
        ragged = local_size is None and is_ragged(global_size)
        return launcher.Launcher(
            self, self.__name__, self.nparams, value, global_size, local_size, ragged
        )

    def _bind(self, launch: launcher.Launcher, args: tuple) -> tuple:
        """The slow path of a launch: (Binding, cacheable, arguments the launcher reads)."""
        with self._lock:
            native_args, arg_specs, queue = read_arguments(self, args)
            compiled, value_dependent = match(self.definitions, args, arg_specs)
            if compiled is None:
                compiled = self._compile_for(args, arg_specs)
                value_dependent = False
            if compiled is None or first_difference(compiled.params, args, arg_specs):
                raise KernelSignatureError(
                    explain_mismatch(
                        self.__name__,
                        self.param_names,
                        [(c.params, str(sig)) for sig, c in self.definitions.items()],
                        args,
                        arg_specs,
                    )
                )
            if queue is None:
                queue = compiled.default_queue
            check_limits(self.__name__, launch, compiled, queue)
            if not isinstance(launch.range, NdRange) and any(
                isinstance(s, LocalAccessorSpec) for s in arg_specs
            ):
                raise InvalidRangeError(
                    f"kernel '{self.__name__}' takes a dk.LocalAccessor, memory each work-group "
                    f"shares: launch it with dk.NdRange(global, local), not {launch.range!r}"
                )
            check_writable(self, compiled, launch.ndim, arg_specs)
            return binding_for(compiled, queue, launch), not value_dependent, native_args


def check_code_allows(name: str, value: Range | NdRange, artifacts) -> None:
    """What the kernel's code asks of its range (the simulator checks it too)."""
    if artifacts.needs_nd_range and not isinstance(value, NdRange):
        raise InvalidRangeError(
            f"kernel '{name}' uses what only an nd-item has (local ids, its group or "
            f"sub-group): launch it with dk.NdRange(global, local), not {value!r}"
        )
    limit = artifacts.max_work_group_items
    if limit and isinstance(value, NdRange) and math.prod(value.local_range) > limit:
        raise InvalidRangeError(
            f"kernel '{name}': work-group of {math.prod(value.local_range)} work-items exceeds "
            f"the {limit} its group algorithms of dk.multiplies or bitwise operations take "
            f"(they run in local memory); use work-groups of at most {limit}"
        )


def check_limits(name: str, launch: launcher.Launcher, compiled, queue) -> None:
    """The range must fit the device and the compiled kernel, before anything is submitted."""
    value = launch.range
    check_code_allows(name, value, compiled.artifacts)
    global_size = tuple(value.global_range if isinstance(value, NdRange) else value)
    limits = DeviceLimits.of(queue.sycl_device)
    total = math.prod(global_size)
    if total > limits.max_work_items:
        raise InvalidRangeError(
            f"kernel '{name}': a launch of {total} work-items ({value!r}) exceeds the "
            f"{limits.max_work_items} the SYCL runtime can index; split it into several launches"
        )
    if isinstance(value, NdRange):
        local_total = math.prod(value.local_range)
        if local_total > compiled.attrs.max_work_group_size:
            raise InvalidRangeError(
                f"kernel '{name}': work-group of {local_total} work-items "
                f"({value.local_range!r}) exceeds the kernel's max_work_group_size "
                f"{compiled.attrs.max_work_group_size} on this device"
            )


def check_writable(kernel: KernelBase, compiled, ndim: int, arg_specs: tuple) -> None:
    """A read-only array (flags.writable false) may go only where the kernel does not write."""
    readonly = [i for i, s in enumerate(arg_specs) if isinstance(s, ArraySpec) and s.readonly]
    if not readonly:
        return
    slots = compiled.slots
    written = {
        slots[j].param for j in compiled.artifacts.facts(ndim).written_arguments if j < len(slots)
    }
    for position in readonly:
        if position in written:
            raise KernelSignatureError(
                f"kernel '{kernel.__name__}' writes argument {position} "
                f"'{kernel.param_names[position]}', a read-only array (its flags.writable is "
                f"False); pass a writable array (a copy: x.copy()), or declare the parameter "
                f"dk.usm_array(..., readonly=True) in a kernel that only reads it"
            )


def _raise_kernel_error(artifacts, record) -> None:
    """Debug mode: the exception a work-item raised, by the error record it filled."""
    error = launch_error(artifacts.name, artifacts.exceptions, record.copy_to_host().tobytes())
    if error is not None:
        raise error


#: Launches on OpenCL queues are enqueued on OpenCL directly (docs/launcher.md);
#: DPEX_KERNELS_OPENCL_LAUNCH=0 sends every launch through dpctl's C API instead.
OPENCL_LAUNCH = os.environ.get("DPEX_KERNELS_OPENCL_LAUNCH", "1") != "0"


def binding_for(compiled, queue: dpctl.SyclQueue, launch: launcher.Launcher):
    """The Binding of `compiled` on `queue` for launches of `launch`'s dimension count."""
    key = (queue, launch.ndim)
    found = compiled.bindings.get(key)
    if found is not None:
        return found
    sycl_kernel = compiled.kernel_for(queue, launch.ndim)
    limits = DeviceLimits.of(queue.sycl_device)
    options = {}
    if compiled.artifacts.error_flag:
        flag = dpmem.MemoryUSMShared(ERROR_RECORD_BYTES, queue=queue)
        options = {
            "flag": flag,
            "flag_ptr": flag._pointer,
            "flag_size": ERROR_RECORD_BYTES,
            "on_error": functools.partial(_raise_kernel_error, compiled.artifacts, flag),
        }
    found = launcher.Binding(
        compiled.slots,
        sycl_kernel,
        sycl_kernel.addressof_ref(),
        queue,
        queue.addressof_ref(),
        order_of(queue),
        opencl=OPENCL_LAUNCH and queue.backend == dpctl.backend_type.opencl,
        round_to=ragged_work_group(compiled, queue, sycl_kernel),
        local_limit=max(
            0, limits.local_mem_size - compiled.artifacts.facts(launch.ndim).local_memory
        ),
        **options,
    )
    compiled.bindings[key] = found
    return found


def ragged_work_group(compiled, queue: dpctl.SyclQueue, sycl_kernel) -> int:
    """The work-group size of a ragged Range launch (ranges.is_ragged) of `sycl_kernel` on
    `queue`: its preferred multiple where the device takes a smaller last work-group, else 0
    (the runtime's choice). Host-SIMD kernels keep the runtime's: each of their work-items
    loops over a chunk of its own."""
    if compiled.artifacts.host_simd or not _uneven_work_groups(queue):
        return 0
    attrs = KernelAttributes.of(sycl_kernel)
    size = attrs.preferred_work_group_size_multiple
    return size if 1 < size <= attrs.max_work_group_size else 0


_uneven: dict[dpctl.SyclDevice, bool] = {}


def _uneven_work_groups(queue: dpctl.SyclQueue) -> bool:
    """Whether the queue's device runs work-groups that do not divide the range (OpenCL 3.0
    devices that say so; Level Zero has no such launch), asked once per device."""
    device = queue.sycl_device
    found = _uneven.get(device)
    if found is None:
        opencl = device.backend == dpctl.backend_type.opencl
        found = _uneven[device] = opencl and launcher.uneven_work_groups(queue.addressof_ref())
    return found


def _wait_quietly() -> None:
    """At exit: wait for every launch in flight; Ctrl-C while waiting exits without a trace."""
    with contextlib.suppress(KeyboardInterrupt):
        launcher.drain()


atexit.register(_wait_quietly)

__all__ = ["KernelBase", "binding_for", "check_limits"]
