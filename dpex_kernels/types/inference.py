"""typeof: the kernel parameter type of a Python object, also taught to Numba's own typeof."""

from __future__ import annotations

from numba.core import types
from numba.core.typing.typeof import typeof_impl

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


def _register_with_numba() -> None:
    """So Numba itself infers usm_array for dpnp and usm_ndarray arguments."""
    import dpnp
    import dpnp.tensor

    for cls in (dpnp.ndarray, dpnp.tensor.usm_ndarray):
        typeof_impl.register(cls)(lambda value, context: typeof(value))


_register_with_numba()
