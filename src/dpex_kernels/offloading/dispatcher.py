"""@dk.offload: a host function compiled with Numba whose loops and array expressions run on
the device (docs/offload.md).

Per tuple of argument types the outliner (outline.py) rewrites the function's syntax tree into
a host function that launches one kernel per region, and Numba compiles that with @njit; the
region kernels compile while Numba types it (kernels.py). A function that is only prange
nests with plain bounds needs no host compile: its host function runs as Python, each launch
through the kernel's own dispatcher, as from any Python code. A region that cannot run on a device
is a KernelCompileError naming its line, or with fallback="host" the version is rebuilt with
that loop left as a sequential host loop, and a warning says so.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import threading
import warnings
from dataclasses import dataclass

import numba
import numpy as np
from numba.core import types
from numba.core.typing.templates import Signature

from ..compiler.patches import collector_paused
from ..dispatcher._native import launcher
from ..dispatcher.inspection import spirv_text
from ..errors import ExecutionQueueError
from . import host
from .kernels import recording_failures
from .outline import Outliner

_array_key = launcher.array_key


class OffloadFallbackWarning(UserWarning):
    """A loop of a ``dk.offload(fallback="host")`` function runs on the host, not the device.

    Issued once per loop as the function compiles; the message names the loop's line and why
    its body cannot run on a device. Turn it into an error with
    ``warnings.simplefilter("error", dk.OffloadFallbackWarning)`` to find such loops.

    Examples
    --------
    >>> import warnings
    >>> import dpnp
    >>> import numpy as np
    >>> from numba import prange
    >>> import dpex_kernels as dk
    >>> @dk.offload(fallback="host")
    ... def noisy(a):
    ...     for i in prange(a.shape[0]):
    ...         a[i] = i + 0.0 * np.random.random()  # no random numbers on a device
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     noisy(dpnp.zeros(4))
    >>> caught[0].category is dk.OffloadFallbackWarning
    True
    """


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


class _Version:
    """The host function and region kernels for one tuple of argument types."""

    def __init__(self, compiled, regions, host_lines, direct: bool):
        self.compiled = compiled  # the @njit host function, or the Python one where direct
        self.regions = regions
        self.host_lines = host_lines
        self.direct = direct


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
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        self.fallback = fallback
        self.cache = bool(cache)  # the kernels' disk cache (docs/cache.md), not the host function's
        self._signature = inspect.signature(py_func)
        kinds = {p.kind for p in self._signature.parameters.values()}
        if kinds - {inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD}:
            raise TypeError(
                f"@dk.offload function '{py_func.__name__}': *args, **kwargs and keyword-only "
                f"parameters are not supported; list every parameter by name"
            )
        self._tree = _function_tree(py_func)
        self._versions: dict[tuple, _Version] = {}
        self._by_key: dict[tuple, _Version] = {}  # the same versions, by what calls pass
        self._lock = threading.RLock()
        for sig in _signatures(signatures):
            self.compile(tuple(sig.args))

    def __repr__(self) -> str:
        return f"<dk.offload {self.__name__} ({len(self._versions)} signature(s))>"

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != len(self._signature.parameters):
            bound = self._signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        # What decides the version, read in C: an array's type and queue, a scalar's class.
        key = tuple([_array_key(v) or type(v) for v in args])
        version = self._by_key.get(key)
        if version is None:
            argtypes = tuple(
                self._typeof(name, value) for name, value in zip(self._signature.parameters, args)
            )
            self._check_queues(args)
            version = self._versions.get(argtypes) or self.compile(argtypes)
            self._by_key[key] = version
        return version.compiled(*args)

    @property
    def signatures(self) -> list:
        """The argument-type tuples compiled so far."""
        return list(self._versions)

    def compile(self, argtypes: tuple) -> _Version:
        """Outline and compile the function for these argument types (once)."""
        argtypes = tuple(argtypes)
        with self._lock:
            found = self._versions.get(argtypes)
            if found is not None:
                return found
            host_lines: frozenset = frozenset()
            while True:
                with collector_paused():  # the host function's Numba compile, as a kernel's
                    version = self._build(argtypes, host_lines)
                    failure = self._try(version, argtypes)
                if failure is None:
                    self._versions[argtypes] = version
                    return version
                region, error = failure
                if self.fallback != "host" or "prange" not in region.kind:
                    raise error
                warnings.warn(
                    f"{error}\nThe loop runs on the host instead (fallback='host').",
                    OffloadFallbackWarning,
                    stacklevel=3,
                )
                host_lines = host_lines | {region.line}

    def _build(self, argtypes, host_lines) -> _Version:
        outline = Outliner(self.py_func, self._tree, argtypes, host_lines, self.cache).outline()
        namespace = {**self.py_func.__globals__, **outline.namespace}
        closure = self.py_func.__code__.co_freevars
        for name, cell in zip(closure, self.py_func.__closure__ or ()):
            namespace[name] = cell.cell_contents
        module = ast.fix_missing_locations(ast.Module(body=[outline.tree], type_ignores=[]))
        if outline.direct:
            namespace["_dk_trip"] = host.trip_count.py_func
        scope: dict = {}
        exec(compile(module, self.py_func.__code__.co_filename, "exec"), namespace, scope)  # noqa: S102
        function = scope[self.py_func.__name__]
        compiled = function if outline.direct else numba.njit(function)
        return _Version(compiled, outline.regions, host_lines, outline.direct)

    def _try(self, version: _Version, argtypes):
        """Compile the host function; None, or (region, KernelCompileError) of a failed region."""
        with recording_failures() as failures:
            try:
                if version.direct:
                    for region in version.regions:
                        for kernel in region.kernels:
                            kernel.compile(types.void(*region.launch_types))
                else:
                    version.compiled.compile(argtypes)
            except Exception:
                if not failures:
                    raise
                kernel, error = failures[0]
                region = next(r for r in version.regions if kernel in r.kernels + r.shared)
                return region, error
        return None

    def _typeof(self, name: str, value):
        if isinstance(value, np.ndarray):
            raise TypeError(
                f"@dk.offload function '{self.__name__}': argument '{name}' is a numpy.ndarray; "
                f"offloaded functions take USM arrays: pass dpnp.asarray({name}, device=...)"
            )
        try:
            return numba.typeof(value)
        except ValueError:
            raise TypeError(
                f"@dk.offload function '{self.__name__}': argument '{name}' is a "
                f"{type(value).__name__}, which compiled code cannot take; pass USM arrays "
                f"(dpnp arrays, usm_ndarray) and scalars"
            ) from None

    def _check_queues(self, args) -> None:
        placed = [
            (name, value)
            for name, value in zip(self._signature.parameters, args)
            if hasattr(value, "__sycl_usm_array_interface__")
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
        for version in self._versions.values():
            for region in version.regions:
                for kernel, sig, compiled in region.definitions():
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


def _function_tree(py_func) -> ast.FunctionDef:
    """The function's own `def`, at its lines in its file."""
    try:
        lines, first = inspect.getsourcelines(py_func)
    except (OSError, TypeError) as exc:
        raise TypeError(
            f"@dk.offload needs the source of '{py_func.__qualname__}' (a function defined in a "
            f"file, not typed at an interactive prompt without one)"
        ) from exc
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    function = tree.body[0]
    if not isinstance(function, ast.FunctionDef):
        raise TypeError(f"@dk.offload decorates a plain def; got {type(function).__name__}")
    return function


def offload(function=None, /, signatures=None, *, fallback: str | None = None, cache: bool = False):
    """Compile a host function with Numba and run its parallel loops on the device of its data.

    Like ``@numba.njit``, but every ``numba.prange`` loop nest (1 to 3 levels) and every
    element-wise array expression over USM arrays becomes a kernel, launched in program order
    on the queue of the arrays it touches; the code between them runs on the host. Reductions
    in a prange body (``s += x``, ``s *= x``, ``min``, ``max`` into a scalar) are computed on
    the device. Each new tuple of argument types compiles once.

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
