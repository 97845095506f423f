from .compiled import CompiledKernel as CompiledKernel
from .compiled import KernelStats as KernelStats
from .jit_kernel import JitKernel as JitKernel
from .jit_kernel import kernel as kernel
from .launch import KernelBase as KernelBase
