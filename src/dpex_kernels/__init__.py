"""dpex_kernels: explicit SYCL-style kernels in Python, compiled to SPIR-V, launched with dpctl.

Importing the package loads dpctl (after the OpenCL ICD bootstrap) but not Numba: the
compiler loads on first use of a name that needs it, and the AOT runtime never does.
"""

from . import (
    _runtime,  # noqa: F401  (first: the OpenCL ICD bootstrap must precede dpctl)
    types,
)
from ._lazy import lazy_attributes
from .errors import (
    DeviceNotFoundError,
    ExecutionQueueError,
    InvalidRangeError,
    KernelBoundsError,
    KernelCompileError,
    KernelRaceError,
    KernelSignatureError,
)
from .types.ranges import NdRange, Range

__version__ = "0.2.0"

_KERNEL_API = [
    "get_global_id",
    "get_global_size",
    "get_group_id",
    "get_local_id",
    "get_local_size",
    "get_num_groups",
    "get_work_dim",
]
# The types package's own lazy names (scalars, usm_array, typeof) are re-exported as they are.
_TYPES = [name for name in types.__all__ if name not in ("ArraySpec", "NdRange", "Range")]

_WORK_GROUP = [
    "barrier",
    "LOCAL_MEM_FENCE",
    "GLOBAL_MEM_FENCE",
    "local",
    "private",
    "atomic",
    "sub_group",
]

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        **dict.fromkeys(_KERNEL_API, ".compiler.kernel_api"),
        **dict.fromkeys(_TYPES, ".types"),
        "DeviceFunction": ".compiler.functions",
        "func": ".compiler.functions",
        "CompiledKernel": ".dispatcher.compiled",
        "JitKernel": ".dispatcher.jit_kernel",
        "raw_launch": ".dispatcher.njit_launch",
        "raw_wait": ".dispatcher.njit_launch",
        "kernel": ".dispatcher.jit_kernel",
        "offload": ".offloading",
        "OffloadFallbackWarning": ".offloading",
        "aot": None,
        **dict.fromkeys(_WORK_GROUP, ".compiler.kernel_api"),
    },
)

__all__ = [
    "CompiledKernel",
    "aot",
    "DeviceFunction",
    "DeviceNotFoundError",
    "ExecutionQueueError",
    "InvalidRangeError",
    "JitKernel",
    "KernelBoundsError",
    "KernelCompileError",
    "KernelRaceError",
    "KernelSignatureError",
    "NdRange",
    "Range",
    "func",
    "kernel",
    "offload",
    "OffloadFallbackWarning",
    "raw_launch",
    "raw_wait",
    *_KERNEL_API,
    *_TYPES,
    *_WORK_GROUP,
]
