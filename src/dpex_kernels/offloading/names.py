"""dpnp's names in an offloaded function, as Numba's parallel compiler knows them.

dpnp's element-wise functions are NumPy's ufuncs on USM arrays, its reductions NumPy's, so
before typing each dpnp function the function names becomes the NumPy function of the same
name (`dpnp.sqrt` -> `np.sqrt`, `dpnp.sum` -> `np.sum`): Numba's parfor passes then make
kernels of them as of NumPy's, on arrays and on scalars alike. dpnp's allocation functions
become offload's own (allocation.py). An allocation that names no place is placed with the
function's first USM array or queue argument (`sycl_queue=` that argument).
"""

from __future__ import annotations

import operator

import dpnp
import numpy as np
from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import build_definitions, mk_unique_var

from ..errors import KernelCompileError
from ..types.usm_array_type import USMArrayType
from .allocation import STAND_INS, SyclQueueType
from .ir_values import resolve
from .parallel import OWN_NAMES, REDUCTIONS, STAND_INS_BY_NAME

#: dpnp's functions that are NumPy's of the same name on USM arrays.
_SAME_AS_NUMPY = ["vdot", "clip", "square", "reshape", "ravel", "transpose"]
#: Array methods that parallel.py's stand-ins replace: x.sum(axis=0) calls sum(x, axis=0).
_METHODS = ["sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax", "copy", "dot"]
#: Attributes that name an array's place: `device=x.device` places an allocation with x, so
#: in offloaded code `x.device` is x itself.
_PLACEMENT_ATTRIBUTES = ("device", "sycl_device", "sycl_queue")


def _table() -> dict[int, object]:
    """id(dpnp function) -> what an offloaded function calls instead."""
    table = {}
    for name in dir(dpnp):
        found, numpy_version = getattr(dpnp, name, None), getattr(np, name, None)
        same = isinstance(numpy_version, np.ufunc) or name in _SAME_AS_NUMPY
        if same and found is not None and numpy_version is not None and found is not numpy_version:
            table[id(found)] = numpy_version
    table[id(abs)] = np.absolute  # abs(x) of an array too
    for dpnp_function, stand_in in STAND_INS.items():
        table[id(dpnp_function)] = stand_in
    for name, stand_in in STAND_INS_BY_NAME.items():
        if name in OWN_NAMES:
            continue
        for module in (np, dpnp):
            if hasattr(module, name):
                table[id(getattr(module, name))] = stand_in
    return table


_REPLACEMENTS = _table()


def replacement(value) -> object | None:
    """What an offloaded function calls in place of `value`, or None to keep it."""
    try:
        return _REPLACEMENTS.get(id(value))
    except TypeError:
        return None


def rename(func_ir: ir.FunctionIR, home: ir.Var | None) -> bool:
    """Rewrite dpnp's names in `func_ir` (see the module docstring); whether any changed.
    `home` holds the function's first USM array or queue argument, or is None."""
    definitions = build_definitions(func_ir.blocks)
    changed = False
    for block in func_ir.blocks.values():
        for stmt in block.body:
            if not isinstance(stmt, ir.Assign):
                continue
            value = stmt.value
            if isinstance(value, (ir.Global, ir.FreeVar)):
                found = replacement(value.value)
            elif isinstance(value, ir.Expr) and value.op == "getattr":
                if value.attr in _PLACEMENT_ATTRIBUTES:  # x.device names x's place: x itself
                    stmt.value = value.value
                    changed = True
                    continue
                found = replacement(resolve(definitions, stmt.target))
            else:
                continue
            if found is not None:
                stmt.value = ir.Global(getattr(found, "__name__", "dpnp"), found, stmt.loc)
                changed = True
    changed |= _methods_and_operators(func_ir, build_definitions(func_ir.blocks))
    definitions = build_definitions(func_ir.blocks)
    changed |= _reductions_take_an_axis(func_ir, definitions)
    stand_ins = {id(function): function for function in STAND_INS.values()}
    for block in func_ir.blocks.values():
        for stmt in block.body:
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            if isinstance(value, ir.Expr) and value.op == "call":
                callee = resolve(definitions, value.func)
                if callee is not None and stand_ins.get(id(callee)) is callee:  # by identity
                    changed |= _place(value, callee, home)
    if changed:
        func_ir._definitions = build_definitions(func_ir.blocks)
    return changed


def _methods_and_operators(func_ir: ir.FunctionIR, definitions: dict) -> bool:
    """`x.sum(...)` (and _METHODS' others) as `sum(x, ...)`, `a @ b` as `matmul(a, b)`, with
    parallel.py's stand-ins; whether any changed."""
    changed = False
    methods = {}  # the variable of each method looked up -> the object it is looked up on
    for block in func_ir.blocks.values():
        for stmt in block.body:
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            if not isinstance(value, ir.Expr):
                continue
            if value.op == "getattr" and value.attr in _METHODS:
                if resolve(definitions, value.value) is None:  # not of a module or a class
                    methods[stmt.target.name] = value.value
                    stand_in = STAND_INS_BY_NAME[value.attr]
                    stmt.value = ir.Global(stand_in.__name__, stand_in, stmt.loc)
                    changed = True
            elif value.op == "call" and value.func.name in methods:
                value.args = [methods[value.func.name], *value.args]
            elif value.op == "binop" and value.fn is operator.matmul:
                function = ir.Var(block.scope, mk_unique_var("$dk_matmul"), stmt.loc)
                stand_in = STAND_INS_BY_NAME["matmul"]
                statements = block.body
                statements.insert(
                    statements.index(stmt),
                    ir.Assign(ir.Global(stand_in.__name__, stand_in, stmt.loc), function, stmt.loc),
                )
                stmt.value = ir.Expr.call(function, [value.lhs, value.rhs], (), stmt.loc)
                changed = True
    return changed


def _reductions_take_an_axis(func_ir: ir.FunctionIR, definitions: dict) -> bool:
    """Every call of a reduction's stand-in as (array, axis): Numba inlines implementations
    of the arity of the call (parallel.py)."""
    reductions = {id(STAND_INS_BY_NAME[name]) for name in REDUCTIONS}
    changed = False
    for block in func_ir.blocks.values():
        for stmt in list(block.body):
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            if not (isinstance(value, ir.Expr) and value.op == "call"):
                continue
            if id(resolve(definitions, value.func)) not in reductions:  # unhashable ones too
                continue
            keywords = dict(value.kws)
            axis = value.args[1] if len(value.args) > 1 else keywords.pop("axis", None)
            if keywords or len(value.args) > 2 or not value.args:
                names = ", ".join(keywords) or f"{len(value.args)} positional arguments"
                raise KernelCompileError(
                    f"@dk.offload function '{func_ir.func_id.func_name}' "
                    f"({stmt.loc.filename}:{stmt.loc.line}): a reduction in an offloaded "
                    f"function takes an array and axis= only; got {names}"
                )
            if axis is None:
                axis = ir.Var(block.scope, mk_unique_var("$dk_no_axis"), stmt.loc)
                block.body.insert(
                    block.body.index(stmt), ir.Assign(ir.Const(None, stmt.loc), axis, stmt.loc)
                )
            value.args, value.kws = [value.args[0], axis], []
            changed = True
    return changed


def _place(call: ir.Expr, callee, home: ir.Var | None) -> bool:
    """The home argument as an allocation's place where it names none (a `*_like` call is
    placed with its array)."""
    keywords = dict(call.kws)
    changed = False
    placed = "device" in keywords or "sycl_queue" in keywords
    if not placed and home is not None and not callee.__name__.endswith("_like"):
        keywords["sycl_queue"] = home
        changed = True
    call.kws = list(keywords.items())
    return changed


def home_argument(func_ir: ir.FunctionIR, argtypes) -> ir.Var | None:
    """A variable holding the first USM array or queue argument, set at the function's start."""
    for position, argtype in enumerate(argtypes):
        if isinstance(argtype, (USMArrayType, SyclQueueType)):
            entry = func_ir.blocks[min(func_ir.blocks)]
            home = ir.Var(entry.scope, mk_unique_var("$dk_home"), entry.loc)
            entry.body.insert(
                0,
                ir.Assign(
                    ir.Arg(func_ir.arg_names[position], position, entry.loc), home, entry.loc
                ),
            )
            return home
    return None


@register_pass(mutates_CFG=False, analysis_only=False)
class DpnpNames(FunctionPass):
    """Numba pass: dpnp's names as NumPy's and offload's (see the module docstring)."""

    _name = "dpex_offload_dpnp_names"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        argtypes = [types.unliteral(t) for t in state.args]
        return rename(state.func_ir, home_argument(state.func_ir, argtypes))
