"""Parallel implementations of NumPy functions, inlined by Numba's pre-parfor pass and made
parfors: Numba's own, with offload's where Numba has none (reductions with `axis=`, `@`)."""

from __future__ import annotations

from numba.parfors import parfor as numba_parfor

#: (function name, module) -> a factory of its parallel implementation (Numba's convention).
IMPLEMENTATIONS = dict(numba_parfor.swap_functions_map)


def pre_parfor(state) -> bool:
    """Numba's pre-parfor pass with IMPLEMENTATIONS."""
    numba_parfor.PreParforPass(
        state.func_ir,
        state.typemap,
        state.calltypes,
        state.typingctx,
        state.targetctx,
        state.flags.auto_parallel,
        state.parfor_diagnostics.replaced_fns,
        replace_functions_map=IMPLEMENTATIONS,
    ).run()
    return True
