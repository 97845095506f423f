"""@dk.kernel: JitKernel, argument matching and the launch path."""

from __future__ import annotations

from collections.abc import Callable

from numba.core.typing.templates import Signature

from .binding import CompiledKernel, KernelBase, KernelStats, Launcher
from .kernel import JitKernel


def kernel(
    function_or_signatures=None,
    /,
    *,
    cache: bool = False,
    fastmath: bool = False,
    opt_level: int = 3,
    debug: bool = False,
) -> JitKernel | Callable[..., JitKernel]:
    """@dk.kernel (lazy) or @dk.kernel(sig | [sigs]) (eager: compiled right here)."""
    options = {"cache": cache, "fastmath": fastmath, "opt_level": opt_level, "debug": debug}
    if callable(function_or_signatures) and not isinstance(function_or_signatures, Signature):
        return JitKernel(function_or_signatures, None, **options)

    def decorate(py_func) -> JitKernel:
        return JitKernel(py_func, function_or_signatures, **options)

    return decorate


__all__ = ["CompiledKernel", "JitKernel", "KernelBase", "KernelStats", "Launcher", "kernel"]
