"""numba-dpex 0.23's kernel_api (`from numba_dpex import kernel_api as kapi`) on dpex_kernels.

Each name is a plain Python object that works as numba-dpex 0.23's did outside compiled code:
`call_kernel` runs a kernel function in Python, one work-item after another, on NumPy or USM
arrays, passing it `Item` or `NdItem` objects; `AtomicRef`, `PrivateArray` and
`atomic_fence` work there too, and `group_barrier` raises NotImplementedError, as in
numba-dpex (no work-item can wait for others that run after it). Inside kernels compiled by
`dpex.kernel` the same objects are typed and lowered by dk's compiler (kernel_forms.py).
`MemoryOrder`, `MemoryScope` and `AddressSpace` are dk's own enums.
"""

from __future__ import annotations

import inspect
import itertools
import operator
from collections.abc import Callable, Iterable

import numpy as np

from ..types.kernel_objects import AddressSpace, MemoryOrder, MemoryScope
from ..types.ranges import Range as DkRange
from .core.exceptions import UnmatchedNumberOfRangeDimsError, UnsupportedGroupWorkItemSizeError

# --- index spaces ---------------------------------------------------------------------------


class Range(tuple):
    """sycl::range: the extents of a 1-3 dimensional index space (a tuple of ints)."""

    _UNDEFINED_DIMENSION = -1

    def __new__(cls, dim0: int, dim1: int | None = None, dim2: int | None = None) -> Range:
        if dim1 is None and dim2 is not None:
            raise TypeError(f"Range({dim0}, None, {dim2}): give dim1 before dim2")
        dims = [dim for dim in (dim0, dim1, dim2) if dim is not None]
        return super().__new__(cls, DkRange(*dims))  # dk's checks: ints >= 0, never bool

    def __getnewargs__(self) -> tuple[int, ...]:
        return tuple(self)  # pickle calls Range(*extents)

    def get(self, index: int) -> int:
        """The extent of dimension `index`."""
        return self[index]

    def size(self) -> int:
        """The number of work-items: the product of the extents."""
        return DkRange(*self).size

    @property
    def ndim(self) -> int:
        return len(self)

    @property
    def dim0(self) -> int:
        return self[0]

    @property
    def dim1(self) -> int:
        """The second extent, or -1 for a 1-D range."""
        return self[1] if len(self) > 1 else Range._UNDEFINED_DIMENSION

    @property
    def dim2(self) -> int:
        """The third extent, or -1 for a 1-D or 2-D range."""
        return self[2] if len(self) > 2 else Range._UNDEFINED_DIMENSION


def _as_range(size: object, what: str) -> Range:
    if isinstance(size, Range):
        return size
    if isinstance(size, Iterable):
        return Range(*size)
    raise TypeError(f"NdRange {what} is a Range or a sequence of ints; got {size!r}")


class NdRange:
    """sycl::nd_range: a global range cut into work-groups of a local range."""

    def __init__(self, global_size: Range | Iterable[int], local_size: Range | Iterable[int]):
        self._global_range = _as_range(global_size, "global_size")
        self._local_range = _as_range(local_size, "local_size")
        if len(self._global_range) != len(self._local_range):
            raise UnmatchedNumberOfRangeDimsError(
                "", len(self._global_range), len(self._local_range)
            )
        for dim, (extent, local) in enumerate(zip(self._global_range, self._local_range)):
            if local == 0 or extent % local:
                raise UnsupportedGroupWorkItemSizeError("", dim, extent, local)

    @property
    def global_range(self) -> Range:
        return self._global_range

    @property
    def local_range(self) -> Range:
        return self._local_range

    def get_global_range(self) -> Range:
        return self._global_range

    def get_local_range(self) -> Range:
        return self._local_range

    def __str__(self) -> str:
        return f"({self._global_range}, {self._local_range})"

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, NdRange)
            and self.global_range == other.global_range
            and self.local_range == other.local_range
        )

    def __hash__(self) -> int:
        return hash((self._global_range, self._local_range))


# --- index space ids (made by call_kernel; compiled kernels have their own) -----------------


def _linear(ids: Callable[[int], int], extents: Callable[[int], int], ndim: int) -> int:
    """A C-ordered linear index: the last dimension varies fastest."""
    linear = 0
    for dim in range(ndim):
        linear = linear * extents(dim) + ids(dim)
    return linear


class Group:
    """sycl::group: the work-group of an NdItem (`nd_item.get_group()`)."""

    def __init__(self, global_range: Range, local_range: Range, group_range: Range, index):
        self._global_range = global_range
        self._local_range = local_range
        self._group_range = group_range
        self._index = tuple(index)
        self._leader = False

    def get_group_id(self, dim: int) -> int:
        if not 0 <= dim < len(self._index):
            raise ValueError(f"group id dimension {dim} is not below {len(self._index)}")
        return self._index[dim]

    def get_group_linear_id(self) -> int:
        return _linear(self.get_group_id, self.get_group_range, self.dimensions)

    def get_group_range(self, dim: int) -> int:
        return self._group_range[dim]

    def get_group_linear_range(self) -> int:
        return Range(*self._group_range).size()

    def get_local_range(self, dim: int) -> int:
        return self._local_range[dim]

    def get_local_linear_range(self) -> int:
        return Range(*self._local_range).size()

    @property
    def leader(self) -> bool:
        """Whether the work-item holding this group is its leader (local id 0)."""
        return self._leader

    @leader.setter
    def leader(self, is_leader: bool) -> None:
        self._leader = bool(is_leader)

    @property
    def dimensions(self) -> int:
        return len(self._global_range)


class Item:
    """sycl::item: a work-item of a Range launch."""

    def __init__(self, extent: Range, index):
        self._extent = extent
        self._index = tuple(index)

    def get_id(self, idx: int) -> int:
        return self._index[idx]

    def get_range(self, idx: int) -> int:
        return self._extent[idx]

    def get_linear_id(self) -> int:
        return _linear(self.get_id, self.get_range, self.dimensions)

    def get_linear_range(self) -> int:
        return Range(*self._extent).size()

    @property
    def dimensions(self) -> int:
        return len(self._extent)


class NdItem:
    """sycl::nd_item: a work-item of an NdRange launch, with its work-group."""

    def __init__(self, global_item: Item, local_item: Item, group: Group):
        self._global_item = global_item
        self._local_item = local_item
        self._group = group
        if self.get_local_linear_id() == 0:
            group.leader = True

    def get_global_id(self, idx: int) -> int:
        return self._global_item.get_id(idx)

    def get_global_linear_id(self) -> int:
        return self._global_item.get_linear_id()

    def get_local_id(self, idx: int) -> int:
        return self._local_item.get_id(idx)

    def get_local_linear_id(self) -> int:
        return self._local_item.get_linear_id()

    def get_global_range(self, idx: int) -> int:
        return self._global_item.get_range(idx)

    def get_local_range(self, idx: int) -> int:
        return self._local_item.get_range(idx)

    def get_global_linear_range(self) -> int:
        return self._global_item.get_linear_range()

    def get_local_linear_range(self) -> int:
        return self._local_item.get_linear_range()

    def get_group(self) -> Group:
        return self._group

    @property
    def dimensions(self) -> int:
        return self._global_item.dimensions


# --- memory ---------------------------------------------------------------------------------

#: The element types numba-dpex 0.23 gave local accessors.
_ACCESSOR_DTYPES = tuple(
    np.dtype(name)
    for name in ("float32", "float64", "int8", "int16", "int32", "int64")
    + ("uint8", "uint16", "uint32", "uint64")
)


class LocalAccessor:
    """sycl::local_accessor: work-group memory of `shape` and `dtype`, made on the host and
    passed to an NdRange kernel; its data exists only inside the kernel."""

    def __init__(self, shape, dtype) -> None:
        if hasattr(shape, "tolist"):
            shape = shape.tolist()
        extents = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
        if not 1 <= len(extents) <= 3 or not all(
            isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n > 0 for n in extents
        ):
            raise TypeError(
                f"LocalAccessor shape is a positive int or a list or tuple of 1 to 3 of them; "
                f"got {shape!r}"
            )
        try:
            element = np.dtype(dtype)
        except TypeError:
            element = None
        if element not in _ACCESSOR_DTYPES:
            raise TypeError(
                f"LocalAccessor dtype {dtype!r} is not one of numpy's float32, float64, "
                f"[u]int8, [u]int16, [u]int32 or [u]int64"
            )
        self._shape = tuple(int(n) for n in extents)
        self._dtype = element

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    def __getitem__(self, index):
        raise NotImplementedError("a LocalAccessor's data can be read only inside a kernel")

    def __setitem__(self, index, value):
        raise NotImplementedError("a LocalAccessor's data can be written only inside a kernel")

    def __repr__(self) -> str:
        return f"LocalAccessor({self._shape}, {self._dtype.name})"


class PrivateArray:
    """A small array in a work-item's private memory; `fill_zeros` zeroes it."""

    def __init__(self, shape, dtype, fill_zeros: bool = False) -> None:
        self._data = (np.zeros if fill_zeros else np.empty)(shape, dtype=dtype)

    def __getitem__(self, index):
        return self._data[index]

    def __setitem__(self, index, value) -> None:
        self._data[index] = value


# --- atomics and synchronisation -------------------------------------------------------------


class AtomicRef:
    """sycl::atomic_ref: one element, `ref[index]`, updated atomically. In Python, where
    work-items run one after another, every update is; the order, scope and address space
    matter in compiled kernels only."""

    def __init__(
        self,
        ref,
        index,
        memory_order: MemoryOrder = MemoryOrder.RELAXED,
        memory_scope: MemoryScope = MemoryScope.DEVICE,
        address_space: AddressSpace | None = None,
    ):
        if not (hasattr(ref, "__getitem__") and hasattr(ref, "__setitem__")):
            raise TypeError(
                f"an AtomicRef refers to an element of an array; got {type(ref).__name__}"
            )
        self._ref = ref
        self._index = index
        self._memory_order = memory_order
        self._memory_scope = memory_scope
        self._address_space = address_space

    @property
    def ref(self):
        """The element's current value."""
        return self._ref[self._index]

    @property
    def memory_order(self) -> MemoryOrder:
        return self._memory_order

    @property
    def memory_scope(self) -> MemoryScope:
        return self._memory_scope

    @property
    def address_space(self) -> AddressSpace | None:
        return self._address_space

    def _old(self):
        """The element's value as a copy (a USM array's element is a view of it)."""
        value = self._ref[self._index]
        return value.copy() if hasattr(value, "copy") else value

    def _update(self, combine: Callable, val):
        old = self._old()
        self._ref[self._index] = combine(old, val)
        return old

    def fetch_add(self, val):
        return self._update(operator.add, val)

    def fetch_sub(self, val):
        return self._update(operator.sub, val)

    def fetch_min(self, val):
        return self._update(min, val)

    def fetch_max(self, val):
        return self._update(max, val)

    def fetch_and(self, val):
        return self._update(operator.and_, val)

    def fetch_or(self, val):
        return self._update(operator.or_, val)

    def fetch_xor(self, val):
        return self._update(operator.xor, val)

    def load(self):
        return self._old()

    def store(self, val) -> None:
        self._ref[self._index] = val

    def exchange(self, val):
        return self._update(lambda old, new: new, val)

    def compare_exchange(self, expected, desired, expected_idx: int = 0) -> bool:
        """Store `desired` if the element equals `expected[expected_idx]` and return True;
        else write the element's value into `expected[expected_idx]` and return False."""
        current = self._old()
        if current == expected[expected_idx]:
            self._ref[self._index] = desired
            return True
        expected[expected_idx] = current
        return False


def atomic_fence(memory_order: MemoryOrder, memory_scope: MemoryScope) -> None:
    """sycl::atomic_fence: orders this work-item's memory accesses in compiled kernels; in
    Python, where work-items run one after another, there is nothing to order."""


def group_barrier(group: Group, fence_scope: MemoryScope = MemoryScope.WORK_GROUP) -> None:
    """sycl::group_barrier: every work-item of the group waits for the others (compiled
    kernels only, as in numba-dpex 0.23)."""
    raise NotImplementedError(
        "kernel_api.group_barrier runs in compiled kernels only: launch the kernel with "
        "dpex.call_kernel; kernel_api.call_kernel runs work-items one after another, so none "
        "could wait for the others"
    )


# --- running a kernel function in Python ----------------------------------------------------


def call_kernel(kernel_fn: Callable, index_range: Range | NdRange, *kernel_args) -> None:
    """Run `kernel_fn(item, *kernel_args)` in Python for every work-item of `index_range`, one
    after another, to prototype a kernel before it is compiled. A `dpex.kernel` runs its
    Python function; LocalAccessor arguments become NumPy arrays for the launch."""
    function = getattr(kernel_fn, "py_func", kernel_fn)
    if not callable(function):
        raise ValueError(f"call_kernel runs a function; got {kernel_fn!r}")
    name = getattr(function, "__name__", repr(function))
    parameters = len(inspect.signature(function).parameters)
    if parameters != len(kernel_args) + 1:
        raise ValueError(
            f"kernel function '{name}' takes {parameters} parameter(s), the item first, so "
            f"call_kernel passes it {parameters - 1} argument(s); got {len(kernel_args)}"
        )
    if isinstance(index_range, Range):
        for position, value in enumerate(kernel_args):
            if isinstance(value, LocalAccessor):
                raise TypeError(
                    f"kernel function '{name}': argument {position} is a LocalAccessor, "
                    f"which only an NdRange launch has (work-groups share it)"
                )
        for index in itertools.product(*map(range, index_range)):
            function(Item(index_range, index), *kernel_args)
    elif isinstance(index_range, NdRange):
        _run_nd_range(function, index_range, kernel_args)
    else:
        raise ValueError(
            f"call_kernel runs over a kernel_api Range or NdRange; got {index_range!r}"
        )


def _run_nd_range(function: Callable, nd_range: NdRange, kernel_args: tuple) -> None:
    """Every work-group in turn, and in it every work-item in turn."""
    global_range, local_range = nd_range.global_range, nd_range.local_range
    group_range = Range(*(g // n for g, n in zip(global_range, local_range)))
    args = [
        np.empty(value.shape, value.dtype) if isinstance(value, LocalAccessor) else value
        for value in kernel_args
    ]
    for group_index in itertools.product(*map(range, group_range)):
        for local_index in itertools.product(*map(range, local_range)):
            global_index = [g * n + i for g, n, i in zip(group_index, local_range, local_index)]
            group = Group(global_range, local_range, group_range, group_index)
            item = NdItem(Item(global_range, global_index), Item(local_range, local_index), group)
            function(item, *args)


__all__ = [
    "AddressSpace",
    "AtomicRef",
    "Group",
    "Item",
    "LocalAccessor",
    "MemoryOrder",
    "MemoryScope",
    "NdItem",
    "NdRange",
    "PrivateArray",
    "Range",
    "atomic_fence",
    "call_kernel",
    "group_barrier",
]
