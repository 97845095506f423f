"""@dk.kernel: JitKernel (kernel.py) over the numba-free launch path (binding.py, launch.py)."""

from .._lazy import lazy_attributes

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "CompiledKernel": ".binding",
        "KernelBase": ".binding",
        "KernelStats": ".binding",
        "Launcher": ".binding",
        "JitKernel": ".jit_kernel",
        "kernel": ".jit_kernel",
    },
)
