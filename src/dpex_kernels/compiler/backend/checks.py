"""The back end's checks of an optimised module: what would fail later, refused now, by name.

A call to a host-only function fails the device build with an empty error, an integer width
SPIR-V lacks aborts the process inside LLVM's back end, and barrier flags computed in the kernel
are only constants once optimised: each is a KernelCompileError saying what to write instead.
"""

from __future__ import annotations

import re

import llvmlite.binding as ll

from ...errors import KernelCompileError
from ..kernel_api.barriers import FENCE_FLAGS, fence_flags_error

# Declarations that may stay external: OpenCL built-ins (mangled), LLVM intrinsics, SPIR-V
# built-in variables, and printf (which the back end turns into OpenCL.std printf).
_ALLOWED_EXTERNAL = re.compile(r"^(_Z\d+|llvm\.|__spirv_|printf$)")

_SUPPORTED_WIDTHS = {1, 8, 16, 32, 64}
_INTEGER_TYPE = re.compile(r'(?<![\w%@.$"])i(\d+)\b')

_BARRIER_CALL = re.compile(
    r"call spir_func void @(_Z7barrierj|_Z17sub_group_barrierj)\(i32 ([^)]*)\)"
)
_BARRIER_NAMES = {"_Z7barrierj": "dk.barrier", "_Z17sub_group_barrierj": "dk.sub_group.barrier"}


def no_host_calls(module: ll.ModuleRef, kernel_name: str) -> None:
    """A call to a host-only symbol would fail the device build with an empty error."""
    missing = sorted(
        f.name for f in module.functions if f.is_declaration and not _ALLOWED_EXTERNAL.match(f.name)
    )
    if missing:
        raise KernelCompileError(
            f"kernel '{kernel_name}' calls host-only function(s) {', '.join(missing)}, which do "
            f"not exist on a SYCL device; use math.* functions or dk device functions instead"
        )


def supported_integers(text: str, kernel_name: str) -> None:
    """Integer widths SPIR-V lacks would abort the process inside the back end."""
    widths = {int(w) for w in _INTEGER_TYPE.findall(text)} - _SUPPORTED_WIDTHS
    if widths:
        raise KernelCompileError(
            f"kernel '{kernel_name}' needs integers of {sorted(widths)} bits, which SPIR-V "
            f"devices do not support; simplify the integer arithmetic or use int64"
        )


def constant_barrier_flags(text: str, kernel_name: str) -> None:
    """Flags computed in the kernel (a | b) are constants once optimised: check those too."""
    for mangled, flags in _BARRIER_CALL.findall(text):
        if not flags.isdigit() or int(flags) not in FENCE_FLAGS:
            value = int(flags) if flags.isdigit() else None
            raise KernelCompileError(
                f"kernel '{kernel_name}': {fence_flags_error(_BARRIER_NAMES[mangled], value)}"
            )


def sub_groups_of_one(text: str, kernel_name: str, sub_group_size: int) -> None:
    """The OpenCL CPU runtime builds no sub-group operation in sub-groups of one work-item."""
    if sub_group_size == 1 and "sub_group" in text:  # every sub-group built-in's name has it
        raise KernelCompileError(
            f"kernel '{kernel_name}': sub_group_size=1 leaves no sub-group operations "
            f"(dk.sub_group.*): the OpenCL CPU runtime builds none in sub-groups of one "
            f"work-item; use a size of 4 or more, or take them out"
        )
