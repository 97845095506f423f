"""The kernel simulator: kernels run work-item by work-item in Python (API.md §10).

`kernel.simulate[range](*args)` runs one launch, `@dk.kernel(simulate=True)` or
`DPEX_KERNELS_SIMULATE=1` every launch of a kernel. Work-groups run cooperatively (scheduler.py),
arrays are checked and their accesses recorded (memory.py, races.py), and the kernel API runs
as Python (builtins.py, sycl2020.py). docs/debugging.md is the user's guide.
"""

from .kernel import SimulatedKernel
from .launch import RACE_MODES, Simulation, SimulationSizeWarning
from .races import KernelRaceWarning
from .sycl2020 import LocalAccessor

__all__ = [
    "RACE_MODES",
    "KernelRaceWarning",
    "LocalAccessor",
    "SimulatedKernel",
    "Simulation",
    "SimulationSizeWarning",
]
