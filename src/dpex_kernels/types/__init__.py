"""Kernel parameter types: usm_array, scalars, signatures, typeof and launch ranges.

Range, NdRange and ArraySpec need no Numba; the Numba types load on first use (the names are
listed in __init__.pyi).
"""

import lazy_loader

from .ranges import NdRange, Range  # noqa: F401
from .spec import ArraySpec  # noqa: F401

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
