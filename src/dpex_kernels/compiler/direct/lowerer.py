"""Lowering for the direct front end: the typed AST to LLVM, through Numba's implementations.

Every operation, call, cast, constant and attribute is lowered by the implementation Numba's
lowering would pick for the same signature (the target context's registries), and the
function follows Numba's calling convention, so its code computes what Numba's would.
What differs is the glue, which is leaner: variables are SSA values from the start (a phi
where the typer found paths meeting with different versions, the value cast on each incoming
path as Numba's phi copies do), and the commonest operations read their operands' fields
straight from the values (an array element by integer indices, an array's shape, a `for`
over `range`) with Numba's own helpers and arithmetic, instead of through copies on the stack
that LLVM would have to clean up.
"""

from __future__ import annotations

import ast
import operator

from llvmlite import ir
from numba.core import cgutils, types, typing
from numba.core import ir as numba_ir
from numba.np import arrayobj

from ..lowering import ArrayFields, contiguous_strides, declare_kernel, kernel_arguments
from .errors import Unsupported
from .source import BINARY
from .typer import Typed

_INTP = ir.IntType(64)
#: array attributes that are one field of Numba's array struct
_ARRAY_FIELDS = {"shape": "shape", "strides": "strides", "size": "nitems", "itemsize": "itemsize"}


class ArrayParts:
    """An array as the fields of Numba's array struct, kept apart: element access reads the
    fields it needs, and only a call into one of Numba's implementations gets the struct.
    A contiguous parameter's strides are computed, in the entry block, when first needed."""

    def __init__(self, ty, data, shape: list, strides: list | None, itemsize, nitems=None):
        self.type = ty
        self.data, self.shape, self._strides = data, shape, strides
        self.itemsize, self._nitems = itemsize, nitems

    @classmethod
    def of_struct(cls, builder, ty, value, model) -> ArrayParts:
        """The fields of a struct value; read off the constant where the value is a constant
        struct with its data pointer put in (a local or private array, memory.py)."""
        position = {name: model.get_field_position(name) for name in _STRUCT_FIELDS}
        if (
            isinstance(value, ir.InsertValue)
            and isinstance(value.aggregate, ir.Constant)
            and isinstance(value.aggregate.constant, list)
            and list(value.indices) == [position["data"]]
        ):
            known = value.aggregate.constant
            shape, strides = known[position["shape"]], known[position["strides"]]
            return cls(
                ty,
                value.value,
                list(shape.constant),
                list(strides.constant),
                known[position["itemsize"]],
                known[position["nitems"]],
            )
        fields = {name: builder.extract_value(value, at) for name, at in position.items()}
        return cls(
            ty,
            fields["data"],
            [builder.extract_value(fields["shape"], k) for k in range(ty.ndim)],
            [builder.extract_value(fields["strides"], k) for k in range(ty.ndim)],
            fields["itemsize"],
            fields["nitems"],
        )

    def field(self, builder, name: str):
        """One field of the struct: a value, or a list of them for shape and strides."""
        if name == "strides":
            if self._strides is None:  # in the entry block, which every use is after
                with builder.goto_entry_block():
                    itemsize = self.itemsize.constant
                    self._strides = contiguous_strides(
                        builder, self.shape, itemsize, self.type.layout
                    )
            return self._strides
        if name == "nitems" and self._nitems is None:
            # as numba.np.arrayobj.populate_array computes it, here (not kept: a value made
            # in one branch does not reach the other)
            nitems = ir.Constant(_INTP, 1)
            for length in self.shape:
                nitems = builder.mul(nitems, length, flags=["nsw"])
            return nitems
        return self._nitems if name == "nitems" else getattr(self, name)

    def struct(self, context, builder) -> ir.Value:
        """Numba's array struct of these fields (what populate_array fills in)."""
        model = context.data_model_manager[self.type]
        value = ir.Constant(model.get_value_type(), None)
        for name in ("data", "itemsize", "nitems"):
            value = builder.insert_value(
                value, self.field(builder, name), model.get_field_position(name)
            )
        for name in ("shape", "strides"):
            packed = cgutils.pack_array(builder, self.field(builder, name), _INTP)
            value = builder.insert_value(value, packed, model.get_field_position(name))
        return value


_STRUCT_FIELDS = ("data", "itemsize", "nitems", "shape", "strides")


class Lowerer:
    """Emits one typed kernel into `module` as a spir_kernel (returning from which ends the
    work-item: target.SYCLCallConv)."""

    def __init__(self, typed: Typed, context, module: ir.Module, implementations: dict):
        self.typed = typed
        self.facts = typed.facts
        self.context = context
        self.module = module
        #: (function type, signature) -> implementation, kept with `context` across compiles
        self.implementations = implementations
        #: variable name -> (its type here, its value here)
        self.env: dict = {}
        #: (header block, header phis, continue edges, break edges) of the enclosing loops
        self.loops: list = []

    # --- entry ----------------------------------------------------------------------------

    def run(self, symbol: str) -> ir.Function:
        """Emit the function as the spir_kernel `symbol`."""
        context = self.context
        source = self.typed.source
        self.function = declare_kernel(context, self.module, symbol, self.typed.argtypes, False)
        self.builder = ir.IRBuilder(self.function.append_basic_block("entry"))
        self.call_helper = context.call_conv.init_call_helper(self.builder)
        self.loc = numba_ir.Loc(source.filename, source.line(source.tree))
        arguments = kernel_arguments(context, self.builder, self.function, self.typed.argtypes)
        for name, ty, value in zip(source.params, self.typed.argtypes, arguments):
            if isinstance(value, ArrayFields):
                itemsize = ir.Constant(_INTP, value.itemsize)
                value = ArrayParts(ty, value.data, value.shape, value.strides, itemsize)
            self.env[name] = (ty, value)
        self.block(source.tree.body)
        if self.reachable():
            self.return_none()
        return self.function

    def reachable(self) -> bool:
        return not self.builder.block.is_terminated

    def return_none(self) -> None:
        value = self.context.get_constant_generic(self.builder, types.none, None)
        retval = self.context.get_return_value(self.builder, types.none, value)
        self.context.call_conv.return_value(self.builder, retval)

    def new_block(self, name: str) -> ir.Block:
        return self.function.append_basic_block(name)

    def implementation(self, fnty, signature):
        """The target context's implementation of a call, remembered on the context (Numba's
        get_function wraps and inspects it anew each time)."""
        key = (fnty, signature)
        found = self.implementations.get(key)
        if found is None:
            found = self.implementations[key] = self.context.get_function(fnty, signature)
        return found

    def cast(self, value, fromty, toty):
        """Numba's cast; an ArrayParts stays one where the type does not change."""
        if isinstance(value, ArrayParts):
            if fromty == toty:
                return value
            value = value.struct(self.context, self.builder)
        return self.context.cast(self.builder, value, fromty, toty)

    def plain(self, values) -> list:
        """Values as Numba's implementations take them: arrays as Numba's struct."""
        return [
            v.struct(self.context, self.builder) if isinstance(v, ArrayParts) else v for v in values
        ]

    # --- where paths meet -----------------------------------------------------------------

    def outgoing(self, joined: dict) -> dict:
        """This path's value of each phi'd variable, converted to the joined type here."""
        values = {}
        for name, (ty, is_phi) in joined.items():
            if is_phi:
                current, value = self.env[name]
                values[name] = self.cast(value, current, ty)
        return values

    def merge(self, joined: dict, incoming: list, block: ir.Block) -> None:
        """Make the env at the start of `block` from the (env, outgoing values, predecessor)
        of each path reaching it: one phi per variable the typer joined with a phi."""
        self.builder.position_at_end(block)
        base = incoming[0][0]
        env = {}
        for name, (ty, is_phi) in joined.items():
            if not is_phi:
                env[name] = base[name]
                continue
            phi = self.builder.phi(self.context.get_value_type(ty), name=name)
            for _, values, predecessor in incoming:
                phi.add_incoming(values[name], predecessor)
            env[name] = (ty, phi)
        self.env = env

    def leave(self, joined: dict, target: ir.Block) -> tuple:
        """Branch to `target` from here; returns (env, outgoing values, this block)."""
        values = self.outgoing(joined)
        block = self.builder.block
        self.builder.branch(target)
        return (self.env, values, block)

    # --- statements -----------------------------------------------------------------------

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

    # --- expressions ----------------------------------------------------------------------

    def expr(self, node) -> ir.Value:
        return getattr(self, "expr_" + type(node).__name__)(node)

    def constant(self, ty, value) -> ir.Value:
        return self.context.get_constant_generic(self.builder, ty, value)

    def expr_Constant(self, node):
        return self.constant(self.typed.types[node], node.value)

    def expr_Name(self, node):
        if (node, "value") in self.facts:
            return self.constant(self.typed.types[node], self.facts[(node, "value")])
        return self.env[node.id][1]

    def expr_Attribute(self, node):
        ty = self.typed.types[node]
        if (node, "value") in self.facts:
            if isinstance(ty, types.Dummy):
                return self.context.get_dummy_value()
            return self.constant(ty, self.facts[(node, "value")])
        base_type = self.typed.types[node.value]
        base = self.expr(node.value)
        if isinstance(base_type, types.Array) and node.attr in _ARRAY_FIELDS:
            value = self.array_field(base_type, base, _ARRAY_FIELDS[node.attr])
            if isinstance(value, list):
                value = cgutils.pack_array(self.builder, value, _INTP)
            return value
        impl = self.context.get_getattr(base_type, node.attr)
        if impl is None:
            return self.context.get_dummy_value()
        attribute_type = self.context.typing_context.resolve_getattr(base_type, node.attr)
        (base,) = self.plain((base,))
        value = impl(self.context, self.builder, base_type, base, node.attr)
        return self.cast(value, attribute_type, ty)

    def array_field(self, aryty, ary, field: str):
        """A field of an array (a list of values for shape and strides)."""
        if not isinstance(ary, ArrayParts):
            model = self.context.data_model_manager[aryty]
            ary = ArrayParts.of_struct(self.builder, aryty, ary, model)
        return ary.field(self.builder, field)

    def expr_BinOp(self, node):
        fnty, signature = self.facts[(node, "op")]
        left = self.expr(node.left)
        right = self.expr(node.right)
        return self.binop(fnty, signature, left, self.typed.types[node.left], right, node.right)

    def expr_UnaryOp(self, node):
        fnty, signature = self.facts[(node, "op")]
        value = self.context.cast(
            self.builder, self.expr(node.operand), self.typed.types[node.operand], signature.args[0]
        )
        return self.implementation(fnty, signature)(self.builder, self.plain((value,)))

    def expr_Compare(self, node):
        if len(node.ops) == 1:
            left, right = self.expr(node.left), self.expr(node.comparators[0])
            return self.comparison(node, 0, left, node.left, right, node.comparators[0])
        return self.compare_chain(node)

    def expr_BoolOp(self, node):
        """`a and b`: a if it is false, else b (`or`: a if it is true), as one joined type."""
        ty = self.typed.types[node]
        done, incoming = self.new_block("boolop.end"), []
        for index, value_node in enumerate(node.values):
            value = self.expr(value_node)
            value_type = self.typed.types[value_node]
            if index == len(node.values) - 1:
                self.converted_edge(value, value_type, ty, done, incoming)
                break
            converted = self.cast(value, value_type, ty)
            incoming.append((converted, self.builder.block))
            next_block = self.new_block("boolop.next")
            if isinstance(node.op, ast.And):
                self.branch_on(value_node, "bool", value, value_type, next_block, done)
            else:
                self.branch_on(value_node, "bool", value, value_type, done, next_block)
            self.builder.position_at_end(next_block)
        return self.joined_value(ty, incoming, done)

    def expr_IfExp(self, node):
        ty = self.typed.types[node]
        then_block, else_block = self.new_block("ifexp.then"), self.new_block("ifexp.else")
        done, incoming = self.new_block("ifexp.end"), []
        self.condition(node.test, then_block, else_block)
        reached = self.facts[(node.test, "reached")]
        for block, value_node, on in zip(
            (then_block, else_block), (node.body, node.orelse), reached
        ):
            self.builder.position_at_end(block)
            if not on:
                self.builder.unreachable()
                continue
            value = self.expr(value_node)
            self.converted_edge(value, self.typed.types[value_node], ty, done, incoming)
        return self.joined_value(ty, incoming, done)

    def expr_Tuple(self, node):
        values = [self.expr(e) for e in node.elts]
        return self.context.make_tuple(self.builder, self.typed.types[node], values)

    def expr_Call(self, node):
        fnty, signature = self.facts[(node, "call")]
        args = [self.expr(a) for a in node.args]
        kws = {k.arg: self.expr(k.value) for k in node.keywords}
        values = self.fold_arguments(signature, node, args, kws)
        impl = self.implementation(fnty, signature)
        result = impl(self.builder, self.plain(values), self.loc)
        if result is None:
            if signature.return_type != types.void:
                raise Unsupported("an implementation returned no value")
            result = self.context.get_dummy_value()
        return self.parts(result, signature.return_type)

    def parts(self, value, ty):
        """An array an implementation returned, as its fields."""
        if isinstance(ty, types.Array):
            model = self.context.data_model_manager[ty]
            return ArrayParts.of_struct(self.builder, ty, value, model)
        return value

    def fold_arguments(self, signature, node, args, kws) -> list:
        """The call's argument values in signature order, as Numba's fold_call_args."""
        arg_types = [self.typed.types[a] for a in node.args]
        kw_types = {k.arg: self.typed.types[k.value] for k in node.keywords}
        if signature.pysig is None:
            if kws:
                raise Unsupported("keyword arguments to a function without a Python signature")
            return [
                self.cast(v, t, formal) for v, t, formal in zip(args, arg_types, signature.args)
            ]

        def normal(index, param, pair):
            value, ty = pair
            return self.cast(value, ty, signature.args[index])

        def default(index, param, default):
            return self.context.get_constant_generic(self.builder, signature.args[index], default)

        def stararg(index, param, pairs):
            packed = signature.args[index]
            values = [self.cast(v, t, formal) for (v, t), formal in zip(pairs, packed)]
            return cgutils.make_anonymous_struct(self.builder, self.plain(values))

        return typing.fold_arguments(
            signature.pysig,
            list(zip(args, arg_types)),
            {k: (kws[k], kw_types[k]) for k in kws},
            normal,
            default,
            stararg,
        )

    def expr_Subscript(self, node):
        return self.getitem(node, self.expr(node.value), self.index(node))

    # --- subscripts -----------------------------------------------------------------------

    def index(self, node) -> list:
        """The subscript's index as (value, type) pairs: one per element of a tuple written
        out (`a[i, j]`), else one for the whole index."""
        if isinstance(node.slice, ast.Tuple):
            return [(self.expr(e), self.typed.types[e]) for e in node.slice.elts]
        return [(self.expr(node.slice), self.typed.types[node.slice])]

    def index_value(self, node, index: list, formal) -> ir.Value:
        """The index as one value of type `formal`, as Numba's build_tuple and cast make it."""
        if isinstance(node.slice, ast.Tuple):
            built = self.context.make_tuple(
                self.builder, self.typed.types[node.slice], [v for v, _ in index]
            )
            return self.cast(built, self.typed.types[node.slice], formal)
        ((value, ty),) = index
        return self.cast(value, ty, formal)

    def item_pointer(self, node, base, index: list, signature):
        """The element's address where a[...] names one element by one integer per dimension
        (else None): Numba's basic_indexing, with the same helpers, reading the array's fields
        from its value instead of from a copy on the stack (make_array)."""
        aryty, formal = signature.args[0], signature.args[1]
        if isinstance(formal, types.Integer):
            formals = (formal,)
        elif isinstance(formal, types.BaseTuple):
            formals = tuple(formal.types)
        else:
            return None
        if (
            not isinstance(aryty, types.Array)
            or len(formals) != aryty.ndim
            or not all(isinstance(t, types.Integer) for t in formals)
        ):
            return None
        if isinstance(node.slice, ast.Tuple) or len(formals) == 1:
            indices = [self.cast(v, t, f) for (v, t), f in zip(index, formals)]
        else:  # a tuple held in one value
            value = self.index_value(node, index, formal)
            indices = [self.builder.extract_value(value, k) for k in range(len(formals))]
        data = self.array_field(aryty, base, "data")
        shapes = self.array_field(aryty, base, "shape")
        # get_item_pointer2 reads the strides of an "A" array only (others are contiguous)
        steps = self.array_field(aryty, base, "strides") if aryty.layout == "A" else []
        fixed = [
            arrayobj.fix_integer_index(self.context, self.builder, t, v, shapes[k])
            for k, (t, v) in enumerate(zip(formals, indices))
        ]
        return cgutils.get_item_pointer2(
            self.context, self.builder, data, shapes, steps, aryty.layout, fixed
        )

    def static_getitem(self, base, base_type, index, signature):
        static = typing.signature(signature.return_type, base_type, types.literal(index))
        impl = self.implementation("static_getitem", static)
        return impl(self.builder, (*self.plain((base,)), index))

    def getitem(self, node, base, index: list) -> ir.Value:
        kind, found, constant = self.facts[(node, "getitem")]
        base_type = self.typed.types[node.value]
        if kind == "static":
            return self.static_getitem(base, base_type, constant, found)
        fnty, signature = found
        base = self.cast(base, base_type, signature.args[0])
        pointer = None
        if signature.return_type == getattr(signature.args[0], "dtype", None):
            pointer = self.item_pointer(node, base, index, signature)
        if pointer is not None:
            result = arrayobj.load_item(self.context, self.builder, signature.args[0], pointer)
        else:
            value = self.index_value(node, index, signature.args[1])
            impl = self.implementation(fnty, signature)
            result = self.parts(
                impl(self.builder, self.plain((base, value))), signature.return_type
            )
        return self.context.cast(
            self.builder, result, signature.return_type, self.typed.types[node]
        )

    def store_subscript(self, node, value, value_type) -> None:
        base = self.expr(node.value)
        self.setitem(node, base, self.index(node), value, value_type)

    def setitem(self, node, base, index: list, value, value_type) -> None:
        kind, signature, constant = self.facts[(node, "setitem")]
        value = self.cast(value, value_type, signature.args[2])
        if kind == "static":
            impl = self.implementation("static_setitem", signature)
            (base,) = self.plain((base,))
            impl(self.builder, (base, constant, value))
            return
        aryty = signature.args[0]
        pointer = self.item_pointer(node, base, index, signature)
        if pointer is not None:  # Numba's setitem_array for one element
            value = self.cast(value, signature.args[2], aryty.dtype)
            arrayobj.store_item(self.context, self.builder, aryty, value, pointer)
            return
        index_value = self.index_value(node, index, signature.args[1])
        fnty = self.context.typing_context.resolve_value_type(operator.setitem)
        impl = self.implementation(fnty, signature)
        impl(self.builder, self.plain((base, index_value, value)))
