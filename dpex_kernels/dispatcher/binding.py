"""The numba-free launch path shared by JitKernel and AOT bundles.

Argument reading -> launch plan (one per argument fingerprint, decided once) -> submit.
Nothing here imports Numba or llvmlite, so a bundle of SPIR-V launches with dpctl alone.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

import dpctl

from .._runtime import device_by_canonical_name
from ..device import KernelAttributes, build_kernel
from ..errors import KernelSignatureError
from ..types.arguments import _READERS, not_passable_message, reader_for, spec_of_fingerprint
from ..types.spec import explain_mismatch, first_difference, scalar_name_of
from .launch import (
    CONTIGUOUS,
    STRIDED,
    LaunchRange,
    ScalarMismatch,
    check_local_size,
    mixed_queues_error,
    normalise_depends_on,
    order_keeper_of,
    packing_plan,
    submit,
    submit_checked,
)

_UNSEEN = object()


def _needed_aspects(llvm_ir: str) -> tuple[str, ...]:
    return ("fp64",) if " double" in llvm_ir else ()


_UNSEEN = object()


class CompiledKernel:
    """One signature's compiled kernel: its artefacts and its SyclKernel on the device."""

    def __init__(self, signature, device: str, artifacts, params: tuple, on_new_variant=None):
        self.signature = signature
        self.device = device
        self.artifacts = artifacts
        self.params = params
        self._on_new_variant = on_new_variant
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
        if not built and self._on_new_variant is not None:
            self._on_new_variant(self.artifacts)
        return build_kernel(spirv, self.artifacts.symbol, queue, _needed_aspects(llvm_ir))

    def __repr__(self) -> str:
        return f"<CompiledKernel {self.artifacts.name} {self.signature} on {self.device}>"


@dataclass
class KernelStats:
    """What happened to one kernel in this process."""

    compiles: int = 0
    cache_hits: int = 0
    cache_misses: int = 0


class LaunchPlan:
    """Everything a launch needs for one argument fingerprint, decided once."""

    __slots__ = (
        "checked",
        "compiled",
        "contiguous_arrays_only",
        "fast",
        "last",
        "max_work_group_size",
        "modes",
        "packers",
    )

    def __init__(self, compiled: CompiledKernel):
        self.compiled = compiled
        self.modes, self.packers = packing_plan(compiled.params)
        self.contiguous_arrays_only = all(mode is CONTIGUOUS for mode in self.modes)
        self.checked = compiled.artifacts.error_flag
        self.fast = self.contiguous_arrays_only and not self.checked  # Launcher<N>'s case
        self.max_work_group_size = compiled.attrs.max_work_group_size
        self.last = (None, 0, None, None)  # (queue, ndim, SyclKernel, order keeper), replaced whole

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

    def refresh(self, queue, ndim: int):
        """(SyclKernel, order keeper) for a new queue or dimension count, remembered."""
        sycl_kernel = self.compiled.kernel_for(queue, ndim)
        keeper = order_keeper_of(queue)
        self.last = (queue, ndim, sycl_kernel, keeper)
        return sycl_kernel, keeper


class KernelBase:
    """What every launchable kernel has: definitions, matching and kernel[range].

    JitKernel adds compilation; the AOT runtime's bundled kernels only load definitions.
    """

    def __init__(self, name: str, param_names: tuple[str, ...]):
        self.__name__ = name
        self.param_names = tuple(param_names)
        self.nparams = len(self.param_names)
        self.definitions: dict = {}
        self.stats = KernelStats()
        self._plans: dict[tuple, LaunchPlan] = {}
        self._launchers: dict = {}
        self._lock = threading.RLock()

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"kernel '{self.__name__}' needs a launch range: call it as "
            f"{self.__name__}[dk.Range(n)](...) or {self.__name__}[dk.NdRange(g, l)](...)"
        )

    @property
    def signatures(self) -> list:
        return list(self.definitions)

    def _compile_for(self, args, arg_specs) -> CompiledKernel | None:
        """A new definition for arguments no definition matches; None refuses the call."""
        return None

    # --- launching ----------------------------------------------------------------------

    def __getitem__(self, launch_range) -> Launcher:
        try:
            launcher = self._launchers.get(launch_range)
        except TypeError:  # unhashable: validate below, never cached
            launcher = None
        if launcher is None:
            launcher = launcher_class(self.nparams)(self, LaunchRange(launch_range))
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
            compiled = self._match(args, arg_specs) or self._compile_for(args, arg_specs)
            if compiled is None:
                raise KernelSignatureError(
                    explain_mismatch(
                        self.__name__,
                        self.param_names,
                        [(c.params, str(sig)) for sig, c in self.definitions.items()],
                        args,
                        arg_specs,
                    )
                )
            plan = LaunchPlan(compiled)
            if cache:
                self._plans[key] = plan
            return plan

    def _match(self, args, arg_specs) -> CompiledKernel | None:
        for compiled in self.definitions.values():
            if first_difference(compiled.params, args, arg_specs) is None:
                return compiled
        return None


class Launcher:
    """kernel[range]: validated once; calling it launches. The hot path of the package."""

    __slots__ = ("global_size", "kernel", "launch_range", "local_size", "local_total", "ndim")

    def __init__(self, kernel: KernelBase, launch_range: LaunchRange):
        self.kernel = kernel
        self.launch_range = launch_range
        self.global_size = launch_range.global_size
        self.local_size = launch_range.local_size
        self.local_total = launch_range.local_total
        self.ndim = 0 if launch_range.empty else launch_range.ndim

    def __call__(self, *args, depends_on=None):
        return self.launch(args, depends_on)

    def launch(self, args: tuple, depends_on=None):
        """Every launch can take this path; arity-specific launchers take it off the fast path."""
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
        last_queue, last_ndim, sycl_kernel, keeper = plan.last
        if queue is not last_queue or self.ndim != last_ndim:
            sycl_kernel, keeper = plan.refresh(queue, self.ndim)
        if plan.checked:
            return submit_checked(
                queue,
                keeper,
                sycl_kernel,
                flat,
                self.launch_range,
                depends_on,
                args,
                plan.compiled.artifacts,
            )
        return submit(
            queue, keeper, sycl_kernel, flat, self.global_size, self.local_size, depends_on, args
        )


# Triton's binder, in Python: for each arity a Launcher subclass whose __call__ takes the
# arguments by name and handles the common case (USM arrays on one queue, a known plan with
# "C"/"F" parameters, no depends_on) in straight-line code, about 0.6 us faster than the
# loop in Launcher.launch, which every other case falls back to.
_FAST_CALL = """
def __call__(self, *args, depends_on=None):
    if len(args) != {count}:
        return self.launch(args, depends_on)  # raises the kernel's own count error
    {params}, = args
    try:
        {reads}
    except (KeyError, TypeError):  # an unseen type, a scalar (no reader) or a bad array
        return self.launch(({params},), depends_on)
    queue = u0.queue
    plan = self.kernel._plans.get(({keys},))
    if (
        {other_queues}
        or plan is None
        or not plan.fast
        or depends_on is not None
        or self.local_total > plan.max_work_group_size
    ):
        return self.launch(({params},), depends_on)
    last_queue, ndim, sycl_kernel, keeper = plan.last
    if last_queue is not queue or ndim != self.ndim:
        return self.launch(({params},), depends_on)
    return submit(
        queue, keeper, sycl_kernel, [{packed}], self.global_size, self.local_size, None,
        ({params},),
    )
"""
_launcher_classes: dict[int, type] = {0: Launcher}


def launcher_class(nparams: int) -> type:
    """The Launcher subclass with a fast __call__ for kernels of `nparams` parameters."""
    found = _launcher_classes.get(nparams)
    if found is None:
        names = [f"p{i}" for i in range(nparams)]
        source = _FAST_CALL.format(
            params=", ".join(names),
            count=nparams,
            reads="\n        ".join(f"u{i} = _READERS[type(p{i})](p{i})" for i in range(nparams)),
            keys=", ".join(f"u{i}.key" for i in range(nparams)),
            other_queues=" or ".join(
                [f"u{i}.queue is not queue" for i in range(1, nparams)] or ["False"]
            ),
            packed=", ".join(f"*u{i}.packed" for i in range(nparams)),
        )
        namespace = {"_READERS": _READERS, "submit": submit}
        exec(compile(source, f"<dpex_kernels launcher/{nparams}>", "exec"), namespace)
        found = type(
            f"Launcher{nparams}",
            (Launcher,),
            {
                "__slots__": (),
                "__call__": namespace["__call__"],
            },
        )
        _launcher_classes[nparams] = found
    return found
