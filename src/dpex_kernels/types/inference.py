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
    """usm_array for USM arrays; int64/float64/boolean/complex128 or a NumPy scalar's own type."""
    spec = array_spec_of(obj)
    if spec is not None:
        return from_spec(spec)
    name = scalar_name_of(obj)
    if name is not None:
        return scalar_from_name(name)
    raise TypeError(not_passable_message(obj))
