"""What a variable of a function's Numba IR holds, where the IR alone says: the one resolver
of the offload passes (prange bounds, dpnp names, private arrays, reductions), and the copies
of a variable, the array accesses of a statement and the items of their indices (row loops,
promoted loops, loops that stop early)."""

from __future__ import annotations

from numba.core import ir


def resolve(definitions: dict, var: ir.Var, func_ir: ir.FunctionIR | None = None) -> object:
    """The object `var` holds where it is a constant, a global, a closure variable, an
    attribute of one (`numba.prange`) or a copy of such a variable; None otherwise.
    `func_ir`'s own definitions are asked for what `definitions` lacks."""
    for _ in range(16):  # copies of copies: a bound on a chain a pass could make circular
        values = definitions.get(var.name) or (
            func_ir._definitions.get(var.name) if func_ir is not None else None
        )
        if not values or len(values) != 1:
            return None
        value = values[0]
        if isinstance(value, (ir.Global, ir.FreeVar, ir.Const)):
            return value.value
        if isinstance(value, ir.Var):
            var = value
            continue
        if isinstance(value, ir.Expr) and value.op == "getattr":
            base = resolve(definitions, value.value, func_ir)
            return None if base is None else getattr(base, value.attr, None)
        return None
    return None


def copies(blocks: dict[int, ir.Block], name: str) -> set[str]:
    """`name` and the variables of `blocks` that are plain copies of it."""
    names = {name}
    changed = True
    while changed:
        changed = False
        for block in blocks.values():
            for stmt in block.body:
                if (
                    isinstance(stmt, ir.Assign)
                    and isinstance(stmt.value, ir.Var)
                    and stmt.value.name in names
                    and stmt.target.name not in names
                ):
                    names.add(stmt.target.name)
                    changed = True
    return names


def access(stmt: ir.Stmt) -> tuple[ir.Var, ir.Var | None] | None:
    """(the array, the index variable) of an element load or store (`a[i]`, `a[i] = v`; the
    index None where a static index has no variable), or None for other statements."""
    if isinstance(stmt, ir.SetItem):
        return stmt.target, stmt.index
    if isinstance(stmt, ir.StaticSetItem):
        return stmt.target, stmt.index_var
    value = stmt.value if isinstance(stmt, ir.Assign) else None
    if isinstance(value, ir.Expr) and value.op == "getitem":
        return value.value, value.index
    if isinstance(value, ir.Expr) and value.op == "static_getitem":
        return value.value, value.index_var
    return None


def index_items(definitions: dict, index: ir.Var) -> list[ir.Var]:
    """The variables an array index is made of: the items of the tuple it was built as
    (where `definitions` holds that one definition), else the index itself."""
    values = definitions.get(index.name) or []
    if len(values) == 1 and isinstance(values[0], ir.Expr) and values[0].op == "build_tuple":
        return list(values[0].items)
    return [index]
