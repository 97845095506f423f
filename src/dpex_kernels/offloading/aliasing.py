"""Stores whose right-hand side reads the array they store into, as NumPy evaluates them.

NumPy reads all of a right-hand side before it stores: `u[1:-1] = (u[:-2] + u[2:]) / 2` and
`c[1:] += c[:-1]` read the old values of `u` and `c`. Numba's parfor passes fuse the right-hand
side's loop into the store's, so each work-item reads elements that others have already
written, and the result depends on their order. Before the parfor passes (after typing), an
array the right-hand side reads that is a view of the array stored into (a getitem of it, or of
such a view) is copied first (`x.copy()`, a kernel of its own), as NumPy copies an operand
that overlaps its output. The array itself (`c += c * 2`, `c[:] = c + 1`) and the very view
stored into (`c[1:] = c[1:] * 2`: the same array and an equal index of slices and integers,
or the same boolean mask: `c[m] = c[m] * 2`) are read element for element where they are
stored and are not copied. Views of one array
passed as two arguments are not seen here (`f(u[1:], u[:-1])`): as under
`numba.njit(parallel=True)`, their order is the work-items'.
"""

from __future__ import annotations

import operator

import numba
from numba.core import ir, types
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.extending import intrinsic
from numba.core.imputils import impl_ret_borrowed
from numba.core.ir_utils import build_definitions
from numba.core.typing.templates import signature
from numba.parfors.parfor import internal_prange

from .broadcasting import call, leaves, replace
from .ir_values import access, resolve
from .parallel import STAND_INS_BY_NAME, inline_stand_ins


def _base(name: str, definitions: dict) -> str:
    """The variable an array view was taken from, through getitems and copies of variables."""
    while True:
        found = definitions.get(name) or []
        if len(found) != 1:
            return name
        value = found[0]
        if isinstance(value, ir.Var):
            name = value.name
        elif isinstance(value, ir.Expr) and value.op in ("getitem", "static_getitem"):
            name = value.value.name
        else:
            return name


def _store(stmt) -> tuple[ir.Var, ir.Var] | None:
    """(the array stored into, the value stored) of `c[index] = v` and `c op= v`, or None."""
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        return stmt.target, stmt.value
    expr = stmt.value if isinstance(stmt, ir.Assign) else None
    if isinstance(expr, ir.Expr) and expr.op == "inplace_binop":
        return expr.lhs, expr.rhs
    return None


#: What a parallel loop iterates over (internal_prange: Numba's own prange loops).
_PARALLEL_ITERATORS = (numba.prange, numba.pndindex, internal_prange)


@intrinsic
def copied(typingctx, array):
    """`array` itself: a call between a copy's loop and the store's, so that Numba's parfor
    fusion does not make one loop of them, which would read what it writes."""

    def codegen(context, builder, sig, args):
        return impl_ret_borrowed(context, builder, sig.return_type, args[0])

    return signature(array, array), codegen


def _copy(state, leaf: ir.Var, out: list) -> ir.Var:
    """A copy of `leaf` (offload's parallel copy) assigned to a new variable, its statements
    appended to `out`."""
    made = call(state, leaf.scope, leaf.loc, STAND_INS_BY_NAME["copy"], [leaf], out)
    return call(state, leaf.scope, leaf.loc, copied, [made], out)


def retype_store(state, stmt) -> None:
    """Type a store (`c[index] = v`, `c op= v`) again after its value changed."""
    typemap, typingctx = state.typemap, state.typingctx
    if isinstance(stmt, ir.Assign):  # c op= v
        key, function = stmt.value, stmt.value.fn
        arguments = (typemap[key.lhs.name], typemap[key.rhs.name])
    else:
        key, function = stmt, operator.setitem
        _, index = access(stmt)
        arguments = (typemap[stmt.target.name], typemap[index.name], typemap[stmt.value.name])
    state.calltypes.pop(key)  # a dict that refuses to overwrite
    state.calltypes[key] = typingctx.resolve_function_type(function, arguments, {})


def _unaliased_block(state, block: ir.Block, definitions: dict) -> bool:
    """Copy the views of stored-into arrays that the block's stores read (module docstring)."""
    typemap = state.typemap
    position = {id(stmt): n for n, stmt in enumerate(block.body)}
    inserted: dict[int, list] = {}  # statement position -> statements to put before it
    changed = False
    for stmt in block.body:
        found = _store(stmt)
        if found is None or not isinstance(typemap.get(found[0].name), types.Array):
            continue
        target, value = found
        base = _base(target.name, definitions)
        made = definitions.get(value.name) or []
        source = made[0] if len(made) == 1 else None
        holder = next((s for s in block.body if _defines(s, value, source)), None)
        if isinstance(source, ir.Expr) and source.op == "arrayexpr" and holder is not None:
            reads = leaves(source.expr)
        else:
            reads, holder = [value], stmt
        aliased = {
            v.name: v
            for v in reads
            if isinstance(typemap.get(v.name), types.Array)
            and v.name != target.name
            and _base(v.name, definitions) == base
            and not _stored_view(stmt, v, definitions, typemap)
        }
        if not aliased:
            continue
        before = inserted.setdefault(position[id(holder)], [])
        copies = {name: _copy(state, leaf, before) for name, leaf in aliased.items()}
        if holder is stmt:
            if isinstance(stmt, ir.Assign):
                stmt.value.rhs = copies[value.name]
            else:
                stmt.value = copies[value.name]
            retype_store(state, stmt)
        else:
            source.expr = replace(source.expr, copies)
        changed = True
    if changed:
        body = []
        for n, stmt in enumerate(block.body):
            body += inserted.get(n, [])
            body.append(stmt)
        block.body = body
    return changed


def _stored_view(stmt, read: ir.Var, definitions: dict, typemap: dict) -> bool:
    """Whether `read` is the view a store writes: taken from its array with an equal index of
    slices and integers, or the same boolean mask (an index array may repeat an element, which
    a copy must read first; a mask selects each once)."""
    if not isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        return False
    made = definitions.get(read.name) or []
    view = made[0] if len(made) == 1 else None
    if not (isinstance(view, ir.Expr) and view.op in ("getitem", "static_getitem")):
        return False
    _, stored = access(stmt)
    taken = view.index if view.op == "getitem" else view.index_var
    if view.value.name != stmt.target.name or stored is None or taken is None:
        return False
    index = typemap.get(stored.name)
    mask = isinstance(index, types.Array) and isinstance(index.dtype, types.Boolean)
    return (mask or _basic(index)) and _equal(stored, taken, definitions)


def _basic(index: types.Type | None) -> bool:
    """Whether an index type is made of slices and integers only."""
    if isinstance(index, types.BaseTuple):
        return all(_basic(item) for item in index.types)
    return isinstance(index, (types.SliceType, types.Integer))


def _equal(a: ir.Var, b: ir.Var, definitions: dict, depth: int = 4) -> bool:
    """Whether two variables hold equal values by how the IR makes them: the same variable,
    equal constants or globals, or the same call or tuple of equal variables."""
    if a.name == b.name:
        return True
    made_a, made_b = definitions.get(a.name) or [], definitions.get(b.name) or []
    if depth == 0 or len(made_a) != 1 or len(made_b) != 1:
        return False
    x, y = made_a[0], made_b[0]
    if isinstance(x, (ir.Const, ir.Global, ir.FreeVar)) and type(x) is type(y):
        return x.value is y.value or (_plain(x.value) and x.value == y.value)
    if not (isinstance(x, ir.Expr) and isinstance(y, ir.Expr) and x.op == y.op):
        return False
    if x.op == "build_tuple":
        pairs = list(zip(x.items, y.items)) if len(x.items) == len(y.items) else None
    elif x.op == "call" and not x.kws and not y.kws and len(x.args) == len(y.args):
        pairs = [(x.func, y.func), *zip(x.args, y.args)]
    else:
        pairs = None
    return pairs is not None and all(_equal(p, q, definitions, depth - 1) for p, q in pairs)


def _plain(value) -> bool:
    return value is None or type(value) in (int, float, bool, str)


def prange_bodies(blocks: dict, definitions: dict) -> set[int]:
    """The labels of the blocks in prange loops' bodies, whose stores are each work-item's own
    (a copy there would be an allocation in a kernel)."""
    labels: set[int] = set()
    for loop in compute_cfg_from_blocks(blocks).loops().values():
        if any(_iterates_in_parallel(blocks[entry], definitions) for entry in loop.entries):
            labels |= loop.body
    return labels


def _iterates_in_parallel(block: ir.Block, definitions: dict) -> bool:
    """Whether the block takes an iterator of prange (or pndindex): a parallel loop's entry."""
    for stmt in block.body:
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if isinstance(value, ir.Expr) and value.op == "getiter":
            made = definitions.get(value.value.name) or []
            if len(made) == 1 and isinstance(made[0], ir.Expr) and made[0].op == "call":
                return resolve(definitions, made[0].func) in _PARALLEL_ITERATORS
    return False


def _defines(stmt, var: ir.Var, value) -> bool:
    return isinstance(stmt, ir.Assign) and stmt.target.name == var.name and stmt.value is value


@register_pass(mutates_CFG=True, analysis_only=False)
class ReadsBeforeStores(FunctionPass):
    """Numba pass: views of a stored-into array that the stored value reads are copied first
    (see the module docstring)."""

    _name = "dpex_offload_reads_before_stores"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        blocks = state.func_ir.blocks
        definitions = build_definitions(blocks)
        in_prange = prange_bodies(blocks, definitions)
        changed = False
        for label, block in blocks.items():
            if label not in in_prange:
                changed |= _unaliased_block(state, block, definitions)
        if changed:
            inline_stand_ins(state)
            state.func_ir._definitions = build_definitions(state.func_ir.blocks)
        return changed
