"""Lowering a parfor of an offloaded function: its kernels launched from the host function.

Numba lowers the host function as usual; at each parfor (lower_parfor) the parfor's init block
runs on the host, region analysis (regions.py) says what the loop needs, and a lowering
strategy makes its kernels and the host code that launches them: ranges.py for loop nests
(with streaming.py's kernel for large loops on CPU devices, flat.py's for element-wise nests
over contiguous arrays, and a kernel of broadcast views for expressions broadcasting.py
rewrote), reductions.py for loops that reduce (with
simd_reduction.py's kernel on CPU devices). The host code of a launch is LLVM emitted where the
parfor was (launching.py).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from numba.core.lowering import Lower
from numba.parfors.parfor import Parfor
from numba.parfors.parfor_lowering import _lower_parfor_parallel_std

from ..errors import KernelCompileError
from . import ranges, reductions, regions

#: How to lower each kind of region: the first strategy that takes it.
STRATEGIES = (reductions, ranges)


class OffloadFallbackWarning(UserWarning):
    """A loop of a ``dk.offload(fallback="host")`` function runs on the host, not the device.

    Issued once per loop as the function compiles; the message names the loop's line and why
    its body cannot run on a device. Turn it into an error with
    ``warnings.simplefilter("error", dk.OffloadFallbackWarning)`` to find such loops.

    Examples
    --------
    >>> import warnings
    >>> import dpnp
    >>> import numpy as np
    >>> from numba import prange
    >>> import dpex_kernels as dk
    >>> @dk.offload(fallback="host")
    ... def scratchy(a):
    ...     for i in prange(a.shape[0]):
    ...         scratch = np.ones(a.shape[0])  # an allocation of a run-time size
    ...         a[i] = scratch[i]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     scratchy(dpnp.zeros(4))
    >>> caught[0].category is dk.OffloadFallbackWarning
    True
    """


@dataclass
class Options:
    """What the lowering of one offloaded function needs to know of its decorator."""

    function: str = ""
    fallback: str | None = None
    cache: bool = False
    #: (Region, its kernels) of each region lowered, by the signature's argument types and
    #: the small extents compiled as constants (extents.py).
    regions: dict = field(default_factory=dict)


class OffloadLower(Lower):
    """Numba's lowering, with each parfor launched as kernels on the device of its arrays."""

    def pre_lower(self):
        super().pre_lower()
        self.options = self.metadata.get("dk_offload") or Options()
        key = tuple(self.fndesc.argtypes), self.metadata.get("dk_offload_extents", ())
        self.regions = self.options.regions[key] = []

    def lower_inst(self, inst):
        if isinstance(inst, Parfor):
            lower_parfor(self, inst)
        else:
            super().lower_inst(inst)

    @property
    def _disable_sroa_like_opt(self):
        """Off, as in Numba's parfor lowering: a parfor's uses and definitions are not all in
        blocks that must run."""
        return True


def lower_parfor(lowerer: OffloadLower, parfor: Parfor) -> None:
    """The parfor's kernels and their launch; with fallback="host", Numba's CPU lowering of a
    parfor whose kernels cannot be made, with a warning."""
    for inst in parfor.init_block.body:
        lowerer.lower_inst(inst)
    try:
        region = regions.analyse(lowerer, parfor)
        strategy = next(s for s in STRATEGIES if s.takes(region))
        kernels = strategy.kernels(region, lowerer.options.cache)
    except KernelCompileError as error:
        if lowerer.options.fallback != "host":
            raise
        warnings.warn(
            f"{error}\nThe loop runs on the host instead (fallback='host').",
            OffloadFallbackWarning,
            stacklevel=2,
        )
        parfor.init_block.body = []  # lowered above
        _lower_parfor_parallel_std(lowerer, parfor)
        return
    for stmt in region.hoisted:
        lowerer.lower_inst(stmt)
    strategy.launch(lowerer, region, kernels)
    lowerer.regions.append((region, kernels))
