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
import copy
import operator
import types as pytypes
from dataclasses import dataclass, field

import numpy as np
from numba.core import types

from .errors import Unsupported
from .source import BINARY, UNARY, FunctionSource

NOT_CONSTANT = object()

#: The in-place forms, for augmented assignments.
INPLACE = {
    ast.Add: operator.iadd,
    ast.Sub: operator.isub,
    ast.Mult: operator.imul,
    ast.Div: operator.itruediv,
    ast.FloorDiv: operator.ifloordiv,
    ast.Mod: operator.imod,
    ast.Pow: operator.ipow,
    ast.LShift: operator.ilshift,
    ast.RShift: operator.irshift,
    ast.BitOr: operator.ior,
    ast.BitXor: operator.ixor,
    ast.BitAnd: operator.iand,
}
COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


@dataclass(frozen=True)
class Binding:
    """One SSA version of a variable: its type and what defined it."""

    type: types.Type
    #: identifies the definition (two bindings with the same one are the same version)
    definition: object
    #: the value, where Numba's constant inference (find_const) finds one
    constant: object = NOT_CONSTANT
    #: where a binary operation or comparison of two such constants defined it, its value in
    #: Python (what Numba's DeadBranchPrune decides a branch on the variable by)
    comparison: object = NOT_CONSTANT
    #: `constant` or `comparison` rests on a variable assigned more than once, which Numba
    #: sees as a constant only after SSA (its last DeadBranchPrune)
    late: bool = False


Env = dict  # variable name -> Binding; None where the code is unreachable


@dataclass
class Typed:
    """What the typer found, keyed by AST node (and a tag where a node has several facts)."""

    source: FunctionSource
    argtypes: tuple
    return_type: types.Type = types.none
    #: expression node -> its type
    types: dict = field(default_factory=dict)
    #: (node, tag) -> a fact the lowerer reads (signatures, constants, join types)
    facts: dict = field(default_factory=dict)
    #: node -> (line, text) for inspect_types()
    annotations: dict = field(default_factory=dict)


@dataclass
class _Loop:
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)


_MAX_LOOP_ROUNDS = 16


class Typer:
    """Types one function for given argument types; raises Unsupported where it must."""

    def __init__(self, source: FunctionSource, argtypes: tuple, typingctx):
        self.src = source
        self.ctx = typingctx
        self.out = Typed(source, tuple(argtypes))
        self.loops: list[_Loop] = []
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
            found = self._function_types[fn] = self.ctx.resolve_value_type(fn)
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
        if isinstance(value, types.Array) or hasattr(value, "__array_interface__"):
            raise Unsupported("a global array")
        found = types.maybe_literal(value)
        if found is not None:
            return found
        found = self.ctx.resolve_value_type(value)
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
        found = self.ctx.resolve_value_type(value)
        return types.maybe_literal(value) or found

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

    # --- statements ---------------------------------------------------------------------

    def block(self, statements: list, env: Env) -> Env:
        for statement in statements:
            if env is None:  # after return, break or continue: CPython emits nothing
                break
            env = self.statement(statement, env)
        return env

    def statement(self, node, env: Env) -> Env:
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise Unsupported(f"statement {type(node).__name__}")
        return method(node, env)

    def stmt_Pass(self, node, env):
        return env

    def stmt_Expr(self, node, env):
        if not isinstance(node.value, ast.Constant):
            self.expr(node.value, env)
        return env

    def stmt_Return(self, node, env):
        value = node.value
        if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
            raise Unsupported("a return value")
        return None

    def stmt_Assign(self, node, env):
        if len(node.targets) != 1:
            raise Unsupported("chained assignment")
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name):
            return self.assign_name(target.id, value, env)
        if isinstance(target, ast.Subscript):
            self.expr(value, env)
            self.store_subscript(target, self.out.types[value], env)
            return env
        if isinstance(target, (ast.Tuple, ast.List)):
            return self.assign_unpack(node, target, value, env)
        raise Unsupported(f"assignment to {type(target).__name__}")

    def assign_name(self, name: str, value, env: Env) -> Env:
        ty = self.expr(value, env)
        self.note(value, lambda: _assignment_text(name, value, ty, self.out.facts))
        return self.bind(name, ty, value, env)

    def bind(self, name: str, ty, value, env: Env) -> Env:
        """Env after `name = value` (value: an AST node, or None for no constant)."""
        constant = comparison = NOT_CONSTANT
        late = False
        if value is not None:
            constant = self.ssa_constant(value, env)
            comparison = self.comparison(value, env)
            late = self.late(value, env)
        definition = value if value is not None else object()
        env = dict(env)
        env[name] = Binding(ty, definition, constant, comparison, late)
        return env

    def assign_unpack(self, node, target, value, env: Env) -> Env:
        names = target.elts
        if not all(isinstance(t, ast.Name) for t in names):
            raise Unsupported("unpacking into something other than names")
        if isinstance(value, ast.Tuple) and len(value.elts) == len(names) <= 3:
            # CPython swaps these on the stack: no tuple is built, each name gets its value
            for element in value.elts:
                self.expr(element, env)
            new = env
            for name, element in zip(names, value.elts):
                new = self.bind(name.id, self.out.types[element], element, new)
            return new
        tuple_type = self.expr(value, env)
        if not isinstance(tuple_type, types.BaseTuple) or len(tuple_type) != len(names):
            raise Unsupported(f"unpacking {tuple_type}")
        items = []
        for index, name in enumerate(names):
            signature = self.ctx.resolve_static_getitem(value=tuple_type, index=index)
            if signature is None:
                raise Unsupported(f"unpacking {tuple_type}")
            items.append(signature)
            env = self.bind(name.id, signature.return_type, None, env)
        self.fact(node, "unpack", (tuple_type, items))
        return env

    def stmt_AugAssign(self, node, env):
        op = type(node.op)
        target = node.target
        if isinstance(target, ast.Name):
            binding = env.get(target.id) if self.is_local(target.id) else None
            if binding is None:
                raise Unsupported(f"'{target.id}' may be undefined")
            rhs = self.expr(node.value, env)
            _, signature = self.operation(node, "op", INPLACE[op], (binding.type, rhs))
            self.note(node, lambda: f"{ast.unparse(node)}  :: {signature}")
            return self.bind(target.id, signature.return_type, None, env)
        if isinstance(target, ast.Subscript):
            item = self.load_subscript(target, env)
            rhs = self.expr(node.value, env)
            _, signature = self.operation(node, "op", INPLACE[op], (item, rhs))
            self.store_subscript(target, signature.return_type, env, indexed=True)
            return env
        raise Unsupported("augmented assignment to an attribute")

    def stmt_If(self, node, env):
        self.late_decision = False
        reached = self.fact(node, "reached", self.test(node.test, env))
        self.check_late(reached, (node.body, node.orelse))
        then = self.block(node.body, env) if reached[0] else None
        otherwise = self.block(node.orelse, env) if reached[1] else None
        return self.join([then, otherwise], node, "join")

    def check_late(self, reached: tuple, sides: tuple) -> None:
        """A side decided dead only after SSA (late_decision) that assigns variables is not
        modelled inside a loop: Numba's SSA gave them a phi at the loop's start already, which
        stays, where here they have none."""
        if self.late_decision and self.loops:
            for side, on in zip(sides, reached):
                if not on and any(
                    isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                    for statement in side
                    for n in ast.walk(statement)
                ):
                    raise Unsupported("a branch inside a loop decided after SSA")

    def stmt_While(self, node, env):
        """CPython compiles `while test: body` as: the test (false: leave the loop), the body,
        the test again (true: back to the body); `continue` goes to the first test. Numba
        prunes each copy of the test apart, so each is typed apart (the second, a copy of the
        test's tree, is in facts[(node, "bottom test")])."""
        if node.orelse:
            raise Unsupported("while with else")
        bottom = self.out.facts.get((node, "bottom test"))
        if bottom is None:
            bottom = self.fact(node, "bottom test", copy.deepcopy(node.test))
        continues, body_start, end, last = [], None, None, None
        for _ in range(_MAX_LOOP_ROUNDS):
            top = self.join([env, *continues], node, "top")
            self.late_decision = False
            top_reached = self.fact(node, "top reached", self.test(node.test, top))
            self.check_late(top_reached, (node.body, []))
            bottom_reached = self.out.facts.get((node, "bottom reached"), (False, False))
            incoming = [top if top_reached[0] else None, end if bottom_reached[0] else None]
            body_start = self.join(incoming, node, "header")
            if (_versions(top), _versions(body_start)) == last:
                break
            last = (_versions(top), _versions(body_start))
            frame = _Loop()
            self.loops.append(frame)
            try:
                end = self.block(node.body, body_start) if body_start is not None else None
            finally:
                self.loops.pop()
            if end is not None:
                self.fact(node, "bottom reached", self.test(bottom, end))
            else:
                self.out.facts.pop((node, "bottom reached"), None)
            continues = frame.continues
        else:
            raise Unsupported("loop types do not settle")
        bottom_reached = self.out.facts.get((node, "bottom reached"), (False, False))
        exits = [top if top_reached[1] else None, end if bottom_reached[1] else None]
        return self.join([*exits, *frame.breaks], node, "exit")

    def stmt_For(self, node, env):
        if node.orelse or not isinstance(node.target, ast.Name):
            raise Unsupported("for with else, or with a target other than a name")
        iterable = self.expr(node.iter, env)
        if not isinstance(iterable, (types.RangeType, types.Array)):
            raise Unsupported(f"iteration over {iterable}")
        _, getiter = self.operation(node, "getiter", "getiter", (iterable,))
        _, iternext = self.operation(node, "iternext", "iternext", (getiter.return_type,))
        pair = iternext.return_type
        name = node.target.id

        def body(header):
            inner = dict(header)
            inner[name] = Binding(pair.first_type, (node, "target"))
            return self.block(node.body, inner)

        self.note(
            node, lambda: f"{name} = next(iter({ast.unparse(node.iter)}))  :: {pair.first_type}"
        )
        return self.loop(node, env, lambda header: header, body)

    def loop(self, node, entry: Env, header_round, body) -> Env:
        """Type a loop until the versions at its start stop changing; returns the env after it.

        A round that read no variable's constant value typed the body as the next round would
        (only the versions of variables differ, not their types, and nothing decided by a
        constant): then its types are the loop's."""
        header = entry
        for _ in range(_MAX_LOOP_ROUNDS):
            frame = _Loop()
            self.loops.append(frame)
            reads = self.constants_read
            try:
                header_round(header)
                end = body(header)
            finally:
                self.loops.pop()
            again = self.join([entry, end, *frame.continues], node, "header")
            settled = _versions(again) == _versions(header) or (
                _types(again) == _types(header) and reads == self.constants_read
            )
            header = again
            if settled:
                break
        else:
            raise Unsupported("loop types do not settle")
        return self.join([header, *frame.breaks], node, "exit")

    def stmt_Break(self, node, env):
        self.loops[-1].breaks.append(env)
        return None

    def stmt_Continue(self, node, env):
        self.loops[-1].continues.append(env)
        return None

    def join(self, envs: list, node, tag) -> Env:
        """The env where `envs` meet: a variable every path defines, as one version where they
        all have the same one, else as a phi of their types unified. The lowerer reads which
        variables get a phi, and their types, from facts[(node, tag)]."""
        live = [e for e in envs if e is not None]
        if not live:
            self.out.facts[(node, tag)] = None
            return None
        names = set(live[0]).intersection(*live[1:])
        joined, phis = {}, {}
        for name in sorted(names):
            bindings = [e[name] for e in live]
            first = bindings[0]
            if all(b.definition == first.definition for b in bindings[1:]):
                joined[name] = first
                phis[name] = (first.type, False)
                continue
            unified = first.type
            for b in bindings[1:]:
                unified = self.unify(unified, b.type)
            if not isinstance(unified, (types.Integer, types.Float, types.Boolean)):
                raise Unsupported(f"'{name}' of type {unified} takes different values on paths")
            joined[name] = Binding(unified, (node, tag, name))
            phis[name] = (unified, True)
        self.out.facts[(node, tag)] = phis
        return joined

    # --- branch tests (what Python compiles to jumps) -------------------------------------

    def test(self, node, env: Env) -> tuple[bool, bool]:
        """Type a condition as CPython compiles it to jumps (`not`, `and`, `or` and chained
        comparisons branch on their parts); returns whether its true and its false target are
        reached, as facts[(node, "reached")] also says for every part. A branch decided before
        typing (static_truth) is facts[(part, "static")], and its dead target not reached."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            true, false = self.test(node.operand, env)
            reached = (false, true)
        elif isinstance(node, ast.BoolOp):
            conjunction = isinstance(node.op, ast.And)
            going_on, leaving = True, False  # the next part is reached; the way out is
            for value in node.values:
                if not going_on:
                    break
                true, false = self.test(value, env)
                going_on, exit_now = (true, false) if conjunction else (false, true)
                leaving = leaving or exit_now
            reached = (going_on, leaving) if conjunction else (leaving, going_on)
        elif isinstance(node, ast.Compare) and len(node.ops) > 1:
            reached = self.compare_chain_test(node, env)
        else:
            static = self.static_truth(node, env)
            if static is None:
                self.out.facts.pop((node, "static"), None)  # an earlier round's, if any
                self.truth(node, "bool", self.expr(node, env))
                reached = (True, True)
            else:
                self.fact(node, "static", static)
                reached = (static, not static)
        return self.fact(node, "reached", reached)

    def compare_chain_test(self, node, env: Env) -> tuple[bool, bool]:
        """`a < b < c` as jumps: each comparison in turn, to the false target at the first
        false one (each operand typed once, when first needed)."""
        operands = [node.left, *node.comparators]
        typed: dict = {}

        def type_of(index):
            if index not in typed:
                typed[index] = self.expr(operands[index], env)
            return typed[index]

        leaving = False
        for index, op in enumerate(node.ops):
            pair = ast.Compare(operands[index], [op], [operands[index + 1]])
            static = self.static_truth(pair, env)
            if static is not None:
                self.fact(node, ("static", index), static)
                if not static:
                    return (False, True)
                continue
            self.out.facts.pop((node, ("static", index)), None)  # an earlier round's, if any
            ty = self.comparison_type(node, index, op, type_of(index), type_of(index + 1))
            self.truth(node, ("bool", index), ty)
            leaving = True
        return (True, leaving)

    def predicate(self, node, ty, env: Env) -> None:
        """bool(value) for a branch on `node` inside an expression (`a and b`), as Numba's IR
        calls it; such a branch decided before typing is not modelled here."""
        if self.static_truth(node, env) is not None:
            raise Unsupported("a value of `and`, `or` or a comparison chain decided before typing")
        self.truth(node, "bool", ty)

    def truth(self, node, tag, ty) -> None:
        fnty = self.function_type(bool)
        self.fact(node, tag, (fnty, self.resolve(fnty, (ty,))))

    # --- expressions --------------------------------------------------------------------

    def expr(self, node, env: Env):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise Unsupported(f"expression {type(node).__name__}")
        ty = method(node, env)
        self.out.types[node] = ty
        return ty

    def expr_Constant(self, node, env):
        return self.constant_type(node.value)

    def expr_Name(self, node, env):
        if not isinstance(node.ctx, ast.Load):
            raise Unsupported("name in a store context")
        if self.is_local(node.id):
            binding = env.get(node.id)
            if binding is None:
                raise Unsupported(f"'{node.id}' may be undefined here")
            return binding.type
        value = self.src.lookup(node.id)
        self.fact(node, "value", value)
        return self.global_type(value)

    def expr_Attribute(self, node, env):
        constant = self.semantic_constant(node)
        if constant is not NOT_CONSTANT:
            self.fact(node, "value", constant)
            return types.literal(constant)
        base = self.expr(node.value, env)
        found = self.ctx.resolve_getattr(base, node.attr)
        if found is None:
            raise Unsupported(f"attribute {node.attr} of {base}")
        if isinstance(found, types.BoundFunction):
            raise Unsupported("a method")
        if isinstance(base, types.Module):
            self.fact(node, "value", getattr(base.pymod, node.attr))
        return found

    def expr_BinOp(self, node, env):
        left = self.expr(node.left, env)
        right = self.expr(node.right, env)
        _, signature = self.operation(node, "op", BINARY[type(node.op)], (left, right))
        return signature.return_type

    def expr_UnaryOp(self, node, env):
        operand = self.expr(node.operand, env)
        _, signature = self.operation(node, "op", UNARY[type(node.op)], (operand,))
        return signature.return_type

    def expr_Compare(self, node, env):
        if len(node.ops) == 1:
            left = self.expr(node.left, env)
            right = self.expr(node.comparators[0], env)
            return self.comparison_type(node, 0, node.ops[0], left, right)
        return self.compare_chain(node, env)

    def comparison_type(self, node, index: int, op, left, right):
        if type(op) not in COMPARE:
            raise Unsupported(f"comparison {type(op).__name__}")
        _, signature = self.operation(node, ("op", index), COMPARE[type(op)], (left, right))
        return signature.return_type

    def compare_chain(self, node, env: Env):
        """`a < b < c` as a value: each comparison in turn, stopping at the first false one;
        its value is the last comparison made (a phi of all of them)."""
        operands = [node.left, *node.comparators]
        left = self.expr(node.left, env)
        result = None
        for index, op in enumerate(node.ops):
            right = self.expr(operands[index + 1], env)
            ty = self.comparison_type(node, index, op, left, right)
            if index < len(node.ops) - 1:  # CPython branches on this comparison's result
                pair = ast.Compare(operands[index], [op], [operands[index + 1]])
                if self.static_truth(pair, env) is not None:
                    raise Unsupported("a comparison chain's value decided before typing")
                self.truth(node, ("bool", index), ty)
            result = ty if result is None else self.unify(result, ty)
            left = right
        return result

    def expr_BoolOp(self, node, env):
        result = None
        for index, value in enumerate(node.values):
            ty = self.expr(value, env)
            if index < len(node.values) - 1:
                self.predicate(value, ty, env)
            result = ty if result is None else self.unify(result, ty)
        return result

    def expr_IfExp(self, node, env):
        """`a if test else b`: the sides the test reaches, their types unified."""
        reached = self.test(node.test, env)
        sides = [self.expr(side, env) for side, on in zip((node.body, node.orelse), reached) if on]
        result = sides[0]
        for ty in sides[1:]:
            result = self.unify(result, ty)
        return result

    def expr_Tuple(self, node, env):
        if not isinstance(node.ctx, ast.Load):
            raise Unsupported("tuple in a store context")
        items = [self.expr(e, env) for e in node.elts]
        if items and all(t == items[0] for t in items[1:]):
            return types.UniTuple(items[0], len(items))
        return types.Tuple(items)

    def expr_Call(self, node, env):
        callee = self.expr(node.func, env)
        if not _may_call(self.out.facts.get((node.func, "value"))):
            raise Unsupported(f"a call of {ast.unparse(node.func)}")
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            raise Unsupported("*args or **kwargs in a call")
        if not isinstance(callee, (types.Function, types.NumberClass, types.Dispatcher)):
            raise Unsupported(f"a call of {callee}")
        args = tuple(self.expr(a, env) for a in node.args)
        kws = {k.arg: self.expr(k.value, env) for k in node.keywords}
        signature = self.resolve(callee, args, kws)
        if signature.recvr is not None or isinstance(signature.return_type, types.Phantom):
            raise Unsupported("a bound or phantom call")
        self.fact(node, "call", (callee, signature))
        self.note(
            node,
            lambda: f"call {ast.unparse(node.func)}{signature.args} -> {signature.return_type}",
        )
        return signature.return_type

    def expr_Subscript(self, node, env):
        return self.load_subscript(node, env)

    # --- subscripts -----------------------------------------------------------------------

    def index_of(self, node, env: Env):
        """(index type, constant index or NOT_CONSTANT) of a subscript."""
        if isinstance(node.slice, ast.Slice):
            raise Unsupported("a slice")
        index = self.expr(node.slice, env)
        return index, self.pre_ssa_constant(node.slice)

    def load_subscript(self, node, env: Env):
        base = self.expr(node.value, env)
        index, constant = self.index_of(node, env)
        if constant is not NOT_CONSTANT:
            signature = self.ctx.resolve_static_getitem(value=base, index=constant)
            if signature is not None:
                self.fact(node, "getitem", ("static", signature, constant))
                self.out.types[node] = signature.return_type
                return signature.return_type
        fnty, signature = self.operation(node, "op", operator.getitem, (base, index))
        self.fact(node, "getitem", ("dynamic", (fnty, signature), None))
        self.out.types[node] = signature.return_type
        return signature.return_type

    def store_subscript(self, node, value, env: Env, indexed: bool = False) -> None:
        """Type `node = <value>`; `indexed`: the base and index are typed already (a[i] += v)."""
        if indexed:
            base, index = self.out.types[node.value], self.out.types[node.slice]
            constant = self.pre_ssa_constant(node.slice)
        else:
            base = self.expr(node.value, env)
            index, constant = self.index_of(node, env)
        if constant is not NOT_CONSTANT:
            signature = self.ctx.resolve_static_setitem(base, constant, value)
            if signature is not None:
                self.fact(node, "setitem", ("static", signature, constant))
                return
        signature = self.ctx.resolve_setitem(base, index, value)
        if signature is None:
            raise Unsupported(f"setitem {base}[{index}] = {value}")
        self.fact(node, "setitem", ("dynamic", signature, None))
        self.note(node, lambda: f"{ast.unparse(node)} = ...  :: {signature}")


_BUILTINS = (range, min, max, abs, int, float, bool, complex, len, round, pow, divmod)


def _may_call(value) -> bool:
    """Callees typed and lowered by the registries both front ends share: builtins, math,
    NumPy scalar types and ufuncs, Numba types as casts, the kernel API, device functions."""
    from numba.core.dispatcher import Dispatcher

    from ..functions import DeviceFunction

    if any(value is b for b in _BUILTINS):
        return True
    if isinstance(value, (types.Number, types.Boolean, np.ufunc, DeviceFunction, Dispatcher)):
        return True
    if isinstance(value, type) and issubclass(value, np.generic):
        return True
    module = getattr(value, "__module__", None)
    return module in ("math", "cmath", _KERNEL_API) and callable(value)


_KERNEL_API = "dpex_kernels.compiler.kernel_api.registry"


def _assignment_text(name: str, value, ty, facts) -> str:
    call = facts.get((value, "call"))
    if call is not None:
        signature = call[1]
        return f"{name} = call {ast.unparse(value.func)}{signature.args} -> {signature.return_type}"
    return f"{name} = {ast.unparse(value)}  :: {ty}"


def _types(env: Env) -> dict | None:
    return None if env is None else {n: b.type for n, b in env.items()}


def _versions(env: Env) -> dict | None:
    return None if env is None else {n: (b.type, b.definition) for n, b in env.items()}


def type_function(source: FunctionSource, argtypes: tuple, typingctx) -> Typed:
    """The types of `source` called with `argtypes`, or Unsupported."""
    return Typer(source, argtypes, typingctx).run()
