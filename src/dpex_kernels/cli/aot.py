"""python -m dpex_kernels aot build MODULE -o FILE, with progress while the kernels compile.

The wait is in three parts: importing the module compiles its eager kernels (each signature:
front end, LLVM, SPIR-V, device build), the bundle holds every launch dimension count of each
(LLVM and SPIR-V twice more), and the written bundle is loaded once to check it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

from .progress import Progress
from .user_code import UserError, check_module, import_module, kernels_of


def short_signature(name: str, sig) -> str:
    """A kernel and its argument types in a few words: vecadd(float32 1d, float32 1d, int64)."""
    words = [f"{t.dtype} {t.ndim}d" if hasattr(t, "ndim") else str(t) for t in sig.args]
    return f"{name}({', '.join(words)})"


@contextlib.contextmanager
def _shown_compiles(progress: Progress) -> Iterator[None]:
    """Show each signature compiled while the user's module is imported: the module's own
    code makes the kernels, so JitKernel.compile is wrapped for as long as it runs."""
    from ..dispatcher.jit_kernel import JitKernel

    original = JitKernel.compile

    def compile_shown(kernel, sig, *args, **kwargs):
        progress.show(short_signature(kernel.__name__, sig))
        compiled = original(kernel, sig, *args, **kwargs)
        progress.advance()
        return compiled

    JitKernel.compile = compile_shown
    try:
        yield
    finally:
        JitKernel.compile = original


def _build_variants(kernels: list, started: float) -> None:
    """Make every launch dimension count of every definition, as the bundle will hold them."""
    from ..artifacts.kernel import NDIMS

    total = sum(len(k.definitions) for k in kernels)
    with Progress("bundling", total, " signatures", started=started) as progress:
        for kernel in kernels:
            for sig, compiled in kernel.definitions.items():
                progress.show(short_signature(kernel.__name__, sig))
                for ndim in NDIMS:
                    compiled.artifacts.variant(ndim)
                progress.advance()


def build(module_spec: str, output: str) -> int:
    """Bundle the eager kernels of a module; print each kernel's signature count."""
    import dpex_kernels as dk

    check_module(module_spec)  # mistakes are said before the compiles, not after
    folder = Path(output).parent
    if not folder.is_dir():
        raise UserError(f"cannot write {output}: there is no folder {folder}")
    started = time.perf_counter()
    progress = Progress(f"compiling {module_spec}", unit=" signatures", started=started)
    with progress, _shown_compiles(progress):
        module = import_module(module_spec)
    kernels = [k for k in kernels_of(module).values() if k._eager]
    if not kernels:
        raise UserError(
            f"{module_spec} defines no eager kernel to bundle: declare the signatures of its "
            f"kernels (@dk.kernel(dk.void(...)))"
        )
    _build_variants(kernels, started)
    try:
        path = dk.aot.build(kernels, output)
    except ValueError as exc:  # two kernels of one name
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write {output}: {exc.strerror or exc}") from None
    with Progress(f"checking that {path} loads", 1, " bundle", started=started) as progress:
        bundle = dk.aot.runtime.load(path)
        progress.advance()
    for name in bundle:
        print(f"{name}: {len(bundle[name].definitions)} signature(s)")
    print(f"wrote {path}")
    return 0
