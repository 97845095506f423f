"""dpex_kernels: explicit SYCL-style kernels in Python, compiled to SPIR-V, launched with dpctl."""

from . import _runtime  # noqa: F401  (first: the OpenCL ICD bootstrap must precede dpctl)
from .compiler.functions import DeviceFunction, func
from .compiler.kernel_api import (
    get_global_id,
    get_global_size,
    get_group_id,
    get_local_id,
    get_local_size,
    get_num_groups,
    get_work_dim,
)
from .dispatcher import CompiledKernel, JitKernel, kernel
from .errors import (
    DeviceNotFoundError,
    ExecutionQueueError,
    InvalidRangeError,
    KernelBoundsError,
    KernelCompileError,
    KernelSignatureError,
)
from .types import (
    NdRange,
    Range,
    boolean,
    complex64,
    complex128,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    intp,
    typeof,
    uint8,
    uint16,
    uint32,
    uint64,
    uintp,
    usm_array,
    void,
)

__version__ = "0.1.0"
