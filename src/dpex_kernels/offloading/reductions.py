"""Lowering strategy: a loop that reduces into scalars (`s += x`, `s = min(s, x)`, and the
reductions of NumPy's functions Numba makes loops of).

Each work-item accumulates in private variables, each work-group combines its work-items'
values (reduction_kernels.group_reducer), a last kernel combines the work-groups', and the host
combines that with the value the scalar had before the loop. Work-item g of G takes linear
iterations g, g + G, ... below the last multiple of G: the same trip count for all, so the
runtime vectorises across work-items; the iterations past it, if any, are a second kernel's,
one each (a guarded extra round in the first ran masked, and slowly, on the CPU device even
when no work-item took it). A launch has as many work-groups of 256 as give each work-item
four rounds, up to 16384. On a CPU device a 1-D loop takes simd_reduction.py's kernel instead
where it compiled and the loop is long enough.
"""

from __future__ import annotations

import ast

from numba.core import types

from .._runtime import default_device
from ..types.usm_array_type import USMArrayType
from . import codegen, simd_reduction
from .allocation import allocator, scratch_keeper
from .codegen import api, assign, call, compare, do, for_range, if_, op
from .kernel_ir import RegionKernel
from .launching import Host
from .reduction_kernels import (
    COMBINING,
    MAX_GROUPS,
    PER_ITEM,
    WORK_GROUP,
    final_kernel,
    group_reducer,
    identity,
)
from .regions import Region
from .templates import kernel_name, level_index, rebuild_tuples


def takes(region: Region) -> bool:
    return bool(region.reductions)


def buffers(region: Region) -> list[str]:
    """The kernel parameters of the reductions' partial results, one per reduction."""
    return [f"_dk_buf{j}" for j in range(len(region.reductions))]


def bound_params(region: Region) -> list[str]:
    """Non-constant starts and steps, and every level's count (the linear iteration is
    decomposed into the levels' indices)."""
    names = []
    for k, level in enumerate(region.levels):
        if not isinstance(level.start, int):
            names.append(f"_dk_lo{k}")
        if not isinstance(level.step, int):
            names.append(f"_dk_st{k}")
        names.append(f"_dk_n{k}")
    return names


def params(region: Region) -> list[str]:
    return [*buffers(region), *region.params, *bound_params(region)]


def reserved(region: Region) -> set[str]:
    names = {*params(region), *region.tuples}
    return names | {lv.index for lv in region.levels} | {r.name for r in region.reductions}


def namespace(region: Region) -> dict:
    """The globals a reduction template names: identities and work-group reducers."""
    found = dict(simd_reduction.NAMESPACE)
    for j, reduction in enumerate(region.reductions):
        combining = COMBINING[reduction.op]
        found[f"_DK_IDENT{j}"] = identity(combining, reduction.dtype)
        found[f"_dk_group{j}"] = group_reducer(combining, reduction.dtype)
    return found


def accumulators(region: Region) -> list[ast.stmt]:
    return [assign(r.name, f"_DK_IDENT{j}") for j, r in enumerate(region.reductions)]


def total(region: Region) -> ast.expr:
    product = codegen.expr("_dk_n0")
    for k in range(1, len(region.levels)):
        product = op(product, "*", f"_dk_n{k}")
    return product


def decompose(region: Region, linear: str) -> list[ast.stmt]:
    """The levels' indices of linear iteration `linear` (the innermost level varies fastest)."""
    out = [assign("_dk_q", linear)]
    for k in reversed(range(len(region.levels))):
        level = region.levels[k]
        if k == 0:
            out.append(assign(level.index, level_index(level, "_dk_q", k)))
        else:
            out.append(assign(level.index, level_index(level, op("_dk_q", "%", f"_dk_n{k}"), k)))
            out.append(assign("_dk_q", op("_dk_q", "//", f"_dk_n{k}")))
    return out


def _epilogue(region: Region, slot: ast.expr) -> list[ast.stmt]:
    return [
        do(call(f"_dk_group{j}", r.name, f"_dk_buf{j}", slot))
        for j, r in enumerate(region.reductions)
    ]


def rounds_template(region: Region):
    """Work-item g of G: linear iterations g, g + G, ... below the last multiple of G."""
    body = rebuild_tuples(region) + accumulators(region)
    body += [
        assign("_dk_total", total(region)),
        assign("_dk_first", call(api("get_global_id"), 0)),
        assign("_dk_stride", call(api("get_global_size"), 0)),
    ]
    loop = [assign("_dk_lin", op("_dk_first", "+", op("_dk_round", "*", "_dk_stride")))]
    loop += decompose(region, "_dk_lin") + [codegen.sentinel()]
    body.append(for_range("_dk_round", [op("_dk_total", "//", "_dk_stride")], loop))
    body += _epilogue(region, call(api("get_group_id"), 0))
    return codegen.function(kernel_name(region, "reduce"), params(region), body, region.line)


def tail_template(region: Region):
    """One iteration each past the rounds, from _dk_start; results after _dk_groups."""
    body = rebuild_tuples(region) + accumulators(region)
    body += [
        assign("_dk_total", total(region)),
        assign("_dk_lin", op("_dk_start", "+", call(api("get_global_id"), 0))),
        if_(
            compare("_dk_lin", "<", "_dk_total"),
            [*decompose(region, "_dk_lin"), codegen.sentinel()],
        ),
    ]
    body += _epilogue(region, op("_dk_groups", "+", call(api("get_group_id"), 0)))
    names = [*params(region), "_dk_start", "_dk_groups"]
    return codegen.function(kernel_name(region, "tail"), names, body, region.line)


def _kernel(region: Region, template, cache: bool, **options) -> RegionKernel:
    return RegionKernel(
        template,
        region.body,
        reserved(region),
        filename=region.filename,
        describe=region.describe,
        namespace=namespace(region),
        cache=cache,
        debug=region.raises,
        **options,
    )


def kernel_types(region: Region) -> list:
    """The argument types of the reduction's kernels: its buffers', parameters', bounds'."""
    device = _device(region)
    return [
        *(USMArrayType(r.dtype, 1, "C", "shared", device) for r in region.reductions),
        *(p.type for p in region.params.values()),
        *[types.int64] * len(bound_params(region)),
    ]


def _device(region: Region) -> str:
    return region.device or default_device().filter_string


def kernels(region: Region, cache: bool) -> list:
    """[rounds, tail, host-SIMD or None, final pass per reduction], compiled."""
    for reduction in region.reductions:
        if not isinstance(reduction.dtype, (types.Integer, types.Float)):
            raise region.error(
                f"reduces into '{reduction.host.split('.')[0]}' of type {reduction.dtype}; "
                f"a device reduction needs a numeric accumulator (int or float)"
            )
    argtypes = kernel_types(region)
    rounds = _kernel(region, rounds_template(region), cache)
    rounds.compile(types.void(*argtypes))
    tail = _kernel(region, tail_template(region), cache)
    tail.compile(types.void(*argtypes, types.int64, types.int64))
    simd = None
    if simd_reduction.eligible(region):
        tree = simd_reduction.template(region, params(region), accumulators(region))
        simd = simd_reduction.kernel(region, tree, _kernel, argtypes, cache)
    finals = [final_kernel(COMBINING[r.op], r.dtype, cache) for r in region.reductions]
    return [rounds, tail, simd, *finals]


def launch(lowerer, region: Region, kernels: list) -> None:
    """The host code of the reduction: its kernels launched (the host-SIMD one where it
    compiled and the loop has CHUNK iterations or more over arrays laid out for it, else the
    rounds and the tail), the final passes, and each scalar's value combined with the one it
    had before the loop."""
    rounds, tail, simd, *finals = kernels
    host, builder = Host(lowerer), lowerer.builder
    counts = host.trip_counts(region.levels)
    values, _ = host.params(region)
    values += _bound_values(host, region, counts)
    argtypes = kernel_types(region)
    buffer_types = argtypes[: len(region.reductions)]
    total = host.product(counts)
    parts = host.variable(host.int64(0))
    slots = [host.slot(t) for t in buffer_types]
    source, source_type = _source(host, region, values)
    wg = host.int64(WORK_GROUP)

    def allocate(size) -> list:
        """Each reduction's buffer of `size` partial results (from the pool of buffers)."""
        made = []
        for reduction, slot in zip(region.reductions, slots):
            alloc = allocator("scratch", str(reduction.dtype), "shared", _device(region))
            buffer, _ = host.call(
                alloc,
                [types.int64, types.none, source_type, types.int64],
                [size, host.none(), source, host.int64(0)],
            )
            builder.store(buffer, slot)
            made.append(buffer)
        return made

    def tree_path() -> None:
        per_group = host.ceil_div(total, WORK_GROUP * PER_ITEM)
        groups = host.max(host.int64(1), host.min(per_group, host.int64(MAX_GROUPS)))
        bufs = allocate(builder.add(builder.mul(groups, host.int64(2)), host.int64(1)))
        items = builder.mul(groups, wg)
        host.launch(rounds, argtypes, bufs + values, [items], [wg])
        rest = builder.srem(total, items)
        builder.store(builder.add(groups, host.ceil_div(rest, WORK_GROUP)), parts)
        with host.if_then(builder.icmp_signed(">", rest, host.int64(0))):
            tail_items = builder.mul(builder.sub(builder.load(parts), groups), wg)
            host.launch(
                tail,
                [*argtypes, types.int64, types.int64],
                [*bufs, *values, builder.sub(total, rest), groups],
                [tail_items],
                [wg],
            )

    if simd is None:
        tree_path()
    else:
        condition = builder.icmp_signed(">=", total, host.int64(simd_reduction.CHUNK))
        for position, param in enumerate(region.params.values()):
            if isinstance(param.type, types.Array):
                condition = builder.and_(condition, host.laid_out(param.type, values[position]))
        with host.if_else(condition) as (vectorised, plain):
            with vectorised:
                count = host.ceil_div(total, simd_reduction.CHUNK)
                builder.store(count, parts)
                bufs = allocate(builder.add(count, host.int64(1)))
                host.wait(host.launch(simd, argtypes, bufs + values, [count]))
            with plain:
                tree_path()
    count = builder.load(parts)
    bufs = [builder.load(slot) for slot in slots]
    for reduction, final, buffer, buffer_type in zip(region.reductions, finals, bufs, buffer_types):
        start = host.constant(reduction.dtype, identity(COMBINING[reduction.op], reduction.dtype))
        event = host.launch(
            final,
            [buffer_type, types.int64, reduction.dtype],
            [buffer, count, start],
            [wg],
            [wg],
        )
    host.wait(event)
    keep = scratch_keeper("shared", _device(region))
    for reduction, buffer, buffer_type in zip(region.reductions, bufs, buffer_types):
        value = host.load_item(buffer_type, buffer, count)
        before = lowerer.context.cast(
            builder,
            lowerer.loadvar(reduction.host),
            lowerer.typeof(reduction.host),
            reduction.dtype,
        )
        combined = host.combine(COMBINING[reduction.op], reduction.dtype, before, value)
        host.store(combined, reduction.dtype, reduction.host)
        host.call(keep, [buffer_type, source_type], [buffer, source])


def _source(host: Host, region: Region, values: list) -> tuple:
    """(value, type) of the region's first array, whose queue its buffers share; None's."""
    for position, param in enumerate(region.params.values()):
        if isinstance(param.type, USMArrayType):
            return values[position], param.type
    return host.none(), types.none


def _bound_values(host: Host, region: Region, counts: list) -> list:
    values = []
    for k, level in enumerate(region.levels):
        if not isinstance(level.start, int):
            values.append(host.bound(level.start))
        if not isinstance(level.step, int):
            values.append(host.bound(level.step))
        values.append(counts[k])
    return values
