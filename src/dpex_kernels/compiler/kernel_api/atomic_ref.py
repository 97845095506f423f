"""SYCL 2020's atomics: dk.AtomicRef with memory orders and scopes, dk.atomic_fence and
dk.group_barrier.

`dk.AtomicRef(array, index, memory_order=, memory_scope=, address_space=)` refers to one element
of a global or local array; its methods lower to SPIR-V's atomic built-ins (`__spirv_Atomic*`)
with the order and scope as the constants SPIR-V takes. Integer operations are the device's
own. A float fetch_add/sub/min/max is the device's native float atomic where it has one and
the order is relaxed (atomics.py's placeholders), else a compare-and-swap loop with the order
asked for. An order or scope the device's atomics (or fences) do not take, as its Target
records them, is refused where the call is lowered, naming it.
"""

from __future__ import annotations

import inspect

from llvmlite import ir
from numba.core import errors, types
from numba.core.datamodel import models, register_default
from numba.core.typing.templates import AbstractTemplate, AttributeTemplate, signature

from ...types.kernel_objects import MemoryOrder, MemoryScope
from ...types.usm_array_type import USMArrayType
from .atomics import as_int, cas_loop, compare_exchange, element_pointer, float_atomic
from .atomics import float_update as float_updates
from .items import GroupType, SubGroupType
from .memory import LocalArrayType
from .registry import call_builtin, compile_target, host_stub, lowering_registry, typing_registry
from .spirv import GLOBAL, LOCAL

_I32 = ir.IntType(32)

#: SPIR-V's memory semantics: the order bits, and the storage class bits they order.
_ORDER_BITS = {
    MemoryOrder.RELAXED: 0x0,
    MemoryOrder.ACQUIRE: 0x2,
    MemoryOrder.RELEASE: 0x4,
    MemoryOrder.ACQ_REL: 0x8,
    MemoryOrder.SEQ_CST: 0x10,
}
_STORAGE_BITS = {GLOBAL: 0x200, LOCAL: 0x100}  # CrossWorkgroupMemory, WorkgroupMemory
#: SPIR-V's scope of each of SYCL's (CrossDevice, Device, Workgroup, Subgroup, Invocation).
SPIRV_SCOPES = {
    MemoryScope.SYSTEM: 0,
    MemoryScope.DEVICE: 1,
    MemoryScope.WORK_GROUP: 2,
    MemoryScope.SUB_GROUP: 3,
    MemoryScope.WORK_ITEM: 4,
}
_DTYPES = (types.int32, types.int64, types.uint32, types.uint64, types.float32, types.float64)


def check_device_takes(what: str, order: MemoryOrder, scope: MemoryScope, fence: bool) -> None:
    """Refuse an order or scope that the device being compiled for does not take in atomic
    operations (or in fences, with `fence`)."""
    target = compile_target()
    if target is None:
        return
    takes = target.atomic_fence if fence else target.atomic_memory
    if takes is None:  # not known: the device's compiler decides
        return
    for value in (order, scope):
        if value.name not in takes:
            kind = type(value)
            offered = ", ".join(f"dk.{kind.__name__}.{m.name}" for m in kind if m.name in takes)
            raise errors.UnsupportedError(
                f"{what} with dk.{kind.__name__}.{value.name}: device {target.device} does not "
                f"support that {'order' if kind is MemoryOrder else 'scope'} in "
                f"{'fences' if fence else 'atomic operations'}; use one it does: {offered}"
            )


def semantics(order: MemoryOrder, storage: int) -> int:
    """SPIR-V memory semantics: `order` on the storage classes whose bits are `storage`."""
    bits = _ORDER_BITS[order]
    return bits | storage if bits else 0


class AtomicRefType(types.Type):
    """A reference to one array element, updated atomically with one order and scope."""

    def __init__(self, dtype, addrspace: int, order: MemoryOrder, scope: MemoryScope):
        self.dtype, self.addrspace, self.order, self.scope = dtype, addrspace, order, scope
        space = "global" if addrspace == GLOBAL else "local"
        super().__init__(name=f"AtomicRef({dtype}, {space}, {order.name}, {scope.name})")


@register_default(AtomicRefType)
class _AtomicRefModel(models.PrimitiveModel):
    """The element's pointer, in its address space."""

    def __init__(self, dmm, fe_type):
        element = dmm.lookup(fe_type.dtype).get_data_type()
        super().__init__(dmm, fe_type, element.as_pointer(fe_type.addrspace))


def constant_enum(enum, value_type, what: str, default=None):
    """The member of `enum` a constant argument names, `default` where it was left out."""
    if isinstance(value_type, (types.Omitted, types.NoneType)) or value_type is None:
        value = getattr(value_type, "value", None)
        if value is None:
            return default
        return enum(int(value))
    if isinstance(value_type, types.IntegerLiteral) and value_type.literal_value in set(enum):
        return enum(value_type.literal_value)
    names = ", ".join(f"dk.{enum.__name__}.{member.name}" for member in enum)
    raise errors.TypingError(f"{what} is a constant: one of {names}; got {value_type}")


def _array_space(array_type) -> int | None:
    if isinstance(array_type, LocalArrayType):
        return LOCAL
    if isinstance(array_type, USMArrayType):
        return GLOBAL
    return None


def _atomic_ref(ref, index, memory_order=MemoryOrder.RELAXED, memory_scope=MemoryScope.DEVICE,
                address_space=None):  # fmt: skip
    """dk.AtomicRef's Python signature (the stub's arguments are folded by it)."""


AtomicRef = host_stub(
    "AtomicRef",
    "In a kernel: an atomic reference to array[index]: AtomicRef(array, index, "
    "memory_order=dk.MemoryOrder.RELAXED, memory_scope=dk.MemoryScope.DEVICE).",
    "dk.AtomicRef",
)
_CONSTRUCTOR = inspect.signature(_atomic_ref)


@typing_registry.register_global(AtomicRef)
class _AtomicRefTemplate(AbstractTemplate):
    key = AtomicRef
    prefer_literal = True

    def generic(self, args, kws):
        try:
            bound = _CONSTRUCTOR.bind(*args, **kws)
        except TypeError:
            return None
        ref, index = bound.arguments["ref"], bound.arguments["index"]
        space = _array_space(ref)
        if space is None:
            if isinstance(ref, types.Array):
                raise errors.TypingError(
                    "dk.AtomicRef takes an element of a global (USM) or local array; a private "
                    "array is one work-item's own, which needs no atomics"
                )
            return None
        if not ref.mutable:
            raise errors.TypingError(
                "dk.AtomicRef of a read-only array: declare the parameter writable, or pass "
                "a writable array"
            )
        if ref.dtype not in _DTYPES:
            raise errors.TypingError(
                f"dk.AtomicRef of an array of {ref.dtype}: atomics take int32, int64, uint32, "
                f"uint64, float32 or float64"
            )
        integer_index = isinstance(index, types.Integer) and ref.ndim == 1
        tuple_index = isinstance(index, types.BaseTuple) and len(index) == ref.ndim
        if not (integer_index or tuple_index):
            return None
        order = constant_enum(
            MemoryOrder, bound.arguments.get("memory_order"), "memory_order", MemoryOrder.RELAXED
        )
        scope = constant_enum(
            MemoryScope, bound.arguments.get("memory_scope"), "memory_scope", MemoryScope.DEVICE
        )
        folded = [
            bound.arguments.get(name, types.Omitted(None)) for name in _CONSTRUCTOR.parameters
        ]
        result = AtomicRefType(ref.dtype, space, order, scope)
        return signature(result, *folded).replace(pysig=_CONSTRUCTOR)


@lowering_registry.lower(AtomicRef, types.Array, types.Any, types.Any, types.Any, types.Any)
def _lower_atomic_ref(context, builder, sig, args):
    return element_pointer(context, builder, sig.args[0], args[0], sig.args[1], args[1])


# --- the methods ----------------------------------------------------------------------------

#: fetch_* -> (SPIR-V built-in for signed integers, for unsigned ones, float update or None)
_FETCH = {
    "fetch_add": ("IAdd", "IAdd", "add"),
    "fetch_sub": ("ISub", "ISub", "sub"),
    "fetch_min": ("SMin", "UMin", "min"),
    "fetch_max": ("SMax", "UMax", "max"),
    "fetch_and": ("And", "And", None),
    "fetch_or": ("Or", "Or", None),
    "fetch_xor": ("Xor", "Xor", None),
}
_BITWISE = ("fetch_and", "fetch_or", "fetch_xor")
_CODES = {8: "c", 16: "s", 32: "i", 64: "l"}
_UNSIGNED_CODES = {8: "h", 16: "t", 32: "j", 64: "m"}


def _method_key(name: str) -> str:
    return f"dpex.AtomicRef.{name}"


#: SYCL's default order of a load, and of a store, for each order of an atomic_ref
#: (memory_order_traits: the read and write halves of a read-modify-write order).
_READ_ORDER = {
    MemoryOrder.RELEASE: MemoryOrder.RELAXED,
    MemoryOrder.ACQ_REL: MemoryOrder.ACQUIRE,
}
_WRITE_ORDER = {
    MemoryOrder.ACQUIRE: MemoryOrder.RELAXED,
    MemoryOrder.ACQ_REL: MemoryOrder.RELEASE,
}


def _order_argument(name: str, ref_type, value_type, defaults: dict | None = None):
    """The order an AtomicRef method `name` uses: its own argument, else the reference's (for
    loads and stores, its read or write half); checked against the device."""
    default = (defaults or {}).get(ref_type.order, ref_type.order)
    order = constant_enum(MemoryOrder, value_type, f"AtomicRef.{name}'s memory_order", default)
    check_device_takes(f"AtomicRef.{name}", order, ref_type.scope, fence=False)
    return order


def _spirv_atomic(builder, operation: str, ref_type, pointer, order, value=None):
    """Call `__spirv_Atomic<operation>` on the integer at `pointer` (order's semantics and the
    reference's scope; `value` for operations that take one)."""
    integer = pointer.type.pointee
    signed = isinstance(ref_type.dtype, types.Integer) and ref_type.dtype.signed
    code = (_CODES if signed else _UNSIGNED_CODES)[integer.width]
    name = f"__spirv_Atomic{operation}"
    mangled = f"_Z{len(name)}{name}PU3AS{ref_type.addrspace}{code}ii" + (code if value else "")
    scope = ir.Constant(_I32, SPIRV_SCOPES[ref_type.scope])
    meaning = ir.Constant(_I32, semantics(order, _STORAGE_BITS[ref_type.addrspace]))
    arguments = [pointer, scope, meaning] + ([value] if value is not None else [])
    result = ir.VoidType() if operation == "Store" else integer
    return call_builtin(builder, mangled, result, [a.type for a in arguments], arguments)


def _as_integer_pointer(builder, ref_type, pointer):
    """The element's pointer as a pointer to the integer of its width (floats' bit patterns)."""
    integer = ir.IntType(ref_type.dtype.bitwidth)
    return builder.bitcast(pointer, integer.as_pointer(ref_type.addrspace))


def _fetch(name: str, signed: str, unsigned: str, float_op: str | None):
    def lower(context, builder, sig, args):
        ref_type, pointer, value = sig.args[0], args[0], args[1]
        order = _order_argument(name, ref_type, sig.args[2] if len(sig.args) > 2 else None)
        value = context.cast(builder, value, sig.args[1], ref_type.dtype)
        dtype = ref_type.dtype
        if isinstance(dtype, types.Float):
            if order == MemoryOrder.RELAXED and ref_type.scope == MemoryScope.DEVICE:
                return float_atomic(builder, float_op, pointer, value, dtype)
            scope = SPIRV_SCOPES[ref_type.scope]
            meaning = semantics(order, _STORAGE_BITS[ref_type.addrspace])
            failure = semantics(_failure_order(order), _STORAGE_BITS[ref_type.addrspace])
            update = float_updates(builder, float_op)(value)
            return cas_loop(builder, pointer, dtype, update, scope, meaning, failure)
        operation = signed if dtype.signed else unsigned
        return _spirv_atomic(builder, operation, ref_type, pointer, order, value)

    return lower


def _failure_order(order: MemoryOrder) -> MemoryOrder:
    """The order of a compare-exchange that fails: no release in it."""
    return {
        MemoryOrder.RELEASE: MemoryOrder.RELAXED,
        MemoryOrder.ACQ_REL: MemoryOrder.ACQUIRE,
    }.get(order, order)


def _lower_load(context, builder, sig, args):
    ref_type = sig.args[0]
    order = _order_argument(
        "load", ref_type, sig.args[1] if len(sig.args) > 1 else None, _READ_ORDER
    )
    if order in (MemoryOrder.RELEASE, MemoryOrder.ACQ_REL):
        raise errors.UnsupportedError(
            f"AtomicRef.load with memory order {order.name}: a load does not release; use "
            f"RELAXED, ACQUIRE or SEQ_CST"
        )
    pointer = _as_integer_pointer(builder, ref_type, args[0])
    loaded = _spirv_atomic(builder, "Load", ref_type, pointer, order)
    return builder.bitcast(loaded, args[0].type.pointee)


def _lower_store(context, builder, sig, args):
    ref_type = sig.args[0]
    order = _order_argument(
        "store", ref_type, sig.args[2] if len(sig.args) > 2 else None, _WRITE_ORDER
    )
    if order in (MemoryOrder.ACQUIRE, MemoryOrder.ACQ_REL):
        raise errors.UnsupportedError(
            f"AtomicRef.store with memory order {order.name}: a store does not acquire; use "
            f"RELAXED, RELEASE or SEQ_CST"
        )
    value = context.cast(builder, args[1], sig.args[1], ref_type.dtype)
    pointer = _as_integer_pointer(builder, ref_type, args[0])
    _spirv_atomic(
        builder, "Store", ref_type, pointer, order, as_int(builder, value, ref_type.dtype)
    )
    return context.get_dummy_value()


def _lower_exchange(context, builder, sig, args):
    ref_type = sig.args[0]
    order = _order_argument("exchange", ref_type, sig.args[2] if len(sig.args) > 2 else None)
    value = context.cast(builder, args[1], sig.args[1], ref_type.dtype)
    pointer = _as_integer_pointer(builder, ref_type, args[0])
    old = _spirv_atomic(
        builder, "Exchange", ref_type, pointer, order, as_int(builder, value, ref_type.dtype)
    )
    return builder.bitcast(old, args[0].type.pointee)


def _lower_compare_exchange(context, builder, sig, args):
    ref_type = sig.args[0]
    order = _order_argument(
        "compare_exchange", ref_type, sig.args[3] if len(sig.args) > 3 else None
    )
    dtype = ref_type.dtype
    expected = context.cast(builder, args[1], sig.args[1], dtype)
    desired = context.cast(builder, args[2], sig.args[2], dtype)
    storage = _STORAGE_BITS[ref_type.addrspace]
    return compare_exchange(
        builder,
        args[0],
        expected,
        desired,
        dtype,
        SPIRV_SCOPES[ref_type.scope],
        semantics(order, storage),
        semantics(_failure_order(order), storage),
    )


def _value(a) -> bool:
    return isinstance(a, (types.Number, types.Boolean))


def _order(a) -> bool:
    return isinstance(a, (types.Integer, types.Omitted, types.NoneType))


def _one_operand(operand, memory_order=None):
    """fetch_*, store and exchange: an operand and an optional order."""


def _no_operand(memory_order=None):
    """load: an optional order."""


def _two_operands(expected, desired, memory_order=None):
    """compare_exchange: the expected and the desired value, and an optional order."""


#: name -> (Python signature, lowering, whether it returns the element's dtype)
_METHODS = {
    **{name: (_one_operand, _fetch(name, *spirv), True) for name, spirv in _FETCH.items()},
    "load": (_no_operand, _lower_load, True),
    "store": (_one_operand, _lower_store, False),
    "exchange": (_one_operand, _lower_exchange, True),
    "compare_exchange": (_two_operands, _lower_compare_exchange, True),
}


class _AtomicRefAttributes(AttributeTemplate):
    key = AtomicRefType


def _register_method(name: str, python_signature, lower, returns_value: bool) -> None:
    pysig = inspect.signature(python_signature)

    class _Method(AbstractTemplate):
        key = _method_key(name)
        prefer_literal = True

        def generic(self, args, kws):
            try:
                bound = pysig.bind(*args, **kws)
            except TypeError:
                return None
            folded = [bound.arguments.get(p, types.Omitted(None)) for p in pysig.parameters]
            if not all(map(_value, folded[:-1])) or not _order(folded[-1]):
                return None
            ref_type = self.this
            if name in _BITWISE and isinstance(ref_type.dtype, types.Float):
                raise errors.TypingError(
                    f"AtomicRef.{name} takes integers; got an array of {ref_type.dtype}: on "
                    f"floats use fetch_add, fetch_sub, fetch_min, fetch_max, exchange or "
                    f"compare_exchange"
                )
            result = ref_type.dtype if returns_value else types.none
            return signature(result, *folded).replace(recvr=ref_type, pysig=pysig)

    def resolve(self, ty):
        return types.BoundFunction(_Method, ty)

    setattr(_AtomicRefAttributes, f"resolve_{name}", resolve)
    lowering_registry.lower(_method_key(name), AtomicRefType, types.VarArg(types.Any))(lower)


for _name, (_python_signature, _lower, _returns) in _METHODS.items():
    _register_method(_name, _python_signature, _lower, _returns)
typing_registry.register_attr(_AtomicRefAttributes)
#: The methods of an AtomicRef: their constant arguments are frozen as literals (functions.py).
METHODS = frozenset(_METHODS)


# --- fences and barriers --------------------------------------------------------------------

atomic_fence = host_stub(
    "atomic_fence",
    "In a kernel: order this work-item's memory accesses: atomic_fence(order, scope).",
    "dk.atomic_fence",
)


@typing_registry.register_global(atomic_fence)
class _AtomicFenceTemplate(AbstractTemplate):
    key = atomic_fence
    prefer_literal = True

    def generic(self, args, kws):
        names = ("memory_order", "memory_scope")
        values = dict(zip(names, args)) | kws
        if len(args) > 2 or set(values) != set(names):
            return None
        constant_enum(MemoryOrder, values["memory_order"], "atomic_fence's memory_order")
        constant_enum(MemoryScope, values["memory_scope"], "atomic_fence's memory_scope")
        return signature(types.none, values["memory_order"], values["memory_scope"])


@lowering_registry.lower(atomic_fence, types.Integer, types.Integer)
def _lower_atomic_fence(context, builder, sig, args):
    order = constant_enum(MemoryOrder, sig.args[0], "memory_order")
    scope = constant_enum(MemoryScope, sig.args[1], "memory_scope")
    check_device_takes("dk.atomic_fence", order, scope, fence=True)
    if order != MemoryOrder.RELAXED:  # a relaxed fence orders nothing
        meaning = semantics(order, _STORAGE_BITS[GLOBAL] | _STORAGE_BITS[LOCAL])
        constants = [ir.Constant(_I32, SPIRV_SCOPES[scope]), ir.Constant(_I32, meaning)]
        call_builtin(builder, "_Z21__spirv_MemoryBarrierii", ir.VoidType(), [_I32, _I32], constants)
    return context.get_dummy_value()


group_barrier = host_stub(
    "group_barrier",
    "In a kernel: wait for every work-item of the group: group_barrier(group, "
    "fence_scope=dk.MemoryScope.WORK_GROUP).",
    "dk.group_barrier",
)


@typing_registry.register_global(group_barrier)
class _GroupBarrierTemplate(AbstractTemplate):
    key = group_barrier
    prefer_literal = True

    def generic(self, args, kws):
        values = dict(zip(("group", "fence_scope"), args)) | kws
        group = values.get("group")
        if len(args) > 2 or not set(values) <= {"group", "fence_scope"}:
            return None
        if not isinstance(group, (GroupType, SubGroupType)):
            return None
        scope = values.get("fence_scope", types.Omitted(None))
        constant_enum(MemoryScope, scope, "group_barrier's fence_scope", MemoryScope.WORK_GROUP)
        return signature(types.none, group, scope)


@lowering_registry.lower(group_barrier, types.Any, types.Any)
def _lower_group_barrier(context, builder, sig, args):
    group, scope_type = sig.args
    default = MemoryScope.SUB_GROUP if isinstance(group, SubGroupType) else MemoryScope.WORK_GROUP
    scope = constant_enum(MemoryScope, scope_type, "fence_scope", default)
    check_device_takes("dk.group_barrier", MemoryOrder.ACQ_REL, scope, fence=True)
    execution = SPIRV_SCOPES[
        MemoryScope.SUB_GROUP if isinstance(group, SubGroupType) else MemoryScope.WORK_GROUP
    ]
    meaning = semantics(MemoryOrder.ACQ_REL, _STORAGE_BITS[GLOBAL] | _STORAGE_BITS[LOCAL])
    constants = [ir.Constant(_I32, v) for v in (execution, SPIRV_SCOPES[scope], meaning)]
    call_builtin(
        builder,
        "_Z22__spirv_ControlBarrieriii",
        ir.VoidType(),
        [_I32, _I32, _I32],
        constants,
        convergent=True,
    )
    return context.get_dummy_value()
