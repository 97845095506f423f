"""The front ends: a kernel's Python function and argument types -> one linked LLVM module.

The direct front end (direct/) types and lowers the function's AST and is tried first; where
it cannot compile a kernel exactly as Numba would it raises its own `Unsupported`, and only
then does Numba's front end (numba_front_end.py) compile it, reporting any error in user code.
Any other failure of the direct front end is an internal error and keeps its traceback.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ...artifacts.options import CompileOptions
from .. import functions  # noqa: F401  (registers @dk.func's DeviceFunction with Numba's SYCL target)
from ..device_pipeline import has_generated_ir
from ..diagnostics import compile_failure
from . import direct
from .numba_front_end import compile_numba


@dataclass
class FrontEndResult:
    """A kernel's linked module, what inspect_types() shows, and which front end made it."""

    module: object
    type_annotation: object
    #: "direct", or "numba" and why the direct front end did not compile the kernel.
    front_end: str
    timings: dict = field(default_factory=dict)


def compile_front_end(py_func, argtypes, symbol: str, options: CompileOptions) -> FrontEndResult:
    """The linked module of the spir_kernel `symbol` for `argtypes`."""
    front_end = "numba"
    if direct.enabled() and not options.debug and not has_generated_ir(py_func):
        started = time.perf_counter()
        try:
            compiled = direct.compile_direct(
                py_func, argtypes, symbol, fastmath=options.fastmath, noalias=options.noalias
            )
        except direct.Unsupported as exc:  # Numba's front end compiles it, or says what is wrong
            front_end = f"numba (direct: {type(exc).__name__}: {exc})"
        except Exception as exc:  # a bug in the direct front end
            raise compile_failure(py_func, exc, internal=True) from exc
        else:
            timings = {"direct": time.perf_counter() - started}
            return FrontEndResult(compiled.module, compiled.type_annotation, "direct", timings)
    started = time.perf_counter()
    module, annotation = compile_numba(
        py_func,
        argtypes,
        symbol,
        fastmath=options.fastmath,
        debug=options.debug,
        noalias=options.noalias,
    )
    return FrontEndResult(module, annotation, front_end, {"numba": time.perf_counter() - started})
