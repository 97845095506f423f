"""The spir_kernel entry: flattened scalar arguments in, Numba's array structs rebuilt, call.

How each parameter flattens into kernel arguments is types/params.py's table; this module turns
each slot into an LLVM parameter and rebuilds Numba's values from them.
"""

from __future__ import annotations

import re

from llvmlite import ir
from numba.core import types
from numba.np.arrayobj import populate_array

from ..types import params
from ..types.usm_array_type import USMArrayType
from .target import GLOBAL, SYCLTargetContext

_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def param_of(argtype: types.Type):
    """The numba-free description types/params.py reads: an ArraySpec or a scalar name."""
    return argtype.spec if isinstance(argtype, USMArrayType) else str(argtype)


def kernel_symbol(name: str) -> str:
    """A SPIR-V entry-point name derived from the Python function name."""
    return "dpex_kernel_" + re.sub(r"\W", "_", name)


def _contiguous_strides(builder, shape, itemsize: int, layout: str) -> list:
    strides = [None] * len(shape)
    step = ir.Constant(_I64, itemsize)
    order = reversed(range(len(shape))) if layout == "C" else range(len(shape))
    for axis in order:
        strides[axis] = step
        step = builder.mul(step, shape[axis])
    return strides


def _rebuild_array(context: SYCLTargetContext, builder, argtype: USMArrayType, run, values):
    """Numba's array struct from one array's slots (`run`) and their argument values."""
    by_field: dict = {}
    for slot, value in zip(run, values):
        by_field.setdefault(slot.field, []).append(value)
    itemsize = context.get_abi_sizeof(context.get_data_type(argtype.dtype))
    shape = by_field.get(params.SHAPE, [])
    strides = by_field.get(params.STRIDE) or _contiguous_strides(
        builder, shape, itemsize, argtype.layout
    )
    element_type = context.get_data_type(argtype.dtype)
    (data,) = by_field[params.DATA]
    typed = builder.bitcast(data, element_type.as_pointer(GLOBAL))
    array = context.make_array(argtype)(context, builder)
    populate_array(array, data=typed, shape=shape, strides=strides, itemsize=itemsize, meminfo=None)
    return array._getvalue()


def _llvm_type(context: SYCLTargetContext, kind: str):
    if kind == params.POINTER:
        return _I8.as_pointer(GLOBAL)
    if kind == "bool":
        return _I8
    return context.get_value_type(getattr(types, kind))


def build_kernel_entry(context: SYCLTargetContext, fndesc, symbol: str, library, error_flag: bool):
    """Add a module to `library` holding the spir_kernel `symbol` that calls `fndesc`.

    With `error_flag`, the entry takes one more argument, the launch's error record
    (errors.py), which receives the status of the first work-item whose code raised.
    """
    argtypes = list(fndesc.argtypes)
    slots = [params.param_slots(i, param_of(t)) for i, t in enumerate(argtypes)]
    llvm_params = [_llvm_type(context, slot.kind) for run in slots for slot in run]
    if error_flag:
        llvm_params.append(_I32.as_pointer(GLOBAL))
    module = context.create_module(symbol)
    entry = ir.Function(module, ir.FunctionType(ir.VoidType(), llvm_params), symbol)
    entry.calling_convention = "spir_kernel"
    builder = ir.IRBuilder(entry.append_basic_block("entry"))

    values = iter(entry.args)
    call_args = []
    for argtype, run in zip(argtypes, slots):
        flat = [next(values) for _ in run]
        if isinstance(argtype, USMArrayType):
            call_args.append(_rebuild_array(context, builder, argtype, run, flat))
        elif isinstance(argtype, types.Boolean):
            call_args.append(builder.icmp_unsigned("!=", flat[0], ir.Constant(_I8, 0)))
        elif isinstance(argtype, types.Complex):
            pair = context.make_complex(builder, argtype)
            pair.real, pair.imag = flat
            call_args.append(pair._getvalue())
        else:
            call_args.append(flat[0])

    callee = context.declare_function(module, fndesc)
    record = entry.args[-1] if error_flag else None
    status, _ = context.call_conv.call_function(
        builder, callee, types.void, argtypes, call_args, error_record=record
    )
    if error_flag:
        context.call_conv.store_status(builder, record, status)
    builder.ret_void()
    library.add_ir_module(module)
    return entry
