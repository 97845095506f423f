"""The fixed device code of offloaded reductions: combining two partial results, a work-group's
reduction of its work-items' values, and the final pass over the work-groups' results.

A work-group reduces in local memory: sums of the types sub-groups add (int32/64, uint32/64,
float32/64) add within each sub-group first (`dk.sub_group.reduce_add`, in registers), then
work-item 0 adds one value per sub-group: one barrier, where the tree in local memory takes one
per halving (nine for 256 work-items), which the CPU runtime runs as that many loops over the
work-group. The rest take the tree.
"""

from __future__ import annotations

import functools
import math

import numpy as np

import dpex_kernels as dk

from ..compiler.kernel_api.spirv import TYPE_CODES
from ..dispatcher.jit_kernel import JitKernel

#: Work-items per work-group of a reduction, and the most work-groups one launches.
WORK_GROUP = 256
MAX_GROUPS = 16384
#: Iterations each work-item of a reduction handles at least, before more work-groups start.
PER_ITEM = 4

#: How partial results of a loop's operator combine: `s -= x` sums its negated terms, `s /= x`
#: multiplies its reciprocals.
COMBINING = {"+": "+", "-": "+", "*": "*", "/": "*", "min": "min", "max": "max"}
_NAMES = {"+": "sum", "*": "product", "min": "min", "max": "max"}


@dk.func
def _add(a, b):
    return a + b


@dk.func
def _multiply(a, b):
    return a * b


@dk.func
def _min(a, b):
    return min(a, b)


@dk.func
def _max(a, b):
    return max(a, b)


COMBINE = {"+": _add, "*": _multiply, "min": _min, "max": _max}


def identity(op: str, dtype) -> object:
    """The neutral element of a combining operator for a Numba scalar type."""
    np_dtype = np.dtype(str(dtype))
    if op == "+":
        return np_dtype.type(0)
    if op == "*":
        return np_dtype.type(1)
    if np.issubdtype(np_dtype, np.floating):
        return np_dtype.type(math.inf if op == "min" else -math.inf)
    if np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        return np_dtype.type(info.max if op == "min" else info.min)
    raise TypeError(f"a {op} reduction needs a numeric accumulator (int or float); got {dtype}")


@functools.cache
def group_reducer(op: str, dtype):
    """A device function (value, out, slot): the work-group's values of `dtype` combined with
    `op`; work-item 0 stores the result at out[slot]."""
    combine = COMBINE[op]
    element = dtype

    if op == "+" and str(dtype) in TYPE_CODES:

        def sub_group_sum(value, out, slot):  # pragma: no cover (compiled)
            lid = dk.get_local_id(0)
            part = dk.sub_group.reduce_add(value)
            width = dk.sub_group.get_size()
            local = dk.local.array(WORK_GROUP, element)
            if dk.sub_group.get_local_id() == 0:
                local[lid // width] = part
            dk.barrier(dk.LOCAL_MEM_FENCE)
            if lid == 0:
                total = local[0]
                for s in range(1, (WORK_GROUP + width - 1) // width):
                    total = total + local[s]
                out[slot] = total

        return dk.func(sub_group_sum)

    def tree(value, out, slot):  # pragma: no cover (compiled)
        lid = dk.get_local_id(0)
        local = dk.local.array(WORK_GROUP, element)
        local[lid] = value
        dk.barrier(dk.LOCAL_MEM_FENCE)
        width = WORK_GROUP // 2
        while width > 0:
            if lid < width:
                local[lid] = combine(local[lid], local[lid + width])
            dk.barrier(dk.LOCAL_MEM_FENCE)
            width //= 2
        if lid == 0:
            out[slot] = local[0]

    return dk.func(tree)


@functools.cache
def final_kernel(op: str, dtype, cache: bool) -> JitKernel:
    """The last pass of every `op` reduction of `dtype`: one work-group combines the `parts`
    partial results in buffer[:parts] into buffer[parts] (launched as NdRange(256, 256))."""
    combine, group = COMBINE[op], group_reducer(op, dtype)

    def final(buffer, parts, start):  # pragma: no cover (compiled)
        acc = start
        k = dk.get_local_id(0)
        while k < parts:
            acc = combine(acc, buffer[k])
            k += WORK_GROUP
        group(acc, buffer, parts)

    final.__name__ = final.__qualname__ = f"dk_final_{_NAMES[op]}_{dtype}"
    return JitKernel(final, cache=cache)
