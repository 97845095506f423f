"""Launching kernels from @numba.njit host code: kernel[range], the launch and its event.

njit.py holds the Numba types of kernels, ranges, launchers and events; this module types and
lowers `kernel[range]`, the launch through the compiled launcher, `.wait()`, and
`dk.raw_launch` / `dk.raw_wait` for @numba.cfunc callbacks.
"""

from __future__ import annotations

import operator

import llvmlite.binding as ll
from llvmlite import ir
from numba.core import cgutils, errors, types
from numba.core.extending import (
    intrinsic,
    lower_builtin,
    overload_method,
)
from numba.core.typing.templates import AbstractTemplate, infer_global, signature

from ..types import params
from ..types.spec import ArraySpec
from ._native import launcher
from .launch import KernelBase
from .njit import (
    KernelType,
    LauncherType,
    NdRangeType,
    SyclEventType,
    int64_sizes,
    param_difference,
    sizes_of,
    sizes_tuple,
)

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_PTR = ir.IntType(8).as_pointer()

for _name, _address in launcher.c_functions().items():
    ll.add_symbol(_name, _address)


# --- kernel[range] ------------------------------------------------------------------------------


@infer_global(operator.getitem)
class _KernelGetItem(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) != 2 or not isinstance(args[0], KernelType):
            return None
        kernel_type, range_type = args
        if isinstance(range_type, NdRangeType):
            return signature(LauncherType(kernel_type, range_type.ndim, True), *args)
        ndim = sizes_of(range_type)
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
        sizes = int64_sizes(context, builder, range_type, range_value)
        value.global_size = sizes_tuple(context, builder, sizes)
        value.local_size = sizes_tuple(context, builder, [ir.Constant(_I64, 0)] * len(sizes))
    return value._getvalue()


# --- the launch ---------------------------------------------------------------------------------


@lower_builtin(LauncherType, types.VarArg(types.Any))
def _lower_launch(context, builder, sig, args):
    launcher_type, argtypes = sig.args[0], sig.args[1:]
    launch_value = cgutils.create_struct_proxy(launcher_type)(context, builder, args[0])
    return emit_launch(
        context,
        builder,
        launcher_type.kernel_type.kernel,
        argtypes,
        args[1:],
        launch_value.global_size,
        launch_value.local_size if launcher_type.nd_range else None,
    )


def emit_launch(context, builder, kernel, argtypes, args, global_size, local_size=None):
    """Compiled code launching `kernel` with `args` (of `argtypes`) over `global_size` (an
    LLVM tuple of 1-3 int64), in work-groups of `local_size` where given: the launch's event
    handle (what `kernel[range](*args)` lowers to; offloaded code emits its launches too)."""
    pyapi = context.get_python_api(builder)
    gil = pyapi.gil_ensure()
    objects = pyapi.tuple_new(len(argtypes))
    boxed = cgutils.alloca_once_value(builder, cgutils.true_bit)
    for position, (argtype, value) in enumerate(zip(argtypes, args)):
        # an array is its object, or the view of it compiled code made (njit._box_usm_array),
        # which takes a reference of its own: the caller's stays the caller's
        context.nrt.incref(builder, argtype, value)
        obj = pyapi.from_native_value(argtype, value)
        builder.store(builder.and_(builder.load(boxed), cgutils.is_not_null(builder, obj)), boxed)
        pyapi.tuple_setitem(objects, position, obj)  # steals the reference
    with builder.if_then(builder.not_(builder.load(boxed)), likely=False):
        pyapi.decref(objects)
        pyapi.gil_release(gil)
        context.call_conv.return_exc(builder)
    as_i64 = _I64.as_pointer()
    global_ptr = builder.bitcast(cgutils.alloca_once_value(builder, global_size), as_i64)
    local_ptr = ir.Constant(as_i64, None)
    if local_size is not None:
        local_ptr = builder.bitcast(cgutils.alloca_once_value(builder, local_size), as_i64)
    kernel_ptr = context.add_dynamic_addr(builder, id(kernel), info=f"dk.kernel {kernel.__name__}")
    fnty = ir.FunctionType(_I64, [_PTR, _PTR, _I32, as_i64, as_i64])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "dpex_njit_launch")
    ndim = ir.Constant(_I32, len(global_size.type.elements))
    handle = builder.call(fn, [kernel_ptr, objects, ndim, global_ptr, local_ptr])
    pyapi.decref(objects)
    pyapi.gil_release(gil)
    with builder.if_then(cgutils.is_neg_int(builder, handle), likely=False):
        context.call_conv.return_exc(builder)
    return handle


def emit_wait(builder, handle) -> None:
    """Compiled code waiting for a launch's event handle (emit_launch)."""
    fnty = ir.FunctionType(ir.VoidType(), [_I64])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "dpex_event_wait")
    builder.call(fn, [handle])


# --- events -------------------------------------------------------------------------------------


@intrinsic
def _wait(typingctx, event):
    if not isinstance(event, SyclEventType):
        return None

    def codegen(context, builder, sig, args):
        emit_wait(builder, args[0])
        return context.get_dummy_value()

    return signature(types.none, event), codegen


@overload_method(SyclEventType, "wait")
def _event_wait(event):
    def impl(event):
        _wait(event)

    return impl


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
            elif param_difference(param, argtype) is not None:
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
    """Launch a kernel from a ``@numba.cfunc`` callback, on raw USM pointers and a raw queue.

    For callbacks that another runtime calls with pointers and a ``DPCTLSyclQueueRef``: the
    launch goes straight to dpctl's C API. It leaves to the caller what a Python launch does:
    ordering with other work, keeping the memory alive until the kernel completes. The queue
    must belong to the default context of the kernel's device (as every
    ``dpctl.SyclQueue(device)`` and dpnp's queues do). Callable in compiled code only.

    Parameters
    ----------
    launch : kernel[range]
        An eager kernel with a ``dk.Range`` (an int or tuple of ints is one), e.g.
        ``vecadd[n]``.
    queue_ref : int or void pointer
        The ``DPCTLSyclQueueRef`` to submit to.
    arguments : tuple
        The kernel's arguments: Numba arrays over USM memory
        (``numba.carray(pointer, shape, dtype)``), matched to the signatures by dtype, ndim
        and layout, and scalars, converted to the declared types.

    Returns
    -------
    int
        The ``DPCTLSyclEventRef``, owned by the caller (``raw_wait`` waits for and releases
        it), or 0 if the runtime refused the launch.

    Raises
    ------
    TypingError
        When the callback compiles, if the arguments fit none of the kernel's signatures or
        the launch has an ``NdRange``.

    Examples
    --------
    >>> import ctypes
    >>> import dpnp
    >>> import numba
    >>> import numpy as np
    >>> import dpex_kernels as dk
    >>> vector = dk.usm_array(dk.float32, 1)
    >>> @dk.kernel(dk.void(vector, vector))
    ... def double_into(x, y):
    ...     i = dk.get_global_id(0)
    ...     y[i] = 2 * x[i]
    >>> @numba.cfunc("int32(voidptr, voidptr, voidptr, int64)")
    ... def callback(queue, x_pointer, y_pointer, n):
    ...     x = numba.carray(x_pointer, (n,), np.float32)
    ...     y = numba.carray(y_pointer, (n,), np.float32)
    ...     event = dk.raw_launch(double_into[n], queue, (x, y))
    ...     if event == 0:
    ...         return 1
    ...     dk.raw_wait(event)
    ...     return 0
    >>> x, y = dpnp.arange(4, dtype="f4"), dpnp.zeros(4, dtype="f4")
    >>> x.sycl_queue.wait()  # raw launches are not ordered with dpnp
    >>> pointer = lambda a: a.__sycl_usm_array_interface__["data"][0]
    >>> c_callback = ctypes.CFUNCTYPE(
    ...     ctypes.c_int32, *[ctypes.c_void_p] * 3, ctypes.c_int64
    ... )(callback.address)
    >>> c_callback(x.sycl_queue.addressof_ref(), pointer(x), pointer(y), 4)
    0
    >>> dpnp.asnumpy(y)
    array([0., 2., 4., 6.], dtype=float32)
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
    """Wait for an event ``raw_launch`` returned, and release it.

    Callable in compiled code only (``@numba.cfunc``, ``@numba.njit``). Instead, the caller
    may hand the event to C code, which waits with ``DPCTLEvent_Wait`` and releases it with
    ``DPCTLEvent_Delete``.

    Parameters
    ----------
    event_ref : int
        The ``DPCTLSyclEventRef`` from ``raw_launch``; 0 is ignored.

    Examples
    --------
    >>> import numba
    >>> import dpex_kernels as dk
    >>> @numba.cfunc("void(int64)")
    ... def finish(event_ref):
    ...     dk.raw_wait(event_ref)
    >>> finish.ctypes(0)  # nothing to wait for

    ``raw_launch``'s example waits for a launch.
    """
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
