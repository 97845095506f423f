"""Declarations (see __init__.py) of the index space: which work-item this is, in which range."""

from __future__ import annotations

from . import declares

#: Sections of several declarations' docstrings, written once (see declares).
_DIMENSION_RAISES = """\
Raises
------
KernelCompileError
    When the kernel compiles, if `dim` is not a constant 0, 1 or 2.
TypeError
    If called from host code.
"""


@declares("dk.get_global_id", raises=_DIMENSION_RAISES)
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

    {raises}

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


@declares("dk.get_local_id", raises=_DIMENSION_RAISES)
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

    {raises}

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


@declares("dk.get_group_id", raises=_DIMENSION_RAISES)
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

    {raises}

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


@declares("dk.get_global_size", raises=_DIMENSION_RAISES)
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

    {raises}

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


@declares("dk.get_local_size", raises=_DIMENSION_RAISES)
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

    {raises}

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


@declares("dk.get_num_groups", raises=_DIMENSION_RAISES)
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

    {raises}

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
