"""Waiting for a launch's event so that Ctrl-C interrupts the wait (issue 36).

dpctl's `SyclEvent.wait()` blocks inside the SYCL runtime with the GIL released; Python runs
its signal handlers only once it returns, so Ctrl-C during a long kernel arrived when the
kernel ended. The events launches return (a dpctl.SyclEvent subclass, _launcher.c) wait here:
an event already complete returns at once; one that completes within SPIN_S (a short kernel)
is polled for in Python, which a signal interrupts too; any other is waited for by a daemon
thread while this thread blocks on a lock, which Python interrupts for a signal at once.
Starting that thread costs about 40 us, which a launch-and-wait loop of short kernels would
pay on every wait.
"""

from __future__ import annotations

import threading
import time

import dpctl

_COMPLETE = dpctl.event_status_type.complete
#: How long a wait polls the event before it hands the wait to a thread: short, as the
#: polling thread takes a core the kernel could use.
SPIN_S = 200e-6


def wait(event: dpctl.SyclEvent) -> None:
    """Wait for `event`'s command to complete; Ctrl-C (KeyboardInterrupt) interrupts it."""
    deadline = time.perf_counter() + SPIN_S
    while event.execution_status != _COMPLETE:
        if time.perf_counter() > deadline:
            _wait_in_a_thread(event)
            return


def _wait_in_a_thread(event: dpctl.SyclEvent) -> None:
    done = threading.Event()

    def blocking_wait() -> None:
        try:
            dpctl.SyclEvent.wait(event)
        finally:
            done.set()

    # A daemon: a wait given up by Ctrl-C does not keep the interpreter from exiting.
    threading.Thread(target=blocking_wait, name="dpex_kernels-wait", daemon=True).start()
    done.wait()
