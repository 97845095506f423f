"""kernel.simulate[range](*args): one launch run by the simulator, from arguments to event.

The arguments are checked as the device would check them (device_check.py), USM arrays are
copied to the host and written back afterwards where the kernel changed them, NumPy arrays are
used in place, and the work-groups run one after another (scheduler.py). An exception in a
work-item stops the launch and is raised with its traceback into the kernel and a note naming
the work-item.
"""

from __future__ import annotations

import os
import warnings

import dpctl
import numpy as np

from ..errors import InvalidRangeError, KernelBoundsError, KernelRaceError, KernelSignatureError
from ..types.arguments import array_spec_of, usm_view
from . import device_check
from .builtins import Table, add_kernel_api, as_dtype, device_scalar
from .geometry import Geometry
from .mathlib import simulated_function
from .memory import Memory, SimArray
from .races import Checker
from .scheduler import Scheduler, call_site
from .sycl2020 import Item, NdItem, add_sycl2020, is_local_accessor

RACE_MODES = ("error", "warn", "off")
#: Sub-groups of this many work-items, unless the kernel asks for a size (sub_group_size=).
SUB_GROUP_SIZE = 8
#: A simulated launch of more work-items than this warns with its expected time.
WARN_WORK_ITEMS = 200_000
#: Work-items a second the expected time assumes: a short kernel such as a vecadd
#: (benchmarks/simulator.py measures it; loops and barriers make it slower).
EXPECTED_RATE = 60_000


class SimulationSizeWarning(UserWarning):
    """A simulated launch so large that it will take long; the message says about how long."""


class Simulation:
    """kernel.simulate: launches of one kernel in the simulator (`[range](*args)`), and its
    options: `kernel.simulate(races="warn")[range](*args)`."""

    def __init__(self, kernel, races: str | None = None, device_check: bool = True):
        races = races or os.environ.get("DPEX_KERNELS_SIMULATE_RACES") or "error"
        if races not in RACE_MODES:
            raise ValueError(f"races must be one of {RACE_MODES}; got {races!r}")
        self.kernel = kernel
        self.races = races
        self.device_check = bool(device_check)

    def __call__(self, *, races: str | None = None, device_check: bool = True) -> Simulation:
        return Simulation(self.kernel, races, device_check)

    def __getitem__(self, launch_range) -> SimulatedLaunch:
        return SimulatedLaunch(self, launch_range)


class SimulatedLaunch:
    """kernel.simulate[range]: call it with the kernel's arguments."""

    def __init__(self, simulation: Simulation, launch_range):
        self.simulation = simulation
        size = simulation.kernel.options.get("sub_group_size") or SUB_GROUP_SIZE
        self.geometry = Geometry(launch_range, size)

    def __call__(self, *args, depends_on=None) -> dpctl.SyclEvent:
        kernel = self.simulation.kernel
        nparams = len(kernel.param_names)
        takes_item = len(args) == nparams - 1 and nparams > 0
        if len(args) != nparams and not takes_item:
            raise TypeError(
                f"{kernel.__name__}() takes {nparams} positional argument(s) but {len(args)} "
                f"were given"
            )
        if depends_on is not None:
            events = depends_on if isinstance(depends_on, (list, tuple)) else [depends_on]
            dpctl.SyclEvent.wait_for(list(events))
        unchecked = takes_item or any(is_local_accessor(a) for a in args)
        if self.simulation.device_check and not unchecked:
            params = device_check.device_params(kernel, args)
        else:
            params = device_check.lazy_params(args)
        if self.geometry.total == 0:
            return dpctl.SyclEvent()
        _check_group_size(kernel, self.geometry)
        if self.geometry.total > WARN_WORK_ITEMS:
            seconds = self.geometry.total / EXPECTED_RATE
            warnings.warn(
                SimulationSizeWarning(
                    f"simulating {self.geometry.total} work-items of kernel '{kernel.__name__}' "
                    f"takes about {seconds:.0f} s or more (some {EXPECTED_RATE} work-items a "
                    f"second for a short kernel); a smaller range finds the same bugs sooner"
                ),
                stacklevel=2,
            )
        Launch(self.simulation, self.geometry, takes_item).run(args, params)
        return dpctl.SyclEvent()


def _check_group_size(kernel, geometry: Geometry) -> None:
    from .._runtime import default_device

    limit = default_device().max_work_group_size
    if geometry.group_size > limit:
        raise InvalidRangeError(
            f"kernel '{kernel.__name__}': work-group of {geometry.group_size} work-items "
            f"({geometry.range!r}) exceeds the device's max_work_group_size {limit}"
        )


class Launch:
    """One simulated launch: its table of kernel calls, its memory and its scheduler."""

    def __init__(self, simulation: Simulation, geometry: Geometry, takes_item: bool):
        kernel = simulation.kernel
        self.kernel = kernel
        self.geometry = geometry
        self.takes_item = takes_item
        self.checker = Checker(
            simulation.races, kernel.__name__, geometry.ndim, geometry.group_size
        )
        self.functions: dict = {}
        self.entry = self.function(kernel.py_func)
        self.code = kernel.py_func.__code__
        self.scheduler: Scheduler | None = None
        self.table = Table()
        add_kernel_api(self.table, self)
        add_sycl2020(self.table, self)

    # --- what the table's implementations use ------------------------------------------

    def function(self, py_func):
        """The Python function of a kernel or device function, as this launch runs it."""
        found = self.functions.get(py_func)
        if found is None:
            found = self.functions[py_func] = simulated_function(py_func)
        return found

    def sync(self, item, scope, what: str, value=None, combine=None):
        """Meet the rest of `scope` at the barrier or collective being called."""
        key, where = call_site(self.code)
        return self.scheduler.meet(item, scope, (what, key), what, where, value, combine)

    def new_array(self, shape: tuple, dtype: np.dtype, space: str, name=None) -> SimArray:
        memory = Memory(name, space, self.checker, shape=shape)
        return SimArray(np.zeros(shape, dtype), memory)

    # --- the run -------------------------------------------------------------------------

    def run(self, args: tuple, params: tuple) -> None:
        names = self.kernel.param_names[1:] if self.takes_item else self.kernel.param_names
        shared, write_back, per_group = [], [], []
        for position, (name, value, param) in enumerate(zip(names, args, params)):
            if is_local_accessor(value):
                per_group.append((position, name, value))
                shared.append(None)
            elif isinstance(value, np.ndarray):
                memory = Memory(name, "global", self.checker, value.flags.writeable, value.shape)
                shared.append(SimArray(value, memory))
            elif array_spec_of(value) is not None:
                host, original, usm = _host_copy(value)
                memory = Memory(name, "global", self.checker, usm.flags.writable, host.shape)
                shared.append(SimArray(host, memory))
                write_back.append((usm, host, original))
            else:
                shared.append(_scalar(value, param))

        def arguments(group) -> tuple:
            values = list(shared)
            for position, name, accessor in per_group:
                shape = accessor.shape if isinstance(accessor.shape, tuple) else (accessor.shape,)
                values[position] = self.new_array(shape, as_dtype(accessor.dtype), "local", name)
            return tuple(values)

        self.scheduler = Scheduler(
            self.geometry.groups(arguments),
            self._body,
            self.table,
            self._describe,
            self.geometry.ndim,
        )
        try:
            self.scheduler.run()
        finally:
            for usm, host, original in write_back:
                if host.tobytes() != original:
                    usm[...] = host

    def _body(self, item) -> None:
        if self.takes_item:
            kind = NdItem if self.geometry.nd_range else Item
            self.entry(kind(item, self.geometry), *item.group.args)
        else:
            self.entry(*item.group.args)

    def _describe(self, exc: BaseException, item) -> BaseException:
        """The exception as the launch raises it: traceback from the kernel, work-item named."""
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_globals.get("__name__", "").startswith(
            "dpex_kernels.simulator"
        ):
            tb = tb.tb_next
        if tb is not None:
            exc.__traceback__ = tb
        ours = (KernelRaceError, KernelBoundsError, KernelSignatureError)
        if not isinstance(exc, ours) and hasattr(exc, "add_note"):
            exc.add_note(
                f"raised in {item.describe(self.geometry.ndim)} of kernel "
                f"'{self.kernel.__name__}' (simulated)"
            )
        return exc


def _host_copy(value):
    """(host copy, its bytes as they were, the usm_ndarray to write back to) of a USM array."""
    import dpnp.tensor

    usm = value.get_array() if hasattr(value, "get_array") else value
    if not isinstance(usm, dpnp.tensor.usm_ndarray):
        usm = usm_view(value)
    host = dpnp.tensor.asnumpy(usm)
    return host, host.tobytes(), usm


def _scalar(value, param):
    """A scalar argument as the device receives it: the declared or inferred type."""
    if isinstance(param, str):
        return np.dtype(param).type(value)
    return device_scalar(value)
