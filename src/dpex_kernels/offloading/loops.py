"""prange loops as Numba's parfor passes take them.

First the `range` loops that promotion.py finds independent become prange loops.

Numba's parallel compiler takes `prange(stop)` and `prange(start, stop)` only: a step other than
1 is its UnsupportedRewriteError. Here `for i in prange(start, stop, step)` becomes a loop over
`prange(count)` whose index is `start + k * step` (count as range counts, a zero step range's
ValueError), before typing. Every bound goes through `loop_bound`, whose typing says in one
sentence that prange takes integers (`prange(2.5)`).
"""

from __future__ import annotations

import operator

import numba
import numpy as np
from numba.core import errors, ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.extending import intrinsic
from numba.core.ir_utils import build_definitions, mk_unique_var
from numba.core.typing.templates import signature

from ..errors import KernelCompileError
from . import promotion
from .ir_values import resolve


@intrinsic
def loop_bound(typingctx, value):
    """A prange bound, checked to be an integer when Numba types it. An intrinsic, not an
    overload: its call is lowered on the host and in kernels alike (an overload's compiled
    implementation belongs to the first target that lowered it)."""
    if not isinstance(value, (types.Integer, types.Boolean)):
        raise errors.TypingError(f"prange() takes integers (start, stop, step); got {value}")

    def codegen(context, builder, sig, args):
        return args[0]

    return signature(value, value), codegen


@numba.njit(cache=False)
def range_count(start, stop, step):  # pragma: no cover (compiled)
    """Iterations of range(start, stop, step)."""
    if step == 0:
        raise ValueError("prange() arg 3 must not be zero")
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // -step)


def _is_prange(definitions: dict, var: ir.Var) -> bool:
    return resolve(definitions, var) is numba.prange


def rewrite(func_ir: ir.FunctionIR, function: str) -> bool:
    """Rewrite the function's prange loops (see the module docstring); whether any changed."""
    definitions = build_definitions(func_ir.blocks)
    changed = False
    for block in func_ir.blocks.values():
        for stmt in list(block.body):
            call = stmt.value if isinstance(stmt, ir.Assign) else None
            if not (isinstance(call, ir.Expr) and call.op == "call"):
                continue
            if not _is_prange(definitions, call.func):
                continue
            loc = stmt.loc
            for arg in call.args:
                value = resolve(definitions, arg)
                integer = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                if value is not None and not integer:
                    raise KernelCompileError(
                        f"@dk.offload function '{function}' ({loc.filename}:{loc.line}): "
                        f"prange() takes integers (start, stop, step); got {value!r}"
                    )
            if call.kws or not 1 <= len(call.args) <= 3:
                raise KernelCompileError(
                    f"@dk.offload function '{function}' ({loc.filename}:{loc.line}): prange() "
                    f"takes 1 to 3 positional integers, as range() does"
                )
            checked = [  # a constant stays one: kernels index `1 + id` (ranges.py)
                arg if isinstance(resolve(definitions, arg), int) else _checked(block, stmt, arg)
                for arg in call.args
            ]
            call.args = checked
            if len(checked) == 3 and resolve(definitions, checked[2]) != 1:
                changed |= _over_count(func_ir, block, stmt, definitions)
            changed = True
    if changed:
        func_ir._definitions = build_definitions(func_ir.blocks)
    return changed


def _checked(block: ir.Block, before: ir.Stmt, arg: ir.Var) -> ir.Var:
    """`loop_bound(arg)`, assigned just before `before`."""
    loc = before.loc
    function = ir.Var(block.scope, mk_unique_var("$dk_loop_bound"), loc)
    checked = ir.Var(block.scope, mk_unique_var("$dk_bound"), loc)
    position = block.body.index(before)
    block.body[position:position] = [
        ir.Assign(ir.Global("loop_bound", loop_bound, loc), function, loc),
        ir.Assign(ir.Expr.call(function, [arg], (), loc), checked, loc),
    ]
    return checked


def _over_count(func_ir: ir.FunctionIR, block: ir.Block, stmt: ir.Assign, definitions) -> bool:
    """prange(start, stop, step) as prange(count), the loop's index start + k * step."""
    call, loc, scope = stmt.value, stmt.loc, block.scope
    start, stop, step = call.args
    counter = ir.Var(scope, mk_unique_var("$dk_range_count"), loc)
    count = ir.Var(scope, mk_unique_var("$dk_count"), loc)
    position = block.body.index(stmt)
    block.body[position:position] = [
        ir.Assign(ir.Global("range_count", range_count, loc), counter, loc),
        ir.Assign(ir.Expr.call(counter, [start, stop, step], (), loc), count, loc),
    ]
    call.args = [count]
    index = _loop_index(func_ir, stmt.target)
    if index is None:
        raise KernelCompileError(
            f"prange({start.name}, {stop.name}, {step.name}) at {loc.filename}:{loc.line} is not "
            f"the iterable of a for loop"
        )
    body_block, assignment = index
    k = ir.Var(scope, mk_unique_var("$dk_k"), loc)
    scaled = ir.Var(scope, mk_unique_var("$dk_scaled"), loc)
    where = body_block.body.index(assignment)
    body_block.body[where : where + 1] = [
        ir.Assign(assignment.value, k, assignment.loc),
        ir.Assign(ir.Expr.binop(operator.mul, k, step, loc), scaled, loc),
        ir.Assign(
            ir.Expr.binop(operator.add, start, scaled, loc), assignment.target, assignment.loc
        ),
    ]
    return True


def _loop_index(func_ir: ir.FunctionIR, iterable: ir.Var):
    """(block, assignment) of the loop index `i = <the iterator's next value>` of the for loop
    over `iterable`, or None."""
    origin = {iterable.name}
    changed = True
    while changed:  # the iterator, the copies of it, its next pair and first values, copies
        changed = False
        for block in func_ir.blocks.values():
            for stmt in block.body:
                if not isinstance(stmt, ir.Assign) or stmt.target.name in origin:
                    continue
                value = stmt.value
                source = None
                if isinstance(value, ir.Var):
                    source = value.name
                elif (
                    isinstance(value, ir.Expr)
                    and value.op in ("getiter", "iternext")
                    or isinstance(value, ir.Expr)
                    and value.op == "pair_first"
                ):
                    source = value.value.name
                if source in origin:
                    origin.add(stmt.target.name)
                    changed = True
    for block in func_ir.blocks.values():
        for stmt in block.body:
            if (
                isinstance(stmt, ir.Assign)
                and isinstance(stmt.value, ir.Var)
                and stmt.value.name in origin
                and not stmt.target.name.startswith("$")
            ):
                return block, stmt
    return None


@register_pass(mutates_CFG=False, analysis_only=False)
class PrangeLoops(FunctionPass):
    """Numba pass: prange loops as the parfor passes take them (see the module docstring)."""

    _name = "dpex_offload_prange_loops"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        promoted = promotion.promote(state.func_ir)
        state.metadata[promotion.PROMOTED] = promoted
        return rewrite(state.func_ir, state.func_id.func_name) or bool(promoted)
