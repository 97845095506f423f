"""numba-dpex's kernels on dk: `dpex.kernel`, `dpex.func`/`device_func`, and their launches.

One `dpex.kernel` serves numba-dpex 0.21 and 0.23 code: a kernel whose first parameter is the
work-item's item (0.23: `def k(item: kapi.Item, a)`) compiles with kernel_forms' item type,
one without (0.21: `dpex.get_global_id(0)`) as dk's kernels do. Launches wait for the kernel,
as numba-dpex's did: `kernel[global_size]`, `kernel[global_size, local_size]`,
`kernel[range]` (0.21) and `call_kernel(kernel, range, *args)` (0.23);
`call_kernel_async` returns 0.23's pair of events instead.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import dpctl
from numba.core import types
from numba.core.typing.templates import Signature

from ..compiler.functions import func as dk_func
from ..compiler.kernel_api.items import takes_item
from ..dispatcher.jit_kernel import JitKernel
from ..errors import ExecutionQueueError, InvalidRangeError
from ..types.kernel_objects import LocalAccessor as DkLocalAccessor
from ..types.ranges import NdRange as DkNdRange
from ..types.ranges import Range as DkRange
from ..types.usm_array_type import USMArrayType
from . import kernel_api as kapi
from .core.exceptions import ExecutionQueueInferenceError, InvalidKernelSpecializationError
from .core.types.kernel_api.index_space_ids import GroupType, IndexSpaceType, ItemType, NdItemType
from .kernel_forms import KAPI_GROUP, KAPI_ITEM

#: `kernel[global_size, DEFAULT_LOCAL_SIZE]`: no local size, the runtime picks work-groups.
DEFAULT_LOCAL_SIZE: list = []

#: numba-dpex options that have nothing to do here: dpex_kernels reuses what it compiled
#: (on-disk caching is dk's `cache=True`) and inlines device functions itself.
_IGNORED_OPTIONS = ("enable_cache", "inline_threshold")


def _dk_range(kernel_name: str, index_space: object) -> DkRange | DkNdRange:
    """The dk range a kernel_api (or dk) Range or NdRange stands for."""
    if isinstance(index_space, (DkRange, DkNdRange)):
        return index_space
    if isinstance(index_space, kapi.Range):
        return DkRange(*index_space)
    if isinstance(index_space, kapi.NdRange):
        return DkNdRange(DkRange(*index_space.global_range), DkRange(*index_space.local_range))
    raise InvalidRangeError(
        f"kernel '{kernel_name}' is launched over a Range or an NdRange; got {index_space!r} "
        f"of type {type(index_space).__name__}: pass dpex.Range(n) or dpex.NdRange(g, l)"
    )


def _reraised(error_class: type[Exception], error: Exception) -> Exception:
    """`error`'s message as an `error_class` of numba-dpex, whose constructor takes other
    arguments (BaseException.__new__ keeps the message without calling it)."""
    return error_class.__new__(error_class, *error.args)


def _launch_range(kernel_name: str, index) -> DkRange | DkNdRange:
    """What `kernel[index]` meant in numba-dpex 0.21, as a dk Range or NdRange.

    `kernel[g]` and `kernel[g, l]`, each size an int or a sequence of ints, `l` possibly
    DEFAULT_LOCAL_SIZE; so `kernel[a, b]` with two ints is global (a,) and local (b,).
    """
    if isinstance(index, (kapi.Range, kapi.NdRange, DkRange, DkNdRange)):
        return _dk_range(kernel_name, index)
    parts = list(index) if isinstance(index, (tuple, list)) else [index]
    if not 1 <= len(parts) <= 2:
        raise InvalidRangeError(
            f"a numba-dpex launch is kernel[global_size] or kernel[global_size, local_size]; "
            f"got kernel[{index!r}]: use dpex.Range(...) or dpex.NdRange(...) for 3 dimensions"
        )
    global_range = DkRange(*_sizes(parts[0]))
    if len(parts) == 1 or _sizes(parts[1]) == ():
        return global_range
    return DkNdRange(global_range, DkRange(*_sizes(parts[1])))


def _sizes(size) -> tuple:
    return tuple(size) if isinstance(size, (tuple, list)) else (size,)


def _annotated_item(py_func) -> bool:
    """Whether the first parameter is annotated as numba-dpex 0.23's Item or NdItem (a class,
    or its name where annotations are strings)."""
    parameters = list(inspect.signature(py_func).parameters.values())
    if not parameters:
        return False
    annotation = parameters[0].annotation
    if isinstance(annotation, str):
        return annotation.rsplit(".", 1)[-1] in ("Item", "NdItem")
    return annotation in (kapi.Item, kapi.NdItem)


def _launch_arguments(kernel_name: str, nd_range: bool, args: tuple) -> tuple:
    """The arguments as dk takes them: a kernel_api LocalAccessor as dk's (NdRange only)."""
    converted = []
    for position, value in enumerate(args):
        if isinstance(value, kapi.LocalAccessor):
            if not nd_range:
                raise TypeError(
                    f"kernel '{kernel_name}': argument {position} is a LocalAccessor, which "
                    f"only an NdRange launch has (work-groups share it): launch with "
                    f"dpex.NdRange(global_size, local_size)"
                )
            value = DkLocalAccessor(value.shape, value.dtype)
        converted.append(value)
    return tuple(converted)


class Kernel:
    """What `dpex.kernel` returns: a dk kernel launched with numba-dpex's forms, waiting.

    Whether the first parameter is the item is known from the declared signatures (an
    `ItemType`/`NdItemType` first, or one type fewer than parameters), the annotation
    (`item: kapi.Item`) or item methods called on it; failing those, at the first launch, by
    numba-dpex 0.23's rule: one parameter more than arguments.
    """

    def __init__(self, py_func, signatures: list | None, item: bool | None, options: dict):
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        self._signatures, self._item, self._options = signatures, item, options
        self._dk_kernel: JitKernel | None = None
        if signatures is not None or item is not None:
            self._kernel_for(None)  # declared signatures compile here, as numba-dpex's did

    @property
    def dk_kernel(self) -> JitKernel:
        """The dpex_kernels kernel: `k.dk_kernel[dk.Range(n)](...)` launches asynchronously."""
        return self._kernel_for(None)

    def _kernel_for(self, argument_count: int | None) -> JitKernel:
        """The dk kernel, made once it is known whether the item comes first."""
        if self._dk_kernel is None:
            item = self._item
            if item is None:
                parameters = len(inspect.signature(self.py_func).parameters)
                item = argument_count is not None and parameters == argument_count + 1
            self._dk_kernel = JitKernel(
                self.py_func,
                self._signatures,
                item_type=KAPI_ITEM if item else None,
                **self._options,
            )
        return self._dk_kernel

    def _submit(self, index_space, args: tuple, depends_on: Sequence = ()) -> dpctl.SyclEvent:
        """Submit the kernel over a Range or NdRange (kernel_api's or dk's); its event."""
        launch_range = _dk_range(self.__name__, index_space)
        kernel = self._kernel_for(len(args))
        args = _launch_arguments(self.__name__, isinstance(launch_range, DkNdRange), args)
        try:
            return kernel[launch_range](*args, depends_on=list(depends_on) or None)
        except ExecutionQueueError as exc:
            raise _reraised(ExecutionQueueInferenceError, exc) from None

    def __getitem__(self, index) -> _WaitingLaunch:
        return _WaitingLaunch(self, _launch_range(self.__name__, index))

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"kernel '{self.__name__}' needs a launch range: dpex.call_kernel({self.__name__}, "
            f"dpex.Range(n), ...) or {self.__name__}[n](...)"
        )

    def __getattr__(self, name: str):
        if name.startswith("_") or name == "dk_kernel":
            raise AttributeError(name)
        return getattr(self.dk_kernel, name)  # definitions, signatures, inspect_*, stats

    def __repr__(self) -> str:
        made = "not compiled yet" if self._dk_kernel is None else repr(self._dk_kernel)
        return f"<dpex.kernel {self.__name__} on {made}>"

    def __reduce__(self):
        return _restored, (self.dk_kernel,)


def _restored(dk_kernel: JitKernel) -> Kernel:
    """A pickled Kernel: its dk kernel, which pickles itself."""
    kernel = Kernel(dk_kernel.py_func, None, None, {})
    kernel._dk_kernel = dk_kernel
    return kernel


class _WaitingLaunch:
    """`kernel[range]` of numba-dpex 0.21: calling it runs the kernel and waits for it."""

    __slots__ = ("_kernel", "_range")

    def __init__(self, kernel: Kernel, launch_range: DkRange | DkNdRange):
        self._kernel, self._range = kernel, launch_range

    def __call__(self, *args) -> None:
        self._kernel._submit(self._range, args).wait()


def _as_kernel(kernel_fn, caller: str) -> Kernel:
    if isinstance(kernel_fn, Kernel):
        return kernel_fn
    raise TypeError(
        f"{caller} launches a @dpex.kernel; got {kernel_fn!r}: decorate it with @dpex.kernel, "
        f"or run a Python function with kernel_api.call_kernel"
    )


def call_kernel(kernel_fn: Kernel, index_space, *kernel_args) -> None:
    """numba-dpex 0.23's launch: compile for the arguments, run over `index_space` (a Range
    or an NdRange) and wait for the kernel."""
    _as_kernel(kernel_fn, "call_kernel")._submit(index_space, kernel_args).wait()


def call_kernel_async(
    kernel_fn: Kernel, index_space, dependent_events: Sequence[dpctl.SyclEvent], *kernel_args
) -> tuple[dpctl.SyclEvent, dpctl.SyclEvent]:
    """numba-dpex 0.23's asynchronous launch after `dependent_events`: (host event, kernel
    event), the host event completing once the kernel has, when its arguments may go."""
    kernel = _as_kernel(kernel_fn, "call_kernel_async")
    if not isinstance(dependent_events, (tuple, list)):
        raise TypeError(
            f"call_kernel_async({kernel.__name__}, ...) takes the events to wait for as a "
            f"tuple; got {type(dependent_events).__name__}: pass () for none"
        )
    event = kernel._submit(index_space, kernel_args, dependent_events)
    queue = next((arg.sycl_queue for arg in kernel_args if hasattr(arg, "sycl_queue")), None)
    if queue is None:  # numba-dpex needed an array argument; without one, wait here
        event.wait()
        return dpctl.SyclEvent(), event
    # A barrier without events waits for everything submitted to the queue before it: the
    # kernel ran on its arrays' queue (dpctl refuses dk's events as dependencies of one).
    return queue.submit_barrier(), event


# --- decorators -----------------------------------------------------------------------------


def _checked_argument(kernel_name: str, sig, position: int, argtype):
    if isinstance(argtype, types.Array) and not isinstance(argtype, USMArrayType):
        raise InvalidKernelSpecializationError(kernel_name, sig, [position])
    if isinstance(argtype, IndexSpaceType):
        raise TypeError(
            f"signature {sig} of kernel '{kernel_name}': an {argtype} is the first argument "
            f"type or none"
        )
    return argtype


def _kernel_signature(kernel_name: str, sig) -> tuple[Signature, bool]:
    """A numba-dpex kernel signature as dk's, and whether it had an item type first: a tuple
    of argument types means void(...); (ItemType(1), a, b) is an item kernel of (a, b)."""
    if isinstance(sig, str):
        raise TypeError(
            f"kernel '{kernel_name}': a signature is dpex.void(t1, t2, ...) or a tuple of "
            f"types, not the string {sig!r}"
        )
    argtypes = tuple(sig.args) if isinstance(sig, Signature) else tuple(sig)
    item = bool(argtypes) and isinstance(argtypes[0], (ItemType, NdItemType))
    argtypes = argtypes[1:] if item else argtypes
    checked = [_checked_argument(kernel_name, sig, i + item, t) for i, t in enumerate(argtypes)]
    if isinstance(sig, Signature):
        return Signature(sig.return_type, tuple(checked), sig.recvr, sig.pysig), item
    return types.void(*checked), item


def _device_signature(sig):
    """A device function signature with numba-dpex 0.23's index space types as kernel_forms'
    (ItemType(1) -> KAPI_ITEM): the one item type dk compiles for every rank."""

    def kapi_type(argtype):
        if isinstance(argtype, (ItemType, NdItemType)):
            return KAPI_ITEM
        return KAPI_GROUP if isinstance(argtype, GroupType) else argtype

    if isinstance(sig, Signature):
        return Signature(sig.return_type, tuple(map(kapi_type, sig.args)), sig.recvr, sig.pysig)
    if isinstance(sig, tuple):
        return tuple(map(kapi_type, sig))
    return sig


def _signature_list(func_or_sig) -> list | None:
    """None for a function (lazy), else the signatures numba-dpex accepted, as a list."""
    if isinstance(func_or_sig, list):
        return func_or_sig
    if isinstance(func_or_sig, (Signature, tuple, str)):
        return [func_or_sig]
    if not inspect.isfunction(func_or_sig):
        raise TypeError(
            f"@dpex.kernel and @dpex.func take a function, a signature or a list of "
            f"signatures; got {func_or_sig!r}"
        )
    return None


def _dk_options(options: dict) -> dict:
    return {k: v for k, v in options.items() if k not in _IGNORED_OPTIONS}


def kernel(func_or_sig=None, debug: bool = False, **options):
    """numba-dpex's @kernel, @kernel(sig), @kernel((argtypes...)), @kernel([sigs]).

    `enable_cache` and `inline_threshold` are accepted and have nothing to do (see
    _IGNORED_OPTIONS); dk's options (`cache`, `fastmath`, `opt_level`, `sub_group_size`)
    pass through, and `debug` is dk's bounds checking.
    """
    declared = None if func_or_sig is None else _signature_list(func_or_sig)
    dk_options = {"debug": debug, **_dk_options(options)}

    def decorate(py_func) -> Kernel:
        if declared is None:
            item = True if _annotated_item(py_func) or takes_item(py_func) else None
            return Kernel(py_func, None, item, dk_options)
        converted = [_kernel_signature(py_func.__name__, sig) for sig in declared]
        signatures = [sig for sig, _ in converted]
        parameters = len(inspect.signature(py_func).parameters)
        item = any(first for _, first in converted) or any(
            len(sig.args) == parameters - 1 for sig in signatures
        )
        return Kernel(py_func, signatures, item, dk_options)

    if func_or_sig is not None and declared is None:
        return decorate(func_or_sig)
    return decorate


def func(func_or_sig=None, debug: bool = False, **options):
    """numba-dpex's @func (0.21) and @device_func (0.23), with or without signatures: dk's
    own device function (index space types in signatures as kernel_forms')."""
    dk_options = {"debug": debug, **_dk_options(options)}
    if func_or_sig is None:
        return dk_func(**dk_options)
    signatures = _signature_list(func_or_sig)
    if signatures is None:
        return dk_func(func_or_sig, **dk_options)
    return dk_func([_device_signature(sig) for sig in signatures], **dk_options)


device_func = func

__all__ = [
    "DEFAULT_LOCAL_SIZE",
    "Kernel",
    "call_kernel",
    "call_kernel_async",
    "device_func",
    "func",
    "kernel",
]
