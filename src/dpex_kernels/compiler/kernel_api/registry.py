"""The typing and lowering registries of the kernel API, host stubs and built-in calls."""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections.abc import Iterator
from contextvars import ContextVar

import numpy as np
from llvmlite import ir
from numba.core import cgutils
from numba.core.imputils import Registry as LoweringRegistry
from numba.core.typing.templates import Registry

from .declarations import DECLARATIONS

typing_registry = Registry()
lowering_registry = LoweringRegistry("dpex_kernels.kernel_api")

#: While the simulator (dpex_kernels.simulator) runs a kernel in this thread, `table` maps public
#: names ("dk.barrier") to its implementations, so every spelling of a stub runs in Python.
simulation = threading.local()


#: The device a kernel is being compiled for (compile.py: compiling_for), which the lowering of
#: what a device may lack (atomic orders and scopes) checks against; None outside a compile.
_compile_target: ContextVar = ContextVar("dpex_compile_target", default=None)


@contextlib.contextmanager
def compiling_for(target) -> Iterator[None]:
    """Lower kernel API calls for `target` (an artifacts.target.Target) inside the block."""
    token = _compile_target.set(target)
    try:
        yield
    finally:
        _compile_target.reset(token)


def compile_target():
    """The Target being compiled for, or None (nothing device-specific is then checked)."""
    return _compile_target.get()


def simulated(public: str):
    """The simulator's implementation of `public` while it runs a kernel here, else None."""
    table = getattr(simulation, "table", None)
    return None if table is None else table[public]


def host_stub(name: str, doc: str, public: str | None = None):
    """The Python object standing for a device-only function; called on the host, it raises.

    Every stub lives in this module under `name`: Numba keys typing on globally reachable
    objects, and pickles find them here. `public` is how users spell it (default dk.<name>).
    A public stub takes the signature and docstring of its declaration (declarations/), so
    that help(), IPython and the API reference show what users call; `doc` describes the
    stubs that have none (those of generated code).
    """
    public = public or f"dk.{name}"
    declaration = DECLARATIONS.get(public)

    def stub(*args, **kwargs):
        implementation = simulated(public)
        if implementation is not None:
            return implementation(*args, **kwargs)
        raise TypeError(
            f"{public}() can only be called inside a @dk.kernel or @dk.func, not from host code"
        )

    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = doc if declaration is None else declaration.__doc__
    if declaration is not None:
        stub.__signature__ = inspect.signature(declaration)
    stub.__module__ = __name__
    globals()[name] = stub
    return stub


#: Kernel API objects defined outside this module, by id: a layer over dk (numba-dpex 0.23's
#: kernel_api in dpex_kernels.numba_dpex) registers the classes and functions it types.
_EXTERNAL: dict[int, object] = {}


def register_kernel_api(value: object) -> None:
    """Make `value`, typed in kernels by a layer over dk, take constant arguments as the
    stubs do (constant_argument)."""
    _EXTERNAL[id(value)] = value


def is_kernel_api(value: object) -> bool:
    """Whether `value` is one of the kernel API's stubs or registered objects (what
    constant_argument applies to)."""
    if not callable(value):
        return False
    return getattr(value, "__module__", None) == __name__ or _EXTERNAL.get(id(value)) is value


def constant_argument(value: object) -> int | None:
    """The integer a constant argument of a kernel API call stands for, or None.

    An index function's dimension, barrier flags, a memory order or scope: the kernel API takes
    them as compile-time constants, however they are spelled (a literal, a global or closure
    variable, a NumPy integer, an enum member); both front ends type such an argument as the
    literal it is.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


def call_builtin(builder, name: str, return_type, arg_types, args, convergent: bool = False):
    """Call an OpenCL or SPIR-V built-in by its Itanium-mangled name."""
    fnty = ir.FunctionType(return_type, arg_types)
    function = cgutils.get_or_insert_function(builder.module, fnty, name)
    function.calling_convention = "spir_func"
    if convergent:
        function.attributes.add("convergent")
    return builder.call(function, args, cconv="spir_func")
