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
from ..types.ranges import NdRange
from ..types.usm_array_type import USMArrayType
from . import codegen, launching, simd_reduction
from .allocation import allocator, scratch_keeper
from .codegen import api, assign, call, compare, do, for_range, if_, item, op
from .kernel_ir import RegionKernel
from .ranges import kernel_name, level_index, rebuild_tuples
from .reduction_kernels import (
    COMBINING,
    WORK_GROUP,
    final_kernel,
    group_reducer,
    groups_for,
    host_combine,
    identity,
)
from .regions import Region


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
                f"reduces into '{reduction.host}' of type {reduction.dtype}; a device "
                f"reduction takes numbers (int or float)"
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
    """Launch the reduction (its launcher: launcher_tree) and store each result in its
    scalar."""
    counts = launching.trip_counts(lowerer, region.levels)
    values, argtypes = launching.param_values(lowerer, region)
    bounds = _bound_values(lowerer, region, counts)
    inits = [lowerer.loadvar(r.host) for r in region.reductions]
    init_types = [lowerer.typeof(r.host) for r in region.reductions]
    init_values = [
        lowerer.context.cast(lowerer.builder, v, t, r.dtype)
        for v, t, r in zip(inits, init_types, region.reductions)
    ]
    function = launcher(region, kernels)
    result_type = types.Tuple([r.dtype for r in region.reductions])
    signature = result_type(
        *argtypes, *[types.int64] * len(bounds), *[r.dtype for r in region.reductions]
    )
    result = lowerer.context.compile_internal(
        lowerer.builder, function, signature, [*values, *bounds, *init_values]
    )
    for j, reduction in enumerate(region.reductions):
        value = lowerer.builder.extract_value(result, j)
        host_type = lowerer.typeof(reduction.host)
        value = lowerer.context.cast(lowerer.builder, value, reduction.dtype, host_type)
        lowerer.storevar(value, reduction.host)


def _bound_values(lowerer, region: Region, counts: list) -> list:
    values = []
    for k, level in enumerate(region.levels):
        if not isinstance(level.start, int):
            values.append(launching.bound_value(lowerer, level.start))
        if not isinstance(level.step, int):
            values.append(launching.bound_value(lowerer, level.step))
        values.append(counts[k])
    return values


def launcher(region: Region, kernels: list):
    """The host code of one reduction's launch, built from AST nodes (launcher_tree)."""
    tree, names = launcher_tree(region, kernels)
    return codegen.compile_function(tree, region.filename, names)


def launcher_tree(region: Region, kernels: list):
    """(the launcher's syntax tree, its globals): see the module docstring for what it does.

    It takes the kernel parameters, the bounds and each reduction's value before the loop,
    and returns the reductions' values after it."""
    rounds, tail, simd, *finals = kernels
    arguments = [*region.params, *bound_params(region)]
    inits = [f"_dk_init{j}" for j in range(len(region.reductions))]
    device = _device(region)
    arrays = region.arrays
    source = arrays[0] if arrays else None
    names = {
        "_dk_NdRange": NdRange,
        "_dk_groups_for": groups_for,
        "_dk_rounds": rounds,
        "_dk_tail": tail,
        "_dk_keep": scratch_keeper("shared", device),
    }
    bufs = buffers(region)

    def allocate(size) -> list[ast.stmt]:
        statements = []
        for j, reduction in enumerate(region.reductions):
            names[f"_dk_scratch{j}"] = allocator("scratch", str(reduction.dtype), "shared", device)
            statements.append(
                assign(bufs[j], call(f"_dk_scratch{j}", size, None_(), source or None_(), 0))
            )
        return statements

    def launch(kernel: str, range_: ast.expr, extra=()) -> ast.expr:
        return call(item(kernel, range_), *bufs, *arguments, *extra)

    wg = WORK_GROUP
    tree_path = [
        assign("_dk_groups", call("_dk_groups_for", "_dk_total")),
        *allocate(op(op(2, "*", "_dk_groups"), "+", 1)),
        do(launch("_dk_rounds", call("_dk_NdRange", op("_dk_groups", "*", wg), wg))),
        assign("_dk_rest", op("_dk_total", "%", op("_dk_groups", "*", wg))),
        assign(
            "_dk_parts",
            op("_dk_groups", "+", op(op("_dk_rest", "+", wg - 1), "//", wg)),
        ),
        if_(
            compare("_dk_rest", ">", 0),
            [
                do(
                    launch(
                        "_dk_tail",
                        call(
                            "_dk_NdRange",
                            op(op("_dk_parts", "-", "_dk_groups"), "*", wg),
                            wg,
                        ),
                        [op("_dk_total", "-", "_dk_rest"), "_dk_groups"],
                    )
                )
            ],
        ),
    ]
    body = [assign("_dk_total", total_of_counts(region))]
    if simd is None:
        body += tree_path
    else:
        names["_dk_simd"] = simd
        names["_dk_laid_out"] = simd_reduction.laid_out
        chunk = simd_reduction.CHUNK
        condition = compare("_dk_total", ">", chunk - 1)
        for name in arrays:
            condition = ast.BoolOp(ast.And(), [condition, call("_dk_laid_out", name)])
        simd_path = [
            assign("_dk_parts", op(op("_dk_total", "+", chunk - 1), "//", chunk)),
            *allocate(op("_dk_parts", "+", 1)),
            do(call(attr_of(launch("_dk_simd", "_dk_parts"), "wait"))),
        ]
        body.append(if_(condition, simd_path, tree_path))
    results = []
    for j, (reduction, final) in enumerate(zip(region.reductions, finals)):
        combining = COMBINING[reduction.op]
        names[f"_dk_final{j}"] = final
        names[f"_DK_IDENT{j}"] = identity(combining, reduction.dtype)
        names[f"_dk_combine{j}"] = host_combine(combining)
        event = call(
            item(f"_dk_final{j}", call("_dk_NdRange", wg, wg)),
            bufs[j],
            "_dk_parts",
            f"_DK_IDENT{j}",
        )
        body.append(assign(f"_dk_event{j}", event))
    body += [do(call(attr_of(f"_dk_event{len(finals) - 1}", "wait")))]
    for j in range(len(region.reductions)):
        result = call(f"_dk_combine{j}", inits[j], item(bufs[j], "_dk_parts"))
        body.append(assign(f"_dk_result{j}", result))
        body.append(do(call("_dk_keep", bufs[j], source or None_())))
        results.append(codegen.expr(f"_dk_result{j}"))
    body.append(ast.Return(ast.Tuple(results, ast.Load())))
    tree = codegen.function(kernel_name(region, "launch"), [*arguments, *inits], body, region.line)
    return tree, names


def total_of_counts(region: Region) -> ast.expr:
    return total(region)


def None_() -> ast.expr:  # noqa: N802 (the constant)
    return ast.Constant(None)


def attr_of(value, name: str) -> ast.expr:
    return codegen.attr(value, name)
