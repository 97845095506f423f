"""@dk.offload: a function compiled by Numba whose parallel loops run on the device of its
USM arrays (docs/offload.md).

The function is a Numba dispatcher with offload's pipeline (pipeline.py): Numba compiles it
from its bytecode once per tuple of argument types (and of the small extents its inner loops
run over, extents.py: another Numba dispatcher for each), its parfor passes find the parallel
loops, and each is lowered as kernels launched from the compiled function. Calls from one
offloaded function to another are calls between Numba dispatchers. A loop that cannot run on
a device is a KernelCompileError naming its line, or with fallback="host" runs on the host as
`numba.njit(parallel=True)` runs it, with a warning.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from dataclasses import dataclass

import numba
import numpy as np
from numba.core import types
from numba.core.extending import typeof_impl
from numba.core.typing.templates import Signature

from ..dispatcher.inspection import spirv_text
from ..errors import ExecutionQueueError, KernelCompileError
from . import extents
from .lowering import OffloadFallbackWarning, Options
from .pipeline import OffloadCompiler


@dataclass(frozen=True)
class OffloadedKernel:
    """One kernel an offloaded function launches, for one signature (inspect_kernels)."""

    line: int
    kind: str
    name: str
    signature: Signature
    spirv: str
    attrs: object
    kernel: object  # the dk kernel itself: launchable like any other, kernel[range](*args)


class OffloadDispatcher:
    """What @dk.offload returns: call it like the function; inspect_kernels() lists kernels."""

    def __init__(
        self, py_func, signatures=None, *, fallback: str | None = None, cache: bool = False
    ):
        if not inspect.isfunction(py_func):
            raise TypeError(f"@dk.offload decorates a Python function; got {py_func!r}")
        if fallback not in (None, "host"):
            raise ValueError(f"fallback must be None or 'host'; got {fallback!r}")
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        self.fallback = fallback
        self.cache = bool(cache)  # the kernels' disk cache (docs/cache.md), not the host's
        self._signature = inspect.signature(py_func)
        kinds = {p.kind for p in self._signature.parameters.values()}
        if kinds - {inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD}:
            raise TypeError(
                f"@dk.offload function '{py_func.__name__}': *args, **kwargs and keyword-only "
                f"parameters are not supported; list every parameter by name"
            )
        self.options = Options(self.__name__, fallback, self.cache)
        self._pipeline = type(f"OffloadCompiler_{py_func.__name__}", (OffloadCompiler,), {})
        self._pipeline.options = self.options
        self._numba = numba.njit(py_func, parallel=True, pipeline_class=self._pipeline)
        declared = _signatures(signatures)
        for sig in declared:
            self.compile(tuple(sig.args))
        # Declared signatures are all it compiles: no compile per small extent (extents.py).
        # Otherwise the extents are found at the first call, with its compile.
        self._extents = () if declared else None
        self._specialised: dict[tuple, numba.core.registry.CPUDispatcher] = {}

    def __repr__(self) -> str:
        return f"<dk.offload {self.__name__} ({len(self.signatures)} signature(s))>"

    def __call__(self, *args, **kwargs):
        if kwargs:
            bound = self._signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        for position, value in enumerate(args):
            if isinstance(value, np.ndarray):
                self._refuse(position, value)
        self._check_queues(args)
        compiled = self._numba
        if self._extents is None:
            self._extents = extents.inner_loop_extents(self.py_func)
        if self._extents:
            key = extents.specialised(self._extents, args)
            if key:
                compiled = self._specialised.get(key) or self._specialise(key)
        try:
            return compiled(*args)
        except numba.core.errors.TypingError as error:
            self._check_types(args)  # an argument compiled code cannot take: say which
            loop = _enclosing_prange(self.py_func, getattr(error, "loc", None))
            if loop is None:
                raise  # host code Numba cannot compile: Numba's own error
            raise KernelCompileError(
                f"@dk.offload function '{self.__name__}' ({error.loc.filename}:"
                f"{error.loc.line}): the prange loop at line {loop} has code Numba cannot "
                f"compile for a device: {_first_lines(error)}"
            ) from error

    @property
    def signatures(self) -> list:
        """The argument-type tuples compiled so far."""
        compiled = [self._numba, *self._specialised.values()]
        return list(dict.fromkeys(sig for d in compiled for sig in d.overloads))

    def _specialise(self, key: tuple):
        """The Numba dispatcher compiling the function with the small extents of `key` as
        constants (extents.py)."""
        name = f"{self._pipeline.__name__}_{len(self._specialised)}"
        pipeline = type(name, (self._pipeline,), {"extents": key})
        compiled = numba.njit(self.py_func, parallel=True, pipeline_class=pipeline)
        self._specialised[key] = compiled
        return compiled

    def compile(self, argtypes: tuple):
        """Compile the function for these argument types (once)."""
        return self._numba.compile(tuple(argtypes))

    def _refuse(self, position: int, value) -> None:
        names = list(self._signature.parameters)
        name = names[position] if position < len(names) else f"#{position}"
        raise TypeError(
            f"@dk.offload function '{self.__name__}': argument '{name}' is a numpy.ndarray; "
            f"offloaded functions take USM arrays: pass dpnp.asarray({name}, device=...)"
        )

    def _check_types(self, args) -> None:
        for name, value in zip(self._signature.parameters, args):
            try:
                numba.typeof(value)
            except ValueError:
                raise TypeError(
                    f"@dk.offload function '{self.__name__}': argument '{name}' is a "
                    f"{type(value).__name__}, which compiled code cannot take; pass USM arrays "
                    f"(dpnp arrays, usm_ndarray), dpctl.SyclQueue and scalars"
                ) from None

    def _check_queues(self, args) -> None:
        placed = [
            (name, value)
            for name, value in zip(self._signature.parameters, args)
            if hasattr(type(value), "__sycl_usm_array_interface__")  # the instance's waits
        ]
        if len(placed) < 2:
            return
        first_name, first = placed[0]
        for name, value in placed[1:]:
            if value.sycl_queue != first.sycl_queue:
                raise ExecutionQueueError(
                    f"@dk.offload function '{self.__name__}': arguments '{first_name}' (on "
                    f"{first.sycl_device.filter_string}) and '{name}' (on "
                    f"{value.sycl_device.filter_string}) are on different queues; compute follows "
                    f"data, so put every array on one queue (dpnp.asarray(x, sycl_queue=...))"
                )

    def inspect_kernels(self) -> list[OffloadedKernel]:
        """Every kernel the compiled versions launch, with its SPIR-V and attributes."""
        found = []
        for regions in self.options.regions.values():
            for region, kernels in regions:
                for kernel in filter(None, kernels):
                    for sig, compiled in kernel.definitions.items():
                        found.append(
                            OffloadedKernel(
                                region.line,
                                region.kind,
                                kernel.__name__,
                                sig,
                                spirv_text(compiled.spirv),
                                compiled.attrs,
                                kernel,
                            )
                        )
        return found


@typeof_impl.register(OffloadDispatcher)
def _typeof_offloaded(value, context):
    """An offloaded function called from another is a call of its Numba dispatcher."""
    return types.Dispatcher(value._numba)


def _enclosing_prange(py_func, loc) -> int | None:
    """The line of the innermost prange loop of py_func's source around `loc`, or None
    (outside loops, or without source: the error is then Numba's own)."""
    if loc is None or loc.line is None:
        return None
    try:
        lines, first = inspect.getsourcelines(py_func)
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return None
    found = None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.For) and isinstance(node.iter, ast.Call)):
            continue
        callee = node.iter.func
        name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
        start, stop = node.lineno + first - 1, node.end_lineno + first - 1
        if name == "prange" and start <= loc.line <= stop and (found is None or start > found):
            found = start
    return found


def _first_lines(error) -> str:
    """Numba's message without its colour codes and pipeline header."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))
    kept = [line for line in text.splitlines() if line.strip() and "Failed in" not in line]
    return "\n".join(kept[:8])


def _signatures(signatures) -> list:
    if signatures is None:
        return []
    if isinstance(signatures, Signature):
        return [signatures]
    if isinstance(signatures, (list, tuple)) and all(isinstance(s, Signature) for s in signatures):
        return list(signatures)
    raise TypeError(
        f"@dk.offload takes a signature such as dk.void(t1, t2) or a list of them; "
        f"got {signatures!r}"
    )


def offload(function=None, /, signatures=None, *, fallback: str | None = None, cache: bool = False):
    """Compile a host function with Numba and run its parallel loops on the device of its data.

    Like ``@numba.njit``, but every ``numba.prange`` loop nest (1 to 3 levels) and every
    element-wise array expression over USM arrays becomes a kernel, launched in program order
    on the queue of the arrays it touches; the code between them runs on the host. Reductions
    in a prange body (``s += x``, ``s *= x``, ``min``, ``max`` into a scalar) are computed on
    the device. Each new tuple of argument types compiles once, and so does each new extent
    of at most 16 that inner loops run over (``range(a.shape[1])``), as a constant.

    Parameters
    ----------
    function : function, optional
        The function (bare form ``@dk.offload``), or its signatures (as `signatures`).
    signatures : Signature or list of Signature, optional
        Signatures (``dk.void(t1, t2, ...)``; only the argument types count) to compile at
        decoration time.
    fallback : {None, "host"}, default None
        ``"host"``: run a loop whose body cannot run on a device as a host loop, with an
        ``OffloadFallbackWarning``, instead of raising ``KernelCompileError``.
    cache : bool, default False
        Keep the loops' kernels in the disk cache, as ``@dk.kernel(cache=True)`` does.

    Returns
    -------
    OffloadDispatcher or callable
        The compiled function, called like the Python one (its ``inspect_kernels()`` lists the
        kernels it launches); with options or signatures only, a decorator making it.

    Raises
    ------
    ValueError
        If `fallback` is neither None nor ``"host"``.
    TypeError
        If a signature is not a ``dk.void(...)`` signature or the function's source cannot be
        read; when called, for a NumPy array or another argument compiled code cannot take.
    KernelCompileError
        When the function compiles, for a loop body that cannot run on a device (naming the
        loop's line), unless ``fallback="host"``.
    ExecutionQueueError
        When called with arrays on different queues or devices.

    Examples
    --------
    >>> import dpnp
    >>> from numba import prange
    >>> import dpex_kernels as dk
    >>> @dk.offload
    ... def axpy(alpha, x, y):
    ...     for i in prange(x.shape[0]):
    ...         y[i] += alpha * x[i]
    >>> x, y = dpnp.arange(4.0), dpnp.ones(4)
    >>> axpy(2.0, x, y)
    >>> dpnp.asnumpy(y)
    array([1., 3., 5., 7.])
    """
    if inspect.isfunction(function):
        return OffloadDispatcher(function, signatures, fallback=fallback, cache=cache)
    if fallback not in (None, "host"):
        raise ValueError(f"fallback must be None or 'host'; got {fallback!r}")
    if function is not None:
        signatures = function
    _signatures(signatures)

    def decorate(py_func) -> OffloadDispatcher:
        return OffloadDispatcher(py_func, signatures, fallback=fallback, cache=cache)

    return decorate


__all__ = ["OffloadDispatcher", "OffloadFallbackWarning", "OffloadedKernel", "offload"]
