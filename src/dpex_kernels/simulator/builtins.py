"""The kernel API in Python: one implementation per public name ("dk.barrier"), for one launch.

The stubs (compiler/kernel_api/registry.py) call these while a simulation runs in their thread,
so every spelling of a name reaches them. sycl2020.py adds the SYCL 2020 forms to the same table.
"""

from __future__ import annotations

import numpy as np

from ..compiler.kernel_api.spirv import GLOBAL_MEM_FENCE, LOCAL_MEM_FENCE
from ..errors import KernelBoundsError
from . import races
from .memory import SimArray
from .scheduler import running, user_frame

_FENCE_FLAGS = (LOCAL_MEM_FENCE, GLOBAL_MEM_FENCE, LOCAL_MEM_FENCE | GLOBAL_MEM_FENCE)
_INT64_RANGE = range(-(2**63), 2**63)


class Table(dict):
    """Public name -> implementation; a name with none says so instead of a KeyError."""

    def __missing__(self, public: str):
        def unsupported(*args, **kwargs):
            raise NotImplementedError(
                f"{public}() has no implementation in the simulator yet; run the kernel on a "
                f"device, or report it"
            )

        return unsupported


def device_scalar(value):
    """A value as the device types it: Python int -> int64, float -> float64, bool -> bool."""
    if isinstance(value, np.generic):
        return value
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int):
        return np.int64(value) if value in _INT64_RANGE else np.uint64(value % 2**64)
    if isinstance(value, float):
        return np.float64(value)
    if isinstance(value, complex):
        return np.complex128(value)
    raise TypeError(
        f"a {type(value).__name__} cannot take part in a collective: kernels exchange numbers"
    )


def as_dtype(dtype) -> np.dtype:
    """A NumPy dtype from what kernels may name one with: dk.float32, np.float32, "f4"."""
    from numba.core import types as nbtypes
    from numba.np.numpy_support import as_dtype as numba_as_dtype

    if isinstance(dtype, nbtypes.Type):
        return numba_as_dtype(dtype)
    return np.dtype(dtype)


def _shape(shape) -> tuple[int, ...]:
    extents = tuple(int(n) for n in (shape if isinstance(shape, tuple) else (shape,)))
    if any(n <= 0 for n in extents):
        raise ValueError(f"local and private arrays have positive extents; got {shape!r}")
    return extents


def atomic_update(array, index, frame, update, value=None, sync: races.Sync = races.RELAXED):
    """Replace one element by update(old, value) as one step; returns the old value."""
    if not isinstance(array, SimArray):
        raise TypeError(
            f"atomics take a global or local array; got a {type(array).__name__} "
            f"({frame.f_code.co_filename}:{frame.f_lineno})"
        )
    key, flat = array.locate(index, frame)
    old = array.data[key]
    new = array.convert(update(old, None if value is None else array.convert(value)))
    if array.memory.checker.mode != "off":
        array.memory.atomic(array, flat, key, frame, sync)
    array.data[key] = new
    return old if array.widen is None else array.widen(old)


def _bits(value) -> bytes:
    return np.asarray(value).tobytes()


#: dk.atomic.* and AtomicRef.fetch_*: the new value from the old and the operand.
UPDATES = {
    "add": lambda old, value: old + value,
    "sub": lambda old, value: old - value,
    "min": lambda old, value: value if value < old else old,
    "max": lambda old, value: value if value > old else old,
    "and": lambda old, value: old & value,
    "or": lambda old, value: old | value,
    "xor": lambda old, value: old ^ value,
    "exchange": lambda old, value: value,
}


def add_kernel_api(table: Table, launch) -> None:
    """Fill `table` with the classic kernel API (API.md §3) running against `launch`."""
    geometry = launch.geometry

    int64 = np.int64
    table["dk.get_global_id"] = lambda dim: int64(running.item.global_id[dim])
    table["dk.get_local_id"] = lambda dim: int64(running.item.local_id[dim])
    table["dk.get_group_id"] = lambda dim: int64(running.item.group.index[dim])
    table["dk.get_global_size"] = geometry.global_size.__getitem__
    table["dk.get_local_size"] = geometry.local_size.__getitem__
    table["dk.get_num_groups"] = geometry.num_groups.__getitem__
    table["dk.get_work_dim"] = lambda: np.int64(geometry.ndim)

    def barrier(flags=LOCAL_MEM_FENCE):
        if flags not in _FENCE_FLAGS:
            raise ValueError(
                f"dk.barrier({flags!r}): the flags are dk.LOCAL_MEM_FENCE, dk.GLOBAL_MEM_FENCE "
                f"or both"
            )
        item = running.item
        launch.sync(item, item.group, "dk.barrier()")

    def sub_group_barrier(flags=LOCAL_MEM_FENCE):
        item = running.item
        launch.sync(item, item.sub_group, "dk.sub_group.barrier()")

    table["dk.barrier"] = barrier
    table["dk.sub_group.barrier"] = sub_group_barrier

    def local_array(shape, dtype):
        site = user_frame(2)
        key = (site.f_code, site.f_lasti)
        group = running.item.group
        found = group.memory.get(key)
        if found is None:
            found = group.memory[key] = launch.new_array(_shape(shape), as_dtype(dtype), "local")
        return found

    def private_array(shape, dtype):
        site = user_frame(2)
        key = (site.f_code, site.f_lasti)
        item = running.item
        found = item.private.get(key)
        if found is None:
            found = item.private[key] = launch.new_array(_shape(shape), as_dtype(dtype), "private")
        return found

    table["dk.local.array"] = local_array
    table["dk.private.array"] = private_array

    def atomic(op):
        def run(array, index, value):
            sync = races.Sync(uses_old=op != "exchange")
            return atomic_update(array, index, user_frame(2), UPDATES[op], value, sync)

        return run

    for op in ("add", "sub", "min", "max", "exchange"):
        table[f"dk.atomic.{op}"] = atomic(op)

    def compare_exchange(array, index, expected, desired):
        expected = array.convert(expected) if isinstance(array, SimArray) else expected

        def update(old, _):
            return desired if _bits(old) == _bits(expected) else old

        return atomic_update(array, index, user_frame(2), update)

    table["dk.atomic.compare_exchange"] = compare_exchange
    _add_sub_groups(table, launch)
    table["dk.func"] = lambda function, *args, **kwargs: launch.function(function.py_func)(
        *args, **kwargs
    )


def _add_sub_groups(table: Table, launch) -> None:
    table["dk.sub_group.get_local_id"] = lambda: running.item.lane
    table["dk.sub_group.get_size"] = lambda: np.int64(len(running.item.sub_group.items))

    def reduce_add(value):
        def combine(members, values):
            total = values[0]
            for v in values[1:]:
                total = total + v
            return [total] * len(members)

        item = running.item
        return launch.sync(
            item, item.sub_group, "dk.sub_group.reduce_add()", device_scalar(value), combine
        )

    def exchange(name: str):
        def run(value, lane):
            def combine(members, values):
                size = len(members)
                results = []
                for member, (_, wanted) in zip(members, values):
                    if not 0 <= wanted < size:
                        raise KernelBoundsError(
                            f"dk.sub_group.{name}(x, {wanted}): lane {wanted} is outside the "
                            f"sub-group of {size} work-items "
                            f"({member.describe(launch.geometry.ndim)})"
                        )
                    results.append(values[int(wanted)][0])
                return results

            item = running.item
            what = f"dk.sub_group.{name}()"
            return launch.sync(item, item.sub_group, what, (device_scalar(value), lane), combine)

        return run

    table["dk.sub_group.reduce_add"] = reduce_add
    table["dk.sub_group.shuffle"] = exchange("shuffle")
    table["dk.sub_group.broadcast"] = exchange("broadcast")
