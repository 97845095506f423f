"""Declarations (see __init__.py) of barriers and the work-group's and work-item's own arrays."""

from __future__ import annotations

from ..spirv import LOCAL_MEM_FENCE
from . import declares


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
