"""@dk.kernel: JitKernel (jit_kernel.py) over the numba-free launch path.

compiled.py holds CompiledKernel, matching.py picks a definition for arguments, launch.py binds
a launch for the compiled launcher (_launcher.c), ordering.py orders launches with dpnp.
"""

from .._lazy import lazy_attributes

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "CompiledKernel": ".compiled",
        "KernelBase": ".launch",
        "KernelStats": ".compiled",
        "JitKernel": ".jit_kernel",
        "kernel": ".jit_kernel",
    },
)
