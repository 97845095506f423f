"""@dk.kernel: JitKernel (jit_kernel.py) over the numba-free launch path.

compiled.py holds CompiledKernel, matching.py picks a definition for arguments, launch.py binds
a launch for the compiled launcher (_launcher.c), ordering.py orders launches with dpnp.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
