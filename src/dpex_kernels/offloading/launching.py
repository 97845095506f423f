"""Host code of launches: a region's values read in the host function, and the launchers
(Python functions Numba compiles into the host function) called with them."""

from __future__ import annotations

from numba.core import types
from numba.core.lowering import Lower

from . import regions


def param_values(lowerer: Lower, region: regions.Region) -> tuple[list, list]:
    """The LLVM values and types of a region's kernel parameters, in order."""
    values, argtypes = [], []
    for param in region.params.values():
        value = lowerer.loadvar(param.host)
        for item in param.items:
            value = lowerer.builder.extract_value(value, item)
        values.append(value)
        argtypes.append(param.type)
    return values, argtypes


def bound_value(lowerer: Lower, bound: int | str):
    """A loop bound as an int64 LLVM value."""
    context, builder = lowerer.context, lowerer.builder
    if isinstance(bound, int):
        return context.get_constant(types.int64, bound)
    return context.cast(builder, lowerer.loadvar(bound), lowerer.typeof(bound), types.int64)


def call_launcher(lowerer: Lower, launcher, argtypes: list, values: list) -> None:
    """Call a strategy's launcher (a Python function Numba compiles) with these values."""
    context, builder = lowerer.context, lowerer.builder
    signature = types.none(*argtypes)
    context.compile_internal(builder, launcher, signature, values)


def pack(lowerer: Lower, argtypes: list, values: list):
    """(tuple type, LLVM tuple) of these values: how a launcher takes a variable count."""
    tuple_type = types.Tuple(argtypes) if argtypes else types.Tuple(())
    return tuple_type, lowerer.context.make_tuple(lowerer.builder, tuple_type, values)


def trip_counts(lowerer: Lower, levels) -> list:
    """Each level's iteration count, as Python's range counts (int64 LLVM values)."""
    counts = []
    for level in levels:
        bounds = [bound_value(lowerer, b) for b in (level.start, level.stop, level.step)]
        counts.append(
            lowerer.context.compile_internal(
                lowerer.builder,
                _trip_count,
                types.int64(types.int64, types.int64, types.int64),
                bounds,
            )
        )
    return counts


def _trip_count(start, stop, step):  # pragma: no cover (compiled)
    """Iterations of range(start, stop, step)."""
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    if step < 0:
        return max(0, (start - stop - step - 1) // -step)
    raise ValueError("range() arg 3 must not be zero")
