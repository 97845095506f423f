"""A launch's index space: the work-groups, their work-items and sub-groups, in SYCL order.

Under a Range each work-item is a work-group of its own (the runtime's choice on a device, so
no kernel may rely on it); under an NdRange the groups are those it names. Sub-groups are runs
of consecutive work-items along the last dimension, as on the device.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator

import numpy as np

from ..types.ranges import NdRange, as_launch_range
from .scheduler import SubGroup, WorkGroup, WorkItem


def _padded(values: tuple, fill: int) -> tuple:
    return values + (fill,) * (3 - len(values))


def _device_ints(values: tuple, fill: int) -> tuple:
    return tuple(np.int64(v) for v in _padded(values, fill))


class Geometry:
    """Global, local and group sizes of one launch (each padded to three dimensions)."""

    def __init__(self, launch_range, sub_group_size: int):
        value = as_launch_range(launch_range)
        self.nd_range = isinstance(value, NdRange)
        if self.nd_range:
            global_size, local_size = tuple(value.global_range), tuple(value.local_range)
        else:
            global_size = tuple(value)
            local_size = (1,) * len(global_size)
        self.range = value
        self.ndim = len(global_size)
        self.global_dims, self.local_dims = global_size, local_size
        self.group_dims = tuple(g // loc for g, loc in zip(global_size, local_size))
        self.global_size = _device_ints(global_size, 1)
        self.local_size = _device_ints(local_size, 1)
        self.num_groups = _device_ints(self.group_dims, 1)
        self.total = math.prod(global_size)
        self.group_size = math.prod(local_size)
        self.sub_group_size = max(1, min(sub_group_size, local_size[-1]))

    def groups(self, arguments: Callable[[WorkGroup], tuple]) -> Iterator[WorkGroup]:
        """The work-groups in order (the last dimension fastest), built as they are reached."""
        local_ids = list(itertools.product(*(range(n) for n in self.local_dims)))
        last = self.local_dims[-1]
        per_row = -(-last // self.sub_group_size)
        for linear, group_id in enumerate(itertools.product(*(range(n) for n in self.group_dims))):
            group = WorkGroup(group_id, linear)
            group.index = _padded(group_id, 0)
            rows = len(local_ids) // last * per_row
            group.sub_groups = [SubGroup(group, k) for k in range(rows)]
            for local_linear, local_id in enumerate(local_ids):
                global_id = tuple(g * n + i for g, n, i in zip(group_id, self.local_dims, local_id))
                global_linear = 0
                for i, n in zip(global_id, self.global_dims):
                    global_linear = global_linear * n + i
                item = WorkItem(
                    _padded(global_id, 0), _padded(local_id, 0), global_linear, local_linear, group
                )
                row, position = divmod(local_linear, last)
                sub_group = group.sub_groups[row * per_row + position // self.sub_group_size]
                item.sub_group = sub_group
                item.lane = np.int64(len(sub_group.items))
                sub_group.items.append(item)
                group.items.append(item)
            group.args = arguments(group)
            yield group
