"""Typing for the direct front end: Numba's typing rules, applied to the AST in one forward walk.

Every type decision is Numba's: the typing context resolves each operation and call, and
`unify_pairs` merges the types that meet where branches join or a loop starts over, exactly
where Numba's SSA form puts a phi. A variable therefore has, at each point of the function,
the type Numba gives the SSA version of it that is live there.

What Numba's passes before typing change is mirrored: constant indices take
`static_getitem` (rewrite "static getitem"), `a.ndim` of an array parameter is a constant
(RewriteSemanticConstants), and a branch DeadBranchPrune removes is decided here the same way
(its dead side never typed), in the shape CPython compiles the branch to. What this walk does
not model raises Unsupported (the caller then uses Numba's front end).
"""

from __future__ import annotations

import ast
import types as pytypes

import numpy as np
from numba.core import types

from .errors import Unsupported
from .source import BINARY, FunctionSource
from .typed import COMPARE, NOT_CONSTANT, Binding, Env, Loop, Typed
from .typing_expressions import ExpressionTyping
from .typing_statements import StatementTyping


class Typer(StatementTyping, ExpressionTyping):
    """Types one function for given argument types; raises Unsupported where it must."""

    def __init__(self, source: FunctionSource, argtypes: tuple, typingctx):
        self.src = source
        self.ctx = typingctx
        self.out = Typed(source, tuple(argtypes))
        self.loops: list[Loop] = []
        self._function_types: dict = {}
        #: within this compile: call -> signature, id(global) -> type (a loop's body is typed
        #: again each round until its types settle)
        self._signatures: dict = {}
        self._globals: dict = {}
        #: a branch was decided on a constant Numba only finds after SSA (see check_late)
        self.late_decision = False
        #: how many times a variable's constant value was read (see loop)
        self.constants_read = 0

    # --- entry ----------------------------------------------------------------------------

    def run(self) -> Typed:
        params = self.src.params
        if len(params) != len(self.out.argtypes):
            raise Unsupported("argument count")
        env = {p: Binding(t, ("arg", p)) for p, t in zip(params, self.out.argtypes)}
        self.block(self.src.tree.body, env)
        return self.out

    # --- helpers --------------------------------------------------------------------------

    def fact(self, node, tag, value):
        self.out.facts[(node, tag)] = value
        return value

    def note(self, node: ast.AST, text) -> None:
        """What inspect_types() shows for `node`: `text()`, called only if it is read."""
        self.out.annotations[node] = (self.src.line(node), text)

    def function_type(self, fn):
        """The typing context's type of an operator or builtin, as Numba types the global;
        Numba's intrinsics ("getiter", "iternext") go by their names."""
        if isinstance(fn, str):
            return fn
        found = self._function_types.get(fn)
        if found is None:
            found = self._function_types[fn] = self.value_type(fn)
        return found

    def resolve(self, fnty, args: tuple, kws: dict | None = None):
        key = (fnty, args, tuple(sorted((kws or {}).items())))
        signature = self._signatures.get(key)
        if signature is None:
            signature = self.ctx.resolve_function_type(fnty, args, kws or {})
            if signature is None:
                raise Unsupported(f"no typing for {fnty}{args}")
            self._signatures[key] = signature
        return signature

    def operation(self, node, tag, fn, args: tuple):
        """Type an operator applied to `args`: (function type, signature)."""
        fnty = self.function_type(fn)
        signature = self.resolve(fnty, args)
        return self.fact(node, tag, (fnty, signature))

    def unify(self, first, second):
        unified = self.ctx.unify_pairs(first, second)
        if unified is None:
            raise Unsupported(f"cannot unify {first} and {second}")
        return unified

    def global_type(self, value):
        """Numba's typeof_global: literal where there is one (ints, bools, tuples of them)."""
        found = self._globals.get(id(value))
        if found is None:
            found = self._globals[id(value)] = self._global_type(value)
        return found

    def _global_type(self, value):
        if isinstance(value, types.Array) or (
            hasattr(value, "__array_interface__") and not isinstance(value, np.generic)
        ):  # NumPy scalars (`_ZERO = np.int64(0)`) are constants, as in Numba
            raise Unsupported("a global array")
        found = types.maybe_literal(value)
        if found is not None:
            return found
        found = self.value_type(value)
        if isinstance(found, types.Array):
            raise Unsupported("a global array")
        if isinstance(found, types.BaseAnonymousTuple):
            literals = [types.maybe_literal(x) for x in value]
            if all(literals):
                return types.Tuple(literals)
            if any(isinstance(t, (types.Array, types.BaseTuple)) for t in found.types):
                raise Unsupported("a global tuple holding arrays or tuples")
        return found

    def constant_type(self, value):
        """Numba's typeof_const."""
        found = self.value_type(value)
        return types.maybe_literal(value) or found

    def value_type(self, value):
        """The typing context's type of a Python value; a value Numba cannot type (a plain
        Python function) is the user's to fix, and Numba's front end says how."""
        try:
            return self.ctx.resolve_value_type(value)
        except ValueError:
            raise Unsupported(f"a value of type {type(value).__name__} Numba cannot type") from None

    def is_local(self, name: str) -> bool:
        return name in self.src.local_names

    def semantic_constant(self, node) -> object:
        """`a.ndim` of an array parameter never assigned again: a constant to Numba."""
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "ndim"
            and isinstance(node.value, ast.Name)
            and node.value.id in self.src.params
            and self.src.assignments.get(node.value.id) == 1
        ):
            argtype = self.out.argtypes[self.src.params.index(node.value.id)]
            if isinstance(argtype, types.Array):
                return argtype.ndim
        return NOT_CONSTANT

    # --- constants as Numba's passes see them ----------------------------------------------

    def ssa_constant(self, node, env: Env) -> object:
        """find_const after SSA: a constant, a global, a free variable, or a copy of one."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if self.is_local(node.id):
                binding = env.get(node.id)
                if binding is None or binding.constant is NOT_CONSTANT:
                    return NOT_CONSTANT
                self.constants_read += 1
                return binding.constant
            return self.src.lookup(node.id)
        return self.semantic_constant(node)

    def late(self, node, env: Env) -> bool:
        """Whether a constant `node` stands for rests on a variable assigned more than once."""
        if isinstance(node, ast.Name) and self.is_local(node.id):
            binding = env.get(node.id)
            return self.src.assignments.get(node.id, 0) > 1 or (binding and binding.late)
        if isinstance(node, (ast.BinOp, ast.Compare)):
            return any(self.late(n, env) for n in ast.iter_child_nodes(node))
        return False

    def comparison(self, node, env: Env) -> object:
        """The Python value of `node` (or of what a copied variable was defined by) where it is a
        binary operation or comparison of two constants: Numba's DeadBranchPrune decides a
        branch on it by that value. NOT_CONSTANT where it is not one (or Python raises)."""
        if isinstance(node, ast.Name) and self.is_local(node.id):
            binding = env.get(node.id)
            if binding is None or binding.comparison is NOT_CONSTANT:
                return NOT_CONSTANT
            self.constants_read += 1
            return binding.comparison
        if isinstance(node, ast.BinOp):
            function, pair = BINARY.get(type(node.op)), (node.left, node.right)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            function, pair = COMPARE.get(type(node.ops[0])), (node.left, node.comparators[0])
        else:
            return NOT_CONSTANT
        values = [self.ssa_constant(n, env) for n in pair]
        if function is None or NOT_CONSTANT in values:
            return NOT_CONSTANT
        try:
            return function(*values)
        except Exception:  # DeadBranchPrune leaves such a branch alone
            return NOT_CONSTANT

    def static_truth(self, node, env: Env):
        """True or False where the branch on `node` is decided before typing (CPython drops
        the test of a constant; Numba's DeadBranchPrune prunes a branch on a constant or on an
        operation on two); None where the branch stays."""
        if isinstance(node, ast.Constant):
            decided = node.value
        else:
            decided = self.comparison(node, env)
            if decided is NOT_CONSTANT:
                decided = self.ssa_constant(node, env)
        if decided is NOT_CONSTANT:
            return None
        try:
            decision = bool(decided)
        except Exception:
            return None
        self.late_decision = self.late_decision or self.late(node, env)
        return decision

    def pre_ssa_constant(self, node, seen=()) -> object:
        """Numba's infer_constant, which decides static getitem and setitem: over the whole
        function, before SSA, so a local is constant only if assigned once."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if not self.is_local(node.id):
                return self.src.lookup(node.id)
            value = self.src.single_definitions.get(node.id)
            if value is None or node.id in seen:
                return NOT_CONSTANT
            return self.pre_ssa_constant(value, (*seen, node.id))
        if isinstance(node, ast.Attribute):
            constant = self.semantic_constant(node)
            if constant is not NOT_CONSTANT:
                return constant
            base = self.pre_ssa_constant(node.value, seen)
            if isinstance(base, (pytypes.ModuleType, type)):
                return getattr(base, node.attr, NOT_CONSTANT)
            return NOT_CONSTANT
        if isinstance(node, ast.Tuple):
            items = tuple(self.pre_ssa_constant(e, seen) for e in node.elts)
            return NOT_CONSTANT if NOT_CONSTANT in items else items
        return NOT_CONSTANT


def type_function(source: FunctionSource, argtypes: tuple, typingctx) -> Typed:
    """The types of `source` called with `argtypes`, or Unsupported."""
    return Typer(source, argtypes, typingctx).run()
