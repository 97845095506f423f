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

from llvmlite import ir
from numba.core import ir as numba_ir
from numba.core import types

from ..entry import ArrayFields, declare_kernel, kernel_arguments
from .array_parts import _INTP, ArrayParts
from .lowering_expressions import ExpressionLowering
from .lowering_statements import StatementLowering
from .typer import Typed


class Lowerer(StatementLowering, ExpressionLowering):
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

    def run(self, symbol: str, noalias: bool = False) -> ir.Function:
        """Emit the function as the spir_kernel `symbol` (`noalias`: declare_kernel)."""
        context = self.context
        source = self.typed.source
        self.function = declare_kernel(
            context, self.module, symbol, self.typed.argtypes, False, noalias
        )
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
