"""The spir_kernel entry: flattened scalar arguments in, Numba's array structs rebuilt, call.

How each parameter flattens into kernel arguments is types/params.py's table; this module turns
each slot into an LLVM parameter and rebuilds Numba's values from them.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from llvmlite import ir
from numba.core import types
from numba.np.arrayobj import populate_array

from ...types import params
from ...types.usm_array_type import USMArrayType, param_of
from ..kernel_api.memory import LocalAccessorType
from ..kernel_api.spirv import LOCAL
from ..target import GLOBAL, SYCLTargetContext

_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def kernel_symbol(name: str) -> str:
    """A SPIR-V entry-point name derived from the Python function name."""
    return "dpex_kernel_" + re.sub(r"\W", "_", name)


def contiguous_strides(builder, shape, itemsize: int, layout: str) -> list:
    """The byte strides of a C- or F-contiguous array of `shape`."""
    strides = [None] * len(shape)
    step = ir.Constant(_I64, itemsize)
    order = reversed(range(len(shape))) if layout == "C" else range(len(shape))
    for axis in order:
        strides[axis] = step
        step = builder.mul(step, shape[axis])
    return strides


class ArrayFields(NamedTuple):
    """The fields of Numba's array struct for one array parameter, as separate values
    (`strides` None for a C- or F-contiguous array: contiguous_strides computes them)."""

    data: ir.Value
    shape: list
    strides: list | None
    itemsize: int


def _array_fields(context: SYCLTargetContext, builder, argtype, run, values) -> ArrayFields:
    by_field: dict = {}
    for slot, value in zip(run, values):
        by_field.setdefault(slot.field, []).append(value)
    element_type = context.get_data_type(argtype.dtype)
    itemsize = context.get_abi_sizeof(element_type)
    if isinstance(argtype, LocalAccessorType):  # work-group memory, sized at launch
        (data,) = by_field[params.LOCAL]
        typed = builder.bitcast(data, element_type.as_pointer(LOCAL))
        return ArrayFields(typed, by_field[params.LOCAL_SHAPE], None, itemsize)
    shape = by_field.get(params.SHAPE, [])
    strides = by_field.get(params.STRIDE)
    (data,) = by_field[params.DATA]
    typed = builder.bitcast(data, element_type.as_pointer(GLOBAL))
    return ArrayFields(typed, shape, strides, itemsize)


def _llvm_type(context: SYCLTargetContext, kind: str):
    if kind == params.POINTER:
        return _I8.as_pointer(GLOBAL)
    if kind == params.LOCAL_MEMORY:
        return _I8.as_pointer(LOCAL)
    if kind == "bool":
        return _I8
    return context.get_value_type(getattr(types, kind))


def declare_kernel(
    context: SYCLTargetContext,
    module,
    symbol: str,
    argtypes,
    error_flag: bool,
    noalias: bool = False,
):
    """The spir_kernel `symbol`: one LLVM parameter per slot of each parameter (types/params.py)
    and, with `error_flag`, the launch's error record (errors.py) last; with `noalias`, the
    arrays' data pointers `noalias` (CompileOptions.noalias)."""
    slots = [slot for i, t in enumerate(argtypes) for slot in params.param_slots(i, param_of(t))]
    llvm_params = [_llvm_type(context, slot.kind) for slot in slots]
    if error_flag:
        llvm_params.append(_I32.as_pointer(GLOBAL))
    entry = ir.Function(module, ir.FunctionType(ir.VoidType(), llvm_params), symbol)
    entry.calling_convention = "spir_kernel"
    if noalias:
        for argument, slot in zip(entry.args, slots):
            if slot.kind == params.POINTER:
                argument.add_attribute("noalias")
    return entry


def kernel_arguments(context: SYCLTargetContext, builder, entry, argtypes) -> list:
    """Each parameter's value read from its slots: an ArrayFields for an array, else the
    Numba value of the scalar."""
    values = iter(entry.args)
    arguments = []
    for position, argtype in enumerate(argtypes):
        run = params.param_slots(position, param_of(argtype))
        flat = [next(values) for _ in run]
        if isinstance(argtype, (USMArrayType, LocalAccessorType)):
            arguments.append(_array_fields(context, builder, argtype, run, flat))
        elif param_of(argtype) == params.ITEM:  # the work-item's ids are read where used
            arguments.append(context.get_dummy_value())
        elif isinstance(argtype, types.Boolean):
            arguments.append(builder.icmp_unsigned("!=", flat[0], ir.Constant(_I8, 0)))
        elif isinstance(argtype, types.Complex):
            pair = context.make_complex(builder, argtype)
            pair.real, pair.imag = flat
            arguments.append(pair._getvalue())
        else:
            arguments.append(flat[0])
    return arguments


def build_kernel_entry(
    context: SYCLTargetContext, fndesc, symbol: str, library, error_flag: bool, noalias: bool
):
    """Add a module to `library` holding the spir_kernel `symbol` that calls `fndesc`.

    With `error_flag`, the entry takes one more argument, the launch's error record
    (errors.py), which receives the status of the first work-item whose code raised; with
    `noalias`, the arrays' data pointers are `noalias` (declare_kernel).
    """
    argtypes = list(fndesc.argtypes)
    module = context.create_module(symbol)
    entry = declare_kernel(context, module, symbol, argtypes, error_flag, noalias)
    builder = ir.IRBuilder(entry.append_basic_block("entry"))
    call_args = []
    for argtype, value in zip(argtypes, kernel_arguments(context, builder, entry, argtypes)):
        if isinstance(value, ArrayFields):
            array = context.make_array(argtype)(context, builder)
            strides = value.strides or contiguous_strides(
                builder, value.shape, value.itemsize, argtype.layout
            )
            populate_array(
                array,
                data=value.data,
                shape=value.shape,
                strides=strides,
                itemsize=value.itemsize,
                meminfo=None,
            )
            value = array._getvalue()
        call_args.append(value)
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
