"""Lowering of expressions for the direct front end: constants, names, operators, calls,
attributes and subscripts (a mixin of lowerer.Lowerer)."""

from __future__ import annotations

import ast
import operator

from llvmlite import ir
from numba.core import cgutils, types, typing
from numba.np import arrayobj

from .array_parts import _ARRAY_FIELDS, _INTP, ArrayParts
from .errors import Unsupported

#: The index arithmetic index_expr computes without wrap-around.
_INDEX_OPERATIONS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul"}


class ExpressionLowering:
    """Expressions: each returns the LLVM value of the node."""

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
        if (node, "method") in self.facts:  # an item's index method (typing_expressions.py)
            fnty, signature = self.facts[(node, "method")]
            receiver = self.expr(node.func.value)
            args = [
                self.cast(self.expr(a), self.typed.types[a], formal)
                for a, formal in zip(node.args, signature.args)
            ]
            return self.implementation(fnty, signature)(self.builder, [receiver, *args], self.loc)
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
            return [(self.index_expr(e), self.typed.types[e]) for e in node.slice.elts]
        return [(self.index_expr(node.slice), self.typed.types[node.slice])]

    def index_expr(self, node) -> ir.Value:
        """An index written in a subscript: its signed integer `+`, `-` and `*` without
        wrap-around (`nsw`), so that LLVM sees `a[j + 1]` follow `a[j]` and vectorises loops
        over it. An index that overflows is out of bounds either way; integer arithmetic
        anywhere else wraps (compiler/arithmetic.py)."""
        operation = _INDEX_OPERATIONS.get(type(getattr(node, "op", None)))
        result_type = self.typed.types.get(node)
        if not (
            isinstance(node, ast.BinOp)
            and operation is not None
            and isinstance(result_type, types.Integer)
            and result_type.signed
        ):
            return self.expr(node)
        _, signature = self.facts[(node, "op")]
        left = self.cast(self.index_expr(node.left), self.typed.types[node.left], signature.args[0])
        right = self.cast(
            self.index_expr(node.right), self.typed.types[node.right], signature.args[1]
        )
        value = getattr(self.builder, operation)(left, right, flags=["nsw"])
        return self.cast(value, signature.return_type, result_type)

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
