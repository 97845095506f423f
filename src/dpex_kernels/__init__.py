"""dpex_kernels: explicit SYCL-style kernels in Python, compiled to SPIR-V, launched with dpctl.

Importing the package loads dpctl (after the OpenCL ICD bootstrap) but not Numba: the
compiler loads on first use of a name that needs it, and the AOT runtime never does. The public
names are listed once, in __init__.pyi, which editors and type checkers read too.
"""

import lazy_loader

from . import (
    _runtime,  # noqa: F401  (first: the OpenCL ICD bootstrap must precede dpctl)
    types,  # noqa: F401
)
from .errors import (  # noqa: F401  (numba-free, and raised by the launch path)
    DeviceNotFoundError,
    ExecutionQueueError,
    InvalidRangeError,
    KernelBoundsError,
    KernelCompileError,
    KernelRaceError,
    KernelSignatureError,
)
from .types.ranges import NdRange, Range  # noqa: F401  (numba-free, used at every launch)

__version__ = "0.2.0"

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
