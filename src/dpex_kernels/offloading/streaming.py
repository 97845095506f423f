"""Lowering strategy: a prange nest on a CPU device whose arrays outgrow their share of the
last-level cache, as a host-SIMD kernel with streaming stores (docs/offload.md, "Streaming
loops").

Work-item (outer indices..., c) runs the innermost iterations in [c, c + 1) * CHUNK, in vector
registers (compiler/backend/host_simd.py builds it with the host CPU's cost model and marks its
aligned vector stores non-temporal: a store past the caches skips reading each line before
writing it). Chunks start at multiples of the chunk, so with rows of a multiple of 64 bytes
(the launch checks, host_simd.fits) every vector store is aligned. ranges.py makes it next to
the plain kernel where `eligible`; its launch takes it where `worth_host_simd` and the arrays
fit, compiling it then (`usable`); a kernel LLVM does not vectorise is refused once and never
launched. A row loop (row_loops.py), which no vector code would pay for, streams as scalar
code where its stores allow it (`mode`): each work-item's chunk of rows in order, every store
non-temporal.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

from llvmlite import ir as llvm
from numba.core import cgutils, ir, types
from numba.core.extending import intrinsic
from numba.core.ir_utils import build_definitions
from numba.core.typing.templates import signature

from .._runtime import device_by_canonical_name
from ..compiler.backend import host_simd
from ..compiler.kernel_api.index_space import index_add
from . import codegen, row_loops
from .codegen import api, assign, call, compare, for_range, if_, op
from .ir_values import access, copies, resolve
from .regions import Region, loop_blocks, on_every_path
from .templates import level_index, rebuild_tuples

#: Consecutive iterations each work-item of a streaming loop runs (compiler/host_simd.py).
CHUNK = 1024
#: More chunks than a launch ever has: masking the id by it tells LLVM an index is never
#: negative (a no-op), or it keeps Numba's negative-index wraparound and vectorises nothing.
_CHUNK_IDS = 2**40
#: Chunks each compute unit gets at least where a row loop streams: its work-items are whole
#: chunks of rows, and fewer would leave compute units idle (`least_iterations`).
ROW_CHUNKS_PER_UNIT = 8
#: The globals the template names.
NAMESPACE = {"_dk_index_add": index_add}


@functools.cache
def last_level_cache_bytes() -> int:
    """The size of the host CPU's largest cache (Linux sysfs; 32 MiB where it cannot be read)."""
    sizes = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        if text[:-1].isdigit() and text[-1] in "KMG":
            sizes.append(int(text[:-1]) << {"K": 10, "M": 20, "G": 30}[text[-1]])
    return max(sizes, default=32 << 20)


def streaming_bytes() -> int:
    """How much memory a loop's arrays take before its stores stream: a quarter of the
    last-level cache, the share glibc (2.38 and later) gives memcpy before it streams (the
    cache is shared with the machine's other cores; measurements in docs/offload.md)."""
    return last_level_cache_bytes() // 4


def worth_host_simd(iterations: int, chunk: int, nbytes: int) -> bool:
    """Whether a loop takes its streaming kernel rather than its plain one: a chunk of
    iterations or more over arrays that together outgrow their share of the cache (below it,
    streaming stores would evict what the next loop reads)."""
    return iterations >= chunk and nbytes >= streaming_bytes()


def eligible(region: Region, range_levels: int) -> bool:
    """A nest of up to `range_levels` levels on a CPU device with arrays, whose innermost
    level has step 1 and a constant start below a chunk."""
    if not region.arrays or not 1 <= len(region.levels) <= range_levels:
        return False
    inner = region.levels[-1]
    if inner.step != 1 or not isinstance(inner.start, int) or not 0 <= inner.start < CHUNK:
        return False
    return bool(region.device) and device_by_canonical_name(region.device).is_cpu


def mode(region: Region) -> str:
    """The kind of streaming kernel a nest gets (host_simd.py): ROWS for a row loop whose
    stores write the elements of the work-item's own iterations (`rows_stream`), STREAM
    (vector code) otherwise."""
    if row_loops.walks_rows(region) and rows_stream(region):
        return host_simd.ROWS
    return host_simd.STREAM


def rows_stream(region: Region) -> bool:
    """Whether each store of the body writes a C-contiguous array at the innermost level's
    index, last (outer levels' indices or constants before it), once on every path through an
    iteration and outside its inner loops (`d[i] = math.sqrt(s)` once row `i` is summed): a
    chunk's stores then write consecutive elements, whole lines in order, and can all stream
    (an l2-norm past the cache took 10 % less time: docs/offload.md, "Row loops")."""
    lane = copies(region.body, region.levels[-1].index)
    outer = set().union(*(copies(region.body, level.index) for level in region.levels[:-1]))
    definitions = build_definitions(region.body)
    allowed = on_every_path(region.body) - loop_blocks(region.body)
    stored = False
    for label, block in region.body.items():
        for stmt in block.body:
            if not isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                continue
            param = region.params.get(stmt.target.name)
            array = param is not None and isinstance(param.type, types.Array)
            if label not in allowed or not array or param.type.layout != "C":
                return False
            _, index = access(stmt)
            if index is None or not _own_element(index, lane, outer, definitions):
                return False
            stored = True
    return stored


def _own_element(index: ir.Var, lane: set[str], outer: set[str], definitions: dict) -> bool:
    """Whether an index is the lane's loop index, or a tuple of it last and outer levels'
    indices or constants before it."""
    if index.name in lane:
        return True
    values = definitions.get(index.name) or []
    if len(values) != 1 or not isinstance(values[0], ir.Expr) or values[0].op != "build_tuple":
        return False
    *before, last = values[0].items
    fixed = all(
        item.name in outer or isinstance(resolve(definitions, item), int) for item in before
    )
    return last.name in lane and fixed


def least_iterations(region: Region, kind: str) -> int:
    """The fewest innermost iterations a launch of a streaming kernel of `kind` takes it for:
    a chunk, or for ROWS enough chunks of rows for ROW_CHUNKS_PER_UNIT on each of the
    device's compute units."""
    if kind != host_simd.ROWS:
        return CHUNK
    units = device_by_canonical_name(region.device).max_compute_units
    return CHUNK * ROW_CHUNKS_PER_UNIT * units


def params(region: Region, outer_params: list[str]) -> list[str]:
    """The kernel's parameters: the plain kernel's, then the innermost level's count."""
    return [*region.params, *outer_params, f"_dk_n{len(region.levels) - 1}"]


def template(region: Region, name: str, outer_params: list[str]):
    """Outer levels from their work-item ids; the innermost level's chunk as a loop."""
    d = len(region.levels) - 1
    inner = region.levels[d]
    body = rebuild_tuples(region)
    for k, level in enumerate(region.levels[:d]):
        body.append(assign(level.index, level_index(level, call(api("get_global_id"), k), k)))
    start = inner.start
    base = op(op(call(api("get_global_id"), d), "&", _CHUNK_IDS - 1), "*", CHUNK)
    body += [
        assign("_dk_base", base),
        assign("_dk_stop", call("min", op("_dk_base", "+", CHUNK), op(start, "+", f"_dk_n{d}"))),
    ]
    # Past the first chunk the first index is a multiple of 16 at least the start (LLVM then
    # knows the stores' alignment); the first chunk, from the start, is a loop of its own.
    first = "_dk_base" if start == 0 else call("max", "_dk_base", -(-start // 16) * 16)
    index = call("_dk_index_add", "_dk_first", "_dk_k")
    chunk = [
        assign("_dk_first", first),
        for_range(
            "_dk_k",
            [op("_dk_stop", "-", "_dk_first")],
            [assign(inner.index, index), codegen.sentinel()],
        ),
    ]
    if start == 0:
        body += chunk
    else:
        head = for_range(  # indices from index_add, which LLVM knows are never negative
            "_dk_k",
            [op("_dk_stop", "-", start)],
            [assign(inner.index, call("_dk_index_add", start, "_dk_k")), codegen.sentinel()],
        )
        body.append(if_(compare("_dk_base", "==", 0), [head], chunk))
    return codegen.function(name, params(region, outer_params), body, region.line)


class Usable:
    """Whether a kernel compiled for its argument types: compiled on the first launch that
    would take it (a loop that never outgrows the cache compiles no streaming kernel, one
    whose arrays never fit no flat kernel: flat.py), and a streaming kernel the host-SIMD
    compiler refuses is never launched (the plain kernel runs instead). `known` holds the
    answer for compiled code to read (0: not asked yet, 1: usable, 2: not)."""

    def __init__(self, kernel, argtypes: list):
        self.kernel = kernel
        self.signature = types.void(*argtypes)
        self.known = ctypes.c_int8(0)

    def __call__(self) -> None:
        if self.known.value == 0:
            try:
                self.kernel.compile(self.signature)
                self.known.value = 1
            except host_simd.Refusal:
                self.known.value = 2


#: Every Usable compiled code may call (kept alive: compiled code holds their addresses).
_CALLBACKS: list = []


def usable(kernel, argtypes: list):
    """An intrinsic () -> bool: whether `kernel` is usable (Usable), read from its answer;
    only the first launch that asks calls into Python (with the GIL) to compile it."""
    check = Usable(kernel, argtypes)
    _CALLBACKS.append(check)

    @intrinsic
    def ask(typingctx):
        def codegen(context, builder, sig, args):
            address = ctypes.addressof(check.known)
            known = context.add_dynamic_addr(builder, address, info="offload kernel usable")
            known = builder.bitcast(known, llvm.IntType(8).as_pointer())
            unasked = builder.icmp_unsigned("==", builder.load(known), known.type.pointee(0))
            with builder.if_then(unasked, likely=False):
                pyapi = context.get_python_api(builder)
                gil = pyapi.gil_ensure()
                fn = context.add_dynamic_addr(builder, id(check), info="offload kernel compile")
                answer = pyapi.call_function_objargs(fn, [])
                failed = cgutils.is_null(builder, answer)
                with builder.if_then(builder.not_(failed), likely=True):
                    pyapi.decref(answer)
                pyapi.gil_release(gil)
                with builder.if_then(failed, likely=False):
                    context.call_conv.return_exc(builder)
            return builder.icmp_unsigned("==", builder.load(known), known.type.pointee(1))

        return signature(types.boolean), codegen

    return ask
