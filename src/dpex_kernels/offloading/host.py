"""What the rewritten host function calls besides kernels: USM allocation, trip counts.

USM arrays made inside compiled code are dpnp arrays made by a call back into Python (with the
GIL), unboxed like arguments and owned through a Numba MemInfo that holds the dpnp object: the
launcher can pass them to kernels (their parent is the array object) and returning one gives
Python that very dpnp array.
"""

from __future__ import annotations

import ctypes
import functools
import mmap
from pathlib import Path

import dpnp
import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic, overload
from numba.core.typing.templates import signature

from ..compiler.backend import host_simd
from ..dispatcher import njit  # noqa: F401  (usm_array typing and unboxing in @njit code)
from ..types.usm_array_type import USMArrayType, scalar_type

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_PTR = ir.IntType(8).as_pointer()

#: The Python callables compiled code calls by address: kept alive with the process.
_CALLBACKS: list = []


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
    start = array.__sycl_usm_array_interface__["data"][0]
    first = -(-start // _HUGE_PAGE) * _HUGE_PAGE
    end = (start + array.nbytes) // _HUGE_PAGE * _HUGE_PAGE
    if end <= first:
        return False
    return _madvise()(first, end - first, _MADV_HUGEPAGE) == 0


@functools.cache
def last_level_cache_bytes() -> int:
    """The size of the host CPU's largest cache (Linux sysfs; 32 MiB where it cannot be read)."""
    sizes = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        if text[:-1].isdigit() and text[-1] in "KMG":
            sizes.append(int(text[:-1]) << {"K": 10, "M": 20, "G": 30}[text[-1]])
    return max(sizes, default=32 << 20)


def streaming_bytes() -> int:
    """How much memory a loop's arrays take before its stores stream: a quarter of the
    last-level cache, the share glibc (2.38 and later) gives memcpy before it streams. The
    cache is shared with the machine's other cores, so a loop outgrows its share well below
    the whole: on a 2-core VM of a 480 MiB Xeon, a float32 vecadd streamed faster from 96 MiB
    of arrays and 1.4-1.5x faster at 192 MiB, and the 4096^2 stencil (128 MiB) 1.3x faster."""
    return last_level_cache_bytes() // 4


def worth_host_simd(iterations: int, chunk: int, nbytes: int) -> bool:
    """Whether a streaming loop takes its host-SIMD kernel rather than its plain one: only for
    a chunk of iterations or more over arrays that together outgrow their share of the cache
    (streaming_bytes). Below it, streaming stores would evict what the next loop reads. (A
    reduction has no stores to stream and needs only a chunk of iterations: its vector
    accumulators beat the plain kernel's work-group tree at every size measured, a float32 sum
    1.1-1.5x faster from 2^16 to 2^25 elements, all within a 480 MiB cache; outline.py tests
    that count.)"""
    return iterations >= chunk and nbytes >= streaming_bytes()


def first_address(array) -> int:
    """The address of a USM array's first element."""
    interface = array.__sycl_usm_array_interface__
    return interface["data"][0] + (interface.get("offset") or 0) * array.itemsize


_fits_compiled = numba.njit(host_simd.fits, cache=False)


def laid_out_for_simd(value) -> bool:
    """In compiled host code: whether a kernel argument is laid out as a host-SIMD kernel
    assumes (`host_simd.fits` for an array; a scalar always is)."""
    raise TypeError("laid_out_for_simd() is for compiled host code")


@overload(laid_out_for_simd)
def _laid_out_for_simd(value):
    if isinstance(value, USMArrayType):
        return lambda value: _fits_compiled(value.ctypes.data, value.shape, value.itemsize)
    return lambda value: True


def built_as_simd(kernel):
    """An intrinsic () -> bool: whether `kernel` (a RegionKernel with a plain fallback) was
    built as host SIMD. Its value is decided when the host function is lowered, after typing
    compiled the kernel, so compiled code never launches a kernel that was refused."""

    @intrinsic
    def simd(typingctx):
        def codegen(context, builder, sig, args):
            return context.get_constant(types.boolean, kernel.refusal is None)

        return signature(types.boolean), codegen

    return simd


#: Reductions' partial-result buffers no call is using, by (queue or device, dtype, USM type).
#: A fresh buffer made the offloaded 2^24 float32 dot 0.15-0.3 ms slower than one used before
#: (its pages are new to the kernel), the 2^20 one 0.065 ms (of 0.4); docs/offload.md.
_SCRATCH: dict[tuple, list] = {}
#: Buffers kept per key: more calls in flight at once (threads) each get a fresh one.
_SCRATCH_KEPT = 4
#: Keys kept: a program that makes a new queue per call keeps only the latest queues alive.
_SCRATCH_KEYS = 16


def _placement(device: str | None, source) -> dict:
    """dpnp's placement keywords of an allocation: `source`'s queue if given, else `device`."""
    return {"sycl_queue": source.sycl_queue} if source is not None else {"device": device}


def _scratch_key(dtype: str, usm_type: str, device: str | None, source) -> tuple:
    return (source.sycl_queue if source is not None else device, dtype, usm_type)


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
    array = dpnp.empty(shape, dtype=dtype, usm_type=usm_type, **placement)
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


@functools.cache
def allocator(kind: str, dtype, usm_type: str, device: str, dtype_of=None):
    """An intrinsic (shape, fill, source, witness) -> a new usm_array on `device`.

    `dtype` is fixed, or None: then `dtype_of(witness type)` decides it when the host function
    is typed (the element type of an array expression, a reduction's accumulator).
    `source` is an array whose queue the allocation shares, or None (`device` decides).
    """

    @intrinsic
    def allocate(typingctx, shape, fill, source, witness):
        ndim = _ndim_of(shape)
        if ndim is None:
            return None
        element = scalar_type(dtype) if dtype is not None else dtype_of(witness)
        placed = source.device if isinstance(source, USMArrayType) else device
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
            if isinstance(sig.args[2], USMArrayType):
                source_obj = context.make_array(sig.args[2])(context, builder, args[2]).parent
            else:
                source_obj = pyapi.borrow_none()
            fn = context.add_dynamic_addr(builder, id(callback), info="offload allocation")
            obj = pyapi.call_function_objargs(fn, [shape_obj, fill_obj, source_obj])
            pyapi.decref(shape_obj)
            pyapi.decref(fill_obj)
            array = context.make_array(result)(context, builder)
            failed = cgutils.alloca_once_value(builder, cgutils.true_bit)
            with builder.if_then(cgutils.is_not_null(builder, obj)):
                unbox = cgutils.get_or_insert_function(
                    builder.module,
                    ir.FunctionType(_I32, [_PTR, _I64.as_pointer(), _I32]),
                    "dpex_unbox_usm_array",
                )
                out = builder.bitcast(array._getpointer(), _I64.as_pointer())
                status = builder.call(unbox, [obj, out, ir.Constant(_I32, ndim)])
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
            if isinstance(sig.args[1], USMArrayType):
                source_obj = context.make_array(sig.args[1])(context, builder, args[1]).parent
            else:
                source_obj = pyapi.borrow_none()
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


@numba.njit(cache=False)
def trip_count(start, stop, step):  # pragma: no cover (compiled)
    """Iterations of range(start, stop, step), as Python counts them."""
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    if step < 0:
        return max(0, (start - stop - step - 1) // -step)
    raise ValueError("prange() arg 3 must not be zero")


def numpy_example(argtype):
    """A NumPy stand-in of one operand type, to let NumPy decide an expression's dtype."""
    if isinstance(argtype, types.Array):
        return np.ones(1, dtype=str(argtype.dtype))
    if isinstance(argtype, types.Boolean):
        return True
    if isinstance(argtype, types.Integer):
        return 1
    if isinstance(argtype, types.Float):
        return 1.0
    if isinstance(argtype, types.Complex):
        return 1j
    raise TypeError(f"an element-wise array expression takes arrays and scalars; got {argtype}")
