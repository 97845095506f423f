"""Typing of expressions for the direct front end: names, operators, calls, attributes and
subscripts, each resolved by Numba's typing context (a mixin of typer.Typer)."""

from __future__ import annotations

import ast
import operator

import numpy as np
from numba.core import types

from ...kernel_api.items import METHODS, ItemType
from ...kernel_api.registry import constant_argument, is_kernel_api
from .errors import Unsupported
from .source import BINARY, UNARY
from .typed import COMPARE, NOT_CONSTANT, Env

#: The item's methods this front end compiles: those reading its ids and ranges.
ITEM_INDEX_METHODS = METHODS[ItemType] - {"get_group", "get_sub_group"}


class ExpressionTyping:
    """Expressions: each returns the node's type and records it."""

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

    def constant_argument(self, node, ty):
        """A kernel API argument that is a constant as the literal it is (registry.py)."""
        literal = constant_argument(self.pre_ssa_constant(node))
        if literal is None or isinstance(ty, types.Literal):
            return ty
        self.fact(node, "value", literal)
        ty = self.out.types[node] = types.IntegerLiteral(literal)
        return ty

    def expr_Call(self, node, env):
        if isinstance(node.func, ast.Attribute) and node.func.attr in ITEM_INDEX_METHODS:
            receiver = self.expr(node.func.value, env)
            if isinstance(receiver, ItemType):
                return self.item_method_call(node, receiver, env)
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
        if is_kernel_api(self.out.facts.get((node.func, "value"))):
            args = tuple(self.constant_argument(a, t) for a, t in zip(node.args, args))
            kws = {k.arg: self.constant_argument(k.value, kws[k.arg]) for k in node.keywords}
        signature = self.resolve(callee, args, kws)
        if signature.recvr is not None or isinstance(signature.return_type, types.Phantom):
            raise Unsupported("a bound or phantom call")
        self.fact(node, "call", (callee, signature))
        self.note(
            node,
            lambda: f"call {ast.unparse(node.func)}{signature.args} -> {signature.return_type}",
        )
        return signature.return_type

    def item_method_call(self, node, receiver, env):
        """`item.get_id(0)` and the item's other index methods, on the kernel's item: they read
        the placeholders the free functions read (items.py), so both forms give one code.
        (Its group and sub-group are Numba's front end's, which checks that group algorithms
        run in converged control flow.)"""
        if node.keywords:
            raise Unsupported("keyword arguments to an item's method")
        callee = self.ctx.resolve_getattr(receiver, node.func.attr)
        args = tuple(self.constant_argument(a, self.expr(a, env)) for a in node.args)
        signature = self.resolve(callee, args)
        self.fact(node, "method", (callee, signature))
        self.note(node, lambda: f"call {ast.unparse(node.func)}{args} -> {signature.return_type}")
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

    from ...functions import DeviceFunction

    if any(value is b for b in _BUILTINS):
        return True
    if isinstance(value, (types.Number, types.Boolean, np.ufunc, DeviceFunction, Dispatcher)):
        return True
    if isinstance(value, type) and issubclass(value, np.generic):
        return True
    module = getattr(value, "__module__", None)
    return module in ("math", "cmath") and callable(value) or is_kernel_api(value)
