"""print() in kernels: one OpenCL printf per call, strings in constant memory."""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types

from .registry import lowering_registry
from .spirv import CONSTANT

_I64 = ir.IntType(64)


def _constant_string(builder: ir.IRBuilder, text: str) -> ir.Value:
    """A pointer to `text` in constant memory, as OpenCL printf wants its strings.

    The array starts with one spare byte and the pointer is to element 1: a pointer to the
    array's start would fold to the array itself, which the SPIR-V validator refuses.
    """
    data = bytearray(b"\0" + text.encode() + b"\0")
    array_type = ir.ArrayType(ir.IntType(8), len(data))
    module = builder.module
    variable = ir.GlobalVariable(
        module, array_type, module.get_unique_name("dpex.str"), addrspace=CONSTANT
    )
    variable.linkage = "internal"
    variable.global_constant = True
    variable.initializer = ir.Constant(array_type, data)
    zero, one = ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), 1)
    return builder.gep(variable, [zero, one], inbounds=True)


def _print_piece(context, builder, argtype, value) -> tuple[str, list]:
    """The printf conversion for one print() argument and the values it consumes."""
    double = ir.DoubleType()
    if isinstance(argtype, types.StringLiteral):
        return argtype.literal_value.replace("%", "%%"), []
    if isinstance(argtype, types.Boolean):
        text = builder.select(
            value, _constant_string(builder, "True"), _constant_string(builder, "False")
        )
        return "%s", [text]
    if isinstance(argtype, types.Integer):
        wide = builder.sext(value, _I64) if argtype.signed else builder.zext(value, _I64)
        if argtype.bitwidth == 64:
            wide = value
        return ("%ld" if argtype.signed else "%lu"), [wide]
    if isinstance(argtype, types.Float):
        return "%g", [builder.fpext(value, double) if argtype.bitwidth < 64 else value]
    if isinstance(argtype, types.Complex):
        pair = context.make_complex(builder, argtype, value)
        parts = [pair.real, pair.imag]
        if argtype.underlying_float.bitwidth < 64:
            parts = [builder.fpext(part, double) for part in parts]
        return "(%g%+gj)", parts
    raise NotImplementedError(
        f"print() of {argtype} inside a kernel: kernels print scalars and string constants only"
    )


@lowering_registry.lower(print, types.VarArg(types.Any))
def _lower_print(context, builder, sig, args):
    """print(a, b, ...) as one OpenCL printf, so lines of different work-items do not mix."""
    pieces, values = [], []
    for argtype, value in zip(sig.args, args):
        piece, consumed = _print_piece(context, builder, argtype, value)
        pieces.append(piece)
        values.extend(consumed)
    format_string = _constant_string(builder, " ".join(pieces) + "\n")
    fnty = ir.FunctionType(ir.IntType(32), [format_string.type], var_arg=True)
    printf = cgutils.get_or_insert_function(builder.module, fnty, "printf")
    printf.calling_convention = "spir_func"
    builder.call(printf, [format_string, *values], cconv="spir_func")
    return context.get_dummy_value()
