"""Python kernel + argument types -> KernelArtifacts (LLVM IR, SPIR-V): the compiler's front door.

Every failure leaves here as KernelCompileError naming the kernel, its source line and what
to do instead; nothing a user writes reaches the SPIR-V back end in a shape that aborts.
"""

from __future__ import annotations

import inspect
import re
import time
from dataclasses import dataclass, field

from numba.core import errors as numba_errors
from numba.core import types

from ..errors import KernelCompileError
from . import codegen
from .functions import compile_device_code
from .lowering import build_kernel_entry, flattening, kernel_symbol
from .target import sycl_target


@dataclass(frozen=True)
class KernelArtifacts:
    """Everything one compile produced; the device build and the launch read only this."""

    name: str
    symbol: str
    argtypes: tuple
    flattening: tuple
    llvm_ir: str
    spirv: bytes
    type_annotation: str
    error_flag: bool
    #: status code -> (exception class, message) for kernels compiled with debug=True.
    exceptions: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)


_HINTS = (
    (r"print", "print() is not supported inside kernels; write results to an output array"),
    (
        r"np\.(empty|zeros|ones|array|full)|allocat|NRT|meminfo",
        "kernels cannot allocate arrays; pass an output array, or use dk.local.array / "
        "dk.private.array",
    ),
    (
        r"pyobject|object mode|reflected|Untyped global|Unknown attribute",
        "only typed, device-compatible code runs in kernels: no Python objects, lists, dicts or "
        "untyped globals",
    ),
    (
        r"[Dd]ynamic|exception|raise",
        "raise only with constant arguments (raise ValueError('text'))",
    ),
    (r"return", "kernels return nothing: write results into an output array argument"),
)


def _source_location(py_func) -> str:
    try:
        filename = inspect.getsourcefile(py_func) or py_func.__code__.co_filename
        return f"{filename}:{py_func.__code__.co_firstlineno}"
    except (TypeError, AttributeError):
        return "<unknown source>"


def compile_error(py_func, problem: str) -> KernelCompileError:
    """A KernelCompileError that names the kernel, its source and a hint matching `problem`."""
    name = getattr(py_func, "__qualname__", repr(py_func))
    hint = next((h for pattern, h in _HINTS if re.search(pattern, problem)), None)
    text = (
        f"cannot compile kernel '{name}' ({_source_location(py_func)}) for a SYCL device:\n"
        f"{problem.strip()}"
    )
    if hint:
        text += f"\nHint: {hint}."
    return KernelCompileError(text)


def _debug_exceptions(cres) -> dict:
    helper = getattr(cres, "call_helper", None)
    known = getattr(helper, "exceptions", {}) or {}
    return {code: (exc, args) for code, (exc, args, _loc) in known.items()}


def compile_kernel(
    py_func, argtypes, *, fastmath: bool = False, opt_level: int = 3, debug: bool = False
) -> KernelArtifacts:
    """Compile `py_func` for `argtypes` into a spir_kernel and its SPIR-V."""
    timings = {}
    started = time.perf_counter()
    try:
        cres = compile_device_code(py_func, argtypes, fastmath=fastmath, debug=debug)
    except KernelCompileError:
        raise
    except numba_errors.NumbaError as exc:
        raise compile_error(py_func, str(exc)) from None
    except Exception as exc:  # Numba lowering raises plain errors for unsupported constructs
        raise compile_error(py_func, f"{type(exc).__name__}: {exc}") from None
    if cres.signature.return_type not in (types.none, types.void):
        raise compile_error(
            py_func, f"the kernel returns a value of type {cres.signature.return_type}"
        )
    timings["numba"] = time.perf_counter() - started

    context = sycl_target.target_context
    symbol = kernel_symbol(py_func.__name__)
    library = context.codegen().create_library(symbol)
    library.add_linking_library(cres.library)
    build_kernel_entry(context, cres.fndesc, symbol, library, error_flag=debug)

    started = time.perf_counter()
    module = codegen.link_modules(library.all_modules())
    codegen.optimise(module, [symbol], opt_level)
    llvm_ir = str(module)
    timings["llvm"] = time.perf_counter() - started
    started = time.perf_counter()
    try:
        spirv = codegen.emit_spirv(module, symbol, opt_level)
    except KernelCompileError as exc:
        raise compile_error(py_func, str(exc)) from None
    timings["spirv"] = time.perf_counter() - started

    return KernelArtifacts(
        name=py_func.__name__,
        symbol=symbol,
        argtypes=tuple(argtypes),
        flattening=tuple(tuple(flattening(t)) for t in argtypes),
        llvm_ir=llvm_ir,
        spirv=spirv,
        type_annotation=_annotation(cres),
        error_flag=debug,
        exceptions=_debug_exceptions(cres) if debug else {},
        timings=timings,
    )


def _annotation(cres) -> str:
    annotation = getattr(cres, "type_annotation", None)
    return "" if annotation is None else str(annotation)
