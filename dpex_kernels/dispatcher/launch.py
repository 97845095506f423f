"""The launch path: pack arguments, order after dpnp's work, submit_async, keep arguments alive.

Everything that can be decided once per (kernel, argument fingerprint) lives in a LaunchPlan;
a launch reads the arguments, looks the plan up in a dict and submits.
"""

from __future__ import annotations

import atexit
import ctypes
import threading
from collections import deque

import dpctl
import numpy as np
from dpctl.enum_types import event_status_type
from dpctl.utils import SequentialOrderManager

from ..errors import ERROR_RECORD_BYTES, ExecutionQueueError, InvalidRangeError, launch_error
from ..types.ranges import NdRange, Range, as_launch_range
from ..types.spec import scalar_matches

_CTYPES = {
    "bool": ctypes.c_uint8,
    "int8": ctypes.c_char,
    "uint8": ctypes.c_uint8,
    "int16": ctypes.c_short,
    "uint16": ctypes.c_ushort,
    "int32": ctypes.c_int,
    "uint32": ctypes.c_uint,
    "int64": ctypes.c_longlong,
    "uint64": ctypes.c_ulonglong,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
}


class ScalarMismatch(Exception):
    """A scalar's value does not fit the plan chosen by its Python type; re-match slowly."""


_COMPLETE = event_status_type.complete


class InFlight:
    """Keeps each launch's arguments alive until its event completes.

    Cheaper than a host task per launch: every 8th launch releases the completed launches at
    the front, and at interpreter exit everything still running is waited for.
    """

    def __init__(self) -> None:
        self._entries: deque = deque()
        self._lock = threading.Lock()
        self._added = 0
        atexit.register(self.wait_all)

    def add(self, event: dpctl.SyclEvent, payload: object) -> None:
        self._entries.append((event, payload))
        self._added += 1
        if not self._added & 7:
            self.release_completed()

    def release_completed(self) -> None:
        entries = self._entries
        with self._lock:
            for _ in range(16):
                if entries and entries[0][0].execution_status == _COMPLETE:
                    entries.popleft()
                else:
                    break

    def wait_all(self) -> None:
        with self._lock:
            entries, self._entries = self._entries, deque()
        for event, _ in entries:
            event.wait()


in_flight = InFlight()


def _pack_scalar(name: str):
    if name.startswith("complex"):
        part = ctypes.c_float if name == "complex64" else ctypes.c_double

        def pack(flat, value):
            if not scalar_matches(name, value) and not isinstance(value, (int, float, complex)):
                raise ScalarMismatch
            value = complex(value)
            flat.append(part(value.real))
            flat.append(part(value.imag))

        return pack
    ctype = _CTYPES[name]
    if name == "int8":

        def pack(flat, value):
            if not scalar_matches(name, value):
                raise ScalarMismatch
            flat.append(ctype(int(value) & 0xFF))  # c_char is dpctl's int8

        return pack

    def pack(flat, value):
        if not scalar_matches(name, value):
            raise ScalarMismatch
        flat.append(ctype(value.item() if isinstance(value, np.generic) else value))

    return pack


CONTIGUOUS = "contiguous"  # a "C"/"F" array parameter: data, offset, shape
STRIDED = "strided"  # an "A" array parameter: data, offset, shape, strides
SCALAR = "scalar"


def packing_plan(params) -> tuple[tuple, tuple]:
    """(mode per parameter, scalar packer per parameter or None), for LaunchPlan.flatten."""
    from ..types.spec import ArraySpec

    modes = tuple(
        (STRIDED if p.layout == "A" else CONTIGUOUS) if isinstance(p, ArraySpec) else SCALAR
        for p in params
    )
    packers = tuple(None if isinstance(p, ArraySpec) else _pack_scalar(p) for p in params)
    return modes, packers


def normalise_depends_on(depends_on) -> list:
    """A list of SyclEvents from None, one event or a sequence of events."""
    if depends_on is None:
        return []
    if isinstance(depends_on, dpctl.SyclEvent):
        return [depends_on]
    if isinstance(depends_on, (list, tuple)):
        for event in depends_on:
            if not isinstance(event, dpctl.SyclEvent):
                raise TypeError(
                    f"depends_on must hold dpctl.SyclEvent objects; got {type(event).__name__}"
                )
        return list(depends_on)
    raise TypeError(
        f"depends_on must be a dpctl.SyclEvent or a sequence of them; got "
        f"{type(depends_on).__name__}"
    )


class LaunchRange:
    """A validated launch range in the lists submit_async takes."""

    __slots__ = ("empty", "global_size", "local_size", "local_total", "ndim", "value")

    def __init__(self, value) -> None:
        launch_range = as_launch_range(value)
        self.value = launch_range
        if isinstance(launch_range, NdRange):
            self.global_size = list(launch_range.global_range)
            self.local_size = list(launch_range.local_range)
            total = 1
            for n in self.local_size:
                total *= n
            self.local_total = total
        else:
            assert isinstance(launch_range, Range)
            self.global_size = list(launch_range)
            self.local_size = None
            self.local_total = 0
        self.ndim = len(self.global_size)
        self.empty = any(n == 0 for n in self.global_size)


def check_local_size(launch_range: LaunchRange, attrs, kernel_name: str) -> None:
    """The local range must fit the compiled kernel's max work-group size."""
    if launch_range.local_total > attrs.max_work_group_size:
        raise InvalidRangeError(
            f"kernel '{kernel_name}': work-group of {launch_range.local_total} work-items "
            f"({launch_range.value.local_range!r}) exceeds the kernel's max_work_group_size "
            f"{attrs.max_work_group_size} on this device"
        )


def mixed_queues_error(kernel_name: str, param_names, usm_args) -> ExecutionQueueError:
    """Compute follows data: arrays on different queues leave no place to run."""
    described = ", ".join(
        f"'{param_names[i]}' on {u.queue.sycl_device.filter_string} (queue {id(u.queue):#x})"
        for i, u in enumerate(usm_args)
        if u is not None
    )
    return ExecutionQueueError(
        f"kernel '{kernel_name}' got USM arrays on different SYCL queues: {described}. "
        f"Compute follows data: copy them to one queue first (x.to_device(y.sycl_queue))"
    )


def order_keeper_of(queue):
    """The C++ order keeper behind dpctl's SequentialOrderManager[queue].

    Called directly (`_state`): the public wrapper's property and type checks cost about a
    microsecond per launch. dpctl is pinned below 0.23 for this. Launch plans cache it.
    """
    return SequentialOrderManager[queue]._state


def submit(queue, keeper, sycl_kernel, flat, global_size, local_size, depends_on, keep_alive):
    """Order after dpnp's pending work and `depends_on`, submit, register, keep alive.

    `keeper` is order_keeper_of(queue), looked up once per launch plan and queue.
    """
    dependencies = keeper.get_submitted_events()
    if depends_on:
        dependencies = dependencies + depends_on
    event = queue.submit_async(sycl_kernel, flat, global_size, local_size, dependencies)
    keeper.add_to_submitted_events(event)
    in_flight.add(event, (keep_alive, flat))
    return event


def submit_checked(
    queue, keeper, sycl_kernel, flat, launch_range, depends_on, keep_alive, artifacts
):
    """Debug mode: pass an error flag, wait, and raise what a work-item raised."""
    import dpctl.memory as dpmem

    flag = dpmem.MemoryUSMShared(ERROR_RECORD_BYTES, queue=queue)
    flag.memset(0)
    event = submit(
        queue,
        keeper,
        sycl_kernel,
        [*flat, flag],
        launch_range.global_size,
        launch_range.local_size,
        depends_on,
        keep_alive,
    )
    event.wait()
    error = launch_error(artifacts.name, artifacts.exceptions, flag.copy_to_host().tobytes())
    if error is not None:
        raise error
    return event
