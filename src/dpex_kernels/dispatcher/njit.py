"""Launching kernels from @numba.njit host code (docs/compiled-launch.md): the types.

This module teaches Numba the values involved (njit_launch.py lowers the launch itself).

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

import dpnp
import dpnp.tensor
from llvmlite import ir
from numba.core import cgutils, errors, types
from numba.core.datamodel import models
from numba.core.extending import (
    NativeValue,
    box,
    lower_builtin,
    register_model,
    typeof_impl,
    unbox,
)
from numba.core.typing.templates import AbstractTemplate, infer_global, signature

from ..compiler import patches
from ..types import inference
from ..types.ranges import NdRange, Range
from ..types.spec import ArraySpec
from ..types.usm_array_type import USMArrayType
from ._native import launcher
from .launch import KernelBase

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_PTR = ir.IntType(8).as_pointer()

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


def _unbox_into(builder, typ, obj, array) -> ir.Value:
    """Fill the Numba array struct `array` of type `typ` from a USM array object; the C
    status (0 where it was one)."""
    fnty = ir.FunctionType(_I32, [_PTR, _I64.as_pointer(), _I32])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "dpex_unbox_usm_array")
    out = builder.bitcast(array._getpointer(), _I64.as_pointer())
    return builder.call(fn, [obj, out, ir.Constant(_I32, typ.ndim)])


@unbox(USMArrayType)
def _unbox_usm_array(typ, obj, c):
    array = c.context.make_array(typ)(c.context, c.builder)
    status = _unbox_into(c.builder, typ, obj, array)
    is_error = c.builder.icmp_signed("!=", status, ir.Constant(_I32, 0))
    return NativeValue(array._getvalue(), is_error=is_error)


def view_of(parent, data: int, shape: tuple, strides: tuple):
    """The view of `parent` that compiled code returns (a slice, a transpose): the one that
    starts at address `data` with `shape` and `strides` (in bytes), as NumPy would make it."""
    usm = parent.get_array() if isinstance(parent, dpnp.ndarray) else parent
    itemsize = usm.itemsize
    base = usm.usm_data._pointer  # not the USM array interface: reading it waits for the queue
    offset = 0 if 0 in shape else (data - base) // itemsize
    view = dpnp.tensor.usm_ndarray(
        shape,
        dtype=usm.dtype,
        strides=tuple(s // itemsize for s in strides),
        buffer=usm,
        offset=offset,
    )
    return view if usm is parent else dpnp.ndarray._create_from_usm_ndarray(view)


@box(USMArrayType)
def _box_usm_array(typ, value, c):
    """A usm_array returned to Python is the array object it came in as where it is all of
    it (same data, shape and strides), else the view of it compiled code made (view_of). As
    Numba's boxing of arrays, it takes over the value's reference: an array made in compiled
    code is then held by Python alone."""
    builder, pyapi = c.builder, c.pyapi
    array = c.context.make_array(typ)(c.context, builder, value)
    parent = array.parent
    result = cgutils.alloca_once_value(builder, parent)
    with builder.if_then(cgutils.is_null(builder, parent), likely=False):
        pyapi.err_set_string(
            "PyExc_TypeError", "compiled code can return only USM arrays passed in from Python"
        )
    with builder.if_then(cgutils.is_not_null(builder, parent), likely=True):
        whole = c.context.make_array(typ)(c.context, builder)
        status = _unbox_into(builder, typ, parent, whole)
        same = builder.icmp_signed("==", status, ir.Constant(_I32, 0))
        for mine, its in [
            (array.data, whole.data),
            *zip(
                cgutils.unpack_tuple(builder, array.shape),
                cgutils.unpack_tuple(builder, whole.shape),
            ),
            *zip(
                cgutils.unpack_tuple(builder, array.strides),
                cgutils.unpack_tuple(builder, whole.strides),
            ),
        ]:
            same = builder.and_(same, builder.icmp_unsigned("==", mine, its))
        with builder.if_else(same, likely=True) as (all_of_it, part):
            with all_of_it:
                pyapi.incref(parent)
            with part:
                pyapi.err_clear()  # a failed unbox above set one
                sizes = types.UniTuple(types.intp, typ.ndim)
                address = builder.ptrtoint(array.data, c.context.get_value_type(types.intp))
                arguments = [
                    parent,
                    pyapi.long_from_ssize_t(address),
                    c.box(sizes, array.shape),
                    c.box(sizes, array.strides),
                ]
                function = pyapi.unserialize(pyapi.serialize_object(view_of))
                builder.store(pyapi.call_function_objargs(function, arguments), result)
                for temporary in arguments[1:]:
                    pyapi.decref(temporary)
    if c.context.enable_nrt:  # the reference to an array made in compiled code is the box's
        c.context.nrt.decref(builder, typ, value)
    return builder.load(result)


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


def sizes_of(range_type) -> int | None:
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
        ndim = sizes_of(args[0])
        if ndim is not None and ndim == sizes_of(args[1]):
            return signature(NdRangeType(ndim), *args)
        return None


def int64_sizes(context, builder, typ, value) -> list:
    """An int or a tuple of ints as a list of int64 values."""
    if isinstance(typ, types.Integer):
        return [context.cast(builder, value, typ, types.int64)]
    items = cgutils.unpack_tuple(builder, value, len(typ))
    return [context.cast(builder, v, t, types.int64) for v, t in zip(items, typ)]


def sizes_tuple(context, builder, values: list):
    return context.make_tuple(builder, types.UniTuple(types.int64, len(values)), values)


@lower_builtin(Range, types.VarArg(types.Integer))
def _lower_range(context, builder, sig, args):
    values = [context.cast(builder, v, t, types.int64) for v, t in zip(args, sig.args)]
    return sizes_tuple(context, builder, values)


@lower_builtin(NdRange, types.Any, types.Any)
def _lower_nd_range(context, builder, sig, args):
    nd_range = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    nd_range.global_size = sizes_tuple(
        context, builder, int64_sizes(context, builder, sig.args[0], args[0])
    )
    nd_range.local_size = sizes_tuple(
        context, builder, int64_sizes(context, builder, sig.args[1], args[1])
    )
    return nd_range._getvalue()


# --- type-checking a launch -------------------------------------------------------------


def _param_text(param) -> str:
    return param.describe() if isinstance(param, ArraySpec) else param


def param_difference(param, argtype) -> str | None:
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
            readonly=not argtype.mutable,
        )
        return param.mismatch(spec)
    if isinstance(argtype, types.Array):
        return "kind (scalar expected)"
    if isinstance(argtype, types.Boolean):
        return None if param == "bool" else "dtype"
    if isinstance(argtype, types.Integer):
        # The value decides at run time, as for a Python int (the scalar rules).
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
            field = param_difference(param, argtype)
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


__all__ = ["KernelType", "LauncherType", "NdRangeType", "SyclEventType", "check_launch"]
