"""dk.atomic: atomic read-modify-write on global and local arrays (relaxed ordering)."""

from . import atomics

add = atomics.atomic_add
sub = atomics.atomic_sub
min = atomics.atomic_min  # noqa: A001 - dk.atomic.min is the public name
max = atomics.atomic_max  # noqa: A001
exchange = atomics.atomic_exchange
compare_exchange = atomics.atomic_compare_exchange
