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
    """A kernel: compiled per signature (eagerly when declared), launched with kernel[range]."""

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
        """Compile one more signature (or return the existing definition)."""
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
        """kernel.simulate[range](*args): one launch run in Python by the simulator (API.md §10)."""
        from ..simulator import Simulation

        return Simulation(self)

    def inspect_llvm(self, sig=None):
        """The optimised LLVM IR of one signature, or {sig: ir} for all."""
        return self._inspect(sig, lambda c: c.artifacts.llvm_ir)

    def inspect_spirv(self, sig=None):
        """The SPIR-V of one signature (disassembled where spirv-dis exists), or all."""
        from .inspection import spirv_text

        return self._inspect(sig, lambda c: spirv_text(c.artifacts.spirv))

    def inspect_types(self, sig=None):
        """Numba's typed annotation of the source for one signature, or all."""
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
    """@dk.kernel (lazy) or @dk.kernel(sig | [sigs]) (eager: compiled right here)."""
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
