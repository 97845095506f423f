"""typeof: the kernel parameter type of a Python object.

Numba's own typeof of dpnp arrays gives the same types (dispatcher/njit.py registers it, for
@numba.njit host code that launches kernels).
"""

from __future__ import annotations

from numba.core import types

from .arguments import array_spec_of, not_passable_message
from .spec import scalar_name_of
from .usm_array_type import from_spec, scalar_from_name


def typeof(obj: object) -> types.Type:
    """Give the kernel parameter type of a value, as a lazy kernel types its arguments.

    Parameters
    ----------
    obj : object
        A USM array (anything with ``__sycl_usm_array_interface__``: ``dpnp.ndarray``,
        ``dpctl.tensor.usm_ndarray``, ...), or a Python or NumPy scalar.

    Returns
    -------
    numba.types.Type
        For an array, its ``dk.usm_array``: layout ``"C"`` if C-contiguous, else ``"F"`` if
        F-contiguous, else ``"A"``; usm_type and device from its allocation; ``readonly`` if
        it is not writable. For a Python ``int``, ``float``, ``complex`` or ``bool``: int64,
        float64, complex128 or boolean; for a NumPy scalar, its own type.

    Raises
    ------
    TypeError
        For anything a kernel cannot take (a NumPy array, a list, ...), saying what to pass
        instead.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> dk.typeof(dpnp.zeros((4, 4))[:, ::2])
    usm_array(float64, 2d, A, device, ...)
    >>> dk.typeof(1), dk.typeof(1.0), dk.typeof(True)
    (int64, float64, bool)
    """
    spec = array_spec_of(obj)
    if spec is not None:
        return from_spec(spec)
    name = scalar_name_of(obj)
    if name is not None:
        return scalar_from_name(name)
    raise TypeError(not_passable_message(obj))
