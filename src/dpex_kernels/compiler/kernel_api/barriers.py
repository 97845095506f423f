"""Work-group barriers: dk.barrier(flags) and the fence flags."""

from __future__ import annotations

from llvmlite import ir
from numba.core import errors, utils
from numba.core import types as nbtypes
from numba.core.typing.templates import AbstractTemplate, signature

from .registry import call_builtin, host_stub, lowering_registry, typing_registry
from .spirv import GLOBAL_MEM_FENCE, LOCAL_MEM_FENCE

__all__ = [
    "FENCE_FLAGS",
    "GLOBAL_MEM_FENCE",
    "LOCAL_MEM_FENCE",
    "barrier",
    "barrier_function",
    "check_fence_flags",
    "fence_flags_error",
]

_I32 = ir.IntType(32)


def _flags(context, builder, sig, args):
    """The fence flags argument as the i32 OpenCL wants (LOCAL_MEM_FENCE when omitted)."""
    if not args:
        return ir.Constant(_I32, LOCAL_MEM_FENCE)
    return context.cast(builder, args[0], sig.args[0], nbtypes.uint32)


FENCE_FLAGS = (LOCAL_MEM_FENCE, GLOBAL_MEM_FENCE, LOCAL_MEM_FENCE | GLOBAL_MEM_FENCE)


def fence_flags_error(public: str, value: int | None) -> str:
    """What is wrong with barrier flags `value`, None where they are not a constant (also used
    on the optimised IR)."""
    given = "flags" if value is None else value
    problem = "" if value is not None else ", not a value computed at run time"
    return (
        f"{public}({given}): the flags are dk.LOCAL_MEM_FENCE, dk.GLOBAL_MEM_FENCE or both "
        f"(dk.LOCAL_MEM_FENCE | dk.GLOBAL_MEM_FENCE), as constants{problem}"
    )


def check_fence_flags(public: str, flags_type) -> None:
    """Constant flags are checked where they are written; others once optimised (compile.py)."""
    if (
        isinstance(flags_type, nbtypes.IntegerLiteral)
        and flags_type.literal_value not in FENCE_FLAGS
    ):
        raise errors.UnsupportedError(fence_flags_error(public, flags_type.literal_value))


def _takes_flags(flags=LOCAL_MEM_FENCE):
    """The Python signature of the barriers: `flags` by position or keyword."""


_FLAGS_SIGNATURE = utils.pysignature(_takes_flags)


def barrier_function(name: str, public: str, mangled: str, doc: str):
    stub = host_stub(name, doc, public)

    @typing_registry.register_global(stub)
    class _Template(AbstractTemplate):
        prefer_literal = True  # so that lowering can check constant flags

        def generic(self, args, kws):
            if kws:  # barrier(flags=...): the keyword as the one argument
                if args or set(kws) != {"flags"} or not isinstance(kws["flags"], nbtypes.Integer):
                    return None
                return signature(nbtypes.none, kws["flags"]).replace(pysig=_FLAGS_SIGNATURE)
            if len(args) <= 1 and all(isinstance(a, nbtypes.Integer) for a in args):
                return signature(nbtypes.none, *args)
            return None

    @lowering_registry.lower(stub)
    @lowering_registry.lower(stub, nbtypes.Integer)
    def _lower(context, builder, sig, args):
        if sig.args:
            check_fence_flags(public, sig.args[0])
        flags = _flags(context, builder, sig, args)
        call_builtin(builder, mangled, ir.VoidType(), [_I32], [flags], convergent=True)
        return context.get_dummy_value()

    return stub


barrier = barrier_function(
    "barrier", "dk.barrier", "_Z7barrierj", "In a kernel: wait for the work-group; fence memory."
)
