"""Typing of statements for the direct front end: assignments, branches and loops, with the
SSA joins Numba's phis make (a mixin of typer.Typer)."""

from __future__ import annotations

import ast
import copy

from numba.core import types

from .errors import Unsupported
from .typed import INPLACE, MAX_LOOP_ROUNDS, NOT_CONSTANT, Binding, Env, Loop


class StatementTyping:
    """Statements: each returns the environment after it (None where unreachable)."""

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
        for _ in range(MAX_LOOP_ROUNDS):
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
            frame = Loop()
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
        for _ in range(MAX_LOOP_ROUNDS):
            frame = Loop()
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
