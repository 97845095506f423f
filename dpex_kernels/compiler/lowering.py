"""The spir_kernel entry: flattened scalar arguments in, Numba's array structs rebuilt, call.

Each kernel parameter becomes a short run of scalar kernel arguments (its *flattening*):
  usm_array: global data pointer, byte offset of element 0, shape[ndim], and strides[ndim]
             (bytes) for layout "A" only: "C" and "F" strides are recomputed from the shape;
  bool:      one i8;
  complex:   its real and imaginary parts;
  other scalars: themselves.
The numba-free launch path packs arguments in the same order without reading this module
(types/arguments.py builds each array's run, dispatcher/launch.py each scalar's); the tests
launch every kind of parameter, so a change on one side alone fails them.
"""

from __future__ import annotations

import re

from llvmlite import ir
from numba.core import types
from numba.np.arrayobj import populate_array

from ..types.usm_array_type import USMArrayType
from .target import GLOBAL, SYCLTargetContext

_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)

#: The kind of a flattened array's data pointer; every other array field is an "int64".
POINTER = "pointer"


def flattening(argtype: types.Type) -> list[str]:
    """The kernel-argument kinds one parameter flattens to (see the module docstring)."""
    if isinstance(argtype, USMArrayType):
        count = 2 + argtype.ndim + (argtype.ndim if argtype.layout == "A" else 0)
        return [POINTER] + ["int64"] * (count - 1)
    if isinstance(argtype, types.Boolean):
        return ["bool"]
    if isinstance(argtype, types.Complex):
        part = str(argtype.underlying_float)
        return [part, part]
    return [str(argtype)]


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


def _rebuild_array(context: SYCLTargetContext, builder, argtype: USMArrayType, values):
    """Numba's array struct from one array's flattened arguments."""
    data, offset = values[0], values[1]
    ndim = argtype.ndim
    shape = list(values[2 : 2 + ndim])
    itemsize = context.get_abi_sizeof(context.get_data_type(argtype.dtype))
    if argtype.layout == "A":
        strides = list(values[2 + ndim : 2 + 2 * ndim])
    else:
        strides = _contiguous_strides(builder, shape, itemsize, argtype.layout)
    element0 = builder.gep(data, [offset], inbounds=True)
    element_type = context.get_data_type(argtype.dtype)
    typed = builder.bitcast(element0, element_type.as_pointer(GLOBAL))
    array = context.make_array(argtype)(context, builder)
    populate_array(array, data=typed, shape=shape, strides=strides, itemsize=itemsize, meminfo=None)
    return array._getvalue()


def _llvm_type(context: SYCLTargetContext, kind: str):
    if kind == POINTER:
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
    kinds = [flattening(t) for t in argtypes]
    params = [_llvm_type(context, k) for ks in kinds for k in ks]
    if error_flag:
        params.append(_I32.as_pointer(GLOBAL))
    module = context.create_module(symbol)
    entry = ir.Function(module, ir.FunctionType(ir.VoidType(), params), symbol)
    entry.calling_convention = "spir_kernel"
    builder = ir.IRBuilder(entry.append_basic_block("entry"))

    values = iter(entry.args)
    call_args = []
    for argtype, arg_kinds in zip(argtypes, kinds):
        flat = [next(values) for _ in arg_kinds]
        if isinstance(argtype, USMArrayType):
            call_args.append(_rebuild_array(context, builder, argtype, flat))
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
