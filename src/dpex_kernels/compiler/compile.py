"""Python kernel + argument types -> KernelArtifact: the compiler's front door.

A front end (frontend/) makes the kernel's linked module; what the compiler knows of it is
recorded on the artifact (launch dimension count, float atomics, debug exceptions); the back
end (backend/) builds the default variant right away and the others when a launch needs them.
Every failure leaves here as KernelCompileError naming the kernel, its source line and what
to do instead; nothing a user writes reaches the SPIR-V back end in a shape that aborts.
"""

from __future__ import annotations

import inspect
import re

from numba.core import types

from ..artifacts.kernel import KernelArtifact
from ..artifacts.options import CompileOptions
from ..artifacts.target import Target
from ..errors import KernelCompileError
from ..types.usm_array_type import USMArrayType, device_of, param_of
from .backend import build_variant
from .backend.host_simd import Refusal
from .diagnostics import compile_failure, user_error
from .frontend import compile_front_end
from .frontend.entry import kernel_symbol
from .kernel_api.atomics import float_atomic_paths
from .kernel_api.groups import SCRATCH_ITEMS
from .kernel_api.index_space import dimensions_used
from .kernel_api.items import ItemType
from .kernel_api.memory import LocalAccessorType
from .kernel_api.registry import compiling_for
from .target import EXCEPTIONS


def check_kernel_argtypes(py_func, argtypes) -> None:
    """Kernel parameters are usm_array types and scalars; say so before Numba sees others."""
    names = list(inspect.signature(py_func).parameters)
    for position, argtype in enumerate(argtypes):
        if isinstance(argtype, (USMArrayType, LocalAccessorType, types.Number, types.Boolean)):
            continue
        if isinstance(argtype, ItemType) and position == 0:
            continue
        name = names[position] if position < len(names) else f"#{position}"
        prefix = (
            f"kernel '{py_func.__qualname__}': parameter '{name}' (position {position}) has "
            f"type {argtype}"
        )
        if isinstance(argtype, types.Array):
            raise TypeError(
                f"{prefix}, a Numba array type; kernels take USM arrays: declare it as "
                f"dk.usm_array({argtype.dtype}, {argtype.ndim}, layout='{argtype.layout}') "
                f"(with usm_type= and device= where they are not the defaults)"
            )
        raise TypeError(f"{prefix}; kernel parameters are dk.usm_array(...) types and scalars")


_RETURNED_CODE = re.compile(r"\bret i32 (\d+)\b")
#: The marker nd-item methods call (kernel_api/items.py).
_NEEDS_ND_RANGE = re.compile(r'call void @"?dpex\.nd_item"?\(')
#: The marker of group algorithms computed in local memory (kernel_api/groups.py).
_SCRATCH = re.compile(r'call void @"?dpex\.group_scratch"?\(')


def _debug_exceptions(linked_ir: str) -> dict:
    """status code -> (exception class, args) of every raise in the kernel and its callees."""
    codes = {int(code) for code in _RETURNED_CODE.findall(linked_ir)}
    return {code: EXCEPTIONS[code][:2] for code in sorted(codes) if code in EXCEPTIONS}


def compile_kernel(
    py_func,
    argtypes,
    options: CompileOptions | None = None,
    target: Target | None = None,
) -> KernelArtifact:
    """Compile `py_func` for `argtypes` with `options` (by default CompileOptions()) into a
    spir_kernel for `target` (by default the device of the array arguments, else the default
    device), with its default variant built."""
    check_kernel_argtypes(py_func, argtypes)
    options = options or CompileOptions()
    target = target or Target.of(device_of(argtypes))
    symbol = kernel_symbol(py_func.__name__)
    with compiling_for(target):  # the atomics' lowering checks the device's orders and scopes
        front = compile_front_end(py_func, argtypes, symbol, options)
    try:
        linked_ir = str(front.module)
        artifact = KernelArtifact(
            name=py_func.__name__,
            symbol=symbol,
            params=tuple(param_of(t) for t in argtypes if not isinstance(t, ItemType)),
            options=options,
            target=target,
            default_ndim=dimensions_used(linked_ir),
            exceptions=_debug_exceptions(linked_ir) if options.debug else {},
            float_atomics=float_atomic_paths(linked_ir, target.float_atomics),
            needs_nd_range=_NEEDS_ND_RANGE.search(linked_ir) is not None,
            max_work_group_items=SCRATCH_ITEMS if _SCRATCH.search(linked_ir) else 0,
            front_end=front.front_end,
            linked_ir=linked_ir,
            type_annotation=front.type_annotation,
            timings=front.timings,
            builder=build_variant,
        )
        artifact.variant(artifact.default_ndim, front.module)
    except Refusal:
        raise  # the caller builds the kernel plain instead (offloading/kernels.py)
    except KernelCompileError as exc:
        raise user_error(py_func, str(exc)) from None
    except Exception as exc:  # past the front end, every failure is the compiler's own
        raise compile_failure(py_func, exc, internal=True) from exc
    return artifact
