"""The SYCL 2020 forms in Python: items, groups, group algorithms, AtomicRef, LocalAccessor.

Each public name ("dk.reduce_over_group", "dk.AtomicRef") is one entry of the launch's table;
a stub made with host_stub(..., public=that name) reaches it. Operators of the group algorithms
(dk.plus, ...) are recognised by name (`__name__`, or `name`), whatever objects stand for them.
The simulator runs one work-item at a time, so every atomic is sequentially consistent; memory
orders tell the race checker which accesses between work-groups an atomic orders, and scopes
are accepted and ignored.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..errors import InvalidRangeError
from ..types.kernel_objects import LocalAccessor, MemoryOrder
from . import races
from .builtins import UPDATES, Table, atomic_update, device_scalar
from .memory import SimArray
from .scheduler import SubGroup, WorkGroup, WorkItem, running, user_frame


def is_local_accessor(value) -> bool:
    return isinstance(value, LocalAccessor)


class Item:
    """A kernel's first parameter: SYCL's item under a Range, its nd_item under an NdRange (one
    class with the methods of the compiler's ItemType, kernel_api/items.py)."""

    __slots__ = ("_item", "_geometry")

    def __init__(self, item: WorkItem, geometry):
        self._item, self._geometry = item, geometry

    def _nd(self, method: str) -> None:
        if not self._geometry.nd_range:
            raise InvalidRangeError(
                f"item.{method}() is an nd-item's: launch the kernel with dk.NdRange(global, "
                f"local), not {self._geometry.range!r}"
            )

    def get_id(self, dim):
        return np.int64(self._item.global_id[dim])

    def get_range(self, dim):
        return self._geometry.global_size[dim]

    def get_linear_id(self):
        return np.int64(self._item.global_linear)

    def get_linear_range(self):
        return np.int64(self._geometry.total)

    def get_global_id(self, dim):
        self._nd("get_global_id")
        return self.get_id(dim)

    def get_global_range(self, dim):
        self._nd("get_global_range")
        return self.get_range(dim)

    def get_global_linear_id(self):
        self._nd("get_global_linear_id")
        return self.get_linear_id()

    def get_global_linear_range(self):
        self._nd("get_global_linear_range")
        return self.get_linear_range()

    def get_local_id(self, dim):
        self._nd("get_local_id")
        return np.int64(self._item.local_id[dim])

    def get_local_range(self, dim):
        self._nd("get_local_range")
        return self._geometry.local_size[dim]

    def get_local_linear_id(self):
        self._nd("get_local_linear_id")
        return np.int64(self._item.local_linear)

    def get_local_linear_range(self):
        self._nd("get_local_linear_range")
        return np.int64(self._geometry.group_size)

    def get_group_range(self, dim):
        self._nd("get_group_range")
        return self._geometry.num_groups[dim]

    def get_group(self) -> Group:
        self._nd("get_group")
        return Group(self._item.group, self._geometry)

    def get_sub_group(self) -> SubGroupHandle:
        self._nd("get_sub_group")
        return SubGroupHandle(self._item.sub_group, self._geometry)


class Group:
    """A work-group, as item.get_group() returns it."""

    __slots__ = ("scope", "_geometry")

    def __init__(self, group: WorkGroup, geometry):
        self.scope, self._geometry = group, geometry

    def get_group_id(self, dim):
        return np.int64(self.scope.index[dim])

    def get_group_linear_id(self):
        return np.int64(self.scope.linear)

    def get_group_range(self, dim):
        return self._geometry.num_groups[dim]

    def get_group_linear_range(self):
        return np.int64(math.prod(self._geometry.group_dims))

    def get_local_id(self, dim):
        return np.int64(running.item.local_id[dim])

    def get_local_linear_id(self):
        return np.int64(running.item.local_linear)

    def get_local_range(self, dim):
        return self._geometry.local_size[dim]

    def get_local_linear_range(self):
        return np.int64(self._geometry.group_size)

    def get_global_range(self, dim):
        return self._geometry.global_size[dim]

    def leader(self) -> bool:
        return running.item.local_linear == 0

    def member(self, item: WorkItem) -> int:
        return item.local_linear


class SubGroupHandle:
    """A sub-group, as item.get_sub_group() returns it."""

    __slots__ = ("scope", "_geometry")

    def __init__(self, sub_group: SubGroup, geometry):
        self.scope, self._geometry = sub_group, geometry

    def get_local_id(self):
        return running.item.lane

    def get_local_range(self):
        return np.int64(len(self.scope.items))

    def get_max_local_range(self):
        return np.int64(self._geometry.sub_group_size)

    def get_group_id(self):
        return np.int64(self.scope.index)

    def get_group_range(self):
        return np.int64(len(self.scope.group.sub_groups))

    def leader(self) -> bool:
        return running.item.lane == 0

    def member(self, item: WorkItem) -> int:
        return int(item.lane)


def _op_name(op) -> str:
    name = getattr(op, "__name__", None) or getattr(op, "name", None) or str(op)
    return name.rsplit(".", 1)[-1].lower()


#: The group algorithms' operators: (combine two values, identity for a dtype).
OPERATORS = {
    "plus": (operator.add, lambda dtype: dtype.type(0)),
    "multiplies": (operator.mul, lambda dtype: dtype.type(1)),
    "minimum": (lambda a, b: b if b < a else a, lambda dtype: _extreme(dtype, "max")),
    "maximum": (lambda a, b: b if b > a else a, lambda dtype: _extreme(dtype, "min")),
    "bit_and": (
        operator.and_,
        lambda dtype: dtype.type(-1) if dtype.kind == "i" else ~dtype.type(0),
    ),
    "bit_or": (operator.or_, lambda dtype: dtype.type(0)),
    "bit_xor": (operator.xor, lambda dtype: dtype.type(0)),
    "logical_and": (lambda a, b: np.bool_(a and b), lambda dtype: np.bool_(True)),
    "logical_or": (lambda a, b: np.bool_(a or b), lambda dtype: np.bool_(False)),
}


def _extreme(dtype: np.dtype, which: str):
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    if dtype.kind == "f":
        return dtype.type(np.inf if which == "max" else -np.inf)
    return dtype.type(info.max if which == "max" else info.min)


def _operator(op):
    found = OPERATORS.get(_op_name(op))
    if found is None:
        raise TypeError(
            f"{op!r} is not a group algorithm's operator: use dk.plus, dk.multiplies, "
            f"dk.minimum, dk.maximum, dk.bit_and, dk.bit_or, dk.bit_xor, dk.logical_and or "
            f"dk.logical_or"
        )
    return found


def _scope(group):
    if not isinstance(group, (Group, SubGroupHandle)):
        raise TypeError(
            f"group algorithms take the group of nd_item.get_group() or the sub-group of "
            f"nd_item.get_sub_group(); got a {type(group).__name__}"
        )
    return group.scope


def _fold(values, combine):
    total = values[0]
    for value in values[1:]:
        total = combine(total, value)
    return total


def add_sycl2020(table: Table, launch) -> None:
    """Fill `table` with the SYCL 2020 forms running against `launch`."""

    def collective(public, group, value, combine):
        item = running.item
        return launch.sync(item, _scope(group), f"{public}()", value, combine)

    def group_barrier(group, fence_scope=None):
        collective("dk.group_barrier", group, None, None)

    def group_broadcast(group, value, local_id=0):
        def combine(members, values):
            wanted = local_id if not isinstance(local_id, tuple) else _linear(local_id)
            return [values[int(wanted)]] * len(members)

        return collective("dk.group_broadcast", group, device_scalar(value), combine)

    def _linear(local_id):
        linear = 0
        for dim, i in enumerate(local_id):
            linear = linear * int(launch.geometry.local_size[dim]) + int(i)
        return linear

    def reduce_over_group(group, value, *init_and_op):
        init, op = (None, *init_and_op) if len(init_and_op) == 1 else init_and_op
        combine, _ = _operator(op)

        def total(members, values):
            result = _fold(values, combine)
            if init is not None:
                result = combine(device_scalar(init), result)
            return [result] * len(members)

        return collective("dk.reduce_over_group", group, device_scalar(value), total)

    def scan(public, inclusive):
        def run(group, value, *rest):
            # SYCL 2020's orders: inclusive (g, x, op, init), exclusive (g, x, init, op)
            if len(rest) == 1:
                op, init = rest[0], None
            else:
                op, init = rest if inclusive else rest[::-1]
            combine, identity = _operator(op)

            def prefixes(members, values):
                results, total = [], None
                for value in values:
                    if not inclusive:
                        dtype = np.asarray(value).dtype
                        results.append(identity(dtype) if total is None else total)
                    total = value if total is None else combine(total, value)
                    if inclusive:
                        results.append(total)
                if init is not None:
                    results = [combine(device_scalar(init), r) for r in results]
                return results

            return collective(public, group, device_scalar(value), prefixes)

        return run

    def predicate(public, test):
        def run(group, pred):
            return collective(
                public, group, bool(pred), lambda m, values: [np.bool_(test(values))] * len(m)
            )

        return run

    table["dk.group_barrier"] = group_barrier
    table["dk.group_broadcast"] = group_broadcast
    table["dk.reduce_over_group"] = reduce_over_group
    table["dk.inclusive_scan_over_group"] = scan("dk.inclusive_scan_over_group", True)
    table["dk.exclusive_scan_over_group"] = scan("dk.exclusive_scan_over_group", False)
    table["dk.any_of_group"] = predicate("dk.any_of_group", any)
    table["dk.all_of_group"] = predicate("dk.all_of_group", all)
    table["dk.none_of_group"] = predicate("dk.none_of_group", lambda values: not any(values))
    _add_sub_group_algorithms(table, collective)
    table["dk.AtomicRef"] = AtomicRef
    table["dk.atomic_fence"] = lambda memory_order, memory_scope=None: races.fence(
        memory_order, launch.checker
    )


def _add_sub_group_algorithms(table: Table, collective) -> None:
    def lane_picker(public, pick):
        def run(sub_group, value, arg):
            if not isinstance(sub_group, SubGroupHandle):
                raise TypeError(f"{public}() takes a sub-group (nd_item.get_sub_group())")

            def combine(members, values):
                size = len(values)
                results = []
                for lane, (own, argument) in enumerate(values):
                    source = pick(lane, int(argument))
                    results.append(values[source][0] if 0 <= source < size else own)
                return results

            return collective(public, sub_group, (device_scalar(value), arg), combine)

        return run

    table["dk.shift_group_left"] = lane_picker("dk.shift_group_left", lambda i, d: i + d)
    table["dk.shift_group_right"] = lane_picker("dk.shift_group_right", lambda i, d: i - d)
    table["dk.permute_group_by_xor"] = lane_picker("dk.permute_group_by_xor", lambda i, m: i ^ m)
    table["dk.select_from_group"] = lane_picker("dk.select_from_group", lambda i, j: j)


class AtomicRef:
    """dk.AtomicRef(array, index, memory_order=..., memory_scope=...): atomics on one element.

    Each operation runs as one step (sequentially consistent); its memory order still tells
    the race checker which accesses of other work-groups it orders (races.Sync)."""

    __slots__ = ("_array", "_index", "_order")

    def __init__(
        self,
        array,
        index,
        memory_order=MemoryOrder.RELAXED,
        memory_scope=None,
        address_space=None,
    ):
        if not isinstance(array, SimArray):
            raise TypeError(
                f"dk.AtomicRef takes a global or local array; got a {type(array).__name__}"
            )
        self._array, self._index, self._order = array, index, memory_order

    def _update(self, update, value=None, order=None, **kind):
        sync = races.Sync.of(self._order if order is None else order, **kind)
        return atomic_update(self._array, self._index, user_frame(2), update, value, sync)

    def fetch_add(self, value, memory_order=None):
        return self._update(UPDATES["add"], value, memory_order)

    def fetch_sub(self, value, memory_order=None):
        return self._update(UPDATES["sub"], value, memory_order)

    def fetch_min(self, value, memory_order=None):
        return self._update(UPDATES["min"], value, memory_order)

    def fetch_max(self, value, memory_order=None):
        return self._update(UPDATES["max"], value, memory_order)

    def fetch_and(self, value, memory_order=None):
        return self._update(UPDATES["and"], value, memory_order)

    def fetch_or(self, value, memory_order=None):
        return self._update(UPDATES["or"], value, memory_order)

    def fetch_xor(self, value, memory_order=None):
        return self._update(UPDATES["xor"], value, memory_order)

    def exchange(self, value, memory_order=None):
        return self._update(UPDATES["exchange"], value, memory_order, uses_old=False)

    def load(self, memory_order=None):
        return self._update(lambda old, _: old, None, memory_order, stores=False)

    def store(self, value, memory_order=None) -> None:
        self._update(UPDATES["exchange"], value, memory_order, loads=False, uses_old=False)

    def compare_exchange(self, expected, desired, memory_order=None):
        expected = self._array.convert(expected)

        def update(old, _):
            same = np.asarray(old).tobytes() == np.asarray(expected).tobytes()
            return desired if same else old

        return self._update(update, None, memory_order)
