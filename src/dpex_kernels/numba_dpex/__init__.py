"""numba-dpex's kernel API on dpex_kernels: `import dpex_kernels.numba_dpex as dpex`.

numba-dpex 0.21's (`dpex.get_global_id`, `dpex.local.array`, `kernel[global_size]`, ...) and
0.23's (`kernel_api` as `kapi`, kernels taking an item first, `call_kernel`,
`call_kernel_async`, `device_func`) in one module, so numba-dpex code of either runs on
current Numba, dpctl and dpnp; `install_alias()` lets it `import numba_dpex` unchanged.
Inside kernels, 0.21's names are dpex_kernels' own objects (the compiler knows them by
identity); 0.23's kernel_api objects are typed by kernel_forms.py. docs/migration.md lists the
forms and the differences that remain.
"""

from __future__ import annotations

import dpex_kernels as dk

from . import kernel_api, kernel_forms  # noqa: F401  (kernel_forms: kapi inside kernels)
from .alias import install_alias
from .core.types import (
    DpnpNdArray,
    USMNdArray,
    b1,
    bool_,
    boolean,
    double,
    f4,
    f8,
    float32,
    float64,
    float_,
    i4,
    i8,
    int32,
    int64,
    none,
    u4,
    u8,
    uint32,
    uint64,
    usm_ndarray,
    void,
)
from .kernel_api import NdRange, Range
from .kernels import (
    DEFAULT_LOCAL_SIZE,
    Kernel,
    _launch_range,  # noqa: F401  (tests read what numba-dpex's launch forms meant)
    call_kernel,
    call_kernel_async,
    device_func,
    func,
    kernel,
)

# --- inside kernels (0.21): dpex_kernels' own objects -------------------------------------

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
    "call_kernel",
    "call_kernel_async",
    "device_func",
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
    "install_alias",
    "int32",
    "int64",
    "kernel",
    "kernel_api",
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
