"""A function's AST as its bytecode sees it: parsed, checked against the code object, folded.

Numba reads bytecode, in which CPython has already folded constant expressions (`-1`,
`2 * TILE_CONST`... only literals, never names) and dropped code that cannot run. The direct
front end reads the AST, so it folds what CPython folds, and it first checks that the source
on disk still compiles to the function's own bytecode (a file edited since import does not).
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import inspect
import linecache
import operator
import textwrap
import types as pytypes
import weakref
from dataclasses import dataclass, field

from .errors import Unsupported


@dataclass
class FunctionSource:
    """What the typer needs to know about one Python function."""

    py_func: pytypes.FunctionType
    tree: ast.FunctionDef
    filename: str
    #: line number of the tree's line 1 in the file, minus one
    line_offset: int
    params: list[str]
    #: names the function assigns (Python's locals), parameters included
    local_names: frozenset[str]
    #: how many times each local name is assigned in the whole function (parameters count 1)
    assignments: dict[str, int]
    #: the value of each local assigned exactly once, by a plain `name = value`
    single_definitions: dict[str, ast.expr]
    #: the value of each free variable (closure cell)
    free_values: dict[str, object] = field(default_factory=dict)

    def line(self, node: ast.AST) -> int:
        """The file's line number of a node."""
        return getattr(node, "lineno", 1) + self.line_offset

    def lookup(self, name: str) -> object:
        """A non-local name's value, as Python finds it: closure, then globals, then builtins."""
        if name in self.free_values:
            return self.free_values[name]
        if name in self.py_func.__globals__:
            return self.py_func.__globals__[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise Unsupported(f"name '{name}' is not defined")


#: functions compiled from a syntax tree rather than a file (offloaded loops' kernels), and
#: that tree (placed at the lines of the user's code it comes from)
_GENERATED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def generated(function: pytypes.FunctionType, tree: ast.FunctionDef) -> None:
    """Note that `function` was compiled from `tree`, which function_source then reads."""
    _GENERATED[function] = copy.deepcopy(tree)


def function_source(py_func) -> FunctionSource:
    """The folded AST of `py_func`, or Unsupported where its source is not its bytecode's."""
    code = getattr(py_func, "__code__", None)
    if code is None:
        raise Unsupported("not a Python function")
    tree = _GENERATED.get(py_func)
    if tree is not None:  # its lines are the user's file's already
        tree, first_line = copy.deepcopy(tree), 1
    else:
        lines = linecache.getlines(code.co_filename)
        first_line = code.co_firstlineno  # the first decorator's line, if it has any
        module = _parse(py_func, code, lines)
        if len(module.body) != 1 or not isinstance(module.body[0], ast.FunctionDef):
            raise Unsupported("the source is not one plain def")
        tree = module.body[0]
        tree.decorator_list = []
        _check_bytecode(tree, code, lines)
    tree = _Folder().visit(tree)
    params = [a.arg for a in tree.args.args]
    assignments, single = _survey(tree, code, params)
    free_values = {}
    for name, cell in zip(code.co_freevars, py_func.__closure__ or ()):
        try:
            free_values[name] = cell.cell_contents
        except ValueError:  # an empty cell: the name is not bound yet
            raise Unsupported(f"free variable '{name}' is not bound") from None
    return FunctionSource(
        py_func=py_func,
        tree=tree,
        filename=code.co_filename,
        line_offset=first_line - 1,
        params=params,
        local_names=frozenset(code.co_varnames),
        assignments=assignments,
        single_definitions=single,
        free_values=free_values,
    )


def _parse(py_func, code: pytypes.CodeType, lines: list) -> ast.Module:
    """The function's source parsed: its lines up to the last one its bytecode comes from
    (co_positions), or as inspect finds them (slower: it tokenizes)."""
    last_line = 0
    if lines and hasattr(code, "co_positions"):  # Python 3.11+
        last_line = max((end for _, end, _, _ in code.co_positions() if end), default=0)
    if last_line >= code.co_firstlineno:
        try:
            return ast.parse(textwrap.dedent("".join(lines[code.co_firstlineno - 1 : last_line])))
        except SyntaxError:
            pass
    try:
        found, _ = inspect.getsourcelines(py_func)
    except (OSError, TypeError) as exc:
        raise Unsupported(f"no source: {exc}") from None
    return ast.parse(textwrap.dedent("".join(found)))


def _check_bytecode(tree: ast.FunctionDef, code: pytypes.CodeType, lines: list) -> None:
    """The source compiles to the code object's own bytecode, constants and names."""
    arguments = tree.args
    if (
        arguments.posonlyargs
        or arguments.vararg
        or arguments.kwonlyargs
        or arguments.kwarg
        or arguments.defaults
        or code.co_cellvars
    ):
        raise Unsupported("parameters other than plain positional ones, or inner functions")
    if code.co_freevars:  # compile it inside a function that binds its free variables
        outer = _located(
            ast.FunctionDef(
                name="_outer",
                args=ast.arguments([], [], None, [], [], None, []),
                body=[_bind_none(n) for n in code.co_freevars] + [tree],
                decorator_list=[],
            )
        )
        body = [outer]
    else:
        body = [tree]
    module = ast.Module([*_module_imports(code.co_filename, "".join(lines)), *body], [])
    try:
        compiled = compile(module, code.co_filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise Unsupported(f"the source does not compile: {exc}") from None
    if code.co_freevars:
        compiled = _nested_code(compiled, "_outer")
    compiled = _nested_code(compiled, tree.name)
    if compiled is None or not _same_code(compiled, code):
        raise Unsupported("the source on disk is not the function's bytecode")


def _located(node: ast.AST) -> ast.AST:
    node.lineno = node.end_lineno = 1
    node.col_offset = node.end_col_offset = 0
    return node


def _bind_none(name: str) -> ast.Assign:
    return _located(
        ast.Assign([_located(ast.Name(name, ast.Store()))], _located(ast.Constant(None)))
    )


@functools.lru_cache(maxsize=32)
def _module_imports(filename: str, text: str) -> tuple:
    """The import statements at a file's module scope, future imports first: CPython compiles
    `mod.f(x)` as a method call unless `mod` is imported at module scope."""
    try:
        module = ast.parse(text, filename)
    except (SyntaxError, ValueError):
        return ()
    found = []

    def visit(statements):
        for node in statements:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.append(node)
            elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for name in ("body", "orelse", "finalbody", "handlers"):
                    visit(getattr(node, name, ()))

    visit(module.body)
    future = [n for n in found if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    return tuple(future + [n for n in found if n not in future])


def _nested_code(code, name: str):
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType) and const.co_name == name:
            return const
    return None


def _same_code(a: pytypes.CodeType, b: pytypes.CodeType) -> bool:
    return (
        a.co_code == b.co_code
        and a.co_names == b.co_names
        and a.co_varnames == b.co_varnames
        and a.co_freevars == b.co_freevars
        and [(type(c), c) for c in a.co_consts] == [(type(c), c) for c in b.co_consts]
    )


def _constant_key(value) -> tuple:
    """Tells apart what == does not (1, 1.0, True; 0.0, -0.0)."""
    if isinstance(value, tuple):
        return ("tuple", tuple(_constant_key(v) for v in value))
    return (type(value).__name__, repr(value))


_FOLDED_KINDS = (bool, int, float, complex, tuple)


def _survey(tree: ast.FunctionDef, code: pytypes.CodeType, params: list) -> tuple:
    """One walk over the folded tree: (how many times each name is assigned, as Numba counts
    definitions before SSA; the value of each local assigned exactly once by a plain
    `name = value`). Checks on the way that the tree holds the numbers and tuples the
    bytecode loads, no more and no fewer (else the folding here is not CPython's)."""
    counts = dict.fromkeys(params, 1)
    plain, constants, unloaded, maybe = [], set(), set(), set()
    for node in ast.walk(tree):  # breadth first: a statement before the constants in it
        kind = type(node)
        if kind is ast.Name:
            if isinstance(node.ctx, ast.Store):
                counts[node.id] = counts.get(node.id, 0) + 1
        elif kind is ast.Expr and isinstance(node.value, ast.Constant):
            unloaded.add(id(node.value))  # CPython emits no code for a constant statement
        elif kind in (ast.If, ast.While, ast.IfExp):
            unloaded.update(_jump_constants(node.test))  # a jump on one may not load it
        elif kind is ast.Constant:
            if not isinstance(node.value, (*_FOLDED_KINDS, str, type(None))):
                raise Unsupported(f"a constant of type {type(node.value).__name__}")
            if isinstance(node.value, _FOLDED_KINDS):
                key = _constant_key(node.value)
                (maybe if id(node) in unloaded else constants).add(key)
        elif kind is ast.Assign and len(node.targets) == 1:
            plain.extend(_plain_assignments(node.targets[0], node.value))
    in_code = {_constant_key(c) for c in code.co_consts if isinstance(c, _FOLDED_KINDS)}
    if not constants <= in_code <= constants | maybe:
        raise Unsupported("constant folding differs from CPython's")
    single = {name: value for name, value in plain if counts.get(name) == 1 and name not in params}
    return counts, single


def _jump_constants(test) -> set:
    """The constants a branch on `test` jumps on directly (through `not`, `and`, `or`)."""
    if isinstance(test, ast.Constant):
        return {id(test)}
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _jump_constants(test.operand)
    if isinstance(test, ast.BoolOp):
        return set().union(*(_jump_constants(v) for v in test.values))
    return set()


def _plain_assignments(target, value):
    """(name, value) of `name = value`, and of each name of `a, b = x, y`, which CPython
    compiles without a tuple (three names at most)."""
    if isinstance(target, ast.Name):
        yield target.id, value
    elif (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, ast.Tuple)
        and len(value.elts) == len(target.elts) <= 3
    ):
        for name, element in zip(target.elts, value.elts):
            if isinstance(name, ast.Name):
                yield name.id, element


# --- CPython's constant folding (Python/ast_opt.c), for numbers and tuples ------------------

_MAX_INT_BITS = 128  # CPython folds no integer result wider than this
#: AST operator classes -> the operator functions: CPython folds with them, Numba types them.
BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
}
UNARY = {
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_NUMBERS = (bool, int, float, complex)


def _bits(value) -> int:
    return abs(int(value)).bit_length()


def _too_large(op: type, left, right) -> bool:
    """CPython's limits on folding integer multiplication, powers and shifts."""
    if not (isinstance(left, int) and isinstance(right, int)):
        return False
    if op is ast.Mult:
        return bool(left and right) and _bits(left) + _bits(right) > _MAX_INT_BITS
    if op is ast.Pow:
        return bool(left) and right > 0 and _bits(left) > _MAX_INT_BITS // right
    if op is ast.LShift:
        return bool(left) and (right > _MAX_INT_BITS or _bits(left) > _MAX_INT_BITS - right)
    return False


class _Folder(ast.NodeTransformer):
    """Folds what CPython folds before it emits bytecode (numbers, tuples, subscripts)."""

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        value = node.operand
        if isinstance(value, ast.Constant) and isinstance(value.value, _NUMBERS):
            try:
                return _constant(UNARY[type(node.op)](value.value), node)
            except Exception:  # CPython leaves what raises for run time
                return node
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = node.left, node.right
        op = type(node.op)
        if (
            op in BINARY
            and isinstance(left, ast.Constant)
            and isinstance(right, ast.Constant)
            and isinstance(left.value, _NUMBERS)
            and isinstance(right.value, _NUMBERS)
            and not _too_large(op, left.value, right.value)
        ):
            try:
                return _constant(BINARY[op](left.value, right.value), node)
            except Exception:
                return node
        return node

    def visit_Tuple(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and all(isinstance(e, ast.Constant) for e in node.elts):
            return _constant(tuple(e.value for e in node.elts), node)
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if (
            isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.slice, ast.Constant)
        ):
            try:
                return _constant(node.value.value[node.slice.value], node)
            except Exception:
                return node
        return node


def _constant(value, node: ast.AST) -> ast.Constant:
    return ast.copy_location(ast.Constant(value), node)
