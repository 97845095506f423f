"""Which prange loops run one work-item per sub-group on a CPU device: those whose work-items
each reduce rows of their own (docs/offload.md, "Row loops").

The OpenCL CPU runtime vectorises a kernel across work-items: lane k of a vector is work-item
k. That pays where work-items do arithmetic and math side by side (Black-Scholes, rambo's
sines and logarithms in its loop over particles). It costs where each work-item loops over a
row of its own to reduce it, `s += a[i, j]` with `i` the work-item's index and `j` an inner
loop's: each load becomes a gather across rows for little arithmetic. Such a kernel asks for
sub-groups of one work-item, which the runtime compiles as written, rows read in order.
Measured on the 2-core EPYC (benchmarks.offload_programs): the l2-norm of 2^20 rows of 8
float64 took 7.96 ms vectorised across work-items and 2.11-2.91 ms with sub-groups of one
(`numba.njit(parallel=True)`: 1.87-2.92 ms), the k-means assignment 21.6 -> 16.9-18.4 ms,
knn 90 -> 35-44 ms. What stays vectorised, because vectors won there: inner loops that call
math functions (pairwise distance 11.1 ms vectorised, 13.4 ms not; rambo 15.8 against 21.0
ms), and loops that write a row of their own after an inner loop (a matrix product, `a @ b` of
512² float64: 137 ms vectorised, 357 ms not). A row written element by element in an innermost
loop is a row loop: vectorised, each store was a scatter (`out[i, j] = a[i, j] * 2.0 + 1.0`,
2^22 float64 in 3 columns: 4.4 ms vectorised, 2.1-2.7 ms not).

A loop that also reads what neighbouring work-items read side by side (`x1[i]`) stays
vectorised on an AVX-512 host, which scatters a vector's lanes under a mask in one
instruction; an AVX2 host stores them lane by lane, so there a loop that writes rows of its
own in an innermost loop is a row loop all the same. gpairs (`counts[i, k] += ...` in a
`while` loop over the bins) took 62-69 ms vectorised on the 2-core Zen 3 (AVX2) and 46 ms
as a row loop (Numba: 42 ms); on the AVX-512 EPYC it ran vectorised at 1.44x Numba's speed.
(Its kernel now has that loop written out, early_exit_loops.py, and runs vectorised; the
twin for arrays that share memory keeps the loop, and this choice.)

A loop over a chunk of the work-item's own, `range(i * k, ...)`, is a row loop as well
(`_walks_chunks`).
"""

from __future__ import annotations

import operator

import numpy as np
from numba.core import ir
from numba.core.ir_utils import build_definitions

from ..compiler.backend import host_simd
from .ir_values import access, copies, index_items, resolve
from .regions import Region, innermost_loop_blocks, loop_blocks


def walks_rows(region: Region, innermost_looped: bool = False) -> bool:
    """Whether the region's work-items each read or write rows of their own in its sequential
    loops (an index with the lane's loop index before its last position), where those loops
    write no such row after an inner loop, read nothing neighbouring work-items read side by
    side (the lane's index last) unless, on a host without vector scatters, they write rows
    of their own in an innermost loop, and call no math function (see the module docstring). With
    `innermost_looped`, the innermost level is such a loop around the whole body (a promoted
    level run in order: ranges.py) and the level around it the lane."""
    levels = region.levels[:-1] if innermost_looped else region.levels
    if not levels:
        return False
    in_loops = set(region.body) if innermost_looped else loop_blocks(region.body)
    if not in_loops:
        return False
    innermost = innermost_loop_blocks(region.body)
    if innermost_looped and not innermost:
        innermost = set(region.body)
    definitions = build_definitions(region.body)
    lane = copies(region.body, levels[-1].index)
    outer = [copies(region.body, level.index) for level in levels[:-1]]
    rows = neighbours = scattered = False
    for label in in_loops:
        for stmt in region.body[label].body:
            if _calls_math(stmt, definitions):
                return False
            found = access(stmt)
            index = found[1] if found else None
            if index is None:
                continue
            where = _lane_position(index, lane, definitions)
            neighbours |= where == "last"
            stores = isinstance(stmt, (ir.SetItem, ir.StaticSetItem))
            if where == "before last" and stores and label not in innermost:
                return False  # a row written after an inner loop: a product's, vectors win
            scattered |= where == "before last" and stores
            rows |= where == "before last" and not _reused(index, outer, definitions)
    if neighbours and (host_simd.vector_scatters() or not scattered):
        return False  # neighbours read side by side: vectors win, unless stores scatter slowly
    return rows or _walks_chunks(region.body, lane, definitions)


#: The shortest chunk of its own (`_walks_chunks`) that makes a loop a row loop.
CHUNK_MIN = 64


def _walks_chunks(body: dict[int, ir.Block], lane: set[str], definitions: dict) -> bool:
    """Whether an inner loop walks a chunk of the work-item's own, `range(i * k, ...)` with `i`
    the lane's index and `k` a constant of CHUNK_MIN or more (offload's selections and stores
    through masks: chunks of 4096). Vectorised, lane after lane read elements k apart;
    `x[m].sum()` of 2^22 float64, half selected, took 42 ms so and 25 ms as row loops."""
    for block in body.values():
        for stmt in block.body:
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            if not (isinstance(value, ir.Expr) and value.op == "call" and len(value.args) > 1):
                continue
            start = definitions.get(value.args[0].name) or []
            if resolve(definitions, value.func) is not range or len(start) != 1:
                continue
            product = start[0]
            if (
                isinstance(product, ir.Expr)
                and product.op == "binop"
                and product.fn is operator.mul
            ):
                for index, factor in ((product.lhs, product.rhs), (product.rhs, product.lhs)):
                    k = resolve(definitions, factor)
                    if index.name in lane and type(k) is int and k >= CHUNK_MIN:
                        return True
    return False


def _reused(index: ir.Var, outer: list[set[str]], definitions: dict) -> bool:
    """Whether an index leaves out an outer level's index: the elements it reads are read
    again in every iteration of that level, from the caches (pairwise distance's `x2[j, k]`
    over a 2-D range: 7.5-9.8 ms vectorised, 10.9-12.9 ms as row loops)."""
    items = {item.name for item in index_items(definitions, index)}
    return any(not (copies & items) for copies in outer)


def _lane_position(index: ir.Var, lane: set[str], definitions: dict) -> str:
    """Where an index holds the lane's loop index: "last" (`x[i]`, `a[j, i]`: neighbouring
    work-items read neighbours), "before last" (`a[i, j]`: a row of the work-item's own) or
    "" (nowhere)."""
    items = [item.name for item in index_items(definitions, index)]
    if items[-1] in lane:
        return "last"
    return "before last" if lane.intersection(items) else ""


def calls_math(body: dict[int, ir.Block]) -> bool:
    """Whether a loop body calls a math function anywhere (see `_calls_math`)."""
    definitions = build_definitions(body)
    return any(_calls_math(stmt, definitions) for block in body.values() for stmt in block.body)


def _calls_math(stmt: ir.Stmt, definitions: dict) -> bool:
    """Whether a statement calls a math function (math's, a NumPy or dpnp ufunc) or raises to
    a power: what the runtime vectorises with its vector math library."""
    if not isinstance(stmt, ir.Assign) or not isinstance(stmt.value, ir.Expr):
        return False
    expr = stmt.value
    if expr.op in ("binop", "inplace_binop"):
        return expr.fn in (operator.pow, operator.ipow)
    if expr.op != "call":
        return False
    function = resolve(definitions, expr.func)
    module = getattr(function, "__module__", None) or ""
    return isinstance(function, np.ufunc) or module == "math" or module.startswith("dpnp")
