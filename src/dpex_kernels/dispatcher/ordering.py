"""Ordering with dpnp at a cost that does not grow with the backlog (docs/launcher.md).

dpnp orders its work through dpctl's SequentialOrderManager: before each operation it reads
`SequentialOrderManager[q].submitted_events` and waits on all of them, after it registers its own
events with `add_event_pair`. Taking all pending events as dependencies of every launch, and
registering every launch, costs O(pending) per launch. Instead, per queue:

- each launch depends on our previous launch on that queue (launches run in program order, as
  they did when each one depended on everything pending), plus the manager's events only when
  someone else registered work since (`dirty`);
- our newest launch is handed to the manager only when someone is about to read it
  (`publish`): it covers the earlier launches, which are chained.

Both need to know when the manager is used, so the manager's Python methods are wrapped: this
is the one place that touches dpctl's private `_SequentialOrderManager`, checked against the
dpctl version it was written for.
"""

from __future__ import annotations

import dpctl
from dpctl.utils import SequentialOrderManager, _order_manager

from ._native import launcher

#: The dpctl releases whose _SequentialOrderManager this module was checked against.
DPCTL_VERSIONS = ("0.22.",)

_Manager = _order_manager._SequentialOrderManager


def _check_version() -> None:
    if not dpctl.__version__.startswith(DPCTL_VERSIONS):
        raise ImportError(
            f"dpex_kernels orders launches with dpnp through dpctl's SequentialOrderManager as "
            f"of dpctl {', '.join(v + 'x' for v in DPCTL_VERSIONS)}; dpctl {dpctl.__version__} "
            f"is installed. Install a supported dpctl (pip install 'dpctl>=0.22.1,<0.23')."
        )
    for name in ("submitted_events", "add_event_pair", "wait", "host_task_events"):
        if not hasattr(_Manager, name):
            raise ImportError(
                f"dpctl's _SequentialOrderManager has no {name}; see docs/launcher.md"
            )


def _publishing(read):
    """A manager property or method that first hands the manager our newest launch."""

    def wrapped(self, *args, **kwargs):
        order = self.__dict__.get("_dpex_order")
        if order is not None:
            order.publish()
        return read(self, *args, **kwargs)

    wrapped.__wrapped__ = read
    return wrapped


def _registering(register):
    """add_event_pair: someone else's work, so our next launch depends on the manager."""

    def wrapped(self, *args, **kwargs):
        order = self.__dict__.get("_dpex_order")
        if order is not None:
            order.dirty = 1
        return register(self, *args, **kwargs)

    wrapped.__wrapped__ = register
    return wrapped


def _install() -> None:
    if getattr(_Manager, "_dpex_kernels_hooked", False):
        return
    for name in ("submitted_events", "host_task_events", "num_submitted_events"):
        prop = getattr(_Manager, name)
        setattr(_Manager, name, property(_publishing(prop.fget), doc=prop.__doc__))
    _Manager.wait = _publishing(_Manager.wait)
    _Manager.__copy__ = _publishing(_Manager.__copy__)
    _Manager.add_event_pair = _registering(_Manager.add_event_pair)
    _Manager._dpex_kernels_hooked = True


_check_version()
_install()


def order_of(queue: dpctl.SyclQueue) -> launcher.QueueOrder:
    """The ordering state of `queue`, shared with dpnp through its SequentialOrderManager."""
    manager = SequentialOrderManager[queue]
    order = manager.__dict__.get("_dpex_order")
    if order is None:
        context = queue.sycl_context
        order = launcher.QueueOrder(
            manager._state, context, context.addressof_ref(), queue.has_enable_profiling
        )
        order.dirty = 1  # dpnp may have queued work before our first launch
        manager._dpex_order = order
    return order


__all__ = ["order_of"]
