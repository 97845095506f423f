"""Waiting for a launch's event so that Ctrl-C interrupts the wait (issue 36).

dpctl's `SyclEvent.wait()` blocks inside the SYCL runtime with the GIL released; Python runs
its signal handlers only once it returns, so Ctrl-C during a long kernel arrived when the
kernel ended. The events launches return (a dpctl.SyclEvent subclass, _launcher.c) wait here:
an event already complete returns at once, any other is waited for by a daemon thread while
this thread blocks on a lock, which Python interrupts for a signal at once.
"""

from __future__ import annotations

import threading

import dpctl

_COMPLETE = dpctl.event_status_type.complete


def wait(event: dpctl.SyclEvent) -> None:
    """Wait for `event`'s command to complete; Ctrl-C (KeyboardInterrupt) interrupts it."""
    if event.execution_status == _COMPLETE:
        return
    done = threading.Event()

    def blocking_wait() -> None:
        try:
            dpctl.SyclEvent.wait(event)
        finally:
            done.set()

    # A daemon: a wait given up by Ctrl-C does not keep the interpreter from exiting.
    threading.Thread(target=blocking_wait, name="dpex_kernels-wait", daemon=True).start()
    done.wait()
