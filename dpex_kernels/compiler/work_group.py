"""Work-group features for kernels: local and private arrays, barriers, atomics, sub-groups.

Like kernel_api.py, each feature keeps its Python stub, typing and lowering together; the
stubs are published as dk.local, dk.private, dk.atomic, dk.sub_group and dk.barrier.
"""

from __future__ import annotations

import math
import types as pytypes

import numpy as np
from llvmlite import ir
from numba.core import cgutils
from numba.core import types as nbtypes
from numba.core.typing.templates import AbstractTemplate, signature
from numba.np.arrayobj import populate_array

from .kernel_api import host_stub, lowering_registry, typing_registry
from .target import PRIVATE, LocalArrayType

LOCAL_MEM_FENCE = 1
GLOBAL_MEM_FENCE = 2

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def _builtin(builder, name: str, return_type, arg_types, args, convergent: bool = False):
    """Call an OpenCL built-in by its Itanium-mangled name."""
    fnty = ir.FunctionType(return_type, arg_types)
    function = cgutils.get_or_insert_function(builder.module, fnty, name)
    function.calling_convention = "spir_func"
    if convergent:
        function.attributes.add("convergent")
    return builder.call(function, args, cconv="spir_func")


# --- local and private arrays -----------------------------------------------------------


def _literal_shape(shape_type) -> tuple[int, ...] | None:
    if isinstance(shape_type, nbtypes.IntegerLiteral):
        return (shape_type.literal_value,)
    if isinstance(shape_type, nbtypes.BaseTuple) and all(
        isinstance(t, nbtypes.IntegerLiteral) for t in shape_type
    ):
        return tuple(t.literal_value for t in shape_type)
    return None


def _dtype_of(dtype_type):
    if isinstance(dtype_type, nbtypes.DTypeSpec):
        return dtype_type.dtype
    if isinstance(dtype_type, nbtypes.StringLiteral):
        try:
            return nbtypes.from_dtype(np.dtype(dtype_type.literal_value))
        except (TypeError, ValueError, NotImplementedError):
            return None
    return None


def _array_allocator(name: str, public: str, make_type, place):
    stub = host_stub(name, f"In a kernel: {public}(shape, dtype), shape a constant.", public)

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        def generic(self, args, kws):
            if kws or len(args) != 2:
                return None
            shape, dtype = _literal_shape(args[0]), _dtype_of(args[1])
            if shape is None or dtype is None or any(n <= 0 for n in shape):
                return None
            return signature(make_type(dtype, len(shape)), *args)

    @lowering_registry.lower(stub, nbtypes.Any, nbtypes.Any)
    def _lower(context, builder, sig, args):
        array_type = sig.return_type
        shape = _literal_shape(sig.args[0])
        element = context.get_data_type(array_type.dtype)
        data = place(builder, ir.ArrayType(element, math.prod(shape)))
        data = builder.bitcast(data, element.as_pointer(data.type.addrspace))
        itemsize = context.get_abi_sizeof(element)
        strides, step = [], itemsize
        for extent in reversed(shape):
            strides.insert(0, step)
            step *= extent
        intp = context.get_value_type(nbtypes.intp)
        array = context.make_array(array_type)(context, builder)
        populate_array(
            array,
            data=data,
            shape=[intp(n) for n in shape],
            strides=[intp(n) for n in strides],
            itemsize=itemsize,
            meminfo=None,
        )
        return array._getvalue()

    return stub


def _place_local(builder, array_type):
    module = builder.module
    variable = ir.GlobalVariable(
        module, array_type, module.get_unique_name("dpex.local"), addrspace=LocalArrayType.addrspace
    )
    variable.linkage = "internal"
    variable.initializer = ir.Constant(array_type, ir.Undefined)
    return variable


def _place_private(builder, array_type):
    with builder.goto_entry_block():
        return builder.alloca(array_type)


local_array = _array_allocator(
    "local_array",
    "dk.local.array",
    LocalArrayType,
    _place_local,
)
private_array = _array_allocator(
    "private_array",
    "dk.private.array",
    lambda dtype, ndim: nbtypes.Array(dtype, ndim, "C"),
    _place_private,
)
assert PRIVATE == 0  # private arrays are Numba's own arrays: address space 0 is private

# --- barriers ---------------------------------------------------------------------------


def _flags(context, builder, sig, args):
    """The fence flags argument as the i32 OpenCL wants (LOCAL_MEM_FENCE when omitted)."""
    if not args:
        return ir.Constant(_I32, LOCAL_MEM_FENCE)
    return context.cast(builder, args[0], sig.args[0], nbtypes.uint32)


def _barrier_function(name: str, public: str, mangled: str, doc: str):
    stub = host_stub(name, doc, public)

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        def generic(self, args, kws):
            if not kws and len(args) <= 1 and all(isinstance(a, nbtypes.Integer) for a in args):
                return signature(nbtypes.none, *args)
            return None

    @lowering_registry.lower(stub)
    @lowering_registry.lower(stub, nbtypes.Integer)
    def _lower(context, builder, sig, args):
        flags = _flags(context, builder, sig, args)
        _builtin(builder, mangled, ir.VoidType(), [_I32], [flags], convergent=True)
        return context.get_dummy_value()

    return stub


barrier = _barrier_function(
    "barrier", "dk.barrier", "_Z7barrierj", "In a kernel: wait for the work-group; fence memory."
)


# --- atomics ----------------------------------------------------------------------------

_ATOMIC_DTYPES = (
    nbtypes.int32,
    nbtypes.int64,
    nbtypes.uint32,
    nbtypes.uint64,
    nbtypes.float32,
    nbtypes.float64,
)


def _atomic_target(arr, idx):
    if not isinstance(arr, nbtypes.Array) or arr.dtype not in _ATOMIC_DTYPES:
        return False
    if isinstance(idx, nbtypes.Integer):
        return arr.ndim == 1
    return (
        isinstance(idx, nbtypes.BaseTuple)
        and len(idx) == arr.ndim
        and all(isinstance(t, nbtypes.Integer) for t in idx)
    )


def _element_pointer(context, builder, arr_type, arr, idx_type, idx):
    array = context.make_array(arr_type)(context, builder, arr)
    if isinstance(idx_type, nbtypes.BaseTuple):
        indices = cgutils.unpack_tuple(builder, idx, len(idx_type))
        index_types = list(idx_type)
    else:
        indices, index_types = [idx], [idx_type]
    indices = [context.cast(builder, i, t, nbtypes.intp) for i, t in zip(indices, index_types)]
    return cgutils.get_item_pointer(context, builder, arr_type, array, indices, wraparound=True)


def _as_int(builder, value, dtype):
    width = dtype.bitwidth
    return builder.bitcast(value, ir.IntType(width)) if isinstance(dtype, nbtypes.Float) else value


_SPIRV_INT_CODES = {(32, True): "i", (32, False): "j", (64, True): "l", (64, False): "m"}
_CROSS_DEVICE, _RELAXED = 0, 0  # the scope and semantics LLVM gives atomicrmw "monotonic"


def _compare_exchange(builder, pointer, expected, desired, dtype) -> ir.Value:
    """SPIR-V's OpAtomicCompareExchange on the bit patterns; returns the old value.

    LLVM's cmpxchg returns a {value, success} pair that the optimiser moves into phis of CAS
    loops, and the SPIR-V back end aborts the process on such a phi ("illegal aggregate
    intrinsic user"). The SPIR-V built-in returns a plain scalar, so no pair ever exists.
    """
    width = dtype.bitwidth
    integer = ir.IntType(width)
    code = _SPIRV_INT_CODES[width, getattr(dtype, "signed", False)]
    space = pointer.type.addrspace
    qualifier = f"PU3AS{space}" if space else "P"
    name = f"_Z29__spirv_AtomicCompareExchange{qualifier}{code}iii{code}{code}"
    scope, semantics = ir.Constant(_I32, _CROSS_DEVICE), ir.Constant(_I32, _RELAXED)
    old = _builtin(
        builder,
        name,
        integer,
        [pointer.type, _I32, _I32, _I32, integer, integer],
        [
            pointer,
            scope,
            semantics,
            semantics,
            _as_int(builder, desired, dtype),
            _as_int(builder, expected, dtype),
        ],
    )
    return builder.bitcast(old, expected.type) if isinstance(dtype, nbtypes.Float) else old


def _cas_loop(builder, pointer, dtype, update):
    """Atomically replace *pointer with update(old) by compare-and-swap; return old.

    The swap compares bit patterns, so it terminates for NaNs and tells -0.0 from 0.0.
    """
    start = builder.load(pointer)
    entry = builder.block
    loop = builder.append_basic_block("atomic.cas")
    done = builder.append_basic_block("atomic.done")
    builder.branch(loop)
    builder.position_at_end(loop)
    current = builder.phi(start.type)
    current.add_incoming(start, entry)
    seen = _compare_exchange(builder, pointer, current, update(current), dtype)
    current.add_incoming(seen, builder.block)
    swapped = builder.icmp_unsigned(
        "==", _as_int(builder, seen, dtype), _as_int(builder, current, dtype)
    )
    builder.cbranch(swapped, done, loop)
    builder.position_at_end(done)
    return current


def _float_update(builder, op: str):
    if op == "add":
        return lambda value: lambda old: builder.fadd(old, value)
    if op == "sub":
        return lambda value: lambda old: builder.fsub(old, value)
    if op == "min":
        return lambda value: (
            lambda old: builder.select(builder.fcmp_ordered("<", value, old), value, old)
        )
    return lambda value: (
        lambda old: builder.select(builder.fcmp_ordered(">", value, old), value, old)
    )


def _atomic_rmw(op: str):
    public = f"dk.atomic.{op}"
    stub = host_stub(
        f"atomic_{op}",
        public=public,
        doc=f"In a kernel: {public}(arr, idx, val); returns the old value.",
    )

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        def generic(self, args, kws):
            if kws or len(args) != 3 or not _atomic_target(args[0], args[1]):
                return None
            if not isinstance(args[2], (nbtypes.Number, nbtypes.Boolean)):
                return None
            dtype = args[0].dtype
            return signature(dtype, args[0], args[1], dtype)

    @lowering_registry.lower(stub, nbtypes.Array, nbtypes.Any, nbtypes.Any)
    def _lower(context, builder, sig, args):
        arr_type, idx_type, dtype = sig.args
        pointer = _element_pointer(context, builder, arr_type, args[0], idx_type, args[1])
        value = args[2]
        if isinstance(dtype, nbtypes.Float):
            if op == "exchange":
                return _cas_loop(builder, pointer, dtype, lambda old: value)
            return _cas_loop(builder, pointer, dtype, _float_update(builder, op)(value))
        signed = dtype.signed
        llvm_op = {
            "add": "add",
            "sub": "sub",
            "exchange": "xchg",
            "min": "min" if signed else "umin",
            "max": "max" if signed else "umax",
        }[op]
        return builder.atomic_rmw(llvm_op, pointer, value, "monotonic")

    return stub


atomic_add = _atomic_rmw("add")
atomic_sub = _atomic_rmw("sub")
atomic_min = _atomic_rmw("min")
atomic_max = _atomic_rmw("max")
atomic_exchange = _atomic_rmw("exchange")

atomic_compare_exchange = host_stub(
    "atomic_compare_exchange",
    public="dk.atomic.compare_exchange",
    doc="In a kernel: store `desired` where arr[idx] == `expected` (bitwise); return the old.",
)


@typing_registry.register_global(atomic_compare_exchange)
class _CompareExchangeTemplate(AbstractTemplate):
    def generic(self, args, kws):
        if kws or len(args) != 4 or not _atomic_target(args[0], args[1]):
            return None
        if not all(isinstance(a, (nbtypes.Number, nbtypes.Boolean)) for a in args[2:]):
            return None
        dtype = args[0].dtype
        return signature(dtype, args[0], args[1], dtype, dtype)


@lowering_registry.lower(
    atomic_compare_exchange, nbtypes.Array, nbtypes.Any, nbtypes.Any, nbtypes.Any
)
def _lower_compare_exchange(context, builder, sig, args):
    arr_type, idx_type, dtype, _ = sig.args
    pointer = _element_pointer(context, builder, arr_type, args[0], idx_type, args[1])
    return _compare_exchange(builder, pointer, args[2], args[3], dtype)


# --- sub-groups -------------------------------------------------------------------------

_SUB_GROUP_CODES = {
    nbtypes.int32: "i",
    nbtypes.uint32: "j",
    nbtypes.int64: "l",
    nbtypes.uint64: "m",
    nbtypes.float32: "f",
    nbtypes.float64: "d",
}


def _sub_group_query(name: str, mangled: str, doc: str):
    stub = host_stub(f"sub_group_{name}", public=f"dk.sub_group.{name}", doc=doc)

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        def generic(self, args, kws):
            return signature(nbtypes.intp) if not args and not kws else None

    @lowering_registry.lower(stub)
    def _lower(context, builder, sig, args):
        return builder.zext(_builtin(builder, mangled, _I32, [], []), _I64)

    return stub


sub_group_get_local_id = _sub_group_query(
    "get_local_id", "_Z22get_sub_group_local_idv", "In a kernel: the work-item's sub-group lane."
)
sub_group_get_size = _sub_group_query(
    "get_size", "_Z18get_sub_group_sizev", "In a kernel: the number of lanes of the sub-group."
)

sub_group_reduce_add = host_stub(
    "sub_group_reduce_add",
    public="dk.sub_group.reduce_add",
    doc="In a kernel: the sum of `x` over the sub-group.",
)


@typing_registry.register_global(sub_group_reduce_add)
class _ReduceAddTemplate(AbstractTemplate):
    def generic(self, args, kws):
        if not kws and len(args) == 1 and args[0] in _SUB_GROUP_CODES:
            return signature(args[0], args[0])
        return None


@lowering_registry.lower(sub_group_reduce_add, nbtypes.Number)
def _lower_reduce_add(context, builder, sig, args):
    (dtype,) = sig.args
    llvm_type = context.get_value_type(dtype)
    return _builtin(
        builder,
        f"_Z20sub_group_reduce_add{_SUB_GROUP_CODES[dtype]}",
        llvm_type,
        [llvm_type],
        args,
        convergent=True,
    )


def _sub_group_exchange(name: str, mangled_prefix: str, doc: str):
    stub = host_stub(f"sub_group_{name}", public=f"dk.sub_group.{name}", doc=doc)

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        def generic(self, args, kws):
            if (
                not kws
                and len(args) == 2
                and args[0] in _SUB_GROUP_CODES
                and isinstance(args[1], nbtypes.Integer)
            ):
                return signature(args[0], args[0], nbtypes.uint32)
            return None

    @lowering_registry.lower(stub, nbtypes.Number, nbtypes.Integer)
    def _lower(context, builder, sig, args):
        dtype = sig.args[0]
        llvm_type = context.get_value_type(dtype)
        return _builtin(
            builder,
            f"{mangled_prefix}{_SUB_GROUP_CODES[dtype]}j",
            llvm_type,
            [llvm_type, _I32],
            args,
            convergent=True,
        )

    return stub


sub_group_shuffle = _sub_group_exchange(
    "shuffle", "_Z17sub_group_shuffle", "In a kernel: `x` as held by sub-group lane `lane`."
)
sub_group_broadcast = _sub_group_exchange(
    "broadcast",
    "_Z19sub_group_broadcast",
    "In a kernel: `x` of lane `lane` (the same lane in every work-item) to all lanes.",
)

sub_group_barrier = _barrier_function(
    "sub_group_barrier",
    "dk.sub_group.barrier",
    "_Z17sub_group_barrierj",
    "In a kernel: wait for the sub-group.",
)


# --- the public namespaces --------------------------------------------------------------


def _namespace(name: str, doc: str, **members) -> pytypes.ModuleType:
    module = pytypes.ModuleType(f"dpex_kernels.{name}", doc)
    for attribute, value in members.items():
        setattr(module, attribute, value)
    return module


local = _namespace("local", "Work-group local memory.", array=local_array)
private = _namespace("private", "Per-work-item private memory.", array=private_array)
atomic = _namespace(
    "atomic",
    "Atomic read-modify-write on global and local arrays (relaxed ordering).",
    add=atomic_add,
    sub=atomic_sub,
    min=atomic_min,
    max=atomic_max,
    exchange=atomic_exchange,
    compare_exchange=atomic_compare_exchange,
)
sub_group = _namespace(
    "sub_group",
    "Sub-group queries and collectives.",
    get_local_id=sub_group_get_local_id,
    get_size=sub_group_get_size,
    reduce_add=sub_group_reduce_add,
    shuffle=sub_group_shuffle,
    broadcast=sub_group_broadcast,
    barrier=sub_group_barrier,
)
