"""Launching kernels from @numba.njit host code (API.md §2, docs/compiled-launch.md).

Inside a CPU @njit function:
- dpnp arrays and usm_ndarrays are `usm_array`s (types/inference.py's typeof), unboxed from their C
  structs (the array object stays the Numba array's parent, so launches can keep it alive);
- `kernel[range]` of a dk kernel is a launcher value (the range's sizes), for ranges given as an
  int, a tuple, `dk.Range(...)` or `dk.NdRange(global, local)`, constant or computed;
- calling it is type-checked against the kernel's signatures when the host function compiles
  (a lazy kernel compiles for the argument types there), and at run time goes through the same
  compiled launcher as a Python launch (_launcher.c: ordering with dpnp, keep-alive);
- the result is an event: `.wait()` works in compiled code, and returned to Python it is a
  `dpctl.SyclEvent`. In compiled code an event is the launch's position in the keep-alive ring,
  a plain integer, so events need no reference counting.
"""

from __future__ import annotations

import operator

import dpnp
import dpnp.tensor
import llvmlite.binding as ll
from llvmlite import ir
from numba.core import cgutils, errors, types
from numba.core.datamodel import models
from numba.core.extending import (
    NativeValue,
    box,
    intrinsic,
    lower_builtin,
    overload_method,
    register_model,
    typeof_impl,
    unbox,
)
from numba.core.typing.templates import AbstractTemplate, infer_global, signature

from ..compiler import patches
from ..types import inference, params
from ..types.ranges import NdRange, Range
from ..types.spec import ArraySpec
from ..types.usm_array_type import USMArrayType
from ._native import launcher
from .launch import KernelBase

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_PTR = ir.IntType(8).as_pointer()

for _name, _address in launcher.c_functions().items():
    ll.add_symbol(_name, _address)


# --- types --------------------------------------------------------------------------------------


class KernelType(types.Opaque):
    """A dk kernel seen from compiled code (always a global: its object is embedded)."""

    def __init__(self, kernel: KernelBase):
        self.kernel = kernel  # kept alive as long as compiled code may launch it
        super().__init__(name=f"dk.kernel({kernel.__name__} at {id(kernel):#x})")

    @property
    def key(self):
        return id(self.kernel)


class NdRangeType(types.Type):
    """dk.NdRange(global_range, local_range) in compiled code."""

    def __init__(self, ndim: int):
        self.ndim = ndim
        super().__init__(name=f"dk.NdRange({ndim}d)")


class LauncherType(types.Callable):
    """kernel[range] in compiled code; calling it launches."""

    def __init__(self, kernel_type: KernelType, ndim: int, nd_range: bool):
        self.kernel_type = kernel_type
        self.ndim = ndim
        self.nd_range = nd_range
        kind = "NdRange" if nd_range else "Range"
        super().__init__(name=f"{kernel_type.kernel.__name__}[{kind} {ndim}d]")

    @property
    def key(self):
        return (self.kernel_type, self.ndim, self.nd_range)

    def get_call_type(self, context, args, kws):
        if kws:
            raise errors.TypingError(
                f"kernel '{self.kernel_type.kernel.__name__}' launched from compiled code takes "
                f"its arguments by position only; got keyword(s) {', '.join(kws)}"
            )
        args = tuple(types.unliteral(a) for a in args)
        check_launch(self.kernel_type.kernel, args)
        return signature(SYCL_EVENT, *args, recvr=self)

    def get_call_signatures(self):
        return [], True

    def get_impl_key(self, sig):
        return type(self)


class SyclEventType(types.Type):
    """A launch's event in compiled code: its position in the keep-alive ring."""

    def __init__(self):
        super().__init__(name="dk.SyclEvent")


SYCL_EVENT = SyclEventType()


@register_model(KernelType)
class _KernelModel(models.OpaqueModel):
    pass


@register_model(SyclEventType)
class _EventModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _I64)


def _range_members(ndim: int):
    sizes = types.UniTuple(types.int64, ndim)
    return [("global_size", sizes), ("local_size", sizes)]


@register_model(NdRangeType)
class _NdRangeModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _range_members(fe_type.ndim))


@register_model(LauncherType)
class _LauncherModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _range_members(fe_type.ndim))


# --- typeof and unboxing: what crosses from Python ---------------------------------------------


_array_types: dict[tuple, types.Type] = {}


def _typeof_usm_array(value, context) -> types.Type:
    """usm_array of a dpnp array or usm_ndarray, remembered per what decides it.

    Numba types every argument of every call of a compiled function: reading the array's
    attributes in Python each time cost ~12 us per array.
    """
    key = launcher.array_key(value)
    found = _array_types.get(key)
    if found is None:
        found = inference.typeof(value)
        if key is not None:
            _array_types[key] = found
    return found


def _known_usm_array_type(value) -> types.Type | None:
    """The usm_array of an array whose kind was typed before, or None."""
    return _array_types.get(launcher.array_key(value))


for _cls in (dpnp.ndarray, dpnp.tensor.usm_ndarray):
    typeof_impl.register(_cls)(_typeof_usm_array)
patches.argument_typeof_fast_path(
    dict.fromkeys((dpnp.ndarray, dpnp.tensor.usm_ndarray), _known_usm_array_type)
)


@typeof_impl.register(KernelBase)
def _typeof_kernel(kernel, context):
    return KernelType(kernel)


@typeof_impl.register(NdRange)
def _typeof_nd_range(value, context):
    return NdRangeType(value.ndim)


@unbox(USMArrayType)
def _unbox_usm_array(typ, obj, c):
    array = c.context.make_array(typ)(c.context, c.builder)
    fnty = ir.FunctionType(_I32, [_PTR, _I64.as_pointer(), _I32])
    fn = cgutils.get_or_insert_function(c.builder.module, fnty, "dpex_unbox_usm_array")
    out = c.builder.bitcast(array._getpointer(), _I64.as_pointer())
    status = c.builder.call(fn, [obj, out, ir.Constant(_I32, typ.ndim)])
    is_error = c.builder.icmp_signed("!=", status, ir.Constant(_I32, 0))
    return NativeValue(array._getvalue(), is_error=is_error)


@box(USMArrayType)
def _box_usm_array(typ, value, c):
    """A usm_array returned to Python is the array object it came in as."""
    parent = c.context.make_array(typ)(c.context, c.builder, value).parent
    with c.builder.if_then(cgutils.is_null(c.builder, parent), likely=False):
        c.pyapi.err_set_string(
            "PyExc_TypeError", "compiled code can return only USM arrays passed in from Python"
        )
    c.pyapi.incref(parent)
    return parent


@unbox(NdRangeType)
def _unbox_nd_range(typ, obj, c):
    sizes = types.UniTuple(types.int64, typ.ndim)
    nd_range = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    failed = cgutils.alloca_once_value(c.builder, cgutils.false_bit)
    for member in ("global_range", "local_range"):
        attr = c.pyapi.object_getattr_string(obj, member)
        value = c.unbox(sizes, attr)
        c.pyapi.decref(attr)
        setattr(nd_range, member.replace("range", "size"), value.value)
        c.builder.store(c.builder.or_(c.builder.load(failed), value.is_error), failed)
    return NativeValue(nd_range._getvalue(), is_error=c.builder.load(failed))


@box(SyclEventType)
def _box_event(typ, value, c):
    fnty = ir.FunctionType(_PTR, [_I64])
    fn = cgutils.get_or_insert_function(c.builder.module, fnty, "dpex_event_object")
    return c.builder.call(fn, [value])


# --- ranges built in compiled code ---------------------------------------------------------------


def _sizes_of(range_type) -> int | None:
    """The dimension count of an int or a tuple of 1-3 ints, else None."""
    if isinstance(range_type, types.Integer):
        return 1
    if (
        isinstance(range_type, types.BaseTuple)
        and 1 <= len(range_type) <= 3
        and all(isinstance(t, types.Integer) for t in range_type)
    ):
        return len(range_type)
    return None


@infer_global(Range)
class _TypeRange(AbstractTemplate):
    def generic(self, args, kws):
        if not kws and 1 <= len(args) <= 3 and all(isinstance(t, types.Integer) for t in args):
            return signature(types.UniTuple(types.int64, len(args)), *args)
        return None


@infer_global(NdRange)
class _TypeNdRange(AbstractTemplate):
    def generic(self, args, kws):
        if kws or len(args) != 2:
            return None
        ndim = _sizes_of(args[0])
        if ndim is not None and ndim == _sizes_of(args[1]):
            return signature(NdRangeType(ndim), *args)
        return None


def _int64_sizes(context, builder, typ, value) -> list:
    """An int or a tuple of ints as a list of int64 values."""
    if isinstance(typ, types.Integer):
        return [context.cast(builder, value, typ, types.int64)]
    items = cgutils.unpack_tuple(builder, value, len(typ))
    return [context.cast(builder, v, t, types.int64) for v, t in zip(items, typ)]


def _sizes_tuple(context, builder, values: list):
    return context.make_tuple(builder, types.UniTuple(types.int64, len(values)), values)


@lower_builtin(Range, types.VarArg(types.Integer))
def _lower_range(context, builder, sig, args):
    values = [context.cast(builder, v, t, types.int64) for v, t in zip(args, sig.args)]
    return _sizes_tuple(context, builder, values)


@lower_builtin(NdRange, types.Any, types.Any)
def _lower_nd_range(context, builder, sig, args):
    nd_range = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    nd_range.global_size = _sizes_tuple(
        context, builder, _int64_sizes(context, builder, sig.args[0], args[0])
    )
    nd_range.local_size = _sizes_tuple(
        context, builder, _int64_sizes(context, builder, sig.args[1], args[1])
    )
    return nd_range._getvalue()


# --- kernel[range] ------------------------------------------------------------------------------


@infer_global(operator.getitem)
class _KernelGetItem(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) != 2 or not isinstance(args[0], KernelType):
            return None
        kernel_type, range_type = args
        if isinstance(range_type, NdRangeType):
            return signature(LauncherType(kernel_type, range_type.ndim, True), *args)
        ndim = _sizes_of(range_type)
        if ndim is None:
            raise errors.TypingError(
                f"kernel '{kernel_type.kernel.__name__}': a launch range in compiled code is an "
                f"int, a tuple of 1-3 ints, dk.Range(...) or dk.NdRange(global, local); got "
                f"{range_type}"
            )
        return signature(LauncherType(kernel_type, ndim, False), *args)


@lower_builtin(operator.getitem, KernelType, types.Any)
def _lower_getitem(context, builder, sig, args):
    launcher_type = sig.return_type
    value = cgutils.create_struct_proxy(launcher_type)(context, builder)
    range_type, range_value = sig.args[1], args[1]
    if isinstance(range_type, NdRangeType):
        nd_range = cgutils.create_struct_proxy(range_type)(context, builder, range_value)
        value.global_size = nd_range.global_size
        value.local_size = nd_range.local_size
    else:
        sizes = _int64_sizes(context, builder, range_type, range_value)
        value.global_size = _sizes_tuple(context, builder, sizes)
        value.local_size = _sizes_tuple(context, builder, [ir.Constant(_I64, 0)] * len(sizes))
    return value._getvalue()


# --- the launch ---------------------------------------------------------------------------------


def _param_text(param) -> str:
    return param.describe() if isinstance(param, ArraySpec) else param


def _difference(param, argtype) -> str | None:
    """Why a compiled-code argument of `argtype` cannot be passed as `param`, or None."""
    if isinstance(param, ArraySpec):
        if not isinstance(argtype, USMArrayType):
            if isinstance(argtype, types.Array):
                return "kind (a NumPy array; pass a dpnp array or usm_ndarray)"
            return "kind (array expected)"
        contiguity = "CF" if argtype.ndim <= 1 and argtype.layout != "A" else argtype.layout
        spec = ArraySpec(
            str(argtype.dtype),
            argtype.ndim,
            argtype.layout,
            argtype.usm_type,
            argtype.device,
            contiguity.replace("A", ""),
        )
        return param.mismatch(spec)
    if isinstance(argtype, types.Array):
        return "kind (scalar expected)"
    if isinstance(argtype, types.Boolean):
        return None if param == "bool" else "dtype"
    if isinstance(argtype, types.Integer):
        # The value decides at run time, as for a Python int (API.md §2 scalar rules).
        return None if param != "bool" and not param.startswith("complex") else "dtype"
    if isinstance(argtype, types.Float):
        return None if param in ("float32", "float64") else "dtype"
    if isinstance(argtype, types.Complex):
        return None if param.startswith("complex") else "dtype"
    return "dtype"


def check_launch(kernel: KernelBase, argtypes: tuple) -> None:
    """Type-check a launch from compiled code, compiling a lazy kernel for these types."""
    name = kernel.__name__
    if len(argtypes) != kernel.nparams:
        raise errors.TypingError(
            f"kernel '{name}' takes {kernel.nparams} argument(s); the launch passes {len(argtypes)}"
        )
    mismatches = []
    for sig, compiled in kernel.definitions.items():
        for position, (param, argtype) in enumerate(zip(compiled.params, argtypes)):
            field = _difference(param, argtype)
            if field is not None:
                mismatches.append(
                    f"  {sig}: argument {position} '{kernel.param_names[position]}' differs in "
                    f"{field}: expected {_param_text(param)}, got {argtype}"
                )
                break
        else:
            return
    if getattr(kernel, "_eager", True) is False:
        kernel.compile(types.void(*argtypes))
        return
    given = ", ".join(map(str, argtypes))
    raise errors.TypingError(
        "\n".join(
            [f"kernel '{name}' has no signature for arguments ({given}).", *mismatches]
            + ["Pass arguments that match a declared signature, or declare another one."]
        )
    )


@lower_builtin(LauncherType, types.VarArg(types.Any))
def _lower_launch(context, builder, sig, args):
    launcher_type, argtypes = sig.args[0], sig.args[1:]
    launch_value = cgutils.create_struct_proxy(launcher_type)(context, builder, args[0])
    pyapi = context.get_python_api(builder)
    gil = pyapi.gil_ensure()
    objects = pyapi.tuple_new(len(argtypes))
    for position, (argtype, value) in enumerate(zip(argtypes, args[1:])):
        if isinstance(argtype, USMArrayType):
            obj = context.make_array(argtype)(context, builder, value).parent
            pyapi.incref(obj)
        else:
            obj = pyapi.from_native_value(argtype, value)
        pyapi.tuple_setitem(objects, position, obj)  # steals the reference
    global_size = cgutils.alloca_once_value(builder, launch_value.global_size)
    local_size = cgutils.alloca_once_value(builder, launch_value.local_size)
    as_i64 = _I64.as_pointer()
    kernel = context.add_dynamic_addr(
        builder, id(launcher_type.kernel_type.kernel), info=str(launcher_type.kernel_type)
    )
    fnty = ir.FunctionType(_I64, [_PTR, _PTR, _I32, as_i64, as_i64])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "dpex_njit_launch")
    local_arg = (
        builder.bitcast(local_size, as_i64) if launcher_type.nd_range else ir.Constant(as_i64, None)
    )
    handle = builder.call(
        fn,
        [
            kernel,
            objects,
            ir.Constant(_I32, launcher_type.ndim),
            builder.bitcast(global_size, as_i64),
            local_arg,
        ],
    )
    pyapi.decref(objects)
    pyapi.gil_release(gil)
    with builder.if_then(cgutils.is_neg_int(builder, handle), likely=False):
        context.call_conv.return_exc(builder)
    return handle


# --- events -------------------------------------------------------------------------------------


@intrinsic
def _wait(typingctx, event):
    if not isinstance(event, SyclEventType):
        return None

    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.VoidType(), [_I64])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "dpex_event_wait")
        builder.call(fn, args)
        return context.get_dummy_value()

    return signature(types.none, event), codegen


@overload_method(SyclEventType, "wait")
def _event_wait(event):
    def impl(event):
        _wait(event)

    return impl


__all__ = ["KernelType", "LauncherType", "NdRangeType", "SyclEventType", "check_launch"]


# --- raw launches: @cfunc callbacks on raw USM pointers and a queue they are given ---------------

_ARG_TYPES = launcher.arg_types()


def _raw_definition(kernel: KernelBase, argtypes: tuple):
    """The first definition raw memory of these types fits (usm_type and device unknowable)."""
    for compiled in kernel.definitions.values():
        for param, argtype in zip(compiled.params, argtypes):
            if isinstance(param, ArraySpec):
                if not (
                    isinstance(argtype, types.Array)
                    and str(argtype.dtype) == param.dtype
                    and argtype.ndim == param.ndim
                    and param.layout in ("A", argtype.layout)
                ):
                    break
            elif _difference(param, argtype) is not None:
                break
        else:
            if len(argtypes) == len(compiled.params):
                return compiled
    return None


def _slot_value(context, builder, slot, argtype, value):
    """(pointer for the argument array, LLVM value kept alive) of one slot."""
    if slot.field == params.DATA:
        data = context.make_array(argtype)(context, builder, value).data
        return builder.bitcast(data, _PTR)
    if slot.field in (params.SHAPE, params.STRIDE):
        array = context.make_array(argtype)(context, builder, value)
        sizes = array.shape if slot.field == params.SHAPE else array.strides
        number = builder.extract_value(sizes, slot.axis)
    elif slot.field in (params.REAL, params.IMAG):
        part = context.make_complex(builder, argtype, value)
        number = part.real if slot.field == params.REAL else part.imag
        number = context.cast(builder, number, argtype.underlying_float, getattr(types, slot.kind))
    elif slot.kind == "bool":
        number = builder.zext(context.cast(builder, value, argtype, types.boolean), ir.IntType(8))
    else:
        number = context.cast(builder, value, argtype, getattr(types, slot.kind))
    return builder.bitcast(cgutils.alloca_once_value(builder, number), _PTR)


@intrinsic
def raw_launch(typingctx, launch, queue_ref, arguments):
    """Submit kernel[range] on `queue_ref` (a DPCTLSyclQueueRef) with raw arrays and scalars.

    Usable in @numba.cfunc and @njit code; arrays are Numba arrays over USM memory
    (`numba.carray(pointer, shape, dtype)`). Returns the DPCTLSyclEventRef (0 if the runtime
    refused the launch), owned by the caller: pass it to `raw_wait`.
    """
    if not isinstance(launch, LauncherType) or not isinstance(arguments, types.BaseTuple):
        return None
    if not isinstance(queue_ref, (types.Integer, types.RawPointer)):
        return None
    kernel = launch.kernel_type.kernel
    argtypes = tuple(types.unliteral(t) for t in arguments)
    compiled = _raw_definition(kernel, argtypes)
    if compiled is None:
        raise errors.TypingError(
            f"kernel '{kernel.__name__}' has no signature that raw arrays and scalars of types "
            f"({', '.join(map(str, argtypes))}) fit (dtype, ndim and layout are compared)"
        )

    def codegen(context, builder, sig, args):
        launch_value = cgutils.create_struct_proxy(launch)(context, builder, args[0])
        queue = args[1]
        queue = builder.inttoptr(queue, _PTR) if isinstance(queue.type, ir.IntType) else queue
        values = cgutils.unpack_tuple(builder, args[2], len(argtypes))
        pointers = [
            _slot_value(context, builder, slot, argtypes[slot.param], values[slot.param])
            for slot in compiled.slots
        ]
        count = len(pointers)
        arg_array = cgutils.alloca_once(builder, _PTR, size=max(count, 1))
        type_array = cgutils.alloca_once(builder, _I32, size=max(count, 1))
        for i, (pointer, slot) in enumerate(zip(pointers, compiled.slots)):
            builder.store(pointer, builder.gep(arg_array, [ir.Constant(_I32, i)]))
            kind = _ARG_TYPES[slot.kind]
            builder.store(ir.Constant(_I32, kind), builder.gep(type_array, [ir.Constant(_I32, i)]))
        sizes = cgutils.alloca_once_value(builder, launch_value.global_size)
        sycl_kernel = compiled.kernel_for(compiled.default_queue, launch.ndim)
        kernel_ref = context.add_dynamic_addr(
            builder, sycl_kernel.addressof_ref(), info=f"SyclKernel of {kernel.__name__}"
        )
        fnty = ir.FunctionType(
            _PTR,
            [
                _PTR,
                _PTR,
                _PTR.as_pointer(),
                _I32.as_pointer(),
                _I64,
                _I64.as_pointer(),
                _I64,
                _PTR,
                _I64,
            ],
        )
        submit = cgutils.get_or_insert_function(builder.module, fnty, "DPCTLQueue_SubmitRange")
        event = builder.call(
            submit,
            [
                kernel_ref,
                queue,
                arg_array,
                type_array,
                ir.Constant(_I64, count),
                builder.bitcast(sizes, _I64.as_pointer()),
                ir.Constant(_I64, launch.ndim),
                ir.Constant(_PTR, None),
                ir.Constant(_I64, 0),
            ],
        )
        return builder.ptrtoint(event, _I64)

    if launch.nd_range:
        raise errors.TypingError(
            f"kernel '{kernel.__name__}': raw_launch takes a Range; NdRange launches go through "
            f"kernel[nd_range](...) in @njit code"
        )
    return signature(types.int64, launch, queue_ref, arguments), codegen


@intrinsic
def raw_wait(typingctx, event_ref):
    """Wait for an event raw_launch returned, and release it."""
    if not isinstance(event_ref, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        ref = builder.inttoptr(args[0], _PTR)
        with builder.if_then(cgutils.is_not_null(builder, ref)):
            for name in ("DPCTLEvent_Wait", "DPCTLEvent_Delete"):
                fnty = ir.FunctionType(ir.VoidType(), [_PTR])
                builder.call(cgutils.get_or_insert_function(builder.module, fnty, name), [ref])
        return context.get_dummy_value()

    return signature(types.none, event_ref), codegen
