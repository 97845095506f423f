"""The direct front end: kernels typed and lowered from their AST, without Numba's IR passes.

Numba's front end (bytecode analysis, IR rewrites, SSA, constraint typing, generic lowering)
took 40-50 ms of a 120 ms warm compile of the tiled matmul; this one reads the function's AST
and asks Numba's typing and target contexts for every type and every implementation, so a
kernel compiles to the code Numba would give it in a fraction of the time. What it cannot
compile exactly as Numba would (see typer.py) raises Unsupported, and the compiler then runs
Numba's front end, which also reports every error in user code: errors read the same
whichever front end was tried first. `compile_direct` is the one boundary: Numba's verdicts on
the code (typing and lowering errors) become Unsupported there, and anything else is a bug
here, raised as it is.

DPEX_KERNELS_FRONT_END=numba turns it off.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from numba.core import types
from numba.core.compiler import _make_subtarget
from numba.core.compiler_lock import global_compiler_lock
from numba.core.target_extension import target_override

from ....errors import KernelCompileError
from ...backend import llvm
from ...device_pipeline import device_flags
from ...diagnostics import is_user_error
from ...patches import collector_paused
from ...target import TARGET_NAME, sycl_target
from .errors import Unsupported
from .lowerer import Lowerer
from .source import function_source
from .typer import type_function

__all__ = ["Unsupported", "compile_direct", "enabled"]


def enabled() -> bool:
    """Whether kernels try this front end first (DPEX_KERNELS_FRONT_END unset or "direct")."""
    return os.environ.get("DPEX_KERNELS_FRONT_END", "direct") != "numba"


@dataclass
class DirectResult:
    """A kernel compiled by this front end: its module (the spir_kernel and the device
    functions it calls, linked and verified) and what inspect_types() shows."""

    module: object
    type_annotation: object


def compile_direct(
    py_func, argtypes, symbol: str, *, fastmath: bool = False, noalias: bool = False
) -> DirectResult:
    """Compile a kernel's Python function for `argtypes` into the spir_kernel `symbol`;
    Unsupported where Numba's front end must (and for every error in the user's code, which
    Numba's front end then reports)."""
    try:
        return _compile(py_func, argtypes, symbol, fastmath, noalias)
    except Unsupported:
        raise
    except KernelCompileError as exc:  # a device function's error: Numba's front end says it
        raise Unsupported(f"a device function cannot be compiled: {exc}") from exc
    except Exception as exc:
        if not is_user_error(exc):
            raise
        raise Unsupported(f"{type(exc).__name__} for Numba's front end to report") from exc


def _compile(py_func, argtypes, symbol: str, fastmath: bool, noalias: bool) -> DirectResult:
    source = function_source(py_func)
    typingctx = sycl_target.typing_context
    with collector_paused(), global_compiler_lock, target_override(TARGET_NAME):
        typingctx.refresh()
        sycl_target.target_context.refresh()
        typed = type_function(source, tuple(argtypes), typingctx)
        if typed.return_type != types.none:
            raise Unsupported("a kernel that returns a value")
        context, implementations = _context(fastmath)
        library = context.codegen().create_library(symbol)
        module = context.create_module(symbol)
        with context.push_code_library(library):
            Lowerer(typed, context, module, implementations).run(symbol, noalias)
        context.post_lowering(module, library)
        library.add_ir_module(module)
    linked = llvm.link_modules([str(m) for m in library.all_modules()])
    linked.verify()  # a mistake here is refused now, never an abort in LLVM's passes later
    return DirectResult(linked, _Annotation(typed))


_contexts: dict[bool, tuple] = {}
#: implementations kept per context at most (kernels made in a loop with ever new literals)
_IMPLEMENTATIONS_LIMIT = 4096


def _context(fastmath: bool) -> tuple:
    """The target context of these options (Numba makes one per compile), and the
    implementations looked up in it so far: both kept for the process."""
    found = _contexts.get(fastmath)
    if found is None:
        flags = device_flags(fastmath=fastmath)
        found = _contexts[fastmath] = (_make_subtarget(sycl_target.target_context, flags), {})
    if len(found[1]) > _IMPLEMENTATIONS_LIMIT:
        found[1].clear()
    return found


class _Annotation:
    """inspect_types() text, written when first read."""

    def __init__(self, typed):
        self.typed = typed

    def __str__(self) -> str:
        return _annotation(self.typed)


def _annotation(typed) -> str:
    """inspect_types() text: the typed statements, line by line."""
    source = typed.source
    header = (
        f"# {source.py_func.__qualname__}"
        f"({', '.join(f'{p}: {t}' for p, t in zip(source.params, typed.argtypes))})"
        f" -> {typed.return_type}\n# typed by dpex_kernels' direct front end, "
        f"{source.filename}:{source.line(source.tree)}"
    )
    lines = [header]
    for line, text in sorted(typed.annotations.values(), key=lambda item: item[0]):
        lines.append(f"{line:5d}: {text()}")
    return "\n".join(lines) + "\n"
