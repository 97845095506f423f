"""Lowering strategy: a 1-D reduction on a CPU device as host-SIMD kernel (docs/offload.md,
"Host-SIMD reductions").

Each work-item reduces CHUNK consecutive iterations in vector registers (compiler/backend/
host_simd.py builds it with the host CPU's cost model, the reduction's float update marked
`reassoc`: the work-items and the final pass reorder the reduction anyway, and every other
float operation keeps its order) and stores its partial results; reductions.py's final pass
combines them. The launch takes it for CHUNK iterations or more over arrays laid out as the
kernel assumes; a kernel the compiler refuses (a float min or max, which LLVM does not
vectorise without fast-math) is not used.
"""

from __future__ import annotations

import numba
from numba.core import types
from numba.core.extending import overload

from .._runtime import device_by_canonical_name
from ..compiler.backend import host_simd
from ..compiler.kernel_api.index_space import index_add
from ..types.usm_array_type import USMArrayType
from . import codegen
from .codegen import api, assign, call, for_range, op, store
from .regions import Region, has_loops
from .templates import kernel_name, rebuild_tuples

#: Consecutive iterations each work-item of a host-SIMD reduction reduces.
CHUNK = 2048
#: More chunks than a launch ever has: masking the id by it tells LLVM an index is never
#: negative (a no-op), or it keeps Numba's negative-index wraparound and vectorises nothing.
_CHUNK_IDS = 2**40


def eligible(region: Region) -> bool:
    """One level of prange(n) (start 0, step 1) on a CPU device, a body without loops of its
    own (which would be reordered too), and arrays to read."""
    if len(region.levels) != 1 or not region.arrays:
        return False
    level = region.levels[0]
    if level.start != 0 or level.step != 1 or has_loops(region.body):
        return False
    return bool(region.device) and device_by_canonical_name(region.device).is_cpu


def template(region: Region, names: list[str], accumulators: list):
    """Work-item g reduces iterations [g, g + 1) * CHUNK and stores its results at g."""
    index = region.levels[0].index
    body = rebuild_tuples(region) + accumulators
    body += [
        assign("_dk_id", call(api("get_global_id"), 0)),
        assign("_dk_base", op(op("_dk_id", "&", _CHUNK_IDS - 1), "*", CHUNK)),
        assign("_dk_stop", call("min", op("_dk_base", "+", CHUNK), "_dk_n0")),
        for_range(
            "_dk_k",
            [op("_dk_stop", "-", "_dk_base")],
            [assign(index, call("_dk_index_add", "_dk_base", "_dk_k")), codegen.sentinel()],
        ),
    ]
    body += [store(f"_dk_buf{j}", "_dk_id", r.name) for j, r in enumerate(region.reductions)]
    return codegen.function(kernel_name(region, "simd"), names, body, region.line)


def kernel(region: Region, tree, make_kernel, argtypes: list, cache: bool):
    """The region's host-SIMD kernel (template `tree`) compiled for `argtypes`, or None where
    the compiler refuses it."""
    simd = make_kernel(region, tree, cache, host_simd_mode=host_simd.REDUCE)
    try:
        simd.compile(types.void(*argtypes))
    except host_simd.Refusal:
        return None
    return simd


def laid_out(array):
    """In compiled host code: whether an array is laid out as a host-SIMD kernel assumes."""


_fits = numba.njit(host_simd.fits, cache=False)


@overload(laid_out)
def _laid_out(array):
    if isinstance(array, USMArrayType):
        return lambda array: _fits(array.ctypes.data, array.shape, array.itemsize)
    return lambda array: True


#: The globals the template names besides the reduction's.
NAMESPACE = {"_dk_index_add": index_add}
