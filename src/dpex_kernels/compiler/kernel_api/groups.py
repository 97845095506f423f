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
A work-group's exclusive integer sum is its inclusive sum less the work-item's value, which
the OpenCL CPU runtime computes faster (_integer_sum_before).
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
from .index_space import (
    call_index_placeholder,
    local_linear_id,
    local_linear_range,
    sub_group_size,
)
from .items import GroupType, SubGroupType, mark_nd_item
from .memory import local_array
from .registry import call_builtin, host_stub, lowering_registry, typing_registry

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
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


#: How an initial value joins a reduce's or scan's result: op(init, result).
_WITH_INIT = {
    GroupOperation.PLUS: lambda init, x: init + x,
    GroupOperation.MULTIPLIES: lambda init, x: init * x,
    GroupOperation.MINIMUM: lambda init, x: min(init, x),
    GroupOperation.MAXIMUM: lambda init, x: max(init, x),
    GroupOperation.BIT_AND: lambda init, x: init & x,
    GroupOperation.BIT_OR: lambda init, x: init | x,
    GroupOperation.BIT_XOR: lambda init, x: init ^ x,
    GroupOperation.LOGICAL_AND: lambda init, x: bool(init) and x,
    GroupOperation.LOGICAL_OR: lambda init, x: bool(init) or x,
}


def _collective(name: str, doc: str, opencl: str, init_position: int):
    """reduce_over_group / inclusive_scan_over_group / exclusive_scan_over_group, with an
    optional initial value at `init_position` (SYCL 2020: reduce(g, x, init, op),
    exclusive_scan(g, x, init, op), inclusive_scan(g, x, op, init))."""
    stub = _stub(name, doc)
    public = f"dk.{name}"

    def split(args):
        """(value, operation, init or None) of the arguments after the group."""
        if len(args) == 3:
            return args[1], args[2], None
        init = args[init_position]
        return args[1], args[5 - init_position], init

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        key = stub
        prefer_literal = True

        def generic(self, args, kws):
            if kws or len(args) not in (3, 4):
                return None
            group = args[0]
            value, op, init = split(args)
            value = types.unliteral(value)  # literal: only the operation needs to be one
            _check_group(public, group)
            _check_value(public, value)
            operation = constant_enum(GroupOperation, op, f"{public}'s operation")
            integers = (types.Integer, types.Boolean)
            if operation in _BITWISE and not all(
                isinstance(t, integers) for t in (value, init or value)
            ):
                raise errors.TypingError(f"{public} with {operation.name} takes integers")
            result = types.boolean if operation in _LOGICAL else value
            if init is not None:
                init = types.unliteral(init)
                _check_value(f"{public}'s initial value", init)
                if operation not in _LOGICAL:
                    result = self.context.unify_types(init, value)
            return signature(result, group, value, *args[2:])

    @lowering_registry.lower(stub, types.Any, types.Any, types.Any)
    @lowering_registry.lower(stub, types.Any, types.Any, types.Any, types.Any)
    def _lower(context, builder, sig, args):
        group = sig.args[0]
        value_type, op_type, init_type = split(sig.args)
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
        elif _integer_sum_before(operation, opencl, compute):
            inclusive = _builtin(builder, "work_group_scan_inclusive_add", compute, [value])
            result = builder.sub(inclusive, value)
        elif operation in _NATIVE_WORK_GROUP:
            result = _builtin(
                builder, f"work_group_{opencl}_{_OPENCL_NAMES[operation]}", compute, [value]
            )
        elif operation in _LOGICAL and opencl == "reduce":
            which = "all" if operation == GroupOperation.LOGICAL_AND else "any"
            result = _builtin(builder, f"work_group_{which}", compute, [value])
        elif operation in _LOGICAL:  # a scan of unsigned 0/1: running min (and) or max (or),
            which = "min" if operation == GroupOperation.LOGICAL_AND else "max"  # identities 1, 0
            result = _builtin(builder, f"work_group_{opencl}_{which}", types.uint32, [value])
        else:
            result = _work_group_in_memory(context, builder, value, compute, operation, opencl)
        if operation in _LOGICAL:
            result, compute = (
                builder.icmp_unsigned("!=", result, ir.Constant(_I32, 0)),
                types.boolean,
            )
        result = context.cast(builder, result, compute, sig.return_type)
        if init_type is None:
            return result
        init = context.cast(builder, args[init_position], init_type, sig.return_type)
        combine = signature(sig.return_type, sig.return_type, sig.return_type)
        return context.compile_internal(builder, _WITH_INIT[operation], combine, [init, result])

    return stub


reduce_over_group = _collective(
    "reduce_over_group",
    "op applied over the group's values: reduce_over_group(g, x, op), or "
    "reduce_over_group(g, x, init, op) which starts from init.",
    "reduce",
    init_position=2,
)
inclusive_scan_over_group = _collective(
    "inclusive_scan_over_group",
    "op applied over the values of the group's work-items up to this one, this one's "
    "included: inclusive_scan_over_group(g, x, op), or (g, x, op, init) which starts from init.",
    "scan_inclusive",
    init_position=3,
)
exclusive_scan_over_group = _collective(
    "exclusive_scan_over_group",
    "op applied over the values of the group's work-items before this one (op's identity, or "
    "init, for the first): exclusive_scan_over_group(g, x, op), or (g, x, init, op).",
    "scan_exclusive",
    init_position=2,
)


def _integer_sum_before(operation, opencl: str, compute) -> bool:
    """Whether a work-group scan is an exclusive integer sum, computed as the inclusive sum
    less the work-item's own value (exact: integers wrap around): the OpenCL CPU runtime's
    exclusive scan took 1.6 x its inclusive one (2^24 int32, the scan step of
    examples/scan_group_algorithms.py: 17.3 against 10.9 ms). Not for floats, whose sums round."""
    return (
        operation == GroupOperation.PLUS
        and opencl == "scan_exclusive"
        and isinstance(compute, types.Integer)
    )


def _sub_group_product(builder, value, compute, opencl: str):
    """The product over the sub-group's lanes (all, up to this one, or before it), gathered
    lane by lane with shuffles: every lane takes part in every shuffle."""
    size = sub_group_size(builder)
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
    """Call `dpex.<name>`, which group_definitions() defines for the launch's ndim."""
    fnty = ir.FunctionType(result, [a.type for a in args])
    function = cgutils.get_or_insert_function(builder.module, fnty, f"dpex.{name}")
    return builder.call(function, args)


_PLACEHOLDERS = re.compile(r'@"?dpex\.(work_group_broadcast|sub_group_mul\.(\w+))\.([ijlmfd])"?\(')
_COMPUTE = {code: ty for ty, code in _CODES.items()}
_LLVM_TYPES = {
    "i": _I32,
    "j": _I32,
    "l": _I64,
    "m": _I64,
    "f": ir.FloatType(),
    "d": ir.DoubleType(),
}


#: Calls of OpenCL's sub-group shuffles in a linked module (select_from_group, shift_group_*,
#: permute_group_by_xor, dk.sub_group.shuffle*).
_SHUFFLES = re.compile(r"@_Z\d+sub_group_shuffle\w*\(")


def group_definitions(
    linked_ir: str, ndim: int, multiply_by_shuffles: bool, derive_sub_group_ids: bool
) -> str:
    """LLVM IR defining the placeholders of group algorithms `linked_ir` calls, for launches of
    `ndim` dimensions: work-group broadcasts (broadcast_definitions), sub-group products,
    native or by shuffles (workaround `sub-group-multiplies-by-shuffles`), and the sub-group's
    size and index, native or derived (workaround `sub-group-ids-derived`)."""
    found = set(_PLACEHOLDERS.findall(linked_ir))
    module = ir.Module("dpex.groups")
    for kind, algorithm, code in sorted(found):
        if kind == "work_group_broadcast":
            continue
        function = ir.Function(
            module,
            ir.FunctionType(_LLVM_TYPES[code], [_LLVM_TYPES[code]]),
            f"dpex.{kind}.{code}",
        )
        function.attributes.add("alwaysinline")
        builder = ir.IRBuilder(function.append_basic_block("entry"))
        (value,) = function.args
        if multiply_by_shuffles:
            builder.ret(_sub_group_product(builder, value, _COMPUTE[code], algorithm))
        else:
            name = f"sub_group_non_uniform_{algorithm}_mul"
            builder.ret(_builtin(builder, name, _COMPUTE[code], [value]))
    if any(kind == "work_group_broadcast" for kind, _, _ in found):
        _define_broadcasts(module, ndim)
    queries = ("dpex.sub_group_size", "dpex.sub_group_id")
    if re.search(r"@dpex\.sub_group_(size|id)\(", linked_ir) or any(
        function.name in queries for function in module.functions
    ):
        # Derived values hide the sub-group's lanes from the runtime's vectoriser (a sum that
        # reads by sub-groups ran 4.5x slower): only kernels that shuffle get them.
        products = multiply_by_shuffles and any(k != "work_group_broadcast" for k, _, _ in found)
        shuffles = products or _SHUFFLES.search(linked_ir) is not None
        _define_sub_group_queries(module, ndim, derive_sub_group_ids and shuffles)
    return str(module) if module.functions else ""


def _define_sub_group_queries(module: ir.Module, ndim: int, derived: bool) -> None:
    """`dpex.sub_group_size()` and `dpex.sub_group_id()`: OpenCL's built-ins, or where the
    device's compiler fails on a shuffle whose lane is computed from them, the same values
    derived from the local ids and the maximum sub-group size. Intel's CPU runtime cuts each
    row of the work-group (the run along SYCL's last dimension) into sub-groups of the maximum
    size, the last one of a row shorter."""

    def define(name: str):
        fnty = ir.FunctionType(_I32, [])
        function = cgutils.get_or_insert_function(module, fnty, f"dpex.{name}")
        function.attributes.add("alwaysinline")
        return ir.IRBuilder(function.append_basic_block("entry"))

    size, index = define("sub_group_size"), define("sub_group_id")
    if not derived:
        size.ret(call_builtin(size, "_Z18get_sub_group_sizev", _I32, [], []))
        index.ret(call_builtin(index, "_Z16get_sub_group_idv", _I32, [], []))
        return
    last = [ir.Constant(_I64, ndim - 1)]
    for builder in (size, index):
        largest = call_builtin(builder, "_Z22get_max_sub_group_sizev", _I32, [], [])
        largest = builder.zext(largest, _I64)
        row = call_index_placeholder(builder, "get_local_size", last)
        along = call_index_placeholder(builder, "get_local_id", last)
        in_row = builder.udiv(along, largest)  # the sub-group's place in its row
        if builder is size:
            left = builder.sub(row, builder.mul(in_row, largest))
            fewer = builder.icmp_unsigned("<", left, largest)
            builder.ret(builder.trunc(builder.select(fewer, left, largest), _I32))
            continue
        rows_before = builder.udiv(call_index_placeholder(builder, "get_local_linear_id", []), row)
        per_row = builder.udiv(
            builder.add(row, builder.sub(largest, ir.Constant(_I64, 1))), largest
        )
        builder.ret(builder.trunc(builder.add(builder.mul(rows_before, per_row), in_row), _I32))


def _define_broadcasts(module: ir.Module, ndim: int) -> None:
    """`dpex.work_group_broadcast.<code>(value, linear id)` for launches of `ndim` dimensions:
    OpenCL's work_group_broadcast takes one local id per dimension, x the fastest (SYCL's
    last)."""
    for code, llvm_type in _LLVM_TYPES.items():
        fnty = ir.FunctionType(llvm_type, [llvm_type, _I64])
        function = cgutils.get_or_insert_function(module, fnty, f"dpex.work_group_broadcast.{code}")
        function.attributes.add("alwaysinline")
        builder = ir.IRBuilder(function.append_basic_block("entry"))
        value, rest = function.args
        ids = []
        for axis in range(ndim - 1, 0, -1):  # SYCL dimensions, the last first
            extent = call_index_placeholder(builder, "get_local_size", [ir.Constant(_I64, axis)])
            ids.append(builder.urem(rest, extent))
            rest = builder.udiv(rest, extent)
        ids.append(rest)
        name = f"_Z20work_group_broadcast{code}{'m' * ndim}"
        builder.ret(
            call_builtin(builder, name, llvm_type, [llvm_type] + [_I64] * ndim, [value, *ids], True)
        )


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
