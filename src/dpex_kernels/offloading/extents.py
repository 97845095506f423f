"""Small extents of arguments as compile-time constants, as Triton specialises its arguments.

An inner loop over `a.shape[k]` (or `len(a)`) of an argument `a` runs its few iterations with
a loop's overhead, and with the values it reads again for every iteration of the loop around
it out of registers, while the extent is known only at run time: knn's loop over 4 features
took 36 ms, 22 ms with the 4 a constant (the 2-core EPYC, 4,096 × 8,192 points). So the
dispatcher compiles an offloaded function once for each tuple of such extents of at most
`SMALL` elements that it is called with (the loops then unroll), and once for all others.

`inner_loop_extents` finds the extents, once per function, in its bytecode's IR: those the trip
count of a loop inside another loop depends on (the bound of a `range` loop inside a prange
loop; gpairs' `k = rbins.shape[0] - 1` counted down by a `while` loop: unrolled, gpairs took
medians of 41.6-43.8 ms where it took 44.9-45.8 ms).
`ConstantExtents` is the pass that puts the constants in place of `a.shape[k]` and `len(a)`.
"""

from __future__ import annotations

from numba.core import ir
from numba.core.compiler import run_frontend
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import build_definitions, compute_cfg_from_blocks

from .ir_values import resolve

#: The largest extent compiled as a constant: loops of up to 16 iterations unroll whole.
SMALL = 16

#: (parameter position, axis): an extent of an argument, `a.shape[axis]` (a negative axis
#: counts from the end); axis 0 stands for len() too.
Extent = tuple[int, int]


def inner_loop_extents(py_func) -> tuple[Extent, ...]:
    """The extents of arguments that the trip count of a loop inside another loop of `py_func`
    depends on."""
    try:
        func_ir = run_frontend(py_func)
    except Exception:  # noqa: BLE001 (the compile builds the IR again and raises Numba's error)
        return ()
    blocks = func_ir.blocks
    definitions = build_definitions(blocks)
    loops = compute_cfg_from_blocks(blocks).loops().values()
    found: set[Extent] = set()
    seen: set[str] = set()
    for loop in loops:
        if not any(loop.header in other.body for other in loops if other is not loop):
            continue
        for label in loop.body:
            exit_branch = blocks[label].terminator
            if isinstance(exit_branch, ir.Branch) and not {
                exit_branch.truebr,
                exit_branch.falsebr,
            } <= set(loop.body):
                _depended_on(definitions, exit_branch.cond, found, seen)
    return tuple(sorted(found))


def _depended_on(definitions: dict, var: ir.Var, found: set, seen: set) -> None:
    """Add to `found` the argument extents `var`'s value is computed from, not through loads
    from arrays (data, not extents)."""
    if var.name in seen:
        return
    seen.add(var.name)
    extent = _extent(definitions, var)
    if extent is not None:
        found.add(extent)
        return
    for value in definitions.get(var.name) or []:
        if isinstance(value, ir.Var):
            _depended_on(definitions, value, found, seen)
        elif isinstance(value, ir.Expr) and value.op not in ("getitem", "static_getitem"):
            for used in value.list_vars():
                _depended_on(definitions, used, found, seen)


def _extent(definitions: dict, var: ir.Var) -> Extent | None:
    """The argument extent `var` holds (`a.shape[k]`, `len(a)`), None where it holds none."""
    values = definitions.get(var.name) or []
    if len(values) != 1 or not isinstance(values[0], ir.Expr):
        return None
    expr = values[0]
    if expr.op == "call" and resolve(definitions, expr.func) is len and len(expr.args) == 1:
        position = _argument(definitions, expr.args[0])
        return None if position is None else (position, 0)
    if expr.op == "static_getitem":
        axis = expr.index
    elif expr.op == "getitem":
        axis = resolve(definitions, expr.index)
    else:
        return None
    if not isinstance(axis, int):
        return None
    shape = definitions.get(expr.value.name) or []
    if len(shape) != 1 or not isinstance(shape[0], ir.Expr) or shape[0].op != "getattr":
        return None
    if shape[0].attr != "shape":
        return None
    position = _argument(definitions, shape[0].value)
    return None if position is None else (position, axis)


def _argument(definitions: dict, var: ir.Var) -> int | None:
    """The position of the parameter `var` is (not a reassigned variable of its name)."""
    values = definitions.get(var.name) or []
    if len(values) == 1 and isinstance(values[0], ir.Arg):
        return values[0].index
    return None


def specialised(extents: tuple[Extent, ...], args: tuple) -> tuple:
    """The key of the compile a call takes: ((extent, value), ...) of its small extents."""
    key = []
    for position, axis in extents:
        shape = getattr(args[position], "shape", None) if position < len(args) else None
        if isinstance(shape, tuple) and -len(shape) <= axis < len(shape) and shape[axis] <= SMALL:
            key.append(((position, axis), shape[axis]))
    return tuple(key)


@register_pass(mutates_CFG=False, analysis_only=False)
class ConstantExtents(FunctionPass):
    """Numba pass: the compile's small extents (metadata "dk_offload_extents", a key of
    `specialised`) as constants in place of `a.shape[k]` and `len(a)`."""

    _name = "dpex_offload_constant_extents"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        constants = dict(state.metadata.get("dk_offload_extents") or ())
        if not constants:
            return False
        blocks = state.func_ir.blocks
        definitions = build_definitions(blocks)
        changed = False
        for block in blocks.values():
            for stmt in block.find_insts(ir.Assign):
                extent = _extent(definitions, stmt.target)
                if extent in constants:
                    stmt.value = ir.Const(constants[extent], stmt.loc)
                    changed = True
        if changed:
            state.func_ir._definitions = build_definitions(blocks)
        return changed
