"""numba-dpex 0.23's kernel_api inside kernels, typed and lowered by dk's compiler.

Where numba-dpex spells a form as dk does, dk's own typing and lowering serve it:
`kapi.group_barrier` and `kapi.atomic_fence` are typed as `dk.group_barrier` and
`dk.atomic_fence`, and an item's, a group's and an AtomicRef's methods are dk's. Where
numba-dpex 0.23 differs, the types below are subclasses of dk's that override it (their
templates come first, as Numba looks attributes up along the type's class hierarchy):

- `KapiItemType`, the first parameter of a `dpex.kernel` taking an item (a Range's Item and
  an NdRange's NdItem alike): `get_group()` gives a `KapiGroupType`; `dimensions` is a property;
- `KapiGroupType`: `leader` is a property, as in numba-dpex (dk's group has SYCL's
  `leader()` method); `dimensions` too;
- `KapiAtomicRefType`, what `kapi.AtomicRef(...)` makes: `compare_exchange(expected,
  desired, expected_idx=0)` compares the element with `expected[expected_idx]`, writes the
  element's value there when they differ, and returns whether it exchanged (dk's returns the
  old value);
- `kapi.PrivateArray(shape, dtype, fill_zeros=False)` is `dk.private.array(shape, dtype)`,
  zero-filled when asked.

`dimensions` reads the launch's dimension count, a constant once dk specialises the kernel for
the launch. Constant arguments of these calls (`kapi.MemoryOrder.ACQ_REL`, a global shape)
are frozen as literals as dk's own are (registry.register_kernel_api).
"""

from __future__ import annotations

import inspect

from llvmlite import ir
from numba.core import cgutils, errors, types
from numba.core.datamodel import models, register_default
from numba.core.typing.templates import AbstractTemplate, AttributeTemplate, signature

from ..compiler.kernel_api import atomic_fence as dk_atomic_fence
from ..compiler.kernel_api import group_barrier as dk_group_barrier
from ..compiler.kernel_api import lowering_registry, typing_registry
from ..compiler.kernel_api.atomic_ref import AtomicRef as dk_atomic_ref
from ..compiler.kernel_api.atomic_ref import AtomicRefType
from ..compiler.kernel_api.atomics import as_int, element_pointer
from ..compiler.kernel_api.index_space import call_index_placeholder
from ..compiler.kernel_api.items import GroupType, ItemType, mark_nd_item
from ..compiler.kernel_api.memory import private_array as dk_private_array
from ..compiler.kernel_api.registry import register_kernel_api
from ..compiler.target import sycl_target
from ..types import params
from . import kernel_api as kapi

_I64 = ir.IntType(64)


class KapiItemType(ItemType):
    """numba-dpex 0.23's Item and NdItem in kernels (dk's item, with 0.23's group)."""

    def __init__(self):
        types.Type.__init__(self, name="kapi.Item")

    @property
    def spec(self) -> str:
        """The launch takes no argument for it, as for dk's item (types/params.py)."""
        return params.ITEM


class KapiGroupType(GroupType):
    """numba-dpex 0.23's Group in kernels: `leader` is a property."""

    def __init__(self):
        types.Type.__init__(self, name="kapi.Group")


class KapiAtomicRefType(AtomicRefType):
    """What kapi.AtomicRef makes: dk's AtomicRef with numba-dpex 0.23's compare_exchange."""

    def __init__(self, dtype, addrspace: int, order, scope):
        super().__init__(dtype, addrspace, order, scope)
        self.name = f"kapi.{self.name}"


KAPI_ITEM, KAPI_GROUP = KapiItemType(), KapiGroupType()


class _ElementPointerModel(models.PrimitiveModel):
    """An AtomicRef is the element's pointer, in its address space (as dk's)."""

    def __init__(self, dmm, fe_type):
        element = dmm.lookup(fe_type.dtype).get_data_type()
        super().__init__(dmm, fe_type, element.as_pointer(fe_type.addrspace))


# The target's data model manager is a copy of Numba's default one, made with the target
# context: the models go to the default one, and to the copy where it was made before this
# import (functools.cached_property keeps it in the instance's __dict__). Making the context
# here instead would copy Numba's default manager before the models of what the compiler
# imports later (strings) are in it.
for _type, _model in (
    (KapiItemType, models.OpaqueModel),
    (KapiGroupType, models.OpaqueModel),
    (KapiAtomicRefType, _ElementPointerModel),
):
    register_default(_type)(_model)
    _made = vars(sycl_target).get("target_context")
    if _made is not None:
        _made.data_model_manager.register(_type, _model)


# --- items and groups -----------------------------------------------------------------------


class _GetGroup(AbstractTemplate):
    """nd_item.get_group(): the kapi group."""

    key = "numba_dpex.Item.get_group"

    def generic(self, args, kws):
        if args or kws:
            return None
        return signature(KAPI_GROUP).replace(recvr=self.this)


class _ItemAttributes(AttributeTemplate):
    key = KapiItemType

    def resolve_get_group(self, ty):
        return types.BoundFunction(_GetGroup, ty)

    def resolve_dimensions(self, ty):
        return types.intp


class _GroupAttributes(AttributeTemplate):
    key = KapiGroupType

    def resolve_leader(self, ty):
        return types.boolean

    def resolve_dimensions(self, ty):
        return types.intp


typing_registry.register_attr(_ItemAttributes)
typing_registry.register_attr(_GroupAttributes)


@lowering_registry.lower(_GetGroup.key, KapiItemType)
def _lower_get_group(context, builder, sig, args):
    mark_nd_item(builder)
    return context.get_dummy_value()


@lowering_registry.lower_getattr(KapiItemType, "dimensions")
@lowering_registry.lower_getattr(KapiGroupType, "dimensions")
def _lower_dimensions(context, builder, ty, value):
    return call_index_placeholder(builder, "get_work_dim", [])


@lowering_registry.lower_getattr(KapiGroupType, "leader")
def _lower_leader(context, builder, ty, value):
    mark_nd_item(builder)
    linear = call_index_placeholder(builder, "get_local_linear_id", [])
    return builder.icmp_unsigned("==", linear, ir.Constant(_I64, 0))


# --- AtomicRef ------------------------------------------------------------------------------


def _registered_type(value):
    """The type dk's typing registry gives `value`, one of dk's kernel API stubs."""
    return next(typ for registered, typ in typing_registry.globals if registered is value)


@typing_registry.register_global(kapi.AtomicRef)
class _AtomicRefTemplate(AbstractTemplate):
    """dk.AtomicRef's typing; the address space, where given, must be the array's."""

    prefer_literal = True

    def generic(self, args, kws):
        dk_type = self.context.resolve_value_type(dk_atomic_ref)
        found = self.context.resolve_function_type(dk_type, args, kws)
        if found is None:
            return None
        made = found.return_type
        space = found.args[4]  # ref, index, memory_order, memory_scope, address_space
        if isinstance(space, types.Integer) and not isinstance(space, types.IntegerLiteral):
            return None  # a constant only (Numba tries literal arguments first)
        if isinstance(space, types.IntegerLiteral) and space.literal_value != made.addrspace:
            raise errors.TypingError(
                f"kapi.AtomicRef's address_space is {kapi.AddressSpace(space.literal_value).name}"
                f" but the array is in {kapi.AddressSpace(made.addrspace).name} memory: leave "
                f"address_space out, it is the array's"
            )
        result = KapiAtomicRefType(made.dtype, made.addrspace, made.order, made.scope)
        return signature(result, *found.args).replace(pysig=found.pysig)


@lowering_registry.lower(kapi.AtomicRef, types.Array, types.Any, types.Any, types.Any, types.Any)
def _lower_atomic_ref(context, builder, sig, args):
    return element_pointer(context, builder, sig.args[0], args[0], sig.args[1], args[1])


def _compare_exchange_form(first: str) -> inspect.Signature:
    """compare_exchange's parameters; numba-dpex 0.23 named the first `expected` in Python
    and `expected_ref` in kernels, and code uses both as keywords."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature(
        [
            inspect.Parameter(first, kind),
            inspect.Parameter("desired", kind),
            inspect.Parameter("expected_idx", kind, default=0),
        ]
    )


_COMPARE_EXCHANGE = {name: _compare_exchange_form(name) for name in ("expected", "expected_ref")}


class _CompareExchange(AbstractTemplate):
    key = "numba_dpex.AtomicRef.compare_exchange"
    prefer_literal = True

    def generic(self, args, kws):
        form = _COMPARE_EXCHANGE["expected_ref" if "expected_ref" in kws else "expected"]
        try:
            bound = form.bind(*args, **kws)
        except TypeError:
            return None
        expected, desired, index = (
            bound.arguments.get(name, types.Omitted(0)) for name in form.parameters
        )
        if not isinstance(expected, types.Array):
            return None
        if expected.dtype != self.this.dtype:
            raise errors.TypingError(
                f"AtomicRef.compare_exchange: the expected array holds {expected.dtype}, the "
                f"reference {self.this.dtype}; give an array of {self.this.dtype}"
            )
        if not isinstance(desired, types.Number) or not isinstance(
            index, (types.Integer, types.Omitted)
        ):
            return None
        return signature(types.boolean, expected, desired, index).replace(
            recvr=self.this, pysig=form
        )


class _AtomicRefAttributes(AttributeTemplate):
    key = KapiAtomicRefType

    def resolve_compare_exchange(self, ty):
        return types.BoundFunction(_CompareExchange, ty)


typing_registry.register_attr(_AtomicRefAttributes)


@lowering_registry.lower(_CompareExchange.key, KapiAtomicRefType, types.Any, types.Any, types.Any)
def _lower_compare_exchange(context, builder, sig, args):
    """dk's compare_exchange of the element with expected[expected_idx] (as bits, as SPIR-V
    compares); where it found another value, that value goes to expected[expected_idx]."""
    ref_type, expected_type, desired_type, index_type = sig.args
    dtype = ref_type.dtype
    index = args[3]
    if isinstance(index_type, types.Omitted):  # expected_idx left out: 0
        index_type, index = types.intp, context.get_constant(types.intp, 0)
    slot = element_pointer(context, builder, expected_type, args[1], index_type, index)
    expected = builder.load(slot)
    desired = context.cast(builder, args[2], desired_type, dtype)
    dk_ref = AtomicRefType(dtype, ref_type.addrspace, ref_type.order, ref_type.scope)
    method = context.typing_context.resolve_getattr(dk_ref, "compare_exchange")
    dk_signature = signature(dtype, dtype, dtype).replace(recvr=dk_ref)
    old = context.get_function(method, dk_signature)(builder, [args[0], expected, desired])
    exchanged = builder.icmp_unsigned(
        "==", as_int(builder, old, dtype), as_int(builder, expected, dtype)
    )
    with builder.if_then(builder.not_(exchanged)):
        builder.store(old, slot)
    return exchanged


# --- PrivateArray ---------------------------------------------------------------------------

_PRIVATE_ARRAY = inspect.signature(kapi.PrivateArray)


@typing_registry.register_global(kapi.PrivateArray)
class _PrivateArrayTemplate(AbstractTemplate):
    """dk.private.array's typing, with fill_zeros a constant."""

    prefer_literal = True

    def generic(self, args, kws):
        try:
            bound = _PRIVATE_ARRAY.bind(*args, **kws)
        except TypeError:
            return None
        shape, dtype = bound.arguments["shape"], bound.arguments["dtype"]
        fill = bound.arguments.get("fill_zeros", types.Omitted(False))
        if not isinstance(fill, (types.Omitted, types.BooleanLiteral)):
            raise errors.TypingError(
                f"kapi.PrivateArray's fill_zeros is a constant True or False; got {fill}"
            )
        dk_type = self.context.resolve_value_type(dk_private_array)
        found = self.context.resolve_function_type(dk_type, (shape, dtype), {})
        if found is None:
            return None
        return signature(found.return_type, shape, dtype, fill).replace(pysig=_PRIVATE_ARRAY)


@lowering_registry.lower(kapi.PrivateArray, types.Any, types.Any, types.Any)
def _lower_private_array(context, builder, sig, args):
    array_type = sig.return_type
    dk_type = context.typing_context.resolve_value_type(dk_private_array)
    allocate = context.get_function(dk_type, signature(array_type, *sig.args[:2]))
    value = allocate(builder, args[:2])
    fill = sig.args[2]
    if getattr(fill, "literal_value", getattr(fill, "value", False)):
        array = context.make_array(array_type)(context, builder, value)
        cgutils.memset(builder, array.data, builder.mul(array.itemsize, array.nitems), 0)
    return value


# --- what dk types as it is -----------------------------------------------------------------

typing_registry.register_global(kapi.group_barrier, _registered_type(dk_group_barrier))
typing_registry.register_global(kapi.atomic_fence, _registered_type(dk_atomic_fence))
for _value in (kapi.AtomicRef, kapi.PrivateArray, kapi.group_barrier, kapi.atomic_fence):
    register_kernel_api(_value)

__all__ = ["KAPI_GROUP", "KAPI_ITEM", "KapiAtomicRefType", "KapiGroupType", "KapiItemType"]
