"""What kernels may call: one module per feature, each keeping its stubs, typing and lowering.

The stubs are the public names (`dk.get_global_id`, `dk.atomic.add`); called from host code
they raise. Importing this package registers every feature with `typing_registry` and
`lowering_registry`, which the target contexts install. `spirv` is the leaf of numbers they
all share; nothing here imports the target.
"""

from . import printing  # noqa: F401  (registers the lowering of print())
from .atomics import atomic
from .barriers import GLOBAL_MEM_FENCE, LOCAL_MEM_FENCE, barrier
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
from .memory import LocalArrayType, local, private
from .registry import lowering_registry, typing_registry
from .sub_groups import sub_group

__all__ = [
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
    "lowering_registry",
    "private",
    "sub_group",
    "typing_registry",
]
