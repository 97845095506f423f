"""SYCL 2020's index-space objects: items, nd-items, groups and sub-groups.

A kernel whose first parameter is an item (`def k(item, a)`, launched with one argument fewer
than it has parameters) gets an `ItemType` value there: SYCL's item and nd_item in one type,
its methods lowered to the same index placeholders as the free functions (`item.get_id(0)` is
`dk.get_global_id(0)`), so both forms compile to the same code. An item takes no kernel
argument. Methods only an nd_item has (local ids, groups, sub-groups) also call the marker
`dpex.nd_item`, from which the compiler records that the kernel needs an NdRange launch.
"""

from __future__ import annotations

import dis
import linecache
import types as pytypes

from llvmlite import ir
from numba.core import errors, types
from numba.core.datamodel import models, register_default
from numba.core.typing.templates import AbstractTemplate, AttributeTemplate, signature

from ...errors import KernelCompileError
from .index_space import call_index_placeholder, sub_group_id, sub_group_size
from .registry import call_builtin, lowering_registry, typing_registry

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


class ItemType(types.Type):
    """A work-item's item or nd-item (the first parameter of an item kernel)."""

    def __init__(self):
        super().__init__(name="item")


class GroupType(types.Type):
    """The work-group of an nd-item (`item.get_group()`)."""

    def __init__(self):
        super().__init__(name="group")


class SubGroupType(types.Type):
    """The sub-group of an nd-item (`item.get_sub_group()`)."""

    def __init__(self):
        super().__init__(name="sub_group")


ITEM, GROUP, SUB_GROUP = ItemType(), GroupType(), SubGroupType()
for _type in (ItemType, GroupType, SubGroupType):
    register_default(_type)(models.OpaqueModel)

#: Methods with a dimension argument, per type: name -> the index placeholder it reads, and
#: whether only an nd-item has it.
_DIMENSIONED = {
    ItemType: {
        "get_id": ("get_global_id", False),
        "get_range": ("get_global_size", False),
        "get_global_id": ("get_global_id", True),
        "get_global_range": ("get_global_size", True),
        "get_local_id": ("get_local_id", True),
        "get_local_range": ("get_local_size", True),
        "get_group_range": ("get_num_groups", True),
    },
    GroupType: {
        "get_group_id": ("get_group_id", True),
        "get_local_id": ("get_local_id", True),
        "get_local_range": ("get_local_size", True),
        "get_group_range": ("get_num_groups", True),
        "get_global_range": ("get_global_size", True),
    },
}
#: Methods without arguments that read a linear placeholder (index_space.py).
_LINEAR = {
    ItemType: {
        "get_linear_id": ("get_global_linear_id", False),
        "get_linear_range": ("get_global_linear_range", False),
        "get_global_linear_id": ("get_global_linear_id", True),
        "get_global_linear_range": ("get_global_linear_range", True),
        "get_local_linear_id": ("get_local_linear_id", True),
        "get_local_linear_range": ("get_local_linear_range", True),
    },
    GroupType: {
        "get_group_linear_id": ("get_group_linear_id", True),
        "get_local_linear_id": ("get_local_linear_id", True),
        "get_local_linear_range": ("get_local_linear_range", True),
        "get_group_linear_range": ("get_group_linear_range", True),
    },
}
#: Sub-group queries: name -> OpenCL built-in (an unsigned int, widened).
_SUB_GROUP = {
    "get_local_id": "_Z22get_sub_group_local_idv",
    "get_local_range": None,  # index_space.sub_group_size
    "get_max_local_range": "_Z22get_max_sub_group_sizev",
    "get_group_id": None,  # index_space.sub_group_id
    "get_group_range": "_Z18get_num_sub_groupsv",
}
#: Every method name that takes a dimension: their constant arguments are frozen as literals
#: (functions.py), as the kernel API's are.
DIMENSION_METHODS = frozenset(name for methods in _DIMENSIONED.values() for name in methods)
ITEM_METHODS = frozenset(
    {*DIMENSION_METHODS, "get_group", "get_sub_group", "leader"}
    | {name for methods in _LINEAR.values() for name in methods}
)


def mark_nd_item(builder) -> None:
    """Record that the kernel uses what only an nd-item has (see the module docstring)."""
    call_index_placeholder(builder, "nd_item", [], ir.VoidType())


def _dimension(public: str, dim_type) -> ir.Constant:
    if not isinstance(dim_type, types.IntegerLiteral):
        raise errors.UnsupportedError(
            f"{public}(d): the dimension is a constant 0, 1 or 2, not a value computed at run "
            f"time (here a variable of type {dim_type}): write a literal, or a global, closure "
            f"variable or NumPy integer that holds one"
        )
    if dim_type.literal_value not in (0, 1, 2):
        raise errors.UnsupportedError(
            f"{public}({dim_type.literal_value}): the dimension is 0, 1 or 2"
        )
    return ir.Constant(_I64, dim_type.literal_value)


def _method_key(owner, name: str) -> str:
    return f"dpex.{owner.__name__}.{name}"


def _register_dimensioned(owner, name: str, placeholder: str, nd_only: bool) -> None:
    public = f"{owner().name}.{name}"

    @lowering_registry.lower(_method_key(owner, name), owner, types.Integer)
    def _lower(context, builder, sig, args):
        dim = _dimension(public, sig.args[1])
        if nd_only:
            mark_nd_item(builder)
        return call_index_placeholder(builder, placeholder, [dim])


def _register_linear(owner, name: str, placeholder: str, nd_only: bool) -> None:
    @lowering_registry.lower(_method_key(owner, name), owner)
    def _lower(context, builder, sig, args):
        if nd_only:
            mark_nd_item(builder)
        return call_index_placeholder(builder, placeholder, [])


def _register_sub_group_query(name: str, mangled: str | None) -> None:
    @lowering_registry.lower(_method_key(SubGroupType, name), SubGroupType)
    def _lower(context, builder, sig, args):
        mark_nd_item(builder)
        if mangled is None:  # per device: see groups.py group_definitions
            read = sub_group_size if name == "get_local_range" else sub_group_id
            return builder.zext(read(builder), _I64)
        return builder.zext(call_builtin(builder, mangled, _I32, [], []), _I64)


for _owner, _methods in _DIMENSIONED.items():
    for _name, (_placeholder, _nd_only) in _methods.items():
        _register_dimensioned(_owner, _name, _placeholder, _nd_only)
for _owner, _methods in _LINEAR.items():
    for _name, (_placeholder, _nd_only) in _methods.items():
        _register_linear(_owner, _name, _placeholder, _nd_only)
for _name, _mangled in _SUB_GROUP.items():
    _register_sub_group_query(_name, _mangled)


#: Every method of each type (the simulator's item classes have the same ones).
METHODS: dict[type, frozenset[str]] = {}


def _attribute_template(owner, extra: dict):
    """Typing of `owner`'s methods: those registered above, and `extra` (name -> (argument
    check, return type)). Arguments are typed as literals first, so that a constant dimension
    reaches the lowering as one."""

    class _Template(AttributeTemplate):
        key = owner

    def method(name: str, check, result):
        class _Method(AbstractTemplate):
            key = _method_key(owner, name)
            prefer_literal = True

            def generic(self, args, kws):
                if not kws and check(args):
                    return signature(result, *args).replace(recvr=self.this)
                return None

        def resolve(self, ty):
            return types.BoundFunction(_Method, ty)

        setattr(_Template, f"resolve_{name}", resolve)

    for name in _DIMENSIONED.get(owner, {}):
        method(name, lambda a: len(a) == 1 and isinstance(a[0], types.Integer), types.intp)
    for name in _LINEAR.get(owner, {}):
        method(name, lambda a: not a, types.intp)
    for name, (check, result) in extra.items():
        method(name, check, result)
    typing_registry.register_attr(_Template)
    METHODS[owner] = frozenset({*_DIMENSIONED.get(owner, {}), *_LINEAR.get(owner, {}), *extra})


_NO_ARGS = lambda a: not a  # noqa: E731
_attribute_template(
    ItemType, {"get_group": (_NO_ARGS, GROUP), "get_sub_group": (_NO_ARGS, SUB_GROUP)}
)
_attribute_template(GroupType, {"leader": (_NO_ARGS, types.boolean)})
_attribute_template(
    SubGroupType,
    {name: (_NO_ARGS, types.intp) for name in _SUB_GROUP} | {"leader": (_NO_ARGS, types.boolean)},
)


@lowering_registry.lower(_method_key(ItemType, "get_group"), ItemType)
@lowering_registry.lower(_method_key(ItemType, "get_sub_group"), ItemType)
def _lower_group(context, builder, sig, args):
    mark_nd_item(builder)
    return context.get_dummy_value()


@lowering_registry.lower(_method_key(GroupType, "leader"), GroupType)
def _lower_leader(context, builder, sig, args):
    mark_nd_item(builder)
    linear = call_index_placeholder(builder, "get_local_linear_id", [])
    return builder.icmp_unsigned("==", linear, ir.Constant(_I64, 0))


@lowering_registry.lower(_method_key(SubGroupType, "leader"), SubGroupType)
def _lower_sub_group_leader(context, builder, sig, args):
    mark_nd_item(builder)
    lane = call_builtin(builder, _SUB_GROUP["get_local_id"], _I32, [], [])
    return builder.icmp_unsigned("==", lane, ir.Constant(_I32, 0))


def _item_uses(code: pytypes.CodeType) -> dict[str, tuple[str, int | None]]:
    """Parameter name -> (the item, group or sub-group method called on it, the line) of the
    first such call on each parameter."""
    parameters = set(code.co_varnames[: code.co_argcount])
    instructions = list(dis.get_instructions(code))
    uses: dict[str, tuple[str, int | None]] = {}
    for instruction, following in zip(instructions, instructions[1:]):
        if (
            instruction.opname in ("LOAD_FAST", "LOAD_FAST_CHECK")
            and instruction.argval in parameters
            and following.opname in ("LOAD_ATTR", "LOAD_METHOD")
            and following.argval in ITEM_METHODS
        ):
            line = following.positions.lineno if following.positions else None
            uses.setdefault(instruction.argval, (following.argval, line))
    return uses


def takes_item(py_func: pytypes.FunctionType) -> bool:
    """Whether a kernel's first parameter is an item: the code calls an item, group or
    sub-group method on it (`item.get_id(0)`), which no array or scalar has. Such a call on
    any other parameter is a KernelCompileError: the item is always the first parameter."""
    code = py_func.__code__
    if code.co_argcount == 0:
        return False
    names = code.co_varnames[: code.co_argcount]
    uses = _item_uses(code)
    misplaced = [name for name in names[1:] if name in uses]
    if misplaced:
        name = misplaced[0]
        method, line = uses[name]
        where = f"{code.co_filename}:{line or code.co_firstlineno}"
        source = linecache.getline(code.co_filename, line or code.co_firstlineno).strip()
        others = [n for n in names if n != name]
        raise KernelCompileError(
            f"cannot compile kernel '{py_func.__qualname__}' for a SYCL device: parameter "
            f"'{name}' (position {names.index(name)}) is used as an item ({name}.{method}), "
            f"but an item is only ever a kernel's first parameter: write "
            f"def {py_func.__name__}({', '.join([name, *others])}) and launch it without an "
            f"argument for the item\n  at {where}" + (f"\n    {source}" if source else "")
        )
    return names[0] in uses


__all__ = [
    "GROUP",
    "ITEM",
    "METHODS",
    "SUB_GROUP",
    "GroupType",
    "ItemType",
    "SubGroupType",
    "takes_item",
]
