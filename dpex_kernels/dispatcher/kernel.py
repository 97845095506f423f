"""JitKernel, what @dk.kernel returns: definitions per signature, matching, inspection, pickling."""

from __future__ import annotations

import contextlib
import inspect
import threading
from dataclasses import dataclass

import cloudpickle
import dpctl
from numba.core import types
from numba.core.typing.templates import Signature

from .. import cache
from .._runtime import default_device, device_by_canonical_name
from ..compiler.compile import KernelArtifacts, compile_kernel
from ..device import KernelAttributes, build_kernel
from ..errors import KernelSignatureError
from ..types.arguments import _READERS, reader_for, spec_of_fingerprint
from ..types.spec import ArraySpec, explain_mismatch, first_difference, scalar_name_of
from ..types.typeof import not_passable_message
from ..types.usm_array import USMArrayType, from_spec, scalar_from_name
from .launch import (
    CONTIGUOUS,
    STRIDED,
    LaunchRange,
    ScalarMismatch,
    check_local_size,
    mixed_queues_error,
    normalise_depends_on,
    packing_plan,
    submit,
    submit_checked,
)


def _param_spec(argtype: types.Type) -> ArraySpec | str:
    if isinstance(argtype, USMArrayType):
        return argtype.spec
    return str(argtype)


def _needed_aspects(llvm_ir: str) -> tuple[str, ...]:
    return ("fp64",) if " double" in llvm_ir else ()


_UNSEEN = object()


class CompiledKernel:
    """One signature's compiled kernel: its artefacts and its SyclKernel on the device."""

    def __init__(self, signature: Signature, device: str, artifacts: KernelArtifacts,
                 cache_key: str | None = None):
        self.signature = signature
        self.cache_key = cache_key
        self.device = device
        self.artifacts = artifacts
        self.params = tuple(_param_spec(t) for t in artifacts.argtypes)
        self._queue = dpctl.SyclQueue(device_by_canonical_name(device))
        self.sycl_kernel = self.kernel_for(self._queue, artifacts.default_ndim)
        self.attrs = KernelAttributes.of(self.sycl_kernel)

    @property
    def spirv(self) -> bytes:
        return self.artifacts.spirv

    @property
    def llvm_ir(self) -> str:
        return self.artifacts.llvm_ir

    def kernel_for(self, queue: dpctl.SyclQueue, ndim: int):
        """The SyclKernel for `queue`'s context and `ndim`-dimensional launches (built once)."""
        built = self.artifacts.has_variant(ndim)
        llvm_ir, spirv = self.artifacts.variant(ndim)
        if not built and self.cache_key is not None:
            cache.store(self.cache_key, self.artifacts)  # keep the new variant too
        return build_kernel(spirv, self.artifacts.symbol, queue, _needed_aspects(llvm_ir))

    def __repr__(self) -> str:
        return f"<CompiledKernel {self.artifacts.name}{self.signature.args} on {self.device}>"


@dataclass
class KernelStats:
    """What happened to one kernel in this process."""

    compiles: int = 0
    cache_hits: int = 0
    cache_misses: int = 0


class LaunchPlan:
    """Everything a launch needs for one argument fingerprint, decided once."""

    __slots__ = ("checked", "compiled", "contiguous_arrays_only", "last", "modes", "packers")

    def __init__(self, compiled: CompiledKernel):
        self.compiled = compiled
        self.modes, self.packers = packing_plan(compiled.params)
        self.contiguous_arrays_only = all(mode is CONTIGUOUS for mode in self.modes)
        self.checked = compiled.artifacts.error_flag
        self.last = (None, 0, None)  # (queue, ndim, SyclKernel), replaced whole

    def flatten(self, args, usm_args) -> list:
        """The kernel arguments, in the order lowering.flattening() describes."""
        flat = []
        for mode, value, usm, pack in zip(self.modes, args, usm_args, self.packers):
            if mode is CONTIGUOUS:
                flat += usm.packed
            elif mode is STRIDED:
                flat += usm.packed_strided
            else:
                pack(flat, value)
        return flat

    def kernel_for(self, queue, ndim: int):
        last_queue, last_ndim, sycl_kernel = self.last
        if queue is not last_queue or ndim != last_ndim:
            sycl_kernel = self.compiled.kernel_for(queue, ndim)
            self.last = (queue, ndim, sycl_kernel)
        return sycl_kernel


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


def _device_of(argtypes) -> str:
    devices = {t.device for t in argtypes if isinstance(t, USMArrayType)}
    if len(devices) > 1:
        raise TypeError(
            f"all usm_array parameters of a kernel must name one device; got {sorted(devices)}"
        )
    return devices.pop() if devices else default_device().filter_string


class JitKernel:
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
    ):
        if not callable(py_func) or not hasattr(py_func, "__code__"):
            raise TypeError(f"@dk.kernel decorates a Python function; got {py_func!r}")
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        self.options = {
            "cache": bool(cache),
            "fastmath": bool(fastmath),
            "opt_level": int(opt_level),
            "debug": bool(debug),
        }
        self.param_names = tuple(inspect.signature(py_func).parameters)
        self.nparams = len(self.param_names)
        self.definitions: dict[Signature, CompiledKernel] = {}
        self.stats = KernelStats()
        self._plans: dict[tuple, LaunchPlan] = {}
        self._launchers: dict = {}
        self._lock = threading.RLock()
        self._eager = signatures is not None
        if self._eager:
            for sig in _normalise_signatures(signatures):
                self.compile(sig)

    def __repr__(self) -> str:
        kind = "eager" if self._eager else "lazy"
        return f"<dk.kernel {self.__name__} ({kind}, {len(self.definitions)} signature(s))>"

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"kernel '{self.__name__}' needs a launch range: call it as "
            f"{self.__name__}[dk.Range(n)](...) or {self.__name__}[dk.NdRange(g, l)](...)"
        )

    @property
    def signatures(self) -> list[Signature]:
        return list(self.definitions)

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
            key = artifacts = None
            if self.options["cache"]:
                key = cache.entry_key(self.py_func, argtypes, self.options)
                artifacts = cache.load(key)
                if artifacts is None:
                    self.stats.cache_misses += 1
                else:
                    self.stats.cache_hits += 1
            if artifacts is None:
                artifacts = compile_kernel(
                    self.py_func,
                    argtypes,
                    fastmath=self.options["fastmath"],
                    opt_level=self.options["opt_level"],
                    debug=self.options["debug"],
                )
                self.stats.compiles += 1
                if key is not None:
                    cache.store(key, artifacts)
            compiled = CompiledKernel(sig, _device_of(argtypes), artifacts, key)
            self.definitions[sig] = compiled
            return compiled

    # --- launching ----------------------------------------------------------------------

    def __getitem__(self, launch_range) -> Launcher:
        try:
            launcher = self._launchers.get(launch_range)
        except TypeError:  # unhashable: validate below, never cached
            launcher = None
        if launcher is None:
            launcher = Launcher(self, LaunchRange(launch_range))
            if len(self._launchers) > 256:
                self._launchers.clear()
            with contextlib.suppress(TypeError):  # unhashable ranges are not remembered
                self._launchers[launch_range] = launcher
        return launcher

    def _plan_for(self, args, usm_args, key, cache: bool = True) -> LaunchPlan:
        """The slow path: match (or compile, if lazy) for these arguments, remember the plan."""
        with self._lock:
            plan = self._plans.get(key) if cache else None
            if plan is not None:
                return plan
            arg_specs = tuple(
                None if u is None else spec_of_fingerprint(u.fingerprint) for u in usm_args
            )
            for position, (value, spec) in enumerate(zip(args, arg_specs)):
                if spec is None and scalar_name_of(value) is None:
                    raise TypeError(
                        f"kernel '{self.__name__}' argument {position} "
                        f"'{self.param_names[position]}': {not_passable_message(value)}"
                    )
            compiled = self._match(args, arg_specs)
            if compiled is None:
                if self._eager:
                    raise KernelSignatureError(
                        explain_mismatch(
                            self.__name__,
                            self.param_names,
                            [(c.params, str(sig)) for sig, c in self.definitions.items()],
                            args,
                            arg_specs,
                        )
                    )
                argtypes = tuple(
                    from_spec(spec) if spec is not None else scalar_from_name(scalar_name_of(v))
                    for v, spec in zip(args, arg_specs)
                )
                compiled = self.compile(types.void(*argtypes))
            plan = LaunchPlan(compiled)
            if cache:
                self._plans[key] = plan
            return plan

    def _match(self, args, arg_specs) -> CompiledKernel | None:
        for compiled in self.definitions.values():
            if first_difference(compiled.params, args, arg_specs) is None:
                return compiled
        return None

    # --- inspection ---------------------------------------------------------------------

    def _inspect(self, sig, read):
        if sig is None:
            return {s: read(c) for s, c in self.definitions.items()}
        (sig,) = _normalise_signatures(sig)
        if sig not in self.definitions:
            raise KeyError(f"kernel '{self.__name__}' has no definition for {sig}")
        return read(self.definitions[sig])

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
            "eager": self._eager,
            "definitions": [(sig, c.artifacts) for sig, c in self.definitions.items()],
        }
        return _unpickle_kernel, (payload,)


def _unpickle_kernel(payload) -> JitKernel:
    kernel = JitKernel(cloudpickle.loads(payload["py_func"]), None, **payload["options"])
    kernel._eager = payload["eager"]
    for sig, artifacts in payload["definitions"]:
        kernel.definitions[sig] = CompiledKernel(sig, _device_of(sig.args), artifacts)
    return kernel


class Launcher:
    """kernel[range]: validated once; calling it launches. The hot path of the package."""

    __slots__ = ("global_size", "kernel", "launch_range", "local_size", "ndim")

    def __init__(self, kernel: JitKernel, launch_range: LaunchRange):
        self.kernel = kernel
        self.launch_range = launch_range
        self.global_size = launch_range.global_size
        self.local_size = launch_range.local_size
        self.ndim = 0 if launch_range.empty else launch_range.ndim

    def __call__(self, *args, depends_on=None):
        kernel = self.kernel
        if len(args) != kernel.nparams:
            raise TypeError(
                f"{kernel.__name__}() takes {kernel.nparams} positional argument(s) "
                f"but {len(args)} were given"
            )
        usm_args = []
        key = []
        flat = []  # right as it stands when every parameter is a "C"/"F" array
        queue = None
        for value in args:
            reader = _READERS.get(type(value), _UNSEEN)
            if reader is _UNSEEN:
                reader = reader_for(type(value))
            if reader is None:
                usm_args.append(None)
                key.append(type(value))
                continue
            usm = reader(value)
            usm_args.append(usm)
            key.append(usm.key)
            flat += usm.packed
            if queue is None:
                queue = usm.queue
            elif usm.queue is not queue and usm.queue != queue:
                raise mixed_queues_error(kernel.__name__, kernel.param_names, usm_args)
        key = tuple(key)
        plan = kernel._plans.get(key)
        if plan is None:
            plan = kernel._plan_for(args, usm_args, key)
        if not plan.contiguous_arrays_only:
            try:
                flat = plan.flatten(args, usm_args)
            except ScalarMismatch:
                plan = kernel._plan_for(args, usm_args, key, cache=False)
                flat = plan.flatten(args, usm_args)
        if self.local_size is not None:
            check_local_size(self.launch_range, plan.compiled.attrs, kernel.__name__)
        if depends_on is not None:
            depends_on = normalise_depends_on(depends_on)
        if not self.ndim:
            return dpctl.SyclEvent()  # a zero-sized range: nothing to run
        if queue is None:
            queue = plan.compiled._queue
        sycl_kernel = plan.kernel_for(queue, self.ndim)
        if plan.checked:
            return submit_checked(
                queue, sycl_kernel, flat, self.launch_range, depends_on, args,
                plan.compiled.artifacts,
            )
        return submit(queue, sycl_kernel, flat, self.global_size, self.local_size, depends_on,
                      args)
