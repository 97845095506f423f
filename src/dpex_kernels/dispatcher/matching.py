"""Arguments -> the definition a launch uses, and the errors when there is none.

Runs on a launcher's slow path only (the first call of a tuple of argument types); the rules
themselves are types/spec.py's, shared with the AOT runtime.
"""

from __future__ import annotations

from .._runtime import device_label
from ..errors import ExecutionQueueError
from ..types.arguments import (
    MalformedInterfaceError,
    is_native_array,
    not_passable_message,
    read_usm_array,
    usm_view,
)
from ..types.kernel_objects import LocalAccessor
from ..types.spec import ArraySpec, LocalAccessorSpec, first_difference, scalar_name_of
from ._native import launcher

#: launcher.array_key -> USMArgument: reading a dpnp array's attributes costs ~6 us, and a
#: rejected call (KernelSignatureError) comes here every time.
_read: dict = {}


def _read_argument(value):
    key = launcher.array_key(value)
    if key is None:
        return read_usm_array(value)
    found = _read.get(key)
    if found is None:
        found = _read[key] = read_usm_array(value)
    return found


def read_arguments(kernel, args: tuple) -> tuple[tuple, tuple, object]:
    """(arguments the launcher can read, ArraySpec or None per argument, the arrays' queue)."""
    native = list(args)
    specs = []
    queues = []
    for position, value in enumerate(args):
        name = f"kernel '{kernel.__name__}' argument {position} '{kernel.param_names[position]}'"
        if isinstance(value, LocalAccessor):
            specs.append(LocalAccessorSpec(value.dtype.name, value.ndim))
            continue
        try:
            usm = _read_argument(value)
        except MalformedInterfaceError as exc:
            raise TypeError(f"{name}: a {type(value).__name__} cannot be passed: {exc}") from None
        except TypeError as exc:
            raise TypeError(f"{name}: {exc}") from None
        if usm is None:
            if scalar_name_of(value) is None:
                raise TypeError(f"{name}: {not_passable_message(value)}")
            specs.append(None)
            continue
        if not is_native_array(value):
            native[position] = usm_view(value)
        specs.append(usm.spec)
        queues.append((position, usm))
    queue = queues[0][1].queue if queues else None
    if any(u.queue != queue for _, u in queues):
        raise _mixed_queues(kernel, queues)
    return tuple(native), tuple(specs), queue


def _mixed_queues(kernel, queues) -> ExecutionQueueError:
    """Compute follows data: arrays on different queues leave no place to run."""
    described = ", ".join(
        f"'{kernel.param_names[i]}' on {device_label(u.queue.sycl_device)} (queue {id(u.queue):#x})"
        for i, u in queues
    )
    return ExecutionQueueError(
        f"kernel '{kernel.__name__}' got USM arrays on different SYCL queues: {described}. "
        f"Compute follows data: copy them to one queue first (x.to_device(y.sycl_queue))"
    )


def match(definitions: dict, args: tuple, arg_specs: tuple) -> tuple[object, bool]:
    """(the first definition the arguments fit or None, whether a Python int's value decided).

    A launch's Binding is remembered per argument *types*; when an earlier definition was passed
    over only because of an int's value (5 fits int32, 2**40 does not), the choice cannot be.
    """
    value_dependent = False
    for compiled in definitions.values():
        found = first_difference(compiled.params, args, arg_specs)
        if found is None:
            return compiled, value_dependent
        position, field = found
        param = compiled.params[position]
        if field == "dtype" and not isinstance(param, ArraySpec) and type(args[position]) is int:
            value_dependent = True
    return None, value_dependent


__all__ = ["match", "read_arguments"]
