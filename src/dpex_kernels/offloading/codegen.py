"""A small code builder: Python syntax trees of the generated kernel templates, from AST nodes.

Kernel templates (kernel_ir.py) are functions whose parameters and loops depend on the loop
they run; they are built here as `ast` nodes, compiled, and never parsed back from text.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

#: The name kernel templates reach the kernel API by (dpex_kernels itself).
API = "_dk_api"
#: The assignment a template marks the loop body's place with (kernel_ir.splice).
SENTINEL = "_dk_sentinel"

_OPERATORS = {
    "+": ast.Add,
    "-": ast.Sub,
    "*": ast.Mult,
    "//": ast.FloorDiv,
    "%": ast.Mod,
    "&": ast.BitAnd,
}
_COMPARISONS = {"<": ast.Lt, "==": ast.Eq, ">": ast.Gt}

Expr = ast.expr | str | int | float


def expr(value: Expr) -> ast.expr:
    """A name (str), a constant (int, float) or an expression node as an expression node."""
    if isinstance(value, ast.expr):
        return value
    if isinstance(value, str):
        return ast.Name(value, ast.Load())
    return ast.Constant(value)


def attr(value: Expr, *names: str) -> ast.expr:
    node = expr(value)
    for name in names:
        node = ast.Attribute(node, name, ast.Load())
    return node


def api(*names: str) -> ast.expr:
    """dpex_kernels.<names> in a template."""
    return attr(API, *names)


def call(function: Expr, *args: Expr) -> ast.expr:
    return ast.Call(expr(function), [expr(a) for a in args], [])


def op(left: Expr, operator: str, right: Expr) -> ast.expr:
    return ast.BinOp(expr(left), _OPERATORS[operator](), expr(right))


def compare(left: Expr, operator: str, right: Expr) -> ast.expr:
    return ast.Compare(expr(left), [_COMPARISONS[operator]()], [expr(right)])


def item(array: Expr, index: Expr) -> ast.expr:
    return ast.Subscript(expr(array), expr(index), ast.Load())


def assign(target: str, value: Expr) -> ast.stmt:
    return ast.Assign([ast.Name(target, ast.Store())], expr(value))


def store(array: Expr, index: Expr, value: Expr) -> ast.stmt:
    return ast.Assign([ast.Subscript(expr(array), expr(index), ast.Store())], expr(value))


def do(value: ast.expr) -> ast.stmt:
    """An expression statement (a call for its effect)."""
    return ast.Expr(value)


def for_range(target: str, args: Sequence[Expr], body: list[ast.stmt]) -> ast.stmt:
    return ast.For(ast.Name(target, ast.Store()), call("range", *args), body, [])


def while_(test: ast.expr, body: list[ast.stmt]) -> ast.stmt:
    return ast.While(test, body, [])


def if_(test: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt] | None = None) -> ast.stmt:
    return ast.If(test, body, orelse or [])


def sentinel() -> ast.stmt:
    """Where the loop body goes."""
    return assign(SENTINEL, 0)


def function(name: str, params: Sequence[str], body: list[ast.stmt], line: int) -> ast.FunctionDef:
    """`def name(params): body`, every node placed at `line` (the user's loop)."""
    arguments = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(p) for p in params],
        kwonlyargs=[],
        kw_defaults=[],
        defaults=[],
    )
    tree = ast.FunctionDef(name, arguments, body or [ast.Pass()], [], None, type_params=[])
    return at_line(tree, line)


def at_line(tree: ast.AST, line: int) -> ast.AST:
    """`tree` with every node placed at `line`."""
    for node in ast.walk(tree):
        if "lineno" in node._attributes:
            node.lineno = node.end_lineno = line
            node.col_offset = node.end_col_offset = 0
    return tree


def compile_function(tree: ast.FunctionDef, filename: str, namespace: dict):
    """The Python function of a built `def`, its globals `namespace`."""
    module = ast.Module(body=[tree], type_ignores=[])
    scope: dict = {}
    exec(compile(module, filename, "exec"), namespace, scope)  # noqa: S102 (built nodes)
    return scope[tree.name]
