"""python -m dpex_kernels inspect MODULE:KERNEL --stage types|llvm|spirv [--sig TEXT]."""

from __future__ import annotations

from types import ModuleType

from .user_code import UserError, find_kernel

STAGES = {"types": "inspect_types", "llvm": "inspect_llvm", "spirv": "inspect_spirv"}
EXAMPLE = "--sig 'dk.void(vector, vector)' (the module's names and dk's may be used)"


def _evaluate(text: str, module: ModuleType):
    """The signature a `dk.void(...)` expression builds, with dk's names and the module's."""
    from numba.core.typing.templates import Signature

    import dpex_kernels as dk

    namespace = {name: getattr(dk, name) for name in dk.__all__}
    namespace.update(vars(module), dk=dk)
    try:
        sig = eval(text, namespace)  # the user's own text, beside the user's own module
    except Exception as exc:
        raise UserError(f"bad signature text {text!r}: {type(exc).__name__}: {exc}") from None
    if not isinstance(sig, Signature):
        raise UserError(
            f"--sig {text!r} is not a signature (type {type(sig).__name__}): {EXAMPLE}"
        ) from None
    return sig


def choose_signatures(kernel, module: ModuleType, text: str | None) -> list:
    """The signatures to show: all of them, or the one `text` names (a declared one by its
    text or by an expression; a lazy kernel compiles a new one)."""
    name = kernel.__name__
    declared = kernel.signatures
    if text is None:
        if not declared:
            raise UserError(
                f"kernel {name!r} is lazy and has no signature until a launch compiles one: "
                f"give one with {EXAMPLE}, or declare it with @dk.kernel(dk.void(...))"
            )
        return declared
    squeezed = "".join(text.split())
    for sig in declared:
        if "".join(str(sig).split()) == squeezed:
            return [sig]
    sig = _evaluate(text, module)
    if sig in kernel.definitions:
        return [sig]
    if kernel._eager:
        listed = "; ".join(str(s) for s in declared)
        raise UserError(f"kernel {name!r} declares no signature {sig}; it declares: {listed}")
    try:
        kernel.compile(sig)
    except TypeError as exc:  # the wrong number or kind of argument types
        raise UserError(f"--sig {text!r}: {exc}") from None
    return [sig]


def inspect(target: str, stage: str, sig_text: str | None) -> int:
    """Print one compiler stage of a kernel, per signature, each under a `;` comment line
    (a comment in LLVM IR and in SPIR-V assembly alike)."""
    module, kernel = find_kernel(target)
    read = getattr(kernel, STAGES[stage])
    for sig in choose_signatures(kernel, module, sig_text):
        print(f"; {kernel.__name__} {sig}")
        print(read(sig).rstrip("\n"))
    return 0
