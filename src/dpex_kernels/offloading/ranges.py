"""Lowering strategy: a loop nest without reductions as one kernel over a 1-3-D range.

Level k of the nest (k < 3) is `start + get_global_id(k) * step`, so the innermost loop varies
fastest, as in get_global_id's SYCL order; levels past the third are a sequential loop of
each work-item. Start and step written as constants are the kernel's constants (`prange(1,
n - 1)` indexes `1 + id`: the runtime sees neighbouring work-items read neighbours).
"""

from __future__ import annotations

from numba.core import cgutils, ir, types

from .._runtime import device_by_canonical_name
from . import codegen, early_exit_loops, flat, regions, row_loops, streaming
from .codegen import api, assign, call, for_range
from .kernel_ir import RegionKernel
from .launching import Host
from .regions import Region
from .templates import kernel_name, level_index, rebuild_tuples

#: Levels a launch range holds; deeper levels loop in each work-item.
RANGE_LEVELS = 3
#: The shortest promoted level (promotion.py) a launch runs as a level of the range: a shorter
#: one fills too few of the CPU runtime's vector lanes (2^22 float64 `out[i, j] = a[i, j] * 2.0
#: + 1.0` over 3 columns: 15 ms as a 2-D range, 5.6 ms as a loop of each work-item; 16 columns
#: 3.4-5.1 against 7.1 ms; 64 columns 1.7-2.9 against 7.6 ms).
PROMOTED_MIN = 16


def takes(region: Region) -> bool:
    return not region.reductions


def bound_params(region: Region, ranged: int = RANGE_LEVELS) -> list[str]:
    """The template parameters a nest's bounds need: non-constant starts and steps, and the
    counts of the levels past the range's first `ranged`."""
    names = []
    for k, level in enumerate(region.levels):
        if not isinstance(level.start, int):
            names.append(f"_dk_lo{k}")
        if not isinstance(level.step, int):
            names.append(f"_dk_st{k}")
        if k >= ranged:
            names.append(f"_dk_n{k}")
    return names


def bound_values(host: Host, region: Region, counts: list, ranged: int = RANGE_LEVELS) -> list:
    """The values of bound_params, in the same order."""
    values = []
    for k, level in enumerate(region.levels):
        if not isinstance(level.start, int):
            values.append(host.bound(level.start))
        if not isinstance(level.step, int):
            values.append(host.bound(level.step))
        if k >= ranged:
            values.append(counts[k])
    return values


def template(region: Region, name: str, ranged: int = RANGE_LEVELS):
    """The kernel template of a plain nest (see the module docstring), its first `ranged`
    levels from the range."""
    body = rebuild_tuples(region)
    for k, level in enumerate(region.levels[:ranged]):
        body.append(assign(level.index, level_index(level, call(api("get_global_id"), k), k)))
    inner = [codegen.sentinel()]
    for k in reversed(range(ranged, len(region.levels))):
        level = region.levels[k]
        position = f"_dk_k{k}"
        inner = [
            for_range(
                position,
                [f"_dk_n{k}"],
                [assign(level.index, level_index(level, position, k)), *inner],
            )
        ]
    params = [*region.params, *bound_params(region, ranged)]
    return codegen.function(name, params, body + inner, region.line)


def reserved(region: Region, ranged: int = RANGE_LEVELS) -> set[str]:
    """The names a template shares with the body."""
    names = {*region.params, *bound_params(region, ranged), *region.tuples}
    names |= {level.index for level in region.levels}
    return names | {r.name for r in region.reductions}


def kernel_types(region: Region, ranged: int = RANGE_LEVELS) -> list:
    """The argument types of a nest's kernel: its parameters', then its bounds'."""
    bounds = [types.int64] * len(bound_params(region, ranged))
    return [p.type for p in region.params.values()] + bounds


def _viewed(region: Region) -> bool:
    """Whether an array expression reads views broadcasting.py made (layout "A")."""
    return region.kind == "array expression" and any(
        isinstance(p.type, types.Array) and p.type.layout == "A" for p in region.params.values()
    )


def _contiguous(argtypes: list) -> list:
    return [t.copy(layout="C") if isinstance(t, types.Array) else t for t in argtypes]


def _sub_group_size(region: Region, innermost_looped: bool = False) -> int | None:
    """1 for a loop whose work-items walk rows of their own on a CPU device (row_loops.py;
    device.check_sub_group_size: CPU devices take 1), else the runtime's choice."""
    if not region.device or not row_loops.walks_rows(region, innermost_looped):
        return None
    return 1 if device_by_canonical_name(region.device).is_cpu else None


def _noalias(region: Region) -> bool:
    """Whether the nest's kernel is compiled `noalias` (CompileOptions.noalias): where its
    work-items loop and store into an array, so that what they load stays in registers across
    the loop's stores. Numba compiles its parallel loops so wherever its alias analysis finds
    no aliases, arguments included; here each launch checks that no two arrays share memory
    and runs a twin compiled without it where two do. gpairs, whose loop stores into `counts`
    and reads `x1[i]`, `w1[i]` and `rbins[k]` around the store, ran in 44-45 against 46-47 ms
    (2-core AVX2 host)."""
    loops = regions.has_loops(region.body) or len(region.levels) > RANGE_LEVELS
    return loops and bool(_written(region)) and not _viewed(region)


def _plain(region: Region, what: str, cache: bool, noalias: bool = False) -> RegionKernel:
    """The nest's kernel. Compiled `noalias`, its count-down loops that stop early are written
    out (early_exit_loops.py: they need arrays that share no memory), and it runs vectorised
    across work-items: scalar x86 code makes each of their selects of a float a branch
    (gpairs as a row loop: 61-66 ms, vectorised 11.6-14.3 ms)."""
    written_out = early_exit_loops.unrolled(region) if noalias else None
    return RegionKernel(
        template(region, kernel_name(region, what)),
        region.body if written_out is None else written_out,
        reserved(region),
        filename=region.filename,
        describe=region.describe,
        cache=cache,
        debug=region.raises,
        sub_group_size=_sub_group_size(region) if written_out is None else None,
        noalias=noalias,
    )


def kernels(region: Region, cache: bool) -> list:
    """[the nest's kernel, its streaming kernel or None, its kernel of broadcast views or None,
    its flat kernel or None, its sequential kernel or None, the nest's kernel without
    `noalias` or None]: the first and third compiled for their argument types (an expression
    reading broadcast views has its plain kernel compiled for C-contiguous arrays, which
    launches take where no view repeats), the others on the first launch that would take them
    (streaming.py, flat.py, `_sequential`, `_noalias`: arrays that share memory)."""
    noalias = _noalias(region)
    kernel = _plain(region, "loop", cache, noalias)
    aliased = _plain(region, "aliased", cache) if noalias else None
    takes_flat = flat.takes(region) and not region.tuples
    flat_kernel = flat.kernel(region, kernel_name(region, "flat"), cache) if takes_flat else None
    viewed_nest = _viewed(region) and len(region.levels) > 1
    sequential = _sequential(region, cache) if region.promoted or viewed_nest else None
    if _viewed(region):
        kernel.compile(types.void(*_contiguous(kernel_types(region))))
        general = _plain(region, "broadcast", cache)
        general.compile(types.void(*kernel_types(region)))
        return [kernel, None, general, flat_kernel, sequential, None]
    kernel.compile(types.void(*kernel_types(region)))
    stream = None
    if streaming.eligible(region, RANGE_LEVELS) and not region.raises:
        outer = bound_params(region)
        tree = streaming.template(region, kernel_name(region, "stream"), outer)
        stream = RegionKernel(
            tree,
            region.body,
            reserved(region) | {f"_dk_n{len(region.levels) - 1}"},
            filename=region.filename,
            describe=region.describe,
            namespace=streaming.NAMESPACE,
            cache=cache,
            host_simd_mode=streaming.mode(region),
        )
    return [kernel, stream, None, flat_kernel, sequential, aliased]


def _sequential(region: Region, cache: bool) -> RegionKernel:
    """The kernel of a promoted nest, or of an array expression of views, with its innermost
    level a loop of each work-item, in order, as the user wrote it (promotion.py): for launches
    of a promoted nest whose arrays overlap one the loop writes (an array expression's stores
    read no views of their own array: aliasing.py), whose innermost level is shorter than
    PROMOTED_MIN, or, where its body has neither a loop of its own nor a math call, that take
    neither the streaming nor the flat kernel. Such a row, written element by element, ran
    faster as a row loop than over a 2-D range (2^22 float64 `out[i, j] = a[i, j] * x[j]`: 16
    columns 1.5-1.7 against 3.1-3.8 ms, 256 columns 1.5-1.7 against 2.3-2.8 ms; `c[:] = row`
    0.8-1.2 against 1.9-13.9 ms in 3 to 256 columns); with a loop of its own or math, a body
    did better over the 2-D range (pairwise distance 6.2 against 11.1 ms, rambo 9.7 against
    16.0 ms)."""
    ranged = len(region.levels) - 1
    return RegionKernel(
        template(region, kernel_name(region, "sequential"), ranged),
        region.body,
        reserved(region, ranged),
        filename=region.filename,
        describe=region.describe,
        cache=cache,
        debug=region.raises,
        sub_group_size=_sub_group_size(region, innermost_looped=True),
    )


def _written(region: Region) -> set[str]:
    """The array parameters the body stores into."""
    return {
        stmt.target.name
        for block in region.body.values()
        for stmt in block.body
        if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) and stmt.target.name in region.arrays
    }


def _spans(host: Host, region: Region, values: list) -> dict:
    """In host code: each array parameter's span of addresses (Host.span), by name."""
    return {
        name: host.span(param.type, values[position])
        for position, (name, param) in enumerate(region.params.items())
        if isinstance(param.type, types.Array)
    }


def _overlapping(host: Host, spans: dict, written: set[str]):
    """In host code: whether an array of `written` shares memory with another array."""
    names = sorted(spans)
    found = host.int1(False)
    for position, first in enumerate(names):
        for second in names[position + 1 :]:
            if first in written or second in written:
                found = host.builder.or_(found, host.overlap(spans[first], spans[second]))
    return found


def launch(lowerer, region: Region, kernels: list) -> None:
    """The host code of the nest's launch: nothing for an empty range; for a promoted nest
    whose arrays overlap one it writes, its sequential kernel; else the streaming kernel
    where it compiled and pays (streaming.py), the flat kernel where the arrays fit (flat.py),
    the sequential kernel where the innermost level is short or the body simple (`_sequential`),
    or the plain kernel (for C-contiguous arrays where a kernel of broadcast views takes the
    others; its twin without `noalias` where two arrays share memory)."""
    kernel, stream, general, flat_kernel, sequential, aliased = kernels
    host = Host(lowerer)
    builder = lowerer.builder
    counts = host.trip_counts(region.levels)
    params, _ = host.params(region)
    values = [*params, *bound_values(host, region, counts)]
    argtypes = kernel_types(region)
    sizes = counts[:RANGE_LEVELS]
    with host.if_then(host.all_positive(counts)):
        checked = region.promoted or aliased is not None
        spans = _spans(host, region, params) if checked else {}
        overlaps = host.int1(False)
        if region.promoted:
            overlaps = _overlapping(host, spans, _written(region))
        free = builder.not_(overlaps)
        taken = host.int1(False)
        choices = []  # (whether it is taken, its launch) of each kernel the region has, in order
        if stream is not None:
            stream_types = [*argtypes, types.int64]
            least = streaming.least_iterations(region, stream.options.host_simd)
            streams = _streams(host, region, argtypes, values, counts, least)
            condition = builder.and_(free, streams)
            taken = _compiled_where(host, condition, stream, stream_types)

            def streamed():
                start = host.int64(region.levels[-1].start)
                chunks = host.ceil_div(builder.add(counts[-1], start), streaming.CHUNK)
                launch_sizes = [*sizes[:-1], chunks]
                return host.launch(stream, stream_types, [*values, counts[-1]], launch_sizes)

            choices.append((taken, streamed))
        if flat_kernel is not None:
            flat_types = flat.flat_types(argtypes)
            fits = builder.and_(free, flat.fits(host, argtypes, values, counts))
            condition = builder.and_(builder.not_(taken), fits)
            flattens = _compiled_where(host, condition, flat_kernel, flat_types)
            taken = builder.or_(taken, flattens)

            def flattened():
                total = host.product(counts)
                flat_values = flat.flat_values(host, argtypes, values, total)
                return host.launch(flat_kernel, flat_types, flat_values, [total])

            choices.append((flattens, flattened))
        if sequential is not None:
            ranged = len(region.levels) - 1
            short = builder.icmp_signed("<", counts[-1], host.int64(PROMOTED_MIN))
            if not (regions.has_loops(region.body) or row_loops.calls_math(region.body)):
                short = host.int1(True)  # a row written element by element: see _sequential
            condition = builder.or_(overlaps, builder.and_(short, builder.not_(taken)))
            in_order_types = kernel_types(region, ranged)
            in_order = _compiled_where(host, condition, sequential, in_order_types)
            taken = builder.or_(taken, in_order)

            def ordered():
                in_order_values = params + bound_values(host, region, counts, ranged)
                return host.launch(sequential, in_order_types, in_order_values, counts[:ranged])

            choices.append((in_order, ordered))  # taken only where the others are not

        if aliased is not None:  # stores through views too: every pair of arrays is checked
            shared = _overlapping(host, spans, set(spans))
            twin = _compiled_where(
                host, builder.and_(shared, builder.not_(taken)), aliased, argtypes
            )
            choices.append((twin, lambda: host.launch(aliased, argtypes, values, sizes)))

        def nested():
            _launch_nest(host, region, kernel, general, argtypes, values, sizes)

        _first_of(host, choices, nested)


def _first_of(host: Host, choices: list, otherwise) -> None:
    """In host code: the launch of the first choice taken (waited for), else `otherwise()`."""
    if not choices:
        otherwise()
        return
    (condition, launched), rest = choices[0], choices[1:]
    with host.if_else(condition) as (taken, not_taken):
        with taken:
            host.wait(launched())
        with not_taken:
            _first_of(host, rest, otherwise)


def _launch_nest(host: Host, region: Region, kernel, general, argtypes, values, sizes) -> None:
    """The plain kernel's launch, or with a kernel of broadcast views, the plain kernel's where
    every view is C-contiguous and the other's where one is not."""
    if general is None:
        host.wait(host.launch(kernel, argtypes, values, sizes))
        return
    contiguous = host.int1(True)
    for position, param in enumerate(region.params.values()):
        if isinstance(param.type, types.Array) and param.type.layout == "A":
            contiguous = host.builder.and_(
                contiguous, host.c_contiguous(param.type, values[position])
            )
    with host.if_else(contiguous) as (fast, views):
        with fast:
            host.wait(host.launch(kernel, _contiguous(argtypes), values, sizes))
        with views:
            host.wait(host.launch(general, argtypes, values, sizes))


def _streams(host: Host, region: Region, argtypes: list, values: list, counts: list, least: int):
    """In host code: whether a launch pays streaming (streaming.worth_host_simd: its arrays'
    bytes, and at least `least` innermost iterations, streaming.least_iterations) and its
    arrays are laid out as the streaming kernel assumes."""
    builder = host.builder
    condition = builder.icmp_signed(">=", counts[-1], host.int64(least))
    nbytes = host.int64(0)
    for position, param in enumerate(region.params.values()):
        if isinstance(param.type, types.Array):
            array = values[position]
            condition = builder.and_(condition, host.laid_out(param.type, array))
            nbytes = builder.add(nbytes, host.nbytes(param.type, array))
    worth = builder.icmp_signed(">=", nbytes, host.int64(streaming.streaming_bytes()))
    return builder.and_(condition, worth)


def _compiled_where(host: Host, condition, kernel, argtypes: list):
    """In host code: `condition`, and then whether `kernel` compiles for `argtypes` (compiled
    on the first launch that asks, streaming.usable)."""
    usable = streaming.usable(kernel, argtypes)
    answer = host.variable(cgutils.false_bit)
    with host.if_then(condition):
        compiled, _ = host.call(usable, [], [])
        host.builder.store(compiled, answer)
    return host.builder.load(answer)
