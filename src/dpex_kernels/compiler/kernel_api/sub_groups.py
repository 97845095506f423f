"""Sub-groups: dk.sub_group queries and collectives."""

from __future__ import annotations

from llvmlite import ir
from numba.core import types as nbtypes
from numba.core.typing.templates import AbstractTemplate, signature

from .barriers import barrier_function
from .index_space import sub_group_size
from .registry import call_builtin, host_stub, lowering_registry, typing_registry
from .spirv import TYPE_CODES

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


_SUB_GROUP_CODES = {getattr(nbtypes, name): code for name, code in TYPE_CODES.items()}


def _sub_group_query(name: str, read, doc: str):
    """dk.sub_group.<name>(): `read(builder)` gives the i32 value."""
    stub = host_stub(f"sub_group_{name}", public=f"dk.sub_group.{name}", doc=doc)

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        def generic(self, args, kws):
            return signature(nbtypes.intp) if not args and not kws else None

    @lowering_registry.lower(stub)
    def _lower(context, builder, sig, args):
        return builder.zext(read(builder), _I64)

    return stub


sub_group_get_local_id = _sub_group_query(
    "get_local_id",
    lambda builder: call_builtin(builder, "_Z22get_sub_group_local_idv", _I32, [], []),
    "In a kernel: the work-item's sub-group lane.",
)
sub_group_get_size = _sub_group_query(
    "get_size", sub_group_size, "In a kernel: the number of lanes of the sub-group."
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
    return call_builtin(
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
        return call_builtin(
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

sub_group_barrier = barrier_function(
    "sub_group_barrier",
    "dk.sub_group.barrier",
    "_Z17sub_group_barrierj",
    "In a kernel: wait for the sub-group.",
)
