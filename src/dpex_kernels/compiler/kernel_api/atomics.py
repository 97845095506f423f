"""Atomics on global and local arrays: dk.atomic.add, sub, min, max, exchange, compare_exchange.

Float add, sub, min and max on global and local arrays lower to `dpex.atomic.*` placeholders,
which codegen defines for the kernel's device (float_atomic_definitions): the device's native
float atomics where it has them (float_atomics.py), compare-and-swap loops elsewhere. Numba's
output thus stays the same for every device; only the specialisation differs.
"""

from __future__ import annotations

import re

from llvmlite import ir
from numba.core import cgutils
from numba.core import types as nbtypes
from numba.core.typing.templates import AbstractTemplate, signature

from .registry import call_builtin, host_stub, lowering_registry, typing_registry
from .spirv import GLOBAL, LOCAL, SCOPE_CROSS_DEVICE, TYPE_CODES

_I32 = ir.IntType(32)


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


def element_pointer(context, builder, arr_type, arr, idx_type, idx):
    array = context.make_array(arr_type)(context, builder, arr)
    if isinstance(idx_type, nbtypes.BaseTuple):
        indices = cgutils.unpack_tuple(builder, idx, len(idx_type))
        index_types = list(idx_type)
    else:
        indices, index_types = [idx], [idx_type]
    indices = [context.cast(builder, i, t, nbtypes.intp) for i, t in zip(indices, index_types)]
    return cgutils.get_item_pointer(
        context,
        builder,
        arr_type,
        array,
        indices,
        wraparound=True,
        boundscheck=context.enable_boundscheck,
    )


def as_int(builder, value, dtype):
    width = dtype.bitwidth
    return builder.bitcast(value, ir.IntType(width)) if isinstance(dtype, nbtypes.Float) else value


def compare_exchange_bits(
    builder, pointer, expected, desired, scope=SCOPE_CROSS_DEVICE, equal=0, unequal=0
) -> ir.Value:
    """SPIR-V's OpAtomicCompareExchange on integers of 32 or 64 bits, with SPIR-V's `scope`
    and memory semantics when `equal` and not; returns the old value.

    LLVM's cmpxchg returns a {value, success} pair that the optimiser moves into phis of CAS
    loops, and the SPIR-V back end aborts the process on such a phi ("illegal aggregate
    intrinsic user"). The SPIR-V built-in returns a plain scalar, so no pair ever exists.
    """
    integer = expected.type
    code = TYPE_CODES[f"uint{integer.width}"]
    space = pointer.type.addrspace
    pointer = builder.bitcast(pointer, integer.as_pointer(space))
    qualifier = f"PU3AS{space}" if space else "P"
    name = f"_Z29__spirv_AtomicCompareExchange{qualifier}{code}iii{code}{code}"
    constants = [ir.Constant(_I32, value) for value in (scope, equal, unequal)]
    return call_builtin(
        builder,
        name,
        integer,
        [pointer.type, _I32, _I32, _I32, integer, integer],
        [pointer, *constants, desired, expected],
    )


def compare_exchange(builder, pointer, expected, desired, dtype, *order) -> ir.Value:
    """Compare-exchange of one array element of `dtype`, on its bit pattern (`order`: scope
    and semantics, as compare_exchange_bits takes them)."""
    old = compare_exchange_bits(
        builder, pointer, as_int(builder, expected, dtype), as_int(builder, desired, dtype), *order
    )
    return builder.bitcast(old, expected.type) if isinstance(dtype, nbtypes.Float) else old


def cas_loop(builder, pointer, dtype, update, *order):
    """Atomically replace *pointer with update(old) by compare-and-swap; return old (`order`:
    scope and semantics, as compare_exchange_bits takes them).

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
    seen = compare_exchange(builder, pointer, current, update(current), dtype, *order)
    current.add_incoming(seen, builder.block)
    swapped = builder.icmp_unsigned(
        "==", as_int(builder, seen, dtype), as_int(builder, current, dtype)
    )
    builder.cbranch(swapped, done, loop)
    builder.position_at_end(done)
    return current


def float_update(builder, op: str):
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


_SPACES = {GLOBAL: "global", LOCAL: "local"}
_NATIVE_OPS = {"add": "fadd", "sub": "fsub", "min": "fmin", "max": "fmax"}
_PLACEHOLDER = re.compile(
    r'@"?dpex\.atomic\.(add|sub|min|max)\.(float32|float64)\.(global|local)"?\('
)


def float_atomic(builder, op: str, pointer, value, dtype) -> ir.Value:
    """A float add/sub/min/max: a placeholder call on global and local memory, else a loop."""
    space = _SPACES.get(pointer.type.addrspace)
    if space is None:  # private memory: only this work-item sees it
        return cas_loop(builder, pointer, dtype, float_update(builder, op)(value))
    name = f"dpex.atomic.{op}.{dtype}.{space}"
    fnty = ir.FunctionType(value.type, [pointer.type, value.type])
    placeholder = cgutils.get_or_insert_function(builder.module, fnty, name)
    return builder.call(placeholder, [pointer, value])


def _capability(op: str, dtype: str, space: str) -> str:
    """The cl_ext_float_atomics capability an operation needs, as float_atomics.py names it."""
    return f"{dtype}.{space}.{'add' if op in ('add', 'sub') else 'minmax'}"


def float_atomic_paths(linked_ir: str, native: frozenset[str]) -> dict[str, str]:
    """How each float atomic a kernel uses is compiled: {"float32.local.add": "native"|"cas"}."""
    return {
        f"{dtype}.{space}.{op}": "native" if _capability(op, dtype, space) in native else "cas"
        for op, dtype, space in sorted(set(_PLACEHOLDER.findall(linked_ir)))
    }


def float_atomic_definitions(linked_ir: str, native: frozenset[str]) -> str:
    """LLVM IR defining the `dpex.atomic.*` placeholders `linked_ir` calls, for a device
    whose native float atomics are `native`."""
    module = ir.Module("dpex.float_atomics")
    for key, path in float_atomic_paths(linked_ir, native).items():
        dtype_name, space, op = key.split(".")
        dtype = getattr(nbtypes, dtype_name)
        element = ir.FloatType() if dtype is nbtypes.float32 else ir.DoubleType()
        pointer_type = element.as_pointer(GLOBAL if space == "global" else LOCAL)
        fnty = ir.FunctionType(element, [pointer_type, element])
        function = ir.Function(module, fnty, f"dpex.atomic.{op}.{dtype_name}.{space}")
        function.attributes.add("alwaysinline")
        builder = ir.IRBuilder(function.append_basic_block("entry"))
        pointer, value = function.args
        if path == "native":
            old = builder.atomic_rmw(_NATIVE_OPS[op], pointer, value, "monotonic")
        else:
            old = cas_loop(builder, pointer, dtype, float_update(builder, op)(value))
        builder.ret(old)
    return str(module)


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
        pointer = element_pointer(context, builder, arr_type, args[0], idx_type, args[1])
        value = args[2]
        if isinstance(dtype, nbtypes.Float):
            if op == "exchange":  # an integer exchange of the bit pattern: native everywhere
                integer = ir.IntType(dtype.bitwidth)
                bits = builder.bitcast(pointer, integer.as_pointer(pointer.type.addrspace))
                old = builder.atomic_rmw("xchg", bits, as_int(builder, value, dtype), "monotonic")
                return builder.bitcast(old, value.type)
            return float_atomic(builder, op, pointer, value, dtype)
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
def _lowercompare_exchange(context, builder, sig, args):
    arr_type, idx_type, dtype, _ = sig.args
    pointer = element_pointer(context, builder, arr_type, args[0], idx_type, args[1])
    return compare_exchange(builder, pointer, args[2], args[3], dtype)
