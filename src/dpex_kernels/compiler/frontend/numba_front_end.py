"""Numba's front end: bytecode, Numba IR, typing and lowering, then a spir_kernel entry that
rebuilds Numba's array structs from the flattened arguments and calls the kernel's function.

It compiles every kernel the language allows and reports every error in user code.
"""

from __future__ import annotations

from numba.core import types

from ..backend import llvm
from ..device_pipeline import compile_device_code
from ..diagnostics import compile_failure, current_loc, is_user_error, user_error
from ..target import sycl_target
from .entry import build_kernel_entry


def compile_numba(
    py_func, argtypes, symbol: str, *, fastmath: bool, debug: bool, noalias: bool = False
) -> tuple:
    """(linked module holding the spir_kernel `symbol`, type annotation) from Numba's front
    end: the kernel's function compiled, and an entry that calls it."""
    stale_loc = current_loc()
    try:
        cres = compile_device_code(py_func, argtypes, fastmath=fastmath, debug=debug)
    except Exception as exc:
        failure = compile_failure(py_func, exc, stale_loc=stale_loc)
        raise failure from (None if is_user_error(exc) else exc)
    if cres.signature.return_type not in (types.none, types.void):
        raise user_error(
            py_func,
            f"the kernel returns a value of type {cres.signature.return_type}; kernels return "
            f"nothing: write results into an output array argument",
        )
    try:
        context = sycl_target.target_context
        library = context.codegen().create_library(symbol)
        library.add_linking_library(cres.library)
        build_kernel_entry(context, cres.fndesc, symbol, library, debug, noalias)
        linked = llvm.link_modules([str(m) for m in library.all_modules()])
    except Exception as exc:  # past Numba, every failure is the compiler's own
        raise compile_failure(py_func, exc, internal=True) from exc
    return linked, getattr(cres, "type_annotation", None)
