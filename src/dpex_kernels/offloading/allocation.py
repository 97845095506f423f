"""USM arrays made by offloaded code: dpnp's allocation API, the arrays of array expressions,
reductions' buffers, and dpctl.SyclQueue arguments.

An array made inside compiled code is a dpnp array made by a call back into Python (with the
GIL), unboxed like an argument and owned through a Numba MemInfo that holds the dpnp object:
kernels take it (its parent is the array object) and returning it gives Python that very array.
`empty`, `zeros`, ... below stand in for dpnp's functions in an offloaded function's IR
(names.py puts them there); their overloads decide the dtype, usm_type and placement when
Numba types the call.
"""

from __future__ import annotations

import ctypes
import functools
import mmap

import dpctl
import dpnp
import numpy as np
from llvmlite import ir
from numba.core import cgutils, errors, types
from numba.core.datamodel import models
from numba.core.extending import (
    NativeValue,
    box,
    intrinsic,
    overload,
    register_model,
    typeof_impl,
    unbox,
)
from numba.core.typing.templates import signature

from .._runtime import canonical_device, default_device, device_by_canonical_name
from ..dispatcher import njit  # noqa: F401  (usm_array typing and unboxing in @njit code)
from ..types.usm_array_type import USMArrayType, scalar_type
from . import reused_memory

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_PTR = ir.IntType(8).as_pointer()

#: The Python callables compiled code calls by address: kept alive with the process.
_CALLBACKS: list = []

# --- dpctl.SyclQueue arguments -------------------------------------------------------------------


class SyclQueueType(types.Type):
    """A dpctl.SyclQueue in offloaded code: where allocations go (`sycl_queue=q`)."""

    def __init__(self, device: str):
        self.device = device
        super().__init__(name=f"dpctl.SyclQueue({device})")


@typeof_impl.register(dpctl.SyclQueue)
def _typeof_queue(value, context):
    return SyclQueueType(canonical_device(value.sycl_device))


@register_model(SyclQueueType)
class _QueueModel(models.OpaqueModel):
    """The queue object itself, borrowed from the caller for the call's duration."""


@unbox(SyclQueueType)
def _unbox_queue(typ, obj, c):
    return NativeValue(obj)


@box(SyclQueueType)
def _box_queue(typ, value, c):
    c.pyapi.incref(value)
    return value


# --- memory ---------------------------------------------------------------------------------------

#: Arrays from this many bytes up get transparent huge pages on CPU devices, as NumPy's do.
HUGE_PAGE_THRESHOLD = 4 << 20
_HUGE_PAGE = 2 << 20
_MADV_HUGEPAGE = getattr(mmap, "MADV_HUGEPAGE", None)  # Linux only


@functools.cache
def _madvise():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return libc.madvise


def advise_huge_pages(array) -> bool:
    """Ask Linux for huge pages under a new CPU-device array before it is first written.

    NumPy does this for its own large arrays; the OpenCL CPU runtime maps USM memory in 4 KiB
    pages, and a loop past the caches then runs ~20% slower (docs/offload.md). Only whole
    2 MiB pages inside the array are advised; the advice changes no data. True if advised.
    """
    if array.nbytes < HUGE_PAGE_THRESHOLD or _MADV_HUGEPAGE is None or not array.sycl_device.is_cpu:
        return False
    start = array.get_array()._pointer  # not the USM array interface: reading it waits
    first = -(-start // _HUGE_PAGE) * _HUGE_PAGE
    end = (start + array.nbytes) // _HUGE_PAGE * _HUGE_PAGE
    if end <= first:
        return False
    return _madvise()(first, end - first, _MADV_HUGEPAGE) == 0


#: Reductions' partial-result buffers no call is using, by (queue or device, dtype, USM type).
#: A fresh buffer made the offloaded 2^24 float32 dot 0.15-0.3 ms slower than one used before
#: (its pages are new to the kernel), the 2^20 one 0.065 ms (of 0.4); docs/offload.md.
_SCRATCH: dict[tuple, list] = {}
#: Buffers kept per key: more calls in flight at once (threads) each get a fresh one.
_SCRATCH_KEPT = 4
#: Keys kept: a program that makes a new queue per call keeps only the latest queues alive.
_SCRATCH_KEYS = 16


def _queue_of(source) -> dpctl.SyclQueue:
    return source if isinstance(source, dpctl.SyclQueue) else source.sycl_queue


def _placement(device: str | None, source) -> dict:
    """dpnp's placement keywords of an allocation: `source`'s queue if given, else `device`."""
    return {"sycl_queue": _queue_of(source)} if source is not None else {"device": device}


def _scratch_key(dtype: str, usm_type: str, device: str | None, source) -> tuple:
    return (_queue_of(source) if source is not None else device, dtype, usm_type)


def _take_scratch(dtype: str, usm_type: str, device: str | None, shape, source):
    """A 1-d buffer of `shape` elements or more that no call is using: a kept one or a new one
    (of a power of two, for the next calls with more elements). The caller's kernels never
    read past the elements they write, so a longer buffer is as good."""
    kept = _SCRATCH.get(_scratch_key(dtype, usm_type, device, source), [])
    for index, array in enumerate(kept):
        if array.shape[0] >= shape:
            return kept.pop(index)  # under the GIL: no other thread gets it
    size = 1 << max(0, int(shape) - 1).bit_length()
    return dpnp.empty(size, dtype=dtype, usm_type=usm_type, **_placement(device, source))


def _keep_scratch(dtype: str, usm_type: str, device: str | None, array, source) -> None:
    """Give a buffer from _take_scratch back once the call's last kernel using it is done."""
    key = _scratch_key(dtype, usm_type, device, source)
    if key not in _SCRATCH and len(_SCRATCH) >= _SCRATCH_KEYS:
        _SCRATCH.pop(next(iter(_SCRATCH)))  # the oldest key, with its buffers
    kept = _SCRATCH.setdefault(key, [])
    if len(kept) < _SCRATCH_KEPT:
        kept.append(array)


def _make_array(kind: str, dtype: str, usm_type: str, device: str | None, shape, fill, source):
    """The dpnp array an allocation in compiled code returns (on `source`'s queue if given)."""
    if kind == "scratch":
        return _take_scratch(dtype, usm_type, device, shape, source)
    placement = _placement(device, source)
    filled = kind != "empty"
    if filled:
        if np.prod(shape, dtype=np.int64) * np.dtype(dtype).itemsize < HUGE_PAGE_THRESHOLD:
            return dpnp.full(shape, fill, dtype=dtype, usm_type=usm_type, **placement)
        # the fill value cast (and refused) as dpnp.full casts it, then written once advised
        value = dpnp.full((), fill, dtype=dtype, usm_type=usm_type, **placement)
        placement = {"sycl_queue": value.sycl_queue}
    array, fresh = reused_memory.empty(shape, dtype, usm_type, placement)
    if fresh:
        advise_huge_pages(array)  # before anything writes the memory
    if filled:
        array[...] = value
    return array


def _ndim_of(shape) -> int | None:
    if isinstance(shape, types.Integer):
        return 1
    if isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer) for t in shape):
        return len(shape)
    return None


def _source_object(context, builder, pyapi, argtype, value):
    """The borrowed Python object an allocation's placement comes from, or None's."""
    if isinstance(argtype, USMArrayType):
        # an array made in compiled code has no parent: None then (a NULL would end the
        # call's argument list), and the allocation's device decides
        parent = context.make_array(argtype)(context, builder, value).parent
        return builder.select(cgutils.is_null(builder, parent), pyapi.borrow_none(), parent)
    if isinstance(argtype, SyclQueueType):
        return value
    return pyapi.borrow_none()


def _source_device(source, device: str) -> str:
    return source.device if isinstance(source, (USMArrayType, SyclQueueType)) else device


@functools.cache
def allocator(kind: str, dtype, usm_type: str, device: str, dtype_of=None):
    """An intrinsic (shape, fill, source, witness) -> a new usm_array on `device`.

    `kind` is "empty", "full" (`fill` written) or "scratch" (a reduction's buffer, from a
    pool). `dtype` is fixed, or None: then `dtype_of(witness type)` decides it when the host
    function is typed. `source` is an array or queue whose queue the allocation shares, or
    None (`device` decides).
    """

    @intrinsic
    def allocate(typingctx, shape, fill, source, witness):
        ndim = _ndim_of(shape)
        if ndim is None:
            return None
        element = scalar_type(dtype) if dtype is not None else dtype_of(witness)
        placed = _source_device(source, device)
        result = USMArrayType(element, ndim, "C", usm_type, placed)
        callback = functools.partial(_make_array, kind, str(element), usm_type, placed)
        _CALLBACKS.append(callback)

        def codegen(context, builder, sig, args):
            pyapi = context.get_python_api(builder)
            gil = pyapi.gil_ensure()
            shape_obj = pyapi.from_native_value(sig.args[0], args[0])
            if isinstance(sig.args[1], types.NoneType):
                fill_obj = pyapi.make_none()
            else:
                fill_obj = pyapi.from_native_value(sig.args[1], args[1])
            source_obj = _source_object(context, builder, pyapi, sig.args[2], args[2])
            fn = context.add_dynamic_addr(builder, id(callback), info="offload allocation")
            obj = pyapi.call_function_objargs(fn, [shape_obj, fill_obj, source_obj])
            pyapi.decref(shape_obj)
            pyapi.decref(fill_obj)
            array = context.make_array(result)(context, builder)
            failed = cgutils.alloca_once_value(builder, cgutils.true_bit)
            with builder.if_then(cgutils.is_not_null(builder, obj)):
                unbox_fn = cgutils.get_or_insert_function(
                    builder.module,
                    ir.FunctionType(_I32, [_PTR, _I64.as_pointer(), _I32]),
                    "dpex_unbox_usm_array",
                )
                out = builder.bitcast(array._getpointer(), _I64.as_pointer())
                status = builder.call(unbox_fn, [obj, out, ir.Constant(_I32, ndim)])
                data = builder.bitcast(array.data, _PTR)
                meminfo = pyapi.nrt_meminfo_new_from_pyobject(data, obj)
                array.meminfo = builder.bitcast(meminfo, array.meminfo.type)
                pyapi.decref(obj)  # the MemInfo holds the array object now
                builder.store(builder.icmp_signed("!=", status, ir.Constant(_I32, 0)), failed)
            pyapi.gil_release(gil)
            with builder.if_then(builder.load(failed), likely=False):
                context.call_conv.return_exc(builder)
            return array._getvalue()

        return signature(result, shape, fill, source, witness), codegen

    return allocate


@functools.cache
def scratch_keeper(usm_type: str, device: str):
    """An intrinsic (buffer, source) -> None giving a buffer of an allocator("scratch", ...)
    of the same `usm_type` and `device` back for the next call (_keep_scratch)."""

    @intrinsic
    def keep(typingctx, array, source):
        if not isinstance(array, USMArrayType):
            return None
        callback = functools.partial(_keep_scratch, str(array.dtype), usm_type, device)
        _CALLBACKS.append(callback)

        def codegen(context, builder, sig, args):
            pyapi = context.get_python_api(builder)
            gil = pyapi.gil_ensure()
            array_obj = context.make_array(sig.args[0])(context, builder, args[0]).parent
            source_obj = _source_object(context, builder, pyapi, sig.args[1], args[1])
            fn = context.add_dynamic_addr(builder, id(callback), info="offload scratch")
            result = pyapi.call_function_objargs(fn, [array_obj, source_obj])
            failed = cgutils.is_null(builder, result)
            pyapi.decref(result)
            pyapi.gil_release(gil)
            with builder.if_then(failed, likely=False):
                context.call_conv.return_exc(builder)
            return context.get_dummy_value()

        return signature(types.none, array, source), codegen

    return keep


# --- dpnp's allocation functions -----------------------------------------------------------------


def _stand_in(name: str):
    def stand_in(*args, **kwargs):
        raise TypeError(f"dpnp.{name} stand-in: only offloaded code calls it")

    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in


_NAMES = ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like")
#: dpnp's allocation functions -> their stand-ins in offloaded code (names.py puts them there).
STAND_INS = {getattr(dpnp, name): _stand_in(name) for name in _NAMES}
_BY_NAME = {f.__name__: f for f in STAND_INS.values()}


def default_float(device: str) -> types.Type:
    """dpnp's default floating type on a device: float64 where it has fp64."""
    return types.float64 if device_by_canonical_name(device).has_aspect_fp64 else types.float32


def _given(argtype) -> bool:
    """Whether an argument is given (Numba passes a default as its value or as Omitted)."""
    if isinstance(argtype, types.Omitted):
        argtype = argtype.value
    return argtype is not None and not isinstance(argtype, types.NoneType)


def _literal(argtype, what: str, name: str):
    if isinstance(argtype, types.Omitted):
        argtype = argtype.value
    if not _given(argtype):
        return None
    if isinstance(argtype, str):
        return argtype
    if isinstance(argtype, types.StringLiteral):
        return argtype.literal_value
    raise errors.TypingError(f"dpnp.{name}(): {what} must be a constant string; got {argtype}")


def _dtype_of(argtype, name: str):
    """The scalar type a `dtype=` argument names, or None where none is given."""
    if not _given(argtype):
        return None
    if isinstance(argtype, (types.DType, types.NumberClass)):
        return scalar_type(argtype.dtype)
    if isinstance(argtype, types.StringLiteral):
        return scalar_type(argtype.literal_value)
    raise errors.TypingError(
        f"dpnp.{name}(): dtype= must be a constant dtype (a string, a NumPy or dpnp scalar "
        f"type) or an array's .dtype; got {argtype}"
    )


def _device_of(name: str, device, sycl_queue, like=None) -> str:
    """The device an allocation is on: the queue's or array's given (`device=x.device` names
    x: names.py), a device filter string's, `like`'s, or the default device's."""
    for parameter, argtype in (("sycl_queue", sycl_queue), ("device", device)):
        if isinstance(argtype, (USMArrayType, SyclQueueType)):
            return argtype.device
        text = _literal(argtype, f"{parameter}=", name)
        if text is not None:
            return canonical_device(text)
    return like.device if like is not None else default_device().filter_string


def _check_order(order, name: str, allowed: tuple) -> None:
    value = _literal(order, "order=", name)
    if value is not None and value not in allowed:
        raise errors.TypingError(
            f"dpnp.{name}(): offloaded functions allocate C-ordered arrays; got order={value!r}"
        )


def _fill_dtype(witness):
    """dpnp.full's dtype from its fill value: a Python float is the default float."""
    witness = types.unliteral(witness)
    if isinstance(witness, types.Boolean):
        return types.boolean
    if isinstance(witness, types.Integer):
        return types.int64
    if isinstance(witness, types.Float):
        return witness
    raise errors.TypingError(f"dpnp.full(): the fill value must be a number; got {witness}")


def source(device, sycl_queue, like):
    """The array or queue an allocation shares its queue with (typed: source's overload)."""


@overload(source)
def _source(device, sycl_queue, like):
    placed = (USMArrayType, SyclQueueType)
    if isinstance(sycl_queue, placed):
        return lambda device, sycl_queue, like: sycl_queue
    if isinstance(device, placed):
        return lambda device, sycl_queue, like: device
    return lambda device, sycl_queue, like: like


def _kind_and_dtype(name, dtype, fill, device, like=None):
    """(allocator kind, dtype) of an allocation: the dtype given, `like`'s, or the default."""
    chosen = _dtype_of(dtype, name)
    if chosen is None:
        chosen = like.dtype if like is not None else default_float(device)
    return ("empty" if fill is None else "full"), chosen


def _plain(name: str, fill) -> None:
    """dpnp.empty/zeros/ones(shape, dtype=, order=, like=, device=, usm_type=, sycl_queue=)."""

    @overload(_BY_NAME[name])
    def typer(shape, dtype=None, order="C", like=None, device=None, usm_type=None, sycl_queue=None):
        place = _device_of(name, device, sycl_queue)
        _check_order(order, name, ("C",))
        kind, chosen = _kind_and_dtype(name, dtype, fill, place)
        alloc = allocator(kind, chosen, _literal(usm_type, "usm_type=", name) or "device", place)

        def impl(
            shape, dtype=None, order="C", like=None, device=None, usm_type=None, sycl_queue=None
        ):
            return alloc(shape, fill, source(device, sycl_queue, None), 0)

        return impl


def _like(name: str, fill) -> None:
    """dpnp.empty_like/zeros_like/ones_like(a, dtype=, order=, subok=, shape=, device=, ...)."""

    @overload(_BY_NAME[name])
    def typer(
        a,
        dtype=None,
        order="K",
        subok=False,
        shape=None,
        device=None,
        usm_type=None,
        sycl_queue=None,
    ):
        alloc = _like_allocator(name, a, dtype, order, device, usm_type, sycl_queue, fill)

        def impl(
            a,
            dtype=None,
            order="K",
            subok=False,
            shape=None,
            device=None,
            usm_type=None,
            sycl_queue=None,
        ):
            return alloc(shape_of(a, shape), fill, source(device, sycl_queue, a), 0)

        return impl


@overload(_BY_NAME["full"])
def _full(
    shape, fill_value, dtype=None, order="C", like=None, device=None, usm_type=None, sycl_queue=None
):
    place = _device_of("full", device, sycl_queue)
    _check_order(order, "full", ("C",))
    usm = _literal(usm_type, "usm_type=", "full") or "device"
    alloc = allocator("full", _dtype_of(dtype, "full"), usm, place, _fill_dtype)

    def impl(
        shape,
        fill_value,
        dtype=None,
        order="C",
        like=None,
        device=None,
        usm_type=None,
        sycl_queue=None,
    ):
        return alloc(shape, fill_value, source(device, sycl_queue, None), fill_value)

    return impl


@overload(_BY_NAME["full_like"])
def _full_like(
    a,
    fill_value,
    dtype=None,
    order="K",
    subok=False,
    shape=None,
    device=None,
    usm_type=None,
    sycl_queue=None,
):
    alloc = _like_allocator("full_like", a, dtype, order, device, usm_type, sycl_queue, 0)

    def impl(
        a,
        fill_value,
        dtype=None,
        order="K",
        subok=False,
        shape=None,
        device=None,
        usm_type=None,
        sycl_queue=None,
    ):
        return alloc(shape_of(a, shape), fill_value, source(device, sycl_queue, a), 0)

    return impl


def shape_of(a, shape):
    """A `*_like` allocation's shape: `shape` where given, else `a`'s (typed: overload)."""


@overload(shape_of)
def _shape_of(a, shape):
    if _given(shape):
        return lambda a, shape: shape
    return lambda a, shape: a.shape


def _like_allocator(name, a, dtype, order, device, usm_type, sycl_queue, fill):
    """The allocator of a `*_like(a, ...)` call: a's dtype, usm_type and queue unless given."""
    if not isinstance(a, USMArrayType):
        raise errors.TypingError(
            f"dpnp.{name}() in an offloaded function takes a USM array; got {a}"
        )
    _check_order(order, name, ("C", "K", "A"))
    place = _device_of(name, device, sycl_queue, like=a)
    kind, chosen = _kind_and_dtype(name, dtype, fill, place, like=a)
    return allocator(kind, chosen, _literal(usm_type, "usm_type=", name) or a.usm_type, place)


for _name, _fill in (("empty", None), ("zeros", 0), ("ones", 1)):
    _plain(_name, _fill)
    _like(f"{_name}_like", _fill)
