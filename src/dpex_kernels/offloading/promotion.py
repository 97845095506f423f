"""A `range` loop that is the whole body of a prange loop, with independent iterations, as a
level of the prange nest (docs/offload.md, "Promoted loops").

`for i in prange(n): for j in range(m): out[i, j] = ...` runs each row's `j` loop in one
work-item; where the iterations of the `j` loop touch disjoint elements, a 2-D range runs them
side by side instead: stores along `j` are contiguous vectors, and an element-wise body takes
flat.py's kernel. Here, before typing, such a `range` becomes `prange` when:
- the prange loop's body is the `range` loop, with only pure statements around it (bounds);
- the `range` counts from 0 (or a constant above it) in steps of 1, so distinct iterations
  have distinct indices;
- no variable the loop body assigns is read before it is assigned in an iteration, or after
  the loop (no value flows between iterations);
- every array the loop stores into is indexed, wherever the loop reads or writes it, with the
  loop's index itself at one position (iterations touch disjoint elements of it);
- the loop calls only math functions, NumPy and dpnp ufuncs and builtins that write nothing;
- it has one exit and one back edge (no `break`, no `continue`).
Arrays the loop reads may still be views of one it writes (`f(a, a)`): that the launch checks
(ranges.py), and runs such a call with the loop in each work-item, in order, as written.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.core import ir
from numba.core.analysis import compute_cfg_from_blocks, compute_live_map, compute_use_defs
from numba.core.ir_utils import build_definitions, mk_unique_var

from .ir_values import access, copies, index_items, resolve

#: state.metadata's key of the lines of the promoted loops.
PROMOTED = "dk_promoted_lines"
#: Builtins a promoted loop may call (they write no array).
_PURE_BUILTINS = {abs, min, max, len, float, int, bool, range, round, pow}


def _defined_as(definitions: dict, var: ir.Var, op: str) -> ir.Expr | None:
    """The `op` expression `var` holds, through copies, or None."""
    for _ in range(8):
        found = definitions.get(var.name) or []
        if len(found) != 1:
            return None
        if isinstance(found[0], ir.Var):
            var = found[0]
            continue
        return found[0] if isinstance(found[0], ir.Expr) and found[0].op == op else None
    return None


def _iterated(header: ir.Block, definitions: dict) -> tuple[ir.Expr, str] | None:
    """(the call it iterates over, the index's first variable) of a for loop's header."""
    for stmt in header.body:
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if not (isinstance(value, ir.Expr) and value.op == "iternext"):
            continue
        iterator = _defined_as(definitions, value.value, "getiter")
        call = iterator and _defined_as(definitions, iterator.value, "call")
        if call is None:
            return None
        for other in header.body:
            first = other.value if isinstance(other, ir.Assign) else None
            is_first = isinstance(first, ir.Expr) and first.op == "pair_first"
            if is_first and first.value.name == stmt.target.name:
                return call, other.target.name
    return None


def _position(index: ir.Var, indices: set[str], definitions: dict) -> int | None:
    """The position of the loop's index in an array index, or None where it is not an item."""
    items = index_items(definitions, index)
    found = [k for k, item in enumerate(items) if item.name in indices]
    return found[0] if len(found) == 1 else None


def _pure_call(value: ir.Expr, definitions: dict, func_ir) -> bool:
    function = resolve(definitions, value.func, func_ir)
    if function is None:
        return False
    if isinstance(function, np.ufunc) or function in _PURE_BUILTINS:
        return True
    return getattr(function, "__module__", None) == "math"  # dpnp's are NumPy's by now


def _independent(blocks: dict, loop, index: str, definitions, func_ir, live) -> bool:
    """Whether the iterations of `loop` are independent (see the module docstring)."""
    body = set(loop.body) - {loop.header}
    back_edges = [label for label in body if loop.header in blocks[label].terminator.get_targets()]
    if len(loop.exits) != 1 or len(back_edges) != 1:
        return False  # break or continue: kept as written
    indices = copies({label: blocks[label] for label in loop.body}, index)
    assigned = {
        stmt.target.name
        for label in body
        for stmt in blocks[label].body
        if isinstance(stmt, ir.Assign)
    }
    if live[loop.header] & assigned:
        return False  # carried from one iteration to the next
    if any(live[exit] & assigned for exit in loop.exits):
        return False  # read after the loop
    stored, accesses = {}, []
    for label in body:
        for stmt in blocks[label].body:
            found = access(stmt)
            if found is not None:
                array, index_var = found
                accesses.append((array.name, index_var))
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                if index_var is None:
                    return False
                stored[array.name] = _position(index_var, indices, definitions)
            elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
                value = stmt.value
                if value.op == "call" and not _pure_call(value, definitions, func_ir):
                    return False
            elif not isinstance(stmt, (ir.Assign, ir.Jump, ir.Branch, ir.Del)):
                return False  # print, raise, ...: kept in order
    if any(position is None for position in stored.values()) or assigned & set(stored):
        return False
    for name, index_var in accesses:
        if name in stored and (
            index_var is None or _position(index_var, indices, definitions) != stored[name]
        ):
            return False
    for label in body:  # a stored array used otherwise (passed on, viewed)
        for stmt in blocks[label].body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
                if stmt.value.op in ("getitem", "static_getitem", "getattr"):
                    continue
                if {v.name for v in stmt.value.list_vars()} & set(stored):
                    return False
            elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var):
                copied = stmt.value.name in stored
                if copied:
                    return False
    return True


def _surrounded_purely(blocks: dict, outer, loop, definitions: dict, func_ir) -> bool:
    """Whether the outer loop's body holds only the inner loop and pure statements."""
    pure = ("getattr", "getitem", "static_getitem", "binop", "build_tuple", "getiter", "call")
    for label in set(outer.body) - set(loop.body) - {outer.header}:
        for stmt in blocks[label].body:
            if isinstance(stmt, (ir.Jump, ir.Branch, ir.Del)):
                continue
            if not isinstance(stmt, ir.Assign):
                return False
            value = stmt.value
            if isinstance(value, (ir.Const, ir.Global, ir.FreeVar, ir.Var)):
                continue
            if not (isinstance(value, ir.Expr) and value.op in pure):
                return False
            if value.op == "call" and not _pure_call(value, definitions, func_ir):
                return False
    return True


def promote(func_ir: ir.FunctionIR) -> set[int]:
    """Turn the promotable `range` loops of a function into prange loops (see the module
    docstring); the lines of those loops."""
    blocks = func_ir.blocks
    definitions = build_definitions(blocks)
    cfg = compute_cfg_from_blocks(blocks)
    loops = list(cfg.loops().values())
    usedefs = compute_use_defs(blocks)
    live = compute_live_map(cfg, blocks, usedefs.usemap, usedefs.defmap)
    kinds = {}
    for loop in loops:
        found = _iterated(blocks[loop.header], definitions)
        if found is not None:
            kinds[loop.header] = (resolve(definitions, found[0].func, func_ir), *found)
    promoted = set()
    for loop in loops:
        kind = kinds.get(loop.header)
        if kind is None or kind[0] is not range:
            continue
        _, call, index = kind
        outer = [o for o in loops if o is not loop and loop.header in o.body]
        if not outer:
            continue
        parent = min(outer, key=lambda o: len(o.body))
        if kinds.get(parent.header, (None,))[0] is not numba.prange:
            continue
        starts = [resolve(definitions, a, func_ir) for a in call.args]
        if call.kws or len(call.args) > 2:
            continue
        if len(call.args) == 2 and not (isinstance(starts[0], int) and starts[0] >= 0):
            continue
        if not _surrounded_purely(blocks, parent, loop, definitions, func_ir):
            continue
        if not _independent(blocks, loop, index, definitions, func_ir, live):
            continue
        function = ir.Var(call.func.scope, mk_unique_var("$dk_promoted"), call.loc)
        for block in blocks.values():
            for position, stmt in enumerate(block.body):
                if isinstance(stmt, ir.Assign) and stmt.value is call:
                    value = ir.Global("prange", numba.prange, call.loc)
                    block.body.insert(position, ir.Assign(value, function, call.loc))
                    break
        call.func = function
        promoted.add(call.loc.line)
    if promoted:
        func_ir._definitions = build_definitions(blocks)
    return promoted
