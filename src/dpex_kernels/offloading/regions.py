"""Region analysis: what one parfor of an offloaded function needs to become kernels.

Numba's parfor passes found the parallel loop (a prange nest, an array expression, a NumPy
reduction); a `Region` says what a kernel of it takes: its loop levels and their bounds, the
arrays and scalars its body reads and writes (the kernel's parameters), its reductions with
their operators, and its body's IR made ready for the device (names legal as parameters,
nested parfors as sequential loops, NumPy allocations as private arrays). Whatever a device
cannot run is a KernelCompileError naming the line and the construct.
"""

from __future__ import annotations

import copy
import operator
import weakref
from dataclasses import dataclass, field

import numba
import numpy as np
from numba.core import ir, types
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.ir_utils import (
    build_definitions,
    get_name_var_table,
    legalize_names,
    mk_unique_var,
    remove_dels,
    replace_var_names,
)
from numba.parfors import parfor as numba_parfor

from ..compiler.functions import DeviceFunction
from ..compiler.kernel_api.memory import private_array
from ..errors import KernelCompileError
from ..types.usm_array_type import USMArrayType
from . import promotion
from .ir_values import resolve

#: Reduction operators of Numba's reduce nodes.
_OPERATORS = {
    operator.iadd: "+",
    operator.add: "+",
    operator.isub: "-",
    operator.sub: "-",
    operator.imul: "*",
    operator.mul: "*",
    operator.itruediv: "/",
    operator.truediv: "/",
}
#: NumPy allocations in a loop body, made private arrays, and the value they are filled with.
_PRIVATE = {np.empty: None, np.zeros: 0, np.ones: 1}


@dataclass(frozen=True)
class Level:
    """One loop level: its index's name in the body and its bounds (int or host variable)."""

    index: str
    start: int | str
    stop: int | str
    step: int | str


@dataclass(frozen=True)
class Reduction:
    """A scalar the loop reduces into: its name in the body and on the host, its operator
    ("+", "-", "*", "/", "min", "max") and type."""

    name: str
    host: str
    op: str
    dtype: types.Type


@dataclass(frozen=True)
class Param:
    """A kernel parameter: the host variable it comes from (an item of it, for tuples)."""

    host: str
    items: tuple[int, ...]
    type: types.Type


@dataclass
class Region:
    """One parfor, ready to lower: see the module docstring."""

    function: str
    filename: str
    line: int
    kind: str
    levels: list[Level]
    #: kernel parameter name -> Param: arrays and scalars; tuples are passed as their items
    #: (`tuples`: the tuple's name in the body -> its items' parameters) and rebuilt
    params: dict[str, Param]
    tuples: dict[str, list[str]]
    reductions: list[Reduction]
    body: dict[int, ir.Block]
    #: host statements of a merged prange nest's outer bodies (its inner bounds), lowered first
    hoisted: list[ir.Stmt] = field(default_factory=list)
    raises: bool = False
    #: whether the innermost level was a `range` loop promotion.py made a level
    promoted: bool = False

    def error(self, problem: str) -> KernelCompileError:
        return KernelCompileError(
            f"@dk.offload function '{self.function}' ({self.filename}:{self.line}): the "
            f"{self.kind} at line {self.line} {problem}"
        )

    @property
    def describe(self) -> str:
        return f"@dk.offload function '{self.function}': the {self.kind} at line {self.line}"

    @property
    def arrays(self) -> list[str]:
        return [name for name, p in self.params.items() if isinstance(p.type, types.Array)]

    @property
    def device(self) -> str:
        """The device of the region's arrays ('' without arrays)."""
        found = [p.type.device for p in self.params.values() if isinstance(p.type, USMArrayType)]
        return found[0] if found else ""


def _kind(parfor, levels: int, calls: dict) -> str:
    """What the region is, in the user's words: "2-D prange nest", "array expression", "where()"
    (a NumPy or dpnp function parallel.py made loops of); reductions are named once their
    operator is known (_reduction_kind)."""
    pattern = parfor.patterns[0] if parfor.patterns else None
    name = pattern[0] if isinstance(pattern, tuple) else pattern
    if isinstance(name, str) and name.startswith("array expression"):
        return "array expression"
    if name in ("setitem", "fill", "inplace_binop"):
        return "array expression"
    call = calls.get((parfor.loc.filename, parfor.loc.line))
    if call is not None:
        return f"{call}()"
    return "prange loop" if levels == 1 else f"{levels}-D prange nest"


def _reduction_kind(region: Region, parfor, calls: dict) -> str:
    """A NumPy or dpnp reduction (x.sum(), np.max(x), ...) is an "array reduction (+)"."""
    if region.reductions and (parfor.loc.filename, parfor.loc.line) in calls:
        ops = [r.op for r in region.reductions]  # min and max count elements too
        return f"array reduction ({next((o for o in ops if o != '+'), '+')})"
    return region.kind


def analyse(lowerer, parfor) -> Region:
    """The Region of `parfor`, lowered in `lowerer` (Numba's Lower of the host function)."""
    func_ir = lowerer.func_ir
    typemap = lowerer.fndesc.typemap
    region = Region(
        function=func_ir.func_id.func_name,
        filename=parfor.loc.filename,
        line=parfor.loc.line,
        kind="",
        levels=[],
        params={},
        tuples={},
        reductions=[],
        body={},
    )
    region.hoisted, copies, body, nests, innermost = _merge_perfect_nest(
        parfor.loop_body, list(parfor.loop_nests), parfor
    )
    promoted = lowerer.metadata.get(promotion.PROMOTED, ())
    region.promoted = innermost is not parfor and innermost.loc.line in promoted
    region.kind = _kind(parfor, len(nests), lowerer.metadata.get("dk_offload_calls", {}))
    body = copy_blocks(body)  # the kernel's, renamed below; the host's stays as it is
    body = _sequential_nested_parfors(body, typemap, lowerer.fndesc.calltypes)
    _scalar_dufuncs(body)
    remove_dels(body)
    entry = body[min(body)]
    entry.body = [copy.deepcopy(s) for s in copies] + entry.body
    if parfor.races:
        raise region.error(
            f"writes {', '.join(sorted(map(repr, parfor.races)))} in every iteration and the "
            f"function reads it after the loop; an offloaded loop's iterations run at once: "
            f"write one element of an array per iteration, or reduce with +=, *=, min or max"
        )
    indices = [n.index_variable.name for n in nests]
    redvars = list(parfor.redvars or ())
    hoisted = {s.target.name for s in region.hoisted} & set(get_name_var_table(body))
    inputs = sorted((set(parfor.params) | hoisted) - set(indices) - set(redvars))
    for name in redvars:
        _refuse_reads(region, parfor, name)
    region.raises = _private_arrays_and_raises(region, body, func_ir, typemap)
    legal = legalize_names([*inputs, *indices, *redvars])
    replace_var_names(body, legal)
    for level in nests:
        region.levels.append(
            Level(
                legal[level.index_variable.name],
                *(_bound(func_ir, b) for b in (level.start, level.stop, level.step)),
            )
        )
    for name in inputs:
        _param(region, legal[name], Param(name, (), typemap[name]))
    for name in redvars:
        region.reductions.append(
            Reduction(
                legal[name],
                name,
                _reduction_op(region, parfor.reddict[name], func_ir),
                typemap[name],
            )
        )
    region.body = body
    region.kind = _reduction_kind(region, parfor, lowerer.metadata.get("dk_offload_calls", {}))
    return region


def copy_blocks(blocks: dict) -> dict:
    """A deep copy of IR blocks (nested parfors too), sharing the objects their globals and
    constants hold (a module cannot be copied, and a function should not be)."""
    memo: dict = {}
    for stmt in _statements(blocks):
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if isinstance(value, (ir.Global, ir.FreeVar, ir.Const)):
            memo[id(value.value)] = value.value
    for parfor in _parfors(blocks):  # array analysis' shapes (they hold modules): shared
        for equiv_set in (parfor.equiv_set, parfor._kws.get("equiv_set")):
            memo[id(equiv_set)] = equiv_set
    return copy.deepcopy(blocks, memo)


def _parfors(blocks: dict):
    """The parfors in blocks, those nested in them too."""
    for block in blocks.values():
        for stmt in block.body:
            if isinstance(stmt, numba_parfor.Parfor):
                yield stmt
                yield from _parfors(stmt.loop_body)


def _loops(body: dict[int, ir.Block]) -> list:
    """A loop body's own loops."""
    return list(control_flow(body).loops().values()) if body else []


def on_every_path(body: dict[int, ir.Block]) -> set[int]:
    """The labels of the blocks every run of a loop body's iteration passes through."""
    if not body:
        return set()
    flow = control_flow(body)
    return set(flow.post_dominators()[flow.entry_point()]) & set(body)


def control_flow(body: dict[int, ir.Block]):
    """Numba's control-flow analysis of a loop body: its blocks, with the body's end (the
    block without a terminator) made to return."""
    exit_label = max(body) + 1
    closed = {}
    for label, block in body.items():
        if block.body and block.body[-1].is_terminator:
            closed[label] = block
            continue
        ended = ir.Block(block.scope, block.loc)
        ended.body = [*block.body, ir.Jump(exit_label, block.loc)]
        closed[label] = ended
    first = next(iter(body.values()))
    closed[exit_label] = ir.Block(first.scope, first.loc)
    closed[exit_label].append(ir.Return(ir.Var(first.scope, "$dk_exit", first.loc), first.loc))
    return compute_cfg_from_blocks(closed)


def loop_blocks(body: dict[int, ir.Block]) -> set[int]:
    """The labels of the blocks in a loop body's own loops."""
    return {label for loop in _loops(body) for label in loop.body}


def innermost_loop_blocks(body: dict[int, ir.Block]) -> set[int]:
    """The labels of the blocks in a loop body's loops that have no loop inside them."""
    loops = _loops(body)
    innermost = [
        loop for loop in loops if not any(o.header in loop.body for o in loops if o is not loop)
    ]
    return {label for loop in innermost for label in loop.body}


def has_loops(body: dict[int, ir.Block]) -> bool:
    """Whether a loop body has loops of its own."""
    return bool(loop_blocks(body))


def _bound(func_ir, value) -> int | str:
    """A loop bound: an int where it is a constant, else the host variable's name."""
    if isinstance(value, int):
        return value
    try:
        constant = func_ir.infer_constant(value)
    except Exception:  # not a constant: the host variable
        return value.name
    return constant if isinstance(constant, int) else value.name


def _param(region: Region, name: str, param: Param) -> None:
    argtype, host = param.type, param.host
    if isinstance(argtype, types.BaseTuple):
        items = [f"{name}_{k}" for k in range(len(argtype))]
        region.tuples[name] = items
        for k, (item, item_type) in enumerate(zip(items, argtype)):
            _param(region, item, Param(host, (*param.items, k), item_type))
        return
    if isinstance(argtype, types.Literal):
        argtype = types.unliteral(argtype)
    if isinstance(argtype, types.Array) and argtype.ndim == 0:
        raise region.error(f"uses '{host}', a 0-d array; use its value (x[()]) instead")
    if isinstance(argtype, types.Array) and not isinstance(argtype, USMArrayType):
        raise region.error(
            f"uses '{host}', a NumPy array made on the host ({argtype}); offloaded loops take "
            f"USM arrays: allocate it with dpnp (dpnp.empty(..., like the arguments))"
        )
    if not isinstance(argtype, (USMArrayType, types.Number, types.Boolean)):
        raise region.error(
            f"uses '{host}' of type {argtype}, which a kernel cannot take (kernels take USM "
            f"arrays and numbers)"
        )
    region.params[name] = Param(host, param.items, argtype)


def _scalar_dufuncs(body: dict) -> None:
    """A `@numba.vectorize` function called in the body (on scalars) is its scalar function:
    its Python function, which a kernel calls as a device function."""
    from numba.np.ufunc.dufunc import DUFunc

    for block in body.values():
        for stmt in block.body:
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            if isinstance(value, (ir.Global, ir.FreeVar)) and isinstance(value.value, DUFunc):
                dufunc = value.value
                twin = _DEVICE_TWINS.get(dufunc)
                if twin is None:
                    twin = _DEVICE_TWINS[dufunc] = DeviceFunction(dufunc._dispatcher.py_func)
                stmt.value = ir.Global(value.name, twin, value.loc)


#: The device function of each @numba.vectorize function kernels called.
_DEVICE_TWINS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _refuse_reads(region: Region, parfor, name: str) -> None:
    """A reduction's scalar read in the body other than by its update: each work-item holds
    only a part of it, so no value it could read is the sequential loop's."""
    info = parfor.reddict[name]
    updates = {n.target.name for n in info.reduce_nodes if isinstance(n, ir.Assign)}
    chain = {name} | updates
    for stmt in _statements(parfor.loop_body):
        if isinstance(stmt, ir.Del):
            continue
        if isinstance(stmt, ir.Assign) and stmt.target.name in updates:
            continue
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var):
            if stmt.value.name in chain:  # a copy (an inner loop's phi), not a read
                chain.add(stmt.target.name)
            continue
        read = {v.name for v in stmt.list_vars()}
        if isinstance(stmt, ir.Assign):
            read.discard(stmt.target.name)
        if chain & read:
            user = name.split(".")[0]
            raise region.error(
                f"reads the reduction variable '{user}' (line {stmt.loc.line}); each "
                f"work-item holds a part of a reduction, so only its update (+=, *=, min, "
                f"max) may use it: keep the values you read in another variable"
            )


def _statements(blocks: dict):
    """The statements of loop body blocks, those of nested parfors in their place."""
    for block in blocks.values():
        for stmt in block.body:
            if isinstance(stmt, numba_parfor.Parfor):
                yield from stmt.init_block.body
                yield from _statements(stmt.loop_body)
            else:
                yield stmt


def _reduction_op(region: Region, info, func_ir) -> str:
    if info.redop in _OPERATORS:
        return _OPERATORS[info.redop]
    for node in reversed(info.reduce_nodes):
        value = node.value if isinstance(node, ir.Assign) else None
        binop = isinstance(value, ir.Expr) and value.op in ("binop", "inplace_binop")
        if binop and value.fn in _OPERATORS:
            return _OPERATORS[value.fn]
        if isinstance(value, ir.Expr) and value.op == "call":
            callee = resolve({}, value.func, func_ir)
            if callee in (min, max):
                return callee.__name__
    raise region.error("reduces with an operator a device reduction lacks (+, -, *, /, min, max)")


def _merge_perfect_nest(body, nests, parfor):
    """A prange nest whose outer body is only its inner bounds and the inner prange loop is one
    region over all its levels (up to 3): (host statements, the copies of outer indices the
    inner body reads, innermost body, levels, innermost parfor merged)."""
    hoisted: list = []
    copies: list = []
    while len(nests) < 3:
        blocks = [b for b in body.values() if b.body]
        if len(blocks) != 1:
            break
        *prefix, last = [s for s in blocks[0].body if not isinstance(s, ir.Del)]
        if isinstance(last, ir.Jump) and prefix:
            *prefix, last = prefix
        inner = last
        outer_indices = {n.index_variable.name for n in nests}
        if not isinstance(inner, numba_parfor.Parfor) or inner.redvars:
            break
        index_copies = (
            [s for s in prefix if isinstance(s.value, ir.Var) and s.value.name in outer_indices]
            if all(isinstance(s, ir.Assign) for s in prefix)
            else []
        )
        rest = [s for s in prefix if s not in index_copies]
        outer_indices |= {s.target.name for s in index_copies}
        if not all(_pure(stmt, outer_indices) for stmt in rest):
            break
        bounds = {
            v.name
            for n in inner.loop_nests
            for v in (n.start, n.stop, n.step)
            if isinstance(v, ir.Var)
        }
        if bounds & outer_indices:
            break
        hoisted += rest + list(inner.init_block.body)
        copies += index_copies
        nests = nests + list(inner.loop_nests)
        body = inner.loop_body
        parfor = inner
    return hoisted, copies, body, nests, parfor


def _pure(stmt, indices: set) -> bool:
    """A statement the host may run before the loop: an assignment of a constant, a global,
    an attribute or item of a variable or a call (the bounds' checks: loops.py) not using the
    loop's indices."""
    if not isinstance(stmt, ir.Assign):
        return False
    value = stmt.value
    if isinstance(value, (ir.Const, ir.Global, ir.FreeVar)):
        return True
    if isinstance(value, ir.Var):
        return value.name not in indices
    pure = ("getattr", "static_getitem", "binop", "build_tuple", "call")
    if isinstance(value, ir.Expr) and value.op in pure:
        return not {v.name for v in value.list_vars()} & indices
    return False


def _sequential_nested_parfors(body, typemap, calltypes):
    """Parfors inside a loop body (an inner prange, an array expression of the body) as plain
    loops of each work-item, as Numba lowers them inside its gufuncs. The host's blocks stay
    as they are: the conversion works on copies of the blocks it changes."""
    while any(isinstance(s, numba_parfor.Parfor) for b in body.values() for s in b.body):
        new_blocks: dict = {}
        for label, block in body.items():
            block = block.copy()
            label, _ = numba_parfor._lower_parfor_sequential_block(
                label, block, new_blocks, typemap, calltypes, False, scope=block.scope
            )
            new_blocks[label] = block
        body = new_blocks
    return body


def _private_arrays_and_raises(region: Region, body, func_ir, typemap) -> bool:
    """NumPy allocations in the body as private arrays (their shapes must be constants);
    whether the body raises."""
    definitions = build_definitions(body)
    found = _Found(func_ir, definitions, typemap)
    raises = False
    for block in body.values():
        statements = []
        for stmt in block.body:
            if isinstance(stmt, (ir.Raise, ir.StaticRaise, ir.DynamicRaise)):
                raises = True
            statements.append(stmt)
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            if not (isinstance(value, ir.Expr) and value.op == "call"):
                continue
            callee = resolve(definitions, value.func, func_ir)
            if any(callee is allocator for allocator in _PRIVATE):  # ctypes functions: no hash
                statements[-1:] = _private(region, stmt, callee, block.scope, found)
        block.body = statements
    return raises


@dataclass
class _Found:
    """What a loop body's variables are known to hold: constants through their definitions
    (in the body, else the host's) or their literal types."""

    func_ir: ir.FunctionIR
    definitions: dict
    typemap: dict

    def extents(self, var) -> tuple | None:
        """The constant shape a variable holds (an int or a tuple of them), or None."""
        argtype = self.typemap.get(var.name)
        if isinstance(argtype, types.IntegerLiteral):
            return (argtype.literal_value,)
        if isinstance(argtype, types.BaseTuple) and all(
            isinstance(t, types.IntegerLiteral) for t in argtype
        ):
            return tuple(t.literal_value for t in argtype)
        values = self.definitions.get(var.name) or self.func_ir._definitions.get(var.name) or []
        if len(values) == 1 and isinstance(values[0], ir.Expr) and values[0].op == "build_tuple":
            items = [self.extents(v) for v in values[0].items]
            if None in items or any(len(i) != 1 for i in items):
                return None
            return sum(items, ())
        value = resolve(self.definitions, var, self.func_ir)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return (int(value),)
        return None

    def dtype(self, var) -> str | None:
        """The dtype name a `dtype=` variable names, or None."""
        argtype = self.typemap.get(var.name)
        if isinstance(argtype, (types.DType, types.NumberClass)):
            return str(argtype.dtype)
        if isinstance(argtype, types.StringLiteral):
            return argtype.literal_value
        value = resolve(self.definitions, var, self.func_ir)
        try:
            return np.dtype(value).name if value is not None else None
        except TypeError:
            return None


def _private(region: Region, stmt: ir.Assign, callee, scope, found: _Found) -> list:
    """`x = np.empty(shape, dtype)` in a loop body as `x = dk.private.array(shape, dtype)`
    with the shape and dtype as constants (and filled, for zeros and ones)."""
    call, loc = stmt.value, stmt.loc
    arguments = dict(call.kws)
    shape = call.args[0] if call.args else arguments.get("shape")
    dtype = call.args[1] if len(call.args) > 1 else arguments.get("dtype")
    extents = None if shape is None else found.extents(shape)
    dtype_name = "float64" if dtype is None else found.dtype(dtype)
    if extents is None or dtype_name is None:
        raise KernelCompileError(
            f"@dk.offload function '{region.function}' ({loc.filename}:{loc.line}): "
            f"np.{callee.__name__}() in the {region.kind} at line {region.line} makes an array "
            f"in each iteration; in a kernel that is a private array, whose shape must be a "
            f"constant (a number or a global) and its dtype a constant dtype"
        )
    out: list = []

    def constant(value, stem: str) -> ir.Var:
        var = ir.Var(scope, mk_unique_var(stem), loc)
        out.append(ir.Assign(ir.Const(value, loc), var, loc))
        return var

    items = [constant(n, "$dk_extent") for n in extents]
    shape_var = ir.Var(scope, mk_unique_var("$dk_shape"), loc)
    out.append(ir.Assign(ir.Expr.build_tuple(items, loc), shape_var, loc))
    function = ir.Var(scope, mk_unique_var("$dk_private"), loc)
    out.append(ir.Assign(ir.Global("private_array", private_array, loc), function, loc))
    arguments = [shape_var, constant(dtype_name, "$dk_dtype")]
    out.append(ir.Assign(ir.Expr.call(function, arguments, (), loc), stmt.target, loc))
    fill = _PRIVATE[callee]
    if fill is not None:
        filler = ir.Var(scope, mk_unique_var("$dk_fill"), loc)
        result = ir.Var(scope, mk_unique_var("$dk_filled"), loc)
        out.append(ir.Assign(ir.Global("fill_private", fill_private, loc), filler, loc))
        value = constant(fill, "$dk_fill_value")
        out.append(ir.Assign(ir.Expr.call(filler, [stmt.target, value], (), loc), result, loc))
    return out


@numba.njit(cache=False)
def fill_private(array, value):  # pragma: no cover (compiled in kernels)
    """Every element of a private array (C-ordered) set to `value`."""
    flat = array.reshape(array.size)
    for k in range(flat.size):
        flat[k] = value
