"""Stores through a mask of an expression of selections through that mask, as one expression
over the whole arrays and one store: `a[m] *= 2`, `a[m] = a[m] * x[m] + 1`, `a[m] = sqrt(x[m])`.

NumPy selects (each `x[m]` a new array of the selected elements), computes the expression over
the selections and stores its result through the mask: a pass over memory for each selection,
the expression and the store. An element-wise expression's element at a place reads the
selections' elements at that place only, so the elements the mask selects from the whole
arrays give the same result there. Before the parfor passes, indexing.py's pass calls `fuse`:
the expression reads the whole arrays instead, and masks.py's `_masked_store` stores its
elements where the mask is true. Each array is first checked against the mask as `x[m]` checks
it (NumPy's IndexError for another shape). Only masks of the arrays' own shape are fused (a 1-D
mask over rows would let the arrays' other dimensions broadcast as the selections' do, which the
expression over whole arrays cannot), and only where every array of the expression is a
selection through the same mask, read nowhere else (a scalar broadcasts alike either way).
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from numba.core import ir, types
from numba.core.ir_utils import mk_unique_var
from numba.core.typing.npydecl import supported_array_operators

from ..types.usm_array_type import USMArrayType
from .broadcasting import call, leaves, replace
from .masks import selection_length, selects

#: Statements that store nothing: a selection read before one is still the array's elements.
_PURE = (ir.Var, ir.Const, ir.Global, ir.FreeVar)


class _Expression(NamedTuple):
    """An element-wise expression of selections through one mask, as whole arrays."""

    statement: ir.Assign
    tree: tuple
    mask: str
    arrays: list[ir.Var]
    selections: list[ir.Assign]


def fuse(state, in_prange: set) -> dict[str, ir.Var]:
    """Rewrite each `a[m] = expression of x[m], ...` outside prange bodies to compute the
    expression over the whole arrays (module docstring); the values stored -> the whole
    expression's variable, for the store to become `_masked_store(a, m, that)`."""
    blocks, typemap = state.func_ir.blocks, state.typemap
    uses = Counter(v.name for block in blocks.values() for s in block.body for v in s.list_vars())
    fused: dict[str, ir.Var] = {}
    for label, block in blocks.items():
        if label in in_prange:
            continue
        selections: dict[str, ir.Assign] = {}  # since the last store: variable -> `x[m]`
        expressions: dict[str, _Expression] = {}
        rewritten: dict[int, list] = {}  # id of a statement -> what replaces it
        for stmt in block.body:
            if isinstance(stmt, ir.SetItem):
                found = expressions.get(stmt.value.name)
                if found is not None and _fits(state, stmt, found, uses):
                    whole = _rewrite(state, stmt, found, rewritten)
                    fused[stmt.value.name] = whole
                selections.clear()
                expressions.clear()
                continue
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            if _is_selection(typemap, value):
                selections[stmt.target.name] = stmt
            elif isinstance(value, ir.Expr) and value.op in ("arrayexpr", "inplace_binop"):
                found = _expression(typemap, stmt, selections)
                if found is not None:
                    expressions[stmt.target.name] = found
                elif value.op == "inplace_binop":  # a store into its left-hand array
                    selections.clear()
                    expressions.clear()
            elif not (isinstance(value, _PURE) or _reads_attribute(value)):
                selections.clear()
                expressions.clear()
        if rewritten:
            block.body = [new for stmt in block.body for new in rewritten.get(id(stmt), [stmt])]
    return fused


def _reads_attribute(value) -> bool:
    return isinstance(value, ir.Expr) and value.op == "getattr"


def _is_selection(typemap: dict, value) -> bool:
    """Whether `value` is `x[m]` of a USM array and a boolean USM mask of its own rank."""
    if not (isinstance(value, ir.Expr) and value.op == "getitem"):
        return False
    array, mask = typemap[value.value.name], typemap[value.index.name]
    return isinstance(array, USMArrayType) and selects(array, mask) and mask.ndim == array.ndim


def _expression(typemap: dict, stmt: ir.Assign, selections: dict) -> _Expression | None:
    """The expression `stmt` computes, over the whole arrays, where its arrays are all
    selections through one mask; else None."""
    value = stmt.value
    if value.op == "arrayexpr":
        tree = value.expr
    elif value.immutable_fn in supported_array_operators:  # element-wise, unlike `@=`
        tree = (value.immutable_fn, [value.lhs, value.rhs])  # the value `x[m] op= v` stores
    else:
        return None
    read = {}  # selection variable -> its statement
    for var in leaves(tree):
        if isinstance(typemap[var.name], types.Array):
            if var.name not in selections:
                return None
            read[var.name] = selections[var.name]
    masks = {selection.value.index.name for selection in read.values()}
    if len(masks) != 1:
        return None
    arrays = {name: selection.value.value for name, selection in read.items()}
    unique = list({array.name: array for array in arrays.values()}.values())
    return _Expression(stmt, replace(tree, arrays), masks.pop(), unique, list(read.values()))


def _fits(state, store: ir.SetItem, found: _Expression, uses: Counter) -> bool:
    """Whether a store writes `found` through its mask into an array of the mask's rank, and
    nothing else reads the selections or the expression."""
    typemap = state.typemap
    target = typemap[store.target.name]
    return (
        store.index.name == found.mask
        and isinstance(target, USMArrayType)
        and target.ndim == typemap[found.mask].ndim
        and all(typemap[array.name].ndim == target.ndim for array in found.arrays)
        and uses[found.statement.target.name] == 2
        and all(uses[selection.target.name] == 2 for selection in found.selections)
    )


def _rewrite(state, store: ir.SetItem, found: _Expression, rewritten: dict) -> ir.Var:
    """Replace the selections by nothing and the expression by checks of its arrays against
    the mask and the expression over them: its new variable."""
    typemap, stmt = state.typemap, found.statement
    scope, loc = stmt.target.scope, stmt.loc
    for selection in found.selections:
        rewritten[id(selection)] = []
    out: list = []
    mask = store.index
    for array in found.arrays:
        call(state, scope, loc, selection_length, [array, mask], out)  # x[m]'s IndexError
    whole = ir.Var(scope, mk_unique_var("$dk_masked_update"), loc)
    typemap[whole.name] = typemap[stmt.target.name].copy(ndim=typemap[mask.name].ndim, layout="C")
    expression = ir.Expr(op="arrayexpr", loc=loc, expr=found.tree, ty=typemap[whole.name])
    out.append(ir.Assign(expression, whole, loc))
    rewritten[id(stmt)] = out
    return whole
