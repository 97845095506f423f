"""What users read about the functions kernels call: each one's Python signature and docstring.

A declaration is a function that is never called: `host_stub` gives the stub of the same public
name (`dk.get_global_id`, `dk.atomic.add`) its signature and docstring, so that `help()`,
IPython and the API reference (docs/reference.md) show them, and tests/test_reference.py checks
each one and runs its examples. What a call compiles to is the feature module's business
(index_space.py, atomics.py, ...); this module imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable

from ...types.kernel_objects import MemoryOrder, MemoryScope
from .spirv import LOCAL_MEM_FENCE

#: Public name -> its declaration, which its stub takes its signature and docstring from.
DECLARATIONS: dict[str, Callable] = {}


def declares(public: str) -> Callable[[Callable], Callable]:
    """Record the decorated function as the declaration of `public` (e.g. "dk.barrier")."""

    def record(declaration: Callable) -> Callable:
        DECLARATIONS[public] = declaration
        return declaration

    return record


# --- index space ------------------------------------------------------------------------------


@declares("dk.get_global_id")
def get_global_id(dim: int, /) -> int:
    """Give the work-item's index in the global range: which element it works on.

    Parameters
    ----------
    dim : int
        The dimension: a constant 0, 1 or 2 (a literal, or a global, closure variable or NumPy
        integer holding one). Dimension 0 varies slowest; the last one of the range varies
        fastest between neighbouring work-items, as in SYCL.

    Returns
    -------
    int
        The id, an int64 from 0 to ``get_global_size(dim) - 1``; 0 for a dimension beyond the
        range's.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `dim` is not a constant 0, 1 or 2.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def square(a):
    ...     i = dk.get_global_id(0)
    ...     a[i] = a[i] * a[i]
    >>> a = dpnp.arange(4, dtype="f4")
    >>> square[dk.Range(4)](a).wait()
    >>> dpnp.asnumpy(a)
    array([0., 1., 4., 9.], dtype=float32)
    """


@declares("dk.get_local_id")
def get_local_id(dim: int, /) -> int:
    """Give the work-item's index inside its work-group, e.g. to address local memory.

    Parameters
    ----------
    dim : int
        The dimension: a constant 0, 1 or 2 (0 varies slowest).

    Returns
    -------
    int
        The id, an int64 from 0 to ``get_local_size(dim) - 1``.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `dim` is not a constant 0, 1 or 2.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def local_ids(out):
    ...     out[dk.get_global_id(0)] = dk.get_local_id(0)
    >>> out = dpnp.empty(8, dtype="i8")
    >>> local_ids[dk.NdRange(8, 4)](out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 1, 2, 3, 0, 1, 2, 3])
    """


@declares("dk.get_group_id")
def get_group_id(dim: int, /) -> int:
    """Give the index of the work-item's work-group, e.g. to write one result per group.

    Parameters
    ----------
    dim : int
        The dimension: a constant 0, 1 or 2 (0 varies slowest).

    Returns
    -------
    int
        The id, an int64 from 0 to ``get_num_groups(dim) - 1``.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `dim` is not a constant 0, 1 or 2.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def group_ids(out):
    ...     out[dk.get_global_id(0)] = dk.get_group_id(0)
    >>> out = dpnp.empty(8, dtype="i8")
    >>> group_ids[dk.NdRange(8, 4)](out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 0, 0, 0, 1, 1, 1, 1])
    """


@declares("dk.get_global_size")
def get_global_size(dim: int, /) -> int:
    """Give the size of the global range, e.g. to stride a loop over more elements than items.

    Parameters
    ----------
    dim : int
        The dimension: a constant 0, 1 or 2 (0 varies slowest).

    Returns
    -------
    int
        The number of work-items along `dim`, an int64; 1 for a dimension beyond the range's.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `dim` is not a constant 0, 1 or 2.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def fill(a):
    ...     for i in range(dk.get_global_id(0), a.size, dk.get_global_size(0)):
    ...         a[i] = i
    >>> a = dpnp.empty(10, dtype="i8")
    >>> fill[dk.Range(4)](a).wait()
    >>> dpnp.asnumpy(a)
    array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    """


@declares("dk.get_local_size")
def get_local_size(dim: int, /) -> int:
    """Give the size of the work-item's work-group, e.g. to loop over local memory.

    Parameters
    ----------
    dim : int
        The dimension: a constant 0, 1 or 2 (0 varies slowest).

    Returns
    -------
    int
        The number of work-items of the work-group along `dim`, an int64. Under a
        ``dk.Range`` the work-groups are the runtime's choice.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `dim` is not a constant 0, 1 or 2.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def sizes(out):
    ...     out[dk.get_global_id(0)] = dk.get_local_size(0)
    >>> out = dpnp.empty(6, dtype="i8")
    >>> sizes[dk.NdRange(6, 3)](out).wait()
    >>> dpnp.asnumpy(out)
    array([3, 3, 3, 3, 3, 3])
    """


@declares("dk.get_num_groups")
def get_num_groups(dim: int, /) -> int:
    """Give the number of work-groups, e.g. to size a per-group result.

    Parameters
    ----------
    dim : int
        The dimension: a constant 0, 1 or 2 (0 varies slowest).

    Returns
    -------
    int
        The number of work-groups along `dim`, an int64.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `dim` is not a constant 0, 1 or 2.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def count_groups(out):
    ...     out[dk.get_global_id(0)] = dk.get_num_groups(0)
    >>> out = dpnp.empty(6, dtype="i8")
    >>> count_groups[dk.NdRange(6, 3)](out).wait()
    >>> dpnp.asnumpy(out)
    array([2, 2, 2, 2, 2, 2])
    """


@declares("dk.get_work_dim")
def get_work_dim() -> int:
    """Give the number of dimensions of the launch range, for code generic over its rank.

    Returns
    -------
    int
        1, 2 or 3, an int64.

    Raises
    ------
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def rank(out):
    ...     if dk.get_work_dim() == 2:
    ...         out[dk.get_global_id(0), dk.get_global_id(1)] = 2
    ...     else:
    ...         out[dk.get_global_id(0), 0] = 1
    >>> out = dpnp.zeros((2, 2), dtype="i8")
    >>> rank[dk.Range(2, 2)](out).wait()
    >>> dpnp.asnumpy(out)
    array([[2, 2],
           [2, 2]])
    """


# --- synchronisation and memory -----------------------------------------------------------------


@declares("dk.barrier")
def barrier(flags: int = LOCAL_MEM_FENCE) -> None:
    """Wait until every work-item of the work-group gets here, so they can share memory.

    Every work-item of the group must reach the same barriers (not one inside a branch that
    only some take). The fence makes the writes before the barrier visible after it.

    Parameters
    ----------
    flags : int, default dk.LOCAL_MEM_FENCE
        Which memory the barrier orders, as a constant: ``dk.LOCAL_MEM_FENCE`` (local arrays),
        ``dk.GLOBAL_MEM_FENCE`` (USM arrays) or ``dk.LOCAL_MEM_FENCE | dk.GLOBAL_MEM_FENCE``.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `flags` is anything else.
    TypeError
        If called from host code.

    Examples
    --------
    Reverse each work-group's values through local memory:

    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def reverse_groups(a):
    ...     i, j = dk.get_global_id(0), dk.get_local_id(0)
    ...     n = dk.get_local_size(0)
    ...     tile = dk.local.array(4, dk.float32)
    ...     tile[j] = a[i]
    ...     dk.barrier(dk.LOCAL_MEM_FENCE)
    ...     a[i] = tile[n - 1 - j]
    >>> a = dpnp.arange(8, dtype="f4")
    >>> reverse_groups[dk.NdRange(8, 4)](a).wait()
    >>> dpnp.asnumpy(a)
    array([3., 2., 1., 0., 7., 6., 5., 4.], dtype=float32)
    """


@declares("dk.local.array")
def local_array(shape: int | tuple[int, ...], dtype: object) -> object:
    """Allocate an array in work-group local memory, shared by the work-items of one group.

    Each work-group gets its own buffer; its values are undefined until written, and other
    work-items see a write after a ``dk.barrier``. Both arguments may be keywords.

    Parameters
    ----------
    shape : int or tuple of int
        The shape, as constants (a literal, or a global or closure variable holding one).
    dtype : Numba type, NumPy dtype or str
        The element type: ``dk.float32``, ``numpy.float32`` or ``"f4"``.

    Returns
    -------
    array
        A C-ordered array of `shape` in local memory, indexed and sliced like any array.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if the shape is not constant and positive or the dtype is not
        a scalar type; or, when it is built for a device, if the kernel's local arrays need
        more than the device's local memory.
    TypeError
        If called from host code.

    Examples
    --------
    Sum each work-group's values (a tree reduction in local memory):

    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def group_sums(a, sums):
    ...     j = dk.get_local_id(0)
    ...     partial = dk.local.array(shape=8, dtype="f4")
    ...     partial[j] = a[dk.get_global_id(0)]
    ...     step = 4
    ...     while step > 0:
    ...         dk.barrier()
    ...         if j < step:
    ...             partial[j] += partial[j + step]
    ...         step //= 2
    ...     if j == 0:
    ...         sums[dk.get_group_id(0)] = partial[0]
    >>> a = dpnp.ones(16, dtype="f4")
    >>> sums = dpnp.empty(2, dtype="f4")
    >>> group_sums[dk.NdRange(16, 8)](a, sums).wait()
    >>> dpnp.asnumpy(sums)
    array([8., 8.], dtype=float32)
    """


@declares("dk.private.array")
def private_array(shape: int | tuple[int, ...], dtype: object) -> object:
    """Allocate a small array of the work-item's own, e.g. a scratch buffer or a stencil.

    Its values are undefined until written. Both arguments may be keywords.

    Parameters
    ----------
    shape : int or tuple of int
        The shape, as constants (a literal, or a global or closure variable holding one).
    dtype : Numba type, NumPy dtype or str
        The element type: ``dk.float32``, ``numpy.float32`` or ``"f4"``.

    Returns
    -------
    array
        A C-ordered array of `shape` in private memory.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if the shape is not constant and positive or the dtype is not
        a scalar type.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def powers(out):
    ...     i = dk.get_global_id(0)
    ...     p = dk.private.array(3, dk.int64)
    ...     p[0] = 1
    ...     for k in range(1, 3):
    ...         p[k] = p[k - 1] * i
    ...     out[i] = p[0] + p[1] + p[2]
    >>> out = dpnp.empty(4, dtype="i8")
    >>> powers[dk.Range(4)](out).wait()
    >>> dpnp.asnumpy(out)
    array([ 1,  3,  7, 13])
    """


# --- atomics ------------------------------------------------------------------------------------


@declares("dk.atomic.add")
def atomic_add(arr, idx, val, /):
    """Add `val` to ``arr[idx]`` atomically, e.g. to count or sum from many work-items.

    The update is one indivisible step: concurrent updates of the element by other work-items
    are never lost. Ordering is relaxed (``dk.AtomicRef`` orders other accesses too).

    Parameters
    ----------
    arr : array
        A USM array argument or a ``dk.local.array`` of int32, int64, uint32, uint64, float32
        or float64.
    idx : int or tuple of int
        The element's index: an integer for a 1-d array, a tuple of integers for an n-d one;
        negative indices count from the end.
    val : int, float or bool
        The operand, converted to the array's dtype.

    Returns
    -------
    scalar
        The element's value before the update, of the array's dtype.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `arr` is not such an array or `idx` does not index one
        element of it.
    KernelBoundsError
        From the launch, with ``debug=True``, if `idx` is out of bounds.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def histogram(values, counts):
    ...     dk.atomic.add(counts, values[dk.get_global_id(0)], 1)
    >>> counts = dpnp.zeros(3, dtype="i4")
    >>> histogram[6](dpnp.asarray([0, 2, 2, 1, 2, 0]), counts).wait()
    >>> dpnp.asnumpy(counts)
    array([2, 1, 3], dtype=int32)
    """


@declares("dk.atomic.sub")
def atomic_sub(arr, idx, val, /):
    """Subtract `val` from ``arr[idx]`` atomically, e.g. to take from a shared budget.

    The update is one indivisible step: concurrent updates of the element by other work-items
    are never lost. Ordering is relaxed (``dk.AtomicRef`` orders other accesses too).

    Parameters
    ----------
    arr : array
        A USM array argument or a ``dk.local.array`` of int32, int64, uint32, uint64, float32
        or float64.
    idx : int or tuple of int
        The element's index: an integer for a 1-d array, a tuple of integers for an n-d one;
        negative indices count from the end.
    val : int, float or bool
        The operand, converted to the array's dtype.

    Returns
    -------
    scalar
        The element's value before the update, of the array's dtype.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `arr` is not such an array or `idx` does not index one
        element of it.
    KernelBoundsError
        From the launch, with ``debug=True``, if `idx` is out of bounds.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def take(budget):
    ...     dk.atomic.sub(budget, 0, 2)
    >>> budget = dpnp.full(1, 100, dtype="i8")
    >>> take[10](budget).wait()
    >>> int(budget[0])
    80
    """


@declares("dk.atomic.min")
def atomic_min(arr, idx, val, /):
    """Store the smaller of ``arr[idx]`` and `val` atomically, e.g. for a minimum over items.

    The update is one indivisible step: concurrent updates of the element by other work-items
    are never lost. Ordering is relaxed (``dk.AtomicRef`` orders other accesses too).

    Parameters
    ----------
    arr : array
        A USM array argument or a ``dk.local.array`` of int32, int64, uint32, uint64, float32
        or float64.
    idx : int or tuple of int
        The element's index: an integer for a 1-d array, a tuple of integers for an n-d one;
        negative indices count from the end.
    val : int, float or bool
        The operand, converted to the array's dtype.

    Returns
    -------
    scalar
        The element's value before the update, of the array's dtype.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `arr` is not such an array or `idx` does not index one
        element of it.
    KernelBoundsError
        From the launch, with ``debug=True``, if `idx` is out of bounds.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def smallest(values, out):
    ...     dk.atomic.min(out, 0, values[dk.get_global_id(0)])
    >>> out = dpnp.full(1, 1e30, dtype="f4")
    >>> smallest[4](dpnp.asarray([3.0, -1.5, 2.0, 7.0], dtype="f4"), out).wait()
    >>> float(out[0])
    -1.5
    """


@declares("dk.atomic.max")
def atomic_max(arr, idx, val, /):
    """Store the larger of ``arr[idx]`` and `val` atomically, e.g. for a maximum over items.

    The update is one indivisible step: concurrent updates of the element by other work-items
    are never lost. Ordering is relaxed (``dk.AtomicRef`` orders other accesses too).

    Parameters
    ----------
    arr : array
        A USM array argument or a ``dk.local.array`` of int32, int64, uint32, uint64, float32
        or float64.
    idx : int or tuple of int
        The element's index: an integer for a 1-d array, a tuple of integers for an n-d one;
        negative indices count from the end.
    val : int, float or bool
        The operand, converted to the array's dtype.

    Returns
    -------
    scalar
        The element's value before the update, of the array's dtype.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `arr` is not such an array or `idx` does not index one
        element of it.
    KernelBoundsError
        From the launch, with ``debug=True``, if `idx` is out of bounds.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def largest(values, out):
    ...     dk.atomic.max(out, 0, values[dk.get_global_id(0)])
    >>> out = dpnp.zeros(1, dtype="i8")
    >>> largest[4](dpnp.asarray([3, 9, 2, 7]), out).wait()
    >>> int(out[0])
    9
    """


@declares("dk.atomic.exchange")
def atomic_exchange(arr, idx, val, /):
    """Store `val` in ``arr[idx]`` atomically and give the value it replaced.

    The update is one indivisible step: concurrent updates of the element by other work-items
    are never lost. Ordering is relaxed (``dk.AtomicRef`` orders other accesses too).

    Parameters
    ----------
    arr : array
        A USM array argument or a ``dk.local.array`` of int32, int64, uint32, uint64, float32
        or float64.
    idx : int or tuple of int
        The element's index: an integer for a 1-d array, a tuple of integers for an n-d one;
        negative indices count from the end.
    val : int, float or bool
        The operand, converted to the array's dtype.

    Returns
    -------
    scalar
        The element's value before the update, of the array's dtype.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `arr` is not such an array or `idx` does not index one
        element of it.
    KernelBoundsError
        From the launch, with ``debug=True``, if `idx` is out of bounds.
    TypeError
        If called from host code.

    Examples
    --------
    Which work-item wrote last is the device's choice; each gets what it replaced:

    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def swap_in(slot, seen):
    ...     i = dk.get_global_id(0)
    ...     seen[i] = dk.atomic.exchange(slot, 0, i + 1)
    >>> slot = dpnp.zeros(1, dtype="i8")
    >>> seen = dpnp.empty(4, dtype="i8")
    >>> swap_in[4](slot, seen).wait()
    >>> sorted(dpnp.asnumpy(seen).tolist() + dpnp.asnumpy(slot).tolist())
    [0, 1, 2, 3, 4]
    """


@declares("dk.atomic.compare_exchange")
def atomic_compare_exchange(arr, idx, expected, desired, /):
    """Store `desired` in ``arr[idx]`` only if it holds `expected`, atomically.

    The building block of lock-free updates: read the old value, compute a new one, and retry
    while another work-item changed the element in between. Floats are compared by their bits
    (``-0.0`` is not ``0.0``; a NaN equals the same NaN). Ordering is relaxed.

    Parameters
    ----------
    arr : array
        A USM array argument or a ``dk.local.array`` of int32, int64, uint32, uint64, float32
        or float64.
    idx : int or tuple of int
        The element's index: an integer for a 1-d array, a tuple of integers for an n-d one;
        negative indices count from the end.
    expected : int, float or bool
        The value the element must hold for the store to happen (converted to the dtype).
    desired : int, float or bool
        The value to store (converted to the dtype).

    Returns
    -------
    scalar
        The element's value before the call: equal to `expected` exactly when `desired` was
        stored.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `arr` is not such an array or `idx` does not index one
        element of it.
    KernelBoundsError
        From the launch, with ``debug=True``, if `idx` is out of bounds.
    TypeError
        If called from host code.

    Examples
    --------
    Let exactly one work-item claim a slot:

    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def claim(owner, won):
    ...     i = dk.get_global_id(0)
    ...     won[i] = dk.atomic.compare_exchange(owner, 0, -1, i) == -1
    >>> owner = dpnp.full(1, -1, dtype="i8")
    >>> won = dpnp.zeros(8, dtype="i8")
    >>> claim[8](owner, won).wait()
    >>> int(won.sum()), int(won[int(owner[0])])
    (1, 1)
    """


# --- sub-groups ---------------------------------------------------------------------------------


@declares("dk.sub_group.get_local_id")
def sub_group_get_local_id() -> int:
    """Give the work-item's lane in its sub-group, e.g. to pick a lane to broadcast from.

    Returns
    -------
    int
        The lane, an int64 from 0 to ``dk.sub_group.get_size() - 1``.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, with ``sub_group_size=1`` (no sub-group operations then).
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def lanes(out):
    ...     out[dk.get_global_id(0)] = dk.sub_group.get_local_id()
    >>> out = dpnp.empty(8, dtype="i8")
    >>> lanes[dk.NdRange(8, 8)](out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 1, 2, 3, 0, 1, 2, 3])
    """


@declares("dk.sub_group.get_size")
def sub_group_get_size() -> int:
    """Give the number of lanes of the work-item's sub-group.

    The last sub-group of a work-group may be smaller than the others.

    Returns
    -------
    int
        The lane count, an int64.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, with ``sub_group_size=1`` (no sub-group operations then).
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def sizes(out):
    ...     out[dk.get_global_id(0)] = dk.sub_group.get_size()
    >>> out = dpnp.empty(8, dtype="i8")
    >>> sizes[dk.NdRange(8, 8)](out).wait()
    >>> dpnp.asnumpy(out)
    array([4, 4, 4, 4, 4, 4, 4, 4])
    """


@declares("dk.sub_group.reduce_add")
def sub_group_reduce_add(x, /):
    """Sum `x` over the lanes of the sub-group, without local memory or barriers.

    Every lane of the sub-group must make the call.

    Parameters
    ----------
    x : int or float
        This lane's value: int32, int64, uint32, uint64, float32 or float64.

    Returns
    -------
    scalar
        The sum over the sub-group, of `x`'s type, the same in every lane.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `x` has another type, or with ``sub_group_size=1``.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def sums(a, out):
    ...     i = dk.get_global_id(0)
    ...     out[i] = dk.sub_group.reduce_add(a[i])
    >>> out = dpnp.empty(8, dtype="i4")
    >>> sums[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([ 6,  6,  6,  6, 22, 22, 22, 22], dtype=int32)
    """


@declares("dk.sub_group.shuffle")
def sub_group_shuffle(x, lane, /):
    """Give `x` as lane `lane` of the sub-group holds it: each lane may read another one.

    Every lane of the sub-group must make the call.

    Parameters
    ----------
    x : int or float
        This lane's value: int32, int64, uint32, uint64, float32 or float64.
    lane : int
        The lane to read from, 0 to ``dk.sub_group.get_size() - 1`` (may differ per lane).

    Returns
    -------
    scalar
        That lane's `x`, of `x`'s type.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `x` has another type, or with ``sub_group_size=1``.
    TypeError
        If called from host code.

    Examples
    --------
    Reverse the values of each sub-group of 4:

    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def reverse(a, out):
    ...     i = dk.get_global_id(0)
    ...     out[i] = dk.sub_group.shuffle(a[i], 3 - dk.sub_group.get_local_id())
    >>> out = dpnp.empty(8, dtype="i4")
    >>> reverse[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([3, 2, 1, 0, 7, 6, 5, 4], dtype=int32)
    """


@declares("dk.sub_group.broadcast")
def sub_group_broadcast(x, lane, /):
    """Give every lane of the sub-group lane `lane`'s `x`.

    Every lane of the sub-group must make the call, with the same `lane`.

    Parameters
    ----------
    x : int or float
        This lane's value: int32, int64, uint32, uint64, float32 or float64.
    lane : int
        The lane whose value all get, the same in every lane.

    Returns
    -------
    scalar
        Lane `lane`'s `x`, of `x`'s type.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `x` has another type, or with ``sub_group_size=1``.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def firsts(a, out):
    ...     i = dk.get_global_id(0)
    ...     out[i] = dk.sub_group.broadcast(a[i], 0)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> firsts[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 0, 0, 0, 4, 4, 4, 4], dtype=int32)
    """


@declares("dk.sub_group.barrier")
def sub_group_barrier(flags: int = LOCAL_MEM_FENCE) -> None:
    """Wait until every lane of the sub-group gets here: a barrier for sub-group memory.

    Parameters
    ----------
    flags : int, default dk.LOCAL_MEM_FENCE
        Which memory the barrier orders, as a constant: ``dk.LOCAL_MEM_FENCE``,
        ``dk.GLOBAL_MEM_FENCE`` or both or-ed.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `flags` is anything else, or with ``sub_group_size=1``.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def rotate(a):
    ...     i = dk.get_global_id(0)
    ...     lane = dk.sub_group.get_local_id()
    ...     tile = dk.local.array(8, dk.int32)
    ...     tile[dk.get_local_id(0)] = a[i]
    ...     dk.sub_group.barrier()
    ...     a[i] = tile[dk.get_local_id(0) - lane + (lane + 1) % 4]
    >>> a = dpnp.arange(8, dtype="i4")
    >>> rotate[dk.NdRange(8, 8)](a).wait()
    >>> dpnp.asnumpy(a)
    array([1, 2, 3, 0, 5, 6, 7, 4], dtype=int32)
    """


# --- SYCL 2020: atomic references, fences, group barriers ----------------------------------------


@declares("dk.AtomicRef")
def AtomicRef(  # noqa: N802  (the public name is SYCL's class name)
    ref,
    index,
    memory_order: MemoryOrder = MemoryOrder.RELAXED,
    memory_scope: MemoryScope = MemoryScope.DEVICE,
    address_space=None,
):
    """Refer to one array element for atomic operations with a memory order and scope.

    SYCL 2020's ``sycl::atomic_ref``. Its methods, each one indivisible step:

    - ``fetch_add(v)``, ``fetch_sub(v)``, ``fetch_min(v)``, ``fetch_max(v)``, and on integers
      ``fetch_and(v)``, ``fetch_or(v)``, ``fetch_xor(v)``: update the element, give the old value;
    - ``load()``, ``store(v)``, ``exchange(v)`` (gives the old value);
    - ``compare_exchange(expected, desired)``: store `desired` if the element holds `expected`
      (bitwise); gives the old value, as ``dk.atomic.compare_exchange`` does.

    Each method takes an optional last argument, a ``dk.MemoryOrder`` constant for that call
    (the reference's own otherwise).

    Parameters
    ----------
    ref : array
        A USM array argument or a ``dk.local.array``, writable, of int32, int64, uint32,
        uint64, float32 or float64 (private arrays need no atomics).
    index : int or tuple of int
        The element: an integer for a 1-d array, a tuple of integers for an n-d one.
    memory_order : MemoryOrder, default dk.MemoryOrder.RELAXED
        How the operations order this work-item's other memory accesses, as a constant.
    memory_scope : MemoryScope, default dk.MemoryScope.DEVICE
        Which work-items that ordering applies to, as a constant.
    address_space : AddressSpace, optional
        Accepted for numba-dpex's signature; the array's own address space is used.

    Returns
    -------
    AtomicRef
        The reference, a value inside the kernel.

    Raises
    ------
    KernelCompileError
        When the kernel compiles: for an array of another dtype, a read-only or private array,
        an order or scope that is not a constant member of its enum, bitwise methods on
        floats, or an order or scope the device does not support.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def count(total):
    ...     ref = dk.AtomicRef(total, 0, memory_order=dk.MemoryOrder.RELAXED)
    ...     ref.fetch_add(2)
    >>> total = dpnp.zeros(1, dtype="i8")
    >>> count[100](total).wait()
    >>> int(total[0])
    200
    """


@declares("dk.atomic_fence")
def atomic_fence(memory_order: MemoryOrder, memory_scope: MemoryScope) -> None:
    """Order this work-item's memory accesses around the fence, as SYCL's atomic_fence does.

    A release fence before an atomic store, and an acquire fence after the atomic load that
    reads it, make the writes before the first visible after the second.

    Parameters
    ----------
    memory_order : MemoryOrder
        ``dk.MemoryOrder.ACQUIRE``, ``RELEASE``, ``ACQ_REL`` or ``SEQ_CST``, as a constant
        (``RELAXED`` orders nothing).
    memory_scope : MemoryScope
        Which work-items the ordering applies to, as a constant.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if an argument is not a constant member of its enum or the
        device does not support it in fences.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def publish(data, flag):
    ...     data[0] = 42
    ...     dk.atomic_fence(dk.MemoryOrder.RELEASE, dk.MemoryScope.DEVICE)
    ...     dk.AtomicRef(flag, 0).store(1)
    >>> data, flag = dpnp.zeros(1, dtype="i8"), dpnp.zeros(1, dtype="i4")
    >>> publish[1](data, flag).wait()
    >>> int(data[0]), int(flag[0])
    (42, 1)
    """


@declares("dk.group_barrier")
def group_barrier(group, fence_scope: MemoryScope | None = None) -> None:
    """Wait until every work-item of the group gets here, ordering memory as a barrier does.

    SYCL 2020's ``group_barrier``. Every work-item of the group must make the call.

    Parameters
    ----------
    group : group or sub-group
        ``item.get_group()`` or ``item.get_sub_group()`` of the kernel's nd-item.
    fence_scope : MemoryScope, optional
        Which work-items see the memory ordered, as a constant; by default the group's own
        scope (``WORK_GROUP`` for a work-group, ``SUB_GROUP`` for a sub-group).

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `fence_scope` is not a constant ``dk.MemoryScope`` member
        or the device does not support it in fences.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def rotate(item, a):
    ...     i, j = item.get_global_id(0), item.get_local_id(0)
    ...     tile = dk.local.array(4, dk.int64)
    ...     tile[j] = a[i]
    ...     dk.group_barrier(item.get_group())
    ...     a[i] = tile[(j + 1) % 4]
    >>> a = dpnp.arange(8)
    >>> rotate[dk.NdRange(8, 4)](a).wait()
    >>> dpnp.asnumpy(a)
    array([1, 2, 3, 0, 5, 6, 7, 4])
    """


# --- SYCL 2020: group algorithms ----------------------------------------------------------------


@declares("dk.reduce_over_group")
def reduce_over_group(group, x, init_or_op, op=None, /):
    """Combine the values of all work-items of a group with an operation, e.g. a sum.

    ``reduce_over_group(g, x, op)`` or, starting from an initial value,
    ``reduce_over_group(g, x, init, op)``, as in SYCL 2020.

    Parameters
    ----------
    group : group or sub-group
        ``item.get_group()`` or ``item.get_sub_group()`` of the kernel's nd-item; every
        work-item of it must make the call.
    x : int, float or bool
        This work-item's value.
    init_or_op : GroupOperation or scalar
        With three arguments, the operation: ``dk.plus``, ``dk.multiplies``, ``dk.minimum``,
        ``dk.maximum``, ``dk.bit_and``, ``dk.bit_or``, ``dk.bit_xor`` (integers),
        ``dk.logical_and`` or ``dk.logical_or`` (whose results are bool), as a constant. With
        four, the initial value, combined before the first work-item's.
    op : GroupOperation, optional
        With four arguments, the operation.

    Returns
    -------
    scalar
        The result, the same in every work-item of the group.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if an argument has a type the algorithm does not take or the
        operation is not a constant ``dk.GroupOperation``.
    InvalidRangeError
        From the launch, for work-groups larger than 1024 work-items with ``dk.multiplies``
        or a bitwise operation over a work-group (they combine values in local memory).
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def group_sums(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.reduce_over_group(item.get_group(), a[i], dk.plus)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> group_sums[dk.NdRange(8, 4)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([ 6,  6,  6,  6, 22, 22, 22, 22], dtype=int32)
    """


@declares("dk.inclusive_scan_over_group")
def inclusive_scan_over_group(group, x, op, init=None, /):
    """Combine the values of the group's work-items up to this one, this one's included.

    A prefix sum (for ``dk.plus``) in the order of the work-items' linear local ids.

    Parameters
    ----------
    group : group or sub-group
        ``item.get_group()`` or ``item.get_sub_group()`` of the kernel's nd-item; every
        work-item of it must make the call.
    x : int, float or bool
        This work-item's value.
    op : GroupOperation
        The operation, ``dk.plus``, ``dk.multiplies``, ``dk.minimum``, ``dk.maximum``,
        ``dk.bit_and``, ``dk.bit_or``, ``dk.bit_xor`` (integers), ``dk.logical_and`` or
        ``dk.logical_or`` (whose results are bool), as a constant.
    init : scalar, optional
        A value to start from, combined before the first work-item's.

    Returns
    -------
    scalar
        This work-item's prefix.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if an argument has a type the algorithm does not take or the
        operation is not a constant ``dk.GroupOperation``.
    InvalidRangeError
        From the launch, for work-groups larger than 1024 work-items with ``dk.multiplies``
        or a bitwise operation over a work-group (they combine values in local memory).
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def prefix_sums(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.inclusive_scan_over_group(item.get_group(), a[i], dk.plus)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> prefix_sums[dk.NdRange(8, 4)](dpnp.ones(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([1, 2, 3, 4, 1, 2, 3, 4], dtype=int32)
    """


@declares("dk.exclusive_scan_over_group")
def exclusive_scan_over_group(group, x, init_or_op, op=None, /):
    """Combine the values of the group's work-items before this one, this one's excluded.

    ``exclusive_scan_over_group(g, x, op)`` or ``exclusive_scan_over_group(g, x, init, op)``,
    as in SYCL 2020. The first work-item gets the operation's identity (0 for ``dk.plus``), or
    `init`.

    Parameters
    ----------
    group : group or sub-group
        ``item.get_group()`` or ``item.get_sub_group()`` of the kernel's nd-item; every
        work-item of it must make the call.
    x : int, float or bool
        This work-item's value.
    init_or_op : GroupOperation or scalar
        With three arguments, the operation: ``dk.plus``, ``dk.multiplies``, ``dk.minimum``,
        ``dk.maximum``, ``dk.bit_and``, ``dk.bit_or``, ``dk.bit_xor`` (integers),
        ``dk.logical_and`` or ``dk.logical_or`` (whose results are bool), as a constant. With
        four, the initial value, combined before the first work-item's.
    op : GroupOperation, optional
        With four arguments, the operation.

    Returns
    -------
    scalar
        This work-item's prefix.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if an argument has a type the algorithm does not take or the
        operation is not a constant ``dk.GroupOperation``.
    InvalidRangeError
        From the launch, for work-groups larger than 1024 work-items with ``dk.multiplies``
        or a bitwise operation over a work-group (they combine values in local memory).
    TypeError
        If called from host code.

    Examples
    --------
    Where each work-item's items start in a packed output:

    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def offsets(item, counts, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.exclusive_scan_over_group(item.get_group(), counts[i], dk.plus)
    >>> out = dpnp.empty(4, dtype="i4")
    >>> offsets[dk.NdRange(4, 4)](dpnp.asarray([2, 0, 3, 1], dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 2, 2, 5], dtype=int32)
    """


@declares("dk.group_broadcast")
def group_broadcast(group, x, local_id=0, /):
    """Give every work-item of the group the value of one of them.

    Parameters
    ----------
    group : group or sub-group
        ``item.get_group()`` or ``item.get_sub_group()`` of the kernel's nd-item; every
        work-item of it must make the call.
    x : int, float or bool
        This work-item's value.
    local_id : int, default 0
        The linear local id (for a sub-group, the lane) of the work-item whose `x` all get.

    Returns
    -------
    scalar
        That work-item's `x`.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `x` is not an integer, float or bool.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def lasts(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.group_broadcast(item.get_group(), a[i], 3)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> lasts[dk.NdRange(8, 4)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([3, 3, 3, 3, 7, 7, 7, 7], dtype=int32)
    """


@declares("dk.any_of_group")
def any_of_group(group, pred, /) -> bool:
    """Tell whether `pred` holds for any work-item of the group.

    Parameters
    ----------
    group : group or sub-group
        ``item.get_group()`` or ``item.get_sub_group()`` of the kernel's nd-item; every
        work-item of it must make the call.
    pred : bool or int
        This work-item's predicate (an integer counts as true when it is not 0).

    Returns
    -------
    bool
        The vote, the same in every work-item of the group.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `pred` is not a bool or integer.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def vote(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.any_of_group(item.get_group(), a[i] > 2)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> vote[dk.NdRange(8, 4)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([1, 1, 1, 1, 1, 1, 1, 1], dtype=int32)
    """


@declares("dk.all_of_group")
def all_of_group(group, pred, /) -> bool:
    """Tell whether `pred` holds for every work-item of the group.

    Parameters
    ----------
    group : group or sub-group
        ``item.get_group()`` or ``item.get_sub_group()`` of the kernel's nd-item; every
        work-item of it must make the call.
    pred : bool or int
        This work-item's predicate (an integer counts as true when it is not 0).

    Returns
    -------
    bool
        The vote, the same in every work-item of the group.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `pred` is not a bool or integer.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def vote(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.all_of_group(item.get_group(), a[i] > 2)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> vote[dk.NdRange(8, 4)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 0, 0, 0, 1, 1, 1, 1], dtype=int32)
    """


@declares("dk.none_of_group")
def none_of_group(group, pred, /) -> bool:
    """Tell whether `pred` holds for no work-item of the group.

    Parameters
    ----------
    group : group or sub-group
        ``item.get_group()`` or ``item.get_sub_group()`` of the kernel's nd-item; every
        work-item of it must make the call.
    pred : bool or int
        This work-item's predicate (an integer counts as true when it is not 0).

    Returns
    -------
    bool
        The vote, the same in every work-item of the group.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if `pred` is not a bool or integer.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def vote(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.none_of_group(item.get_group(), a[i] > 2)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> vote[dk.NdRange(8, 4)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([0, 0, 0, 0, 0, 0, 0, 0], dtype=int32)
    """


@declares("dk.shift_group_left")
def shift_group_left(sub_group, x, delta=1, /):
    """Give the `x` of the lane `delta` places after this one in the sub-group.

    Parameters
    ----------
    sub_group : sub-group
        ``item.get_sub_group()`` of the kernel's nd-item; every lane of it must make the
        call.
    x : int, float or bool
        This work-item's value.
    delta : int, default 1
        How many lanes further to read from, the same in every lane.

    Returns
    -------
    scalar
        Lane ``lane + delta``'s `x`; unspecified where that is beyond the sub-group.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if the group is not a sub-group or `x` is not an integer,
        float or bool.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def next_value(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.shift_group_left(item.get_sub_group(), a[i], 1)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> next_value[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)[[0, 1, 2, 4, 5, 6]]
    array([1, 2, 3, 5, 6, 7], dtype=int32)
    """


@declares("dk.shift_group_right")
def shift_group_right(sub_group, x, delta=1, /):
    """Give the `x` of the lane `delta` places before this one in the sub-group.

    Parameters
    ----------
    sub_group : sub-group
        ``item.get_sub_group()`` of the kernel's nd-item; every lane of it must make the
        call.
    x : int, float or bool
        This work-item's value.
    delta : int, default 1
        How many lanes back to read from, the same in every lane.

    Returns
    -------
    scalar
        Lane ``lane - delta``'s `x`; unspecified where that is below lane 0.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if the group is not a sub-group or `x` is not an integer,
        float or bool.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def previous_value(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.shift_group_right(item.get_sub_group(), a[i], 1)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> previous_value[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)[[1, 2, 3, 5, 6, 7]]
    array([0, 1, 2, 4, 5, 6], dtype=int32)
    """


@declares("dk.permute_group_by_xor")
def permute_group_by_xor(sub_group, x, mask, /):
    """Give the `x` of the lane whose id is this lane's xor `mask`, e.g. for butterflies.

    Parameters
    ----------
    sub_group : sub-group
        ``item.get_sub_group()`` of the kernel's nd-item; every lane of it must make the
        call.
    x : int, float or bool
        This work-item's value.
    mask : int
        The bits to flip in the lane id, the same in every lane.

    Returns
    -------
    scalar
        Lane ``lane ^ mask``'s `x`.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if the group is not a sub-group or `x` is not an integer,
        float or bool.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def swap_pairs(item, a, out):
    ...     i = item.get_global_id(0)
    ...     out[i] = dk.permute_group_by_xor(item.get_sub_group(), a[i], 1)
    >>> out = dpnp.empty(8, dtype="i4")
    >>> swap_pairs[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([1, 0, 3, 2, 5, 4, 7, 6], dtype=int32)
    """


@declares("dk.select_from_group")
def select_from_group(sub_group, x, remote_local_id, /):
    """Give the `x` of the sub-group's lane `remote_local_id`, which may differ per lane.

    Parameters
    ----------
    sub_group : sub-group
        ``item.get_sub_group()`` of the kernel's nd-item; every lane of it must make the
        call.
    x : int, float or bool
        This work-item's value.
    remote_local_id : int
        The lane to read from, 0 to the sub-group's size - 1.

    Returns
    -------
    scalar
        That lane's `x`.

    Raises
    ------
    KernelCompileError
        When the kernel compiles, if the group is not a sub-group or `x` is not an integer,
        float or bool.
    TypeError
        If called from host code.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel(sub_group_size=4)
    ... def reverse(item, a, out):
    ...     i = item.get_global_id(0)
    ...     sg = item.get_sub_group()
    ...     out[i] = dk.select_from_group(sg, a[i], 3 - sg.get_local_id())
    >>> out = dpnp.empty(8, dtype="i4")
    >>> reverse[dk.NdRange(8, 8)](dpnp.arange(8, dtype="i4"), out).wait()
    >>> dpnp.asnumpy(out)
    array([3, 2, 1, 0, 7, 6, 5, 4], dtype=int32)
    """
