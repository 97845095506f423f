"""SYCL 2020's group algorithms over a work-group (`item.get_group()`) or a sub-group
(`item.get_sub_group()`): broadcast, reduce, inclusive and exclusive scans, any/all/none, and on
sub-groups shifts, permutes and selects.

Each lowers to SPIR-V's group instructions through the OpenCL built-ins the SPIR-V back end
translates (`work_group_reduce_add` -> OpGroupFAdd, `sub_group_non_uniform_reduce_xor` ->
OpGroupNonUniformBitwiseXor, `sub_group_shuffle_down` -> OpGroupNonUniformShuffleDown, ...).
Two cases have no such instruction on the device:
- a work-group multiplies or bitwise and/or/xor (OpenCL has no work-group built-in for them):
  each work-item's value goes to work-group local memory and is combined in order there, for
  work-groups of up to SCRATCH_ITEMS work-items (a larger one is refused at launch);
- a sub-group multiplies on Intel's OpenCL CPU runtime, whose OpGroupNonUniformIMul/FMul
  return the operand unchanged (workaround `sub-group-multiplies-by-shuffles`): the product is
  gathered lane by lane with shuffles. Which of the two a kernel gets is the back end's choice
  for its device (group_definitions), as with the index placeholders.
Narrow integers and booleans compute as int32 and are converted back, as the values wrap.
"""

from __future__ import annotations

import operator
import re

from llvmlite import ir
from numba.core import cgutils, errors, types
from numba.core.typing.templates import AbstractTemplate, signature

from ...types.kernel_objects import GroupOperation
from .atomic_ref import constant_enum
from .barriers import LOCAL_MEM_FENCE, barrier
from .index_space import call_index_placeholder, local_linear_id, local_linear_range
from .items import GroupType, SubGroupType, mark_nd_item
from .memory import local_array
from .registry import call_builtin, host_stub, lowering_registry, typing_registry

_I32 = ir.IntType(32)
#: The work-group size the local-memory algorithms take at most (launch.py checks it).
SCRATCH_ITEMS = 1024
#: OpenCL's name of each operation, where a built-in has it.
_OPENCL_NAMES = {
    GroupOperation.PLUS: "add",
    GroupOperation.MULTIPLIES: "mul",
    GroupOperation.MINIMUM: "min",
    GroupOperation.MAXIMUM: "max",
    GroupOperation.BIT_AND: "and",
    GroupOperation.BIT_OR: "or",
    GroupOperation.BIT_XOR: "xor",
    GroupOperation.LOGICAL_AND: "logical_and",
    GroupOperation.LOGICAL_OR: "logical_or",
}
_NATIVE_WORK_GROUP = (GroupOperation.PLUS, GroupOperation.MINIMUM, GroupOperation.MAXIMUM)
_BITWISE = (GroupOperation.BIT_AND, GroupOperation.BIT_OR, GroupOperation.BIT_XOR)
_LOGICAL = (GroupOperation.LOGICAL_AND, GroupOperation.LOGICAL_OR)
#: Itanium codes of the types group built-ins take.
_CODES = {
    types.int32: "i",
    types.uint32: "j",
    types.int64: "l",
    types.uint64: "m",
    types.float32: "f",
    types.float64: "d",
}
#: The marker a local-memory algorithm calls, from which the compiler records its limit.
SCRATCH_MARKER = "dpex.group_scratch"


def _compute_type(value_type):
    """The type a group built-in computes a value of `value_type` in (None: not supported)."""
    if value_type in _CODES:
        return value_type
    if isinstance(value_type, types.Boolean) or (
        isinstance(value_type, types.Integer) and value_type.bitwidth < 32
    ):
        return types.int32
    return None


def _builtin(builder, name: str, compute, values, extra=()):
    """Call the OpenCL built-in `name` on values of Numba type `compute` (and uint `extra`)."""
    llvm_type = values[0].type
    mangled = f"_Z{len(name)}{name}{_CODES[compute] * len(values)}{'j' * len(extra)}"
    arguments = [*values, *extra]
    return call_builtin(
        builder, mangled, llvm_type, [a.type for a in arguments], arguments, convergent=True
    )


def _group_kind(group_type) -> str:
    return "sub_group" if isinstance(group_type, SubGroupType) else "work_group"


def _stub(name: str, doc: str):
    return host_stub(name, f"In a kernel: {doc}", f"dk.{name}")


def _check_group(public: str, group_type, sub_group_only: bool = False) -> None:
    wanted = (SubGroupType,) if sub_group_only else (GroupType, SubGroupType)
    if not isinstance(group_type, wanted):
        what = (
            "a sub-group (item.get_sub_group())"
            if sub_group_only
            else ("a group (item.get_group()) or sub-group (item.get_sub_group())")
        )
        raise errors.TypingError(f"{public}'s first argument is {what}; got {group_type}")


def _check_value(public: str, value_type) -> None:
    if _compute_type(value_type) is None:
        raise errors.TypingError(
            f"{public} takes an integer, float or boolean value; got {value_type}"
        )


# --- reduce and scans -----------------------------------------------------------------------


def _collective(name: str, doc: str, opencl: str | None):
    """reduce_over_group / inclusive_scan_over_group / exclusive_scan_over_group."""
    stub = _stub(name, doc)
    public = f"dk.{name}"

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        key = stub
        prefer_literal = True

        def generic(self, args, kws):
            if kws or len(args) != 3:
                return None
            group, value, op = args
            _check_group(public, group)
            _check_value(public, value)
            operation = constant_enum(GroupOperation, op, f"{public}'s operation")
            if operation in _BITWISE and not isinstance(value, (types.Integer, types.Boolean)):
                raise errors.TypingError(f"{public} with {operation.name} takes integers")
            result = types.boolean if operation in _LOGICAL else value
            return signature(result, group, value, op)

    @lowering_registry.lower(stub, types.Any, types.Any, types.Any)
    def _lower(context, builder, sig, args):
        group, value_type, op_type = sig.args
        mark_nd_item(builder)
        operation = constant_enum(GroupOperation, op_type, f"{public}'s operation")
        compute = _compute_type(value_type)
        if operation in _LOGICAL:  # the truth of each value, as an int32 0 or 1
            value = context.cast(builder, args[1], value_type, types.boolean)
            value, compute = builder.zext(value, _I32), types.int32
        else:
            value = context.cast(builder, args[1], value_type, compute)
        if isinstance(group, SubGroupType) and operation == GroupOperation.MULTIPLIES:
            name = f"sub_group_mul.{opencl}.{_CODES[compute]}"  # group_definitions: per device
            result = call_index_placeholder_typed(builder, name, value.type, [value])
        elif isinstance(group, SubGroupType):
            result = _builtin(
                builder,
                f"sub_group_non_uniform_{opencl}_{_OPENCL_NAMES[operation]}",
                compute,
                [value],
            )
        elif operation in _NATIVE_WORK_GROUP:
            result = _builtin(
                builder, f"work_group_{opencl}_{_OPENCL_NAMES[operation]}", compute, [value]
            )
        elif operation in _LOGICAL and opencl == "reduce":
            which = "all" if operation == GroupOperation.LOGICAL_AND else "any"
            result = _builtin(builder, f"work_group_{which}", compute, [value])
        elif operation in _LOGICAL:  # a scan of 0/1: running min (and) or max (or)
            which = "min" if operation == GroupOperation.LOGICAL_AND else "max"
            result = _builtin(builder, f"work_group_{opencl}_{which}", compute, [value])
        else:
            result = _work_group_in_memory(context, builder, value, compute, operation, opencl)
        if operation in _LOGICAL:
            return builder.icmp_unsigned("!=", result, ir.Constant(_I32, 0))
        return context.cast(builder, result, compute, sig.return_type)

    return stub


reduce_over_group = _collective(
    "reduce_over_group",
    "op applied over the group's values: reduce_over_group(g, x, op).",
    "reduce",
)
inclusive_scan_over_group = _collective(
    "inclusive_scan_over_group",
    "op applied over the values of the group's work-items up to this one, this one's included.",
    "scan_inclusive",
)
exclusive_scan_over_group = _collective(
    "exclusive_scan_over_group",
    "op applied over the values of the group's work-items before this one (op's identity for "
    "the first).",
    "scan_exclusive",
)


def _sub_group_product(builder, value, compute, opencl: str):
    """The product over the sub-group's lanes (all, up to this one, or before it), gathered
    lane by lane with shuffles: every lane takes part in every shuffle."""
    size = call_builtin(builder, "_Z18get_sub_group_sizev", _I32, [], [])
    lane = call_builtin(builder, "_Z22get_sub_group_local_idv", _I32, [], [])
    one = ir.Constant(value.type, 1.0 if isinstance(compute, types.Float) else 1)
    multiply = builder.fmul if isinstance(compute, types.Float) else builder.mul
    entry, loop = builder.block, builder.append_basic_block("sg.product")
    done = builder.append_basic_block("sg.product.done")
    builder.branch(loop)
    builder.position_at_end(loop)
    index = builder.phi(_I32)
    product = builder.phi(value.type)
    index.add_incoming(ir.Constant(_I32, 0), entry)
    product.add_incoming(one, entry)
    other = _builtin(builder, "sub_group_shuffle", compute, [value], [index])
    if opencl == "reduce":
        taken = ir.Constant(ir.IntType(1), 1)
    else:
        taken = builder.icmp_unsigned("<=" if opencl == "scan_inclusive" else "<", index, lane)
    updated = builder.select(taken, multiply(product, other), product)
    following = builder.add(index, ir.Constant(_I32, 1))
    index.add_incoming(following, loop)
    product.add_incoming(updated, loop)
    builder.cbranch(builder.icmp_unsigned("<", following, size), loop, done)
    builder.position_at_end(done)
    return updated


_COMBINE = {
    GroupOperation.MULTIPLIES: operator.mul,
    GroupOperation.BIT_AND: operator.and_,
    GroupOperation.BIT_OR: operator.or_,
    GroupOperation.BIT_XOR: operator.xor,
}
_IDENTITY = {
    GroupOperation.MULTIPLIES: 1,
    GroupOperation.BIT_AND: -1,
    GroupOperation.BIT_OR: 0,
    GroupOperation.BIT_XOR: 0,
}


def _in_memory_algorithm(combine, identity, dtype, kind: str):
    """The Python function that computes a work-group algorithm in local memory: each
    work-item's value in a slot, then combined in work-item order (all of them for a reduce;
    for a scan those before this one, and this one's too if inclusive)."""
    whole = kind == "reduce"
    inclusive = int(kind == "scan_inclusive")

    def algorithm(x):
        scratch = local_array(SCRATCH_ITEMS, dtype)
        i = local_linear_id()
        scratch[i] = x
        barrier(LOCAL_MEM_FENCE)
        stop = local_linear_range() if whole else i + inclusive
        result = dtype(identity)
        for j in range(stop):
            result = combine(result, scratch[j])
        barrier(LOCAL_MEM_FENCE)  # before any work-item writes the next call's values
        return result

    return algorithm


def _work_group_in_memory(context, builder, value, compute, operation, opencl: str):
    """A work-group multiplies or bitwise operation (see the module docstring)."""
    call_index_placeholder(builder, SCRATCH_MARKER.removeprefix("dpex."), [], ir.VoidType())
    algorithm = _in_memory_algorithm(_COMBINE[operation], _IDENTITY[operation], compute, opencl)
    return context.compile_internal(builder, algorithm, signature(compute, compute), [value])


# --- broadcast, votes, shuffles --------------------------------------------------------------

group_broadcast = _stub(
    "group_broadcast", "x as the work-item with linear local id `id` holds it (0 unless given)."
)


@typing_registry.register_global(group_broadcast)
class _BroadcastTemplate(AbstractTemplate):
    key = group_broadcast

    def generic(self, args, kws):
        if kws or len(args) not in (2, 3):
            return None
        _check_group("dk.group_broadcast", args[0])
        _check_value("dk.group_broadcast", args[1])
        if len(args) == 3 and not isinstance(args[2], types.Integer):
            return None
        return signature(args[1], *args)


@lowering_registry.lower(group_broadcast, types.Any, types.Any)
@lowering_registry.lower(group_broadcast, types.Any, types.Any, types.Integer)
def _lower_broadcast(context, builder, sig, args):
    mark_nd_item(builder)
    group, value_type = sig.args[0], sig.args[1]
    compute = _compute_type(value_type)
    value = context.cast(builder, args[1], value_type, compute)
    identity = ir.Constant(ir.IntType(64), 0)
    if len(args) == 3:
        identity = context.cast(builder, args[2], sig.args[2], types.int64)
    if isinstance(group, SubGroupType):
        lane = builder.trunc(identity, _I32)
        result = _builtin(builder, "sub_group_broadcast", compute, [value], [lane])
    else:  # the work-group's dimensions are the launch's: the back end defines it per ndim
        result = call_index_placeholder_typed(
            builder, f"work_group_broadcast.{_CODES[compute]}", value.type, [value, identity]
        )
    return context.cast(builder, result, compute, value_type)


def call_index_placeholder_typed(builder, name: str, result, args):
    """Call `dpex.<name>`, which broadcast_definitions() defines for the launch's ndim."""
    fnty = ir.FunctionType(result, [a.type for a in args])
    function = cgutils.get_or_insert_function(builder.module, fnty, f"dpex.{name}")
    return builder.call(function, args)


_PLACEHOLDERS = re.compile(r'@"?dpex\.(work_group_broadcast|sub_group_mul\.(\w+))\.([ijlmfd])"?\(')
_COMPUTE = {code: ty for ty, code in _CODES.items()}


def group_definitions(linked_ir: str, ndim: int, multiply_by_shuffles: bool) -> str:
    """LLVM IR defining the placeholders of group algorithms `linked_ir` calls, for launches of
    `ndim` dimensions: work-group broadcasts (broadcast_definitions), and sub-group products,
    native or by shuffles (workaround `sub-group-multiplies-by-shuffles`)."""
    found = set(_PLACEHOLDERS.findall(linked_ir))
    if not found:
        return ""
    module = ir.Module("dpex.groups")
    for kind, algorithm, code in sorted(found):
        if kind == "work_group_broadcast":
            continue
        compute = _COMPUTE[code]
        llvm_type = {"i": _I32, "j": _I32, "l": ir.IntType(64), "m": ir.IntType(64)}.get(
            code, ir.FloatType() if code == "f" else ir.DoubleType()
        )
        function = ir.Function(
            module, ir.FunctionType(llvm_type, [llvm_type]), f"dpex.{kind}.{code}"
        )
        function.attributes.add("alwaysinline")
        builder = ir.IRBuilder(function.append_basic_block("entry"))
        (value,) = function.args
        if multiply_by_shuffles:
            builder.ret(_sub_group_product(builder, value, compute, algorithm))
        else:
            name = f"sub_group_non_uniform_{algorithm}_mul"
            builder.ret(_builtin(builder, name, compute, [value]))
    text = str(module)
    if any(kind == "work_group_broadcast" for kind, _, _ in found):
        text += broadcast_definitions(ndim)
    return text


def broadcast_definitions(ndim: int) -> str:
    """LLVM IR defining `dpex.work_group_broadcast.<code>(value, linear id)` for launches of
    `ndim` dimensions: OpenCL's work_group_broadcast takes one local id per dimension, x the
    fastest (SYCL's last)."""
    llvm_types = {"i": "i32", "j": "i32", "l": "i64", "m": "i64", "f": "float", "d": "double"}
    lines = []
    for code, llvm_type in llvm_types.items():
        mangled = f"_Z20work_group_broadcast{code}{'m' * ndim}"
        lines.append(
            f"declare spir_func {llvm_type} @{mangled}({llvm_type}{', i64' * ndim}) convergent"
        )
        lines.append(
            f"define {llvm_type} @dpex.work_group_broadcast.{code}({llvm_type} %v, i64 %id) "
            f"alwaysinline {{"
        )
        ids, rest = [], "%id"
        for axis in range(ndim - 1, 0, -1):  # SYCL dimensions, the last first
            lines.append(f"  %n{axis} = call i64 @dpex.get_local_size(i64 {axis})")
            lines.append(f"  %x{axis} = urem i64 {rest}, %n{axis}")
            lines.append(f"  %r{axis} = udiv i64 {rest}, %n{axis}")
            ids.append(f"i64 %x{axis}")
            rest = f"%r{axis}"
        ids.append(f"i64 {rest}")
        lines.append(
            f"  %b = call spir_func {llvm_type} @{mangled}({llvm_type} %v, {', '.join(ids)}) "
            f"convergent\n  ret {llvm_type} %b\n}}"
        )
    return "\n".join(lines) + "\n"


def _vote(name: str, doc: str, opencl: str, negate: bool):
    stub = _stub(name, doc)

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        key = stub

        def generic(self, args, kws):
            if kws or len(args) != 2:
                return None
            _check_group(f"dk.{name}", args[0])
            if not isinstance(args[1], (types.Boolean, types.Integer)):
                raise errors.TypingError(f"dk.{name} takes a predicate (a bool); got {args[1]}")
            return signature(types.boolean, *args)

    @lowering_registry.lower(stub, types.Any, types.Any)
    def _lower(context, builder, sig, args):
        mark_nd_item(builder)
        truth = builder.zext(context.cast(builder, args[1], sig.args[1], types.boolean), _I32)
        voted = _builtin(builder, f"{_group_kind(sig.args[0])}_{opencl}", types.int32, [truth])
        return builder.icmp_unsigned("==" if negate else "!=", voted, ir.Constant(_I32, 0))

    return stub


any_of_group = _vote("any_of_group", "whether the predicate holds for any work-item.", "any", False)
all_of_group = _vote(
    "all_of_group", "whether the predicate holds for all work-items.", "all", False
)
none_of_group = _vote("none_of_group", "whether it holds for no work-item.", "any", True)


def _shuffle(name: str, doc: str, opencl: str, default_delta: int | None):
    stub = _stub(name, doc)
    public = f"dk.{name}"

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        key = stub

        def generic(self, args, kws):
            arity = (2, 3) if default_delta is not None else (3,)
            if kws or len(args) not in arity:
                return None
            _check_group(public, args[0], sub_group_only=True)
            _check_value(public, args[1])
            if len(args) == 3 and not isinstance(args[2], types.Integer):
                return None
            return signature(args[1], *args)

    @lowering_registry.lower(stub, types.Any, types.Any)
    @lowering_registry.lower(stub, types.Any, types.Any, types.Integer)
    def _lower(context, builder, sig, args):
        mark_nd_item(builder)
        compute = _compute_type(sig.args[1])
        value = context.cast(builder, args[1], sig.args[1], compute)
        if len(args) == 3:
            lane = builder.trunc(context.cast(builder, args[2], sig.args[2], types.int64), _I32)
        else:
            lane = ir.Constant(_I32, default_delta)
        result = _builtin(builder, f"sub_group_{opencl}", compute, [value], [lane])
        return context.cast(builder, result, compute, sig.args[1])

    return stub


shift_group_left = _shuffle(
    "shift_group_left", "x of the lane `delta` (1 unless given) above this one.", "shuffle_down", 1
)
shift_group_right = _shuffle(
    "shift_group_right", "x of the lane `delta` (1 unless given) below this one.", "shuffle_up", 1
)
permute_group_by_xor = _shuffle(
    "permute_group_by_xor", "x of the lane whose id is this one's xor `mask`.", "shuffle_xor", None
)
select_from_group = _shuffle(
    "select_from_group", "x of the sub-group's lane `id`.", "shuffle", None
)
