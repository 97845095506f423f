"""numba-dpex 0.21's kernel API on dpex_kernels: `import dpex_kernels.numba_dpex as dpex`.

Names and calling conventions only, so numba-dpex code runs on current Numba, dpctl and dpnp.
Everything used inside kernels is dpex_kernels' own object (the compiler knows them by
identity); only the host-side kernel object is wrapped, for numba-dpex's launch forms and for
its launches that wait. docs/migration.md lists the forms and the differences that remain.
"""

from __future__ import annotations

import inspect

import dpctl
from numba.core.typing.templates import Signature

import dpex_kernels as dk
from dpex_kernels import InvalidRangeError, NdRange, Range

# --- inside kernels: dpex_kernels' own objects ------------------------------------------

get_global_id = dk.get_global_id
get_local_id = dk.get_local_id
get_group_id = dk.get_group_id
get_global_size = dk.get_global_size
get_local_size = dk.get_local_size
get_num_groups = dk.get_num_groups
get_work_dim = dk.get_work_dim
barrier = dk.barrier
LOCAL_MEM_FENCE = dk.LOCAL_MEM_FENCE
GLOBAL_MEM_FENCE = dk.GLOBAL_MEM_FENCE
sub_group_barrier = dk.sub_group.barrier
local = dk.local
private = dk.private
atomic = dk.atomic

# --- types: numba-dpex's names for them ---------------------------------------------------

void = none = dk.void
boolean = bool_ = b1 = dk.boolean
int32 = i4 = dk.int32
int64 = i8 = dk.int64
uint32 = u4 = dk.uint32
uint64 = u8 = dk.uint64
float32 = f4 = dk.float32
float64 = f8 = float_ = double = dk.float64

#: `kernel[global_size, DEFAULT_LOCAL_SIZE]`: no local size, the runtime picks work-groups.
DEFAULT_LOCAL_SIZE: list = []


def usm_ndarray(
    ndim: int,
    layout: str = "C",
    dtype=None,
    usm_type: str = "device",
    device: str | dpctl.SyclDevice | None = None,
    queue: dpctl.SyclQueue | None = None,
):
    """numba-dpex's `usm_ndarray(ndim, layout, dtype, ...)` as the equal `dk.usm_array`."""
    if queue is not None:
        if device is not None:
            raise TypeError("usm_ndarray: give `device` or `queue`, not both")
        device = queue.sycl_device
    array = dk.usm_array(dtype or dk.float64, ndim, layout, usm_type, device)
    if dtype is None and not array.sycl_device.has_aspect_fp64:
        # numba-dpex took dpctl's default floating type of the device
        return dk.usm_array(dk.float32, ndim, layout, usm_type, device)
    return array


USMNdArray = DpnpNdArray = usm_ndarray


# --- kernels and device functions ---------------------------------------------------------


def _launch_range(index) -> Range | NdRange:
    """What `kernel[index]` meant in numba-dpex 0.21, as a Range or an NdRange.

    `kernel[g]` and `kernel[g, l]`, each size an int or a sequence of ints, `l` possibly
    DEFAULT_LOCAL_SIZE; so `kernel[a, b]` with two ints is global (a,) and local (b,).
    """
    if isinstance(index, (Range, NdRange)):
        return index
    parts = list(index) if isinstance(index, (tuple, list)) else [index]
    if not 1 <= len(parts) <= 2:
        raise InvalidRangeError(
            f"a numba-dpex launch is kernel[global_size] or kernel[global_size, local_size]; "
            f"got kernel[{index!r}]: use dpex.Range(...) or dpex.NdRange(...) for 3 dimensions"
        )
    global_range = Range(*_sizes(parts[0]))
    if len(parts) == 1 or _sizes(parts[1]) == ():
        return global_range
    return NdRange(global_range, Range(*_sizes(parts[1])))


def _sizes(size) -> tuple:
    return tuple(size) if isinstance(size, (tuple, list)) else (size,)


class _WaitingLaunch:
    """`kernel[range]` of numba-dpex: calling it runs the kernel and waits for it."""

    __slots__ = ("_launch",)

    def __init__(self, launch):
        self._launch = launch

    def __call__(self, *args) -> None:
        self._launch(*args).wait()


class Kernel:
    """What `dpex.kernel` returns: a dk kernel launched with numba-dpex's forms, waiting."""

    def __init__(self, dk_kernel: dk.JitKernel):
        #: The dpex_kernels kernel: `k.dk_kernel[dk.Range(n)](...)` launches asynchronously.
        self.dk_kernel = dk_kernel
        self.__name__ = dk_kernel.__name__
        self.__doc__ = dk_kernel.__doc__
        self.__wrapped__ = dk_kernel.py_func

    def __getitem__(self, index) -> _WaitingLaunch:
        return _WaitingLaunch(self.dk_kernel[_launch_range(index)])

    def __call__(self, *args, **kwargs):
        return self.dk_kernel(*args, **kwargs)  # raises: a launch needs a range

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "dk_kernel":
            raise AttributeError(name)
        return getattr(self.dk_kernel, name)  # definitions, signatures, inspect_*, stats

    def __repr__(self) -> str:
        return f"<dpex.kernel {self.__name__} on {self.dk_kernel!r}>"

    def __reduce__(self):
        return Kernel, (self.dk_kernel,)


def _dk_signature(sig):
    """A numba-dpex kernel signature as dk's: a tuple of argument types means void(...)."""
    return dk.void(*sig) if isinstance(sig, tuple) else sig


def _signatures(func_or_sig, convert):
    """None for a function (lazy), else the list of signatures numba-dpex accepted."""
    if isinstance(func_or_sig, list):
        return [convert(sig) for sig in func_or_sig]
    if isinstance(func_or_sig, (Signature, tuple, str)):
        return [convert(func_or_sig)]
    if not inspect.isfunction(func_or_sig):
        raise TypeError(
            f"@dpex.kernel/@dpex.func take a function, a signature or a list of signatures; "
            f"got {func_or_sig!r}"
        )
    return None


def kernel(func_or_sig=None, debug: bool = False, enable_cache: bool = True, **options):
    """numba-dpex's @kernel, @kernel(sig), @kernel((argtypes...)), @kernel([sigs]).

    `enable_cache` is accepted and has nothing to do: dpex_kernels always reuses what it compiled
    (on-disk caching is dk's `cache=True`, passed through `options` like dk's other options).
    """
    signatures = None if func_or_sig is None else _signatures(func_or_sig, _dk_signature)

    def decorate(py_func) -> Kernel:
        return Kernel(dk.kernel(signatures, debug=debug, **options)(py_func))

    if func_or_sig is not None and signatures is None:
        return decorate(func_or_sig)
    return decorate


def func(func_or_sig=None, debug: bool = False, enable_cache: bool = True, **options):
    """numba-dpex's @func, @func(sig), @func([sigs]): dk's own device function."""
    if func_or_sig is None:
        return dk.func(debug=debug, **options)
    signatures = _signatures(func_or_sig, lambda sig: sig)
    if signatures is None:
        return dk.func(func_or_sig, debug=debug, **options)
    return dk.func(signatures, debug=debug, **options)


__all__ = [
    "DEFAULT_LOCAL_SIZE",
    "DpnpNdArray",
    "GLOBAL_MEM_FENCE",
    "Kernel",
    "LOCAL_MEM_FENCE",
    "NdRange",
    "Range",
    "USMNdArray",
    "atomic",
    "b1",
    "barrier",
    "bool_",
    "boolean",
    "double",
    "f4",
    "f8",
    "float32",
    "float64",
    "float_",
    "func",
    "get_global_id",
    "get_global_size",
    "get_group_id",
    "get_local_id",
    "get_local_size",
    "get_num_groups",
    "get_work_dim",
    "i4",
    "i8",
    "int32",
    "int64",
    "kernel",
    "local",
    "none",
    "private",
    "sub_group_barrier",
    "u4",
    "u8",
    "uint32",
    "uint64",
    "usm_ndarray",
    "void",
]
