"""Lowering of statements for the direct front end: assignments, branches, loops and the
conditions they test (a mixin of lowerer.Lowerer)."""

from __future__ import annotations

import ast

from llvmlite import ir
from numba.core import cgutils, types
from numba.core import ir as numba_ir

from .source import BINARY


class StatementLowering:
    """Statements and conditions, emitted at the builder's position."""

    def block(self, statements: list) -> None:
        for statement in statements:
            if not self.reachable():
                break
            self.loc = numba_ir.Loc(self.typed.source.filename, self.typed.source.line(statement))
            getattr(self, "stmt_" + type(statement).__name__)(statement)

    def stmt_Pass(self, node):
        pass

    def stmt_Expr(self, node):
        if not isinstance(node.value, ast.Constant):
            self.expr(node.value)

    def stmt_Return(self, node):
        self.return_none()

    def bind(self, name: str, value, ty) -> None:
        self.env = {**self.env, name: (ty, value)}

    def stmt_Assign(self, node):
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name):
            self.bind(target.id, self.expr(value), self.typed.types[value])
        elif isinstance(target, ast.Subscript):
            self.store_subscript(target, self.expr(value), self.typed.types[value])
        elif isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts) <= 3:
            values = [self.expr(e) for e in value.elts]
            for name, element, llvalue in zip(target.elts, value.elts, values):
                self.bind(name.id, llvalue, self.typed.types[element])
        else:
            packed = self.expr(value)
            tuple_type, signatures = self.facts[(node, "unpack")]
            for index, (name, signature) in enumerate(zip(target.elts, signatures)):
                item = self.static_getitem(packed, tuple_type, index, signature)
                self.bind(name.id, item, signature.return_type)

    def stmt_AugAssign(self, node):
        """`x op= v`: the in-place operator, lowered as the plain one on immutable values
        (as Numba's lower_expr does)."""
        target = node.target
        fnty, signature = self.facts[(node, "op")]
        if isinstance(target, ast.Name):
            left_type, left = self.env[target.id]
        else:
            base, index = self.expr(target.value), self.index(target)
            left, left_type = self.getitem(target, base, index), self.typed.types[target]
        if not left_type.mutable:
            fnty = self.context.typing_context.resolve_value_type(BINARY[type(node.op)])
        right = self.expr(node.value)
        result = self.binop(fnty, signature, left, left_type, right, node.value)
        if isinstance(target, ast.Name):
            self.bind(target.id, result, signature.return_type)
        else:
            self.setitem(target, base, index, result, signature.return_type)

    def binop(self, fnty, signature, left, left_type, right, right_node):
        """An operator applied with the signature typing gave it (dispatcher's _DeviceLower)."""
        left = self.cast(left, left_type, signature.args[0])
        right_type = self.typed.types[right_node]
        right = self.cast(right, right_type, signature.args[1])
        try:
            impl = self.implementation(fnty, signature)
        except (KeyError, NotImplementedError):  # not typed through fnty: Numba's way
            again = fnty.get_call_type(self.context.typing_context, signature.args, {})
            impl = self.implementation(fnty, again)
        return impl(self.builder, self.plain((left, right)))

    def stmt_If(self, node):
        then_block, else_block = self.new_block("if.then"), self.new_block("if.else")
        joined = self.facts[(node, "join")]
        self.condition(node.test, then_block, else_block)
        before, incoming = self.env, []
        after = self.new_block("if.end")
        reached = self.facts[(node, "reached")]
        for block, statements, on in zip(
            (then_block, else_block), (node.body, node.orelse), reached
        ):
            self.env = before
            self.builder.position_at_end(block)
            if not on:  # a branch decided before typing: nothing goes there
                self.builder.unreachable()
                continue
            self.block(statements)
            if self.reachable():
                incoming.append(self.leave(joined, after))
        self.builder.position_at_end(after)
        if joined is None:  # no branch comes out
            self.builder.unreachable()
            return
        self.merge(joined, incoming, after)

    def stmt_While(self, node):
        """The loop as CPython compiles it (Typer.stmt_While): a first test, the body, the
        test's copy at the end going back to the body; `continue` goes to the first test."""
        at_top, at_header = self.facts[(node, "top")], self.facts[(node, "header")]
        at_exit = self.facts[(node, "exit")]
        top, body, after = self.new_block("while.top"), self.new_block("while.body"), None
        after = self.new_block("while.end")
        self.merge(at_top, [self.leave(at_top, top)], top)
        top_phis = self.phis(at_top)
        into_body, leaving = [], []
        self.test_edges(node.test, (at_header, body, into_body), (at_exit, after, leaving))
        header_phis = {}
        if at_header is not None:
            self.merge(at_header, into_body, body)
            header_phis = self.phis(at_header)
            continues, breaks = [], []
            self.loops.append((top, at_top, continues, breaks))
            self.block(node.body)
            self.loops.pop()
            if self.reachable():
                bottom = self.facts[(node, "bottom test")]
                back = []
                self.test_edges(bottom, (at_header, body, back), (at_exit, after, leaving))
                self.add_incoming(header_phis, back)
            self.add_incoming(top_phis, continues)
            for block, env in breaks:
                self.builder.position_at_end(block)
                self.env = env
                leaving.append(self.leave(at_exit, after))
        else:
            self.builder.position_at_end(body)
            self.builder.unreachable()
        if at_exit is None:
            self.builder.position_at_end(after)
            self.builder.unreachable()
            return
        self.merge(at_exit, leaving, after)

    def phis(self, joined: dict) -> dict:
        """The phis the last merge made: variable -> phi."""
        return {n: self.env[n][1] for n, (_, is_phi) in joined.items() if is_phi}

    @staticmethod
    def add_incoming(phis: dict, incoming: list) -> None:
        for _, values, predecessor in incoming:
            for name, phi in phis.items():
                phi.add_incoming(values[name], predecessor)

    def test_edges(self, node, on_true: tuple, on_false: tuple) -> None:
        """Branch on condition `node`; each target reached is (joined types, block, list):
        its edge converts the variables to the joined types and is noted in the list."""
        env, here = self.env, self.builder.block
        reached = self.facts[(node, "reached")]
        edges = []
        for (joined, target, noted), on in zip((on_true, on_false), reached):
            edge = self.new_block("edge")
            edges.append(edge)
            self.builder.position_at_end(edge)
            if on:
                self.env = env
                noted.append(self.leave(joined, target))
            else:
                self.builder.unreachable()
        self.env = env
        self.builder.position_at_end(here)
        self.condition(node, *edges)

    def stmt_For(self, node):
        callee = (
            self.facts.get((node.iter.func, "value")) if isinstance(node.iter, ast.Call) else None
        )
        if callee is range:
            self.for_range(node)
            return
        iterable = self.expr(node.iter)
        _, getiter = self.facts[(node, "getiter")]
        _, iternext = self.facts[(node, "iternext")]
        value = self.cast(iterable, self.typed.types[node.iter], getiter.args[0])
        iterator = self.implementation("getiter", getiter)(self.builder, self.plain((value,)))
        pair_type = iternext.return_type
        item = {}

        def head(body, exit_edge):
            pair = self.implementation("iternext", iternext)(self.builder, (iterator,))
            item["value"] = self.context.pair_first(self.builder, pair, pair_type)
            valid = self.context.pair_second(self.builder, pair, pair_type)
            self.builder.cbranch(valid, body, exit_edge)

        def body():
            self.bind(node.target.id, item["value"], pair_type.first_type)
            self.block(node.body)

        self.loop(node, head, body)

    def for_range(self, node):
        """`for x in range(...)`: Numba's range iterator (rangeobj.py), its trip count and
        steps computed the same way, as a counted loop in registers."""
        call = node.iter
        _, signature = self.facts[(call, "call")]
        item_type = self.facts[(node, "iternext")][1].return_type.first_type
        values = self.fold_arguments(signature, call, [self.expr(a) for a in call.args], {})
        zero, one = ir.Constant(values[0].type, 0), ir.Constant(values[0].type, 1)
        start, stop, step = {1: (zero, values[0], one), 2: (*values, one), 3: values}[len(values)]
        builder = self.builder
        if not (isinstance(step, ir.Constant) and step.constant != 0):
            with cgutils.if_unlikely(builder, builder.icmp_unsigned("==", step, zero)):
                self.context.call_conv.return_user_exc(
                    builder, ValueError, ("range() arg 3 must not be zero",)
                )
        from_zero = isinstance(start, ir.Constant) and start.constant == 0
        diff = stop if from_zero else builder.sub(stop, start)
        positive_diff = builder.icmp_signed(">", diff, zero)
        if isinstance(step, ir.Constant) and step.constant == 1:  # what the rest comes to
            count = builder.select(positive_diff, diff, zero)
        else:
            sign_differs = builder.xor(positive_diff, builder.icmp_signed(">", step, zero))
            remainder = builder.srem(diff, step)
            remainder = builder.select(positive_diff, remainder, builder.neg(remainder))
            uneven = builder.icmp_signed(">", remainder, zero)
            count = builder.add(builder.sdiv(diff, step), builder.select(uneven, one, zero))
            count = builder.select(sign_differs, zero, count)
        preheader, latch = builder.block, self.new_block("for.latch")
        state = {}

        def head(body, exit_edge):
            state["count"] = builder.phi(count.type, name="count")
            state["value"] = builder.phi(start.type, name=node.target.id)
            state["count"].add_incoming(count, preheader)
            state["value"].add_incoming(start, preheader)
            builder.cbranch(builder.icmp_signed(">", state["count"], zero), body, exit_edge)

        def body():
            self.bind(node.target.id, state["value"], item_type)
            self.block(node.body)

        def next_round():
            """Every path to the next round passes the latch: count down, step the value."""
            state["count"].add_incoming(builder.sub(state["count"], one, flags=["nsw"]), latch)
            state["value"].add_incoming(builder.add(state["value"], step), latch)

        self.loop(node, head, body, latch=(latch, next_round))

    def loop(self, node, head, run_body, latch=None) -> None:
        """Lower a loop. `head(body, exit edge)` branches at its start; `latch`, when given,
        is (the block every round ends in, a function that finishes it there)."""
        at_header = self.facts[(node, "header")]
        at_exit = self.facts[(node, "exit")]
        header, body = self.new_block("loop.head"), self.new_block("loop.body")
        exit_edge, after = self.new_block("loop.exit"), self.new_block("loop.end")
        self.merge(at_header, [self.leave(at_header, header)], header)
        phis = {n: self.env[n][1] for n, (_, is_phi) in at_header.items() if is_phi}
        head(body, exit_edge)
        header_env = self.env
        ends, breaks = [], []
        self.loops.append((latch[0] if latch else header, at_header, ends, breaks))
        self.builder.position_at_end(body)
        run_body()
        self.loops.pop()
        if self.reachable():
            ends.append(self.leave(at_header, latch[0] if latch else header))
        if latch:  # the ends meet at the latch, which alone goes back to the header
            block, finish = latch
            self.builder.position_at_end(block)
            for name, phi in phis.items():
                if not ends:  # every round breaks or returns: the latch is never reached
                    value = ir.Constant(phi.type, ir.Undefined)
                elif len(ends) == 1:
                    value = ends[0][1][name]
                else:
                    value = self.builder.phi(phi.type, name=name)
                    for _, values, predecessor in ends:
                        value.add_incoming(values[name], predecessor)
                phi.add_incoming(value, block)
            finish()
            self.builder.branch(header)
        else:
            for _, values, predecessor in ends:
                for name, phi in phis.items():
                    phi.add_incoming(values[name], predecessor)
        self.env = header_env
        self.builder.position_at_end(exit_edge)
        incoming = [self.leave(at_exit, after)]
        for block, env in breaks:
            self.builder.position_at_end(block)
            self.env = env
            incoming.append(self.leave(at_exit, after))
        self.merge(at_exit, incoming, after)

    def stmt_Break(self, node):
        _, _, _, breaks = self.loops[-1]
        edge = self.new_block("break")
        self.builder.branch(edge)
        breaks.append((edge, self.env))

    def stmt_Continue(self, node):
        next_round, at_header, ends, _ = self.loops[-1]
        ends.append(self.leave(at_header, next_round))

    # --- conditions -----------------------------------------------------------------------

    def condition(self, node, true_block: ir.Block, false_block: ir.Block) -> None:
        """Branch on a condition as CPython's jumps do (Typer.test): parts decided before
        typing branch straight to their target, and parts no path reaches are not emitted."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.condition(node.operand, false_block, true_block)
        elif isinstance(node, ast.BoolOp):
            conjunction = isinstance(node.op, ast.And)
            for value in node.values[:-1]:
                next_block = self.new_block("cond.next")
                if conjunction:
                    self.condition(value, next_block, false_block)
                else:
                    self.condition(value, true_block, next_block)
                self.builder.position_at_end(next_block)
                true, false = self.facts[(value, "reached")]
                if not (true if conjunction else false):  # the next part is never reached
                    self.builder.unreachable()
                    return
            self.condition(node.values[-1], true_block, false_block)
        elif isinstance(node, ast.Compare) and len(node.ops) > 1:
            self.compare_chain(node, true_block, false_block)
        elif (node, "static") in self.facts:
            self.builder.branch(true_block if self.facts[(node, "static")] else false_block)
        else:
            value = self.expr(node)
            self.branch_on(node, "bool", value, self.typed.types[node], true_block, false_block)

    def truth(self, node, tag, value, ty) -> ir.Value:
        """bool(value) as Numba's branch predicate computes it."""
        fnty, signature = self.facts[(node, tag)]
        value = self.cast(value, ty, signature.args[0])
        result = self.implementation(fnty, signature)(self.builder, self.plain((value,)))
        return self.cast(result, signature.return_type, types.boolean)

    def branch_on(self, node, tag, value, ty, true_block, false_block) -> None:
        self.builder.cbranch(self.truth(node, tag, value, ty), true_block, false_block)

    def joined_value(self, ty, incoming: list, done: ir.Block) -> ir.Value:
        """The value at `done` of the (value, block) pairs reaching it."""
        self.builder.position_at_end(done)
        phi = self.builder.phi(self.context.get_value_type(ty))
        for value, block in incoming:
            phi.add_incoming(value, block)
        return phi

    def converted_edge(self, value, ty, result_type, target, incoming) -> None:
        """Branch to `target` with `value` converted to `result_type`, noted in `incoming`."""
        incoming.append((self.cast(value, ty, result_type), self.builder.block))
        self.builder.branch(target)

    def compare_chain(self, node, true_block=None, false_block=None):
        """`a < b < c`: branching (to the blocks given) or as a value (None for both)."""
        operands = [node.left, *node.comparators]
        branching = true_block is not None
        values: dict = {}

        def value_of(index):  # each operand lowered once, when first needed (Typer's order)
            if index not in values:
                values[index] = self.expr(operands[index])
            return values[index]

        result_type = self.typed.types.get(node)
        done, incoming = (None, []) if branching else (self.new_block("compare.end"), [])
        for index in range(len(node.ops)):
            last = index == len(node.ops) - 1
            if branching and (node, ("static", index)) in self.facts:
                if not self.facts[(node, ("static", index))]:
                    self.builder.branch(false_block)
                    return None
                if last:
                    self.builder.branch(true_block)
                continue
            left, right = value_of(index), value_of(index + 1)
            value = self.comparison(node, index, left, operands[index], right, operands[index + 1])
            ty = self.facts[(node, ("op", index))][1].return_type
            if branching:
                next_block = true_block if last else self.new_block("compare.next")
                self.branch_on(node, ("bool", index), value, ty, next_block, false_block)
            elif last:
                self.converted_edge(value, ty, result_type, done, incoming)
            else:
                next_block = self.new_block("compare.next")
                converted = self.cast(value, ty, result_type)
                incoming.append((converted, self.builder.block))
                self.branch_on(node, ("bool", index), value, ty, next_block, done)
            if not last:
                self.builder.position_at_end(next_block)
        return None if branching else self.joined_value(result_type, incoming, done)

    def comparison(self, node, index, left, left_node, right, right_node):
        fnty, signature = self.facts[(node, ("op", index))]
        left = self.cast(left, self.typed.types[left_node], signature.args[0])
        right = self.context.cast(
            self.builder, right, self.typed.types[right_node], signature.args[1]
        )
        return self.implementation(fnty, signature)(self.builder, self.plain((left, right)))
