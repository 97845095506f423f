"""What kernels may call: one module per feature, each keeping its stubs, typing and lowering.

The stubs are the public names (`dk.get_global_id`, `dk.atomic.add`); called from host code
they raise. Importing this package registers every feature with `typing_registry` and
`lowering_registry`, which the target contexts install. `spirv` is the leaf of numbers they
all share; nothing here imports the target.
"""

from . import (  # noqa: F401  (register item methods and print())  # the namespaces dk.atomic, dk.local, ...
    atomic,
    items,
    local,
    printing,
    private,
    sub_group,
)
from .atomic_ref import AtomicRef, atomic_fence, group_barrier
from .barriers import GLOBAL_MEM_FENCE, LOCAL_MEM_FENCE, barrier
from .groups import (
    all_of_group,
    any_of_group,
    exclusive_scan_over_group,
    group_broadcast,
    inclusive_scan_over_group,
    none_of_group,
    permute_group_by_xor,
    reduce_over_group,
    select_from_group,
    shift_group_left,
    shift_group_right,
)
from .index_space import (
    dimensions_used,
    get_global_id,
    get_global_size,
    get_group_id,
    get_local_id,
    get_local_size,
    get_num_groups,
    get_work_dim,
    index_definitions,
)
from .memory import LocalArrayType, local_accessor
from .registry import lowering_registry, typing_registry

__all__ = [
    "AtomicRef",
    "all_of_group",
    "any_of_group",
    "exclusive_scan_over_group",
    "group_broadcast",
    "inclusive_scan_over_group",
    "none_of_group",
    "permute_group_by_xor",
    "reduce_over_group",
    "select_from_group",
    "shift_group_left",
    "shift_group_right",
    "atomic_fence",
    "group_barrier",
    "GLOBAL_MEM_FENCE",
    "LOCAL_MEM_FENCE",
    "LocalArrayType",
    "atomic",
    "barrier",
    "dimensions_used",
    "get_global_id",
    "get_global_size",
    "get_group_id",
    "get_local_id",
    "get_local_size",
    "get_num_groups",
    "get_work_dim",
    "index_definitions",
    "local",
    "local_accessor",
    "lowering_registry",
    "private",
    "sub_group",
    "typing_registry",
]
