"""Launch overhead (per launch, µs) and argument-mismatch rejection time."""

from __future__ import annotations

from collections.abc import Callable

import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader

# isort: split
import dpctl
import numpy as np

from .. import device
from ..config import Config
from ..opencl_peer import OpenCL
from ..results import EAGER, LAZY, OCL, RAW, RAW_KA, Row, skipped_row, time_row
from ..timing import interleave, measure

ARRAY_LEN = 64
KERNEL_OF_NARGS = {3: "vecadd", 10: "add10"}


def case_name(items: int, mode: str, nargs: int) -> str:
    """The launch case label."""
    return f"{items:>2} wi {mode:<5} {nargs:>2} args"


def _async_loop(launch: Callable[[], object], drain: Callable[[], object]):
    def run(count: int) -> None:
        for _ in range(count):
            launch()
        drain()

    return run


def _sync_loop(launch: Callable[[], object]):
    def run(count: int) -> None:
        for _ in range(count):
            launch().wait()

    return run


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:160]


def _dk_launchers(name: str, items: int, arrays: tuple, queue: dpctl.SyclQueue) -> dict:
    """dk eager and lazy launchers (lazy compiled by one call first), or why they cannot run."""
    if not device.dispatcher_available():
        return {EAGER: device.NO_DISPATCHER, LAZY: device.NO_DISPATCHER}
    out: dict = {}
    rng = dk.Range(items)
    for impl, mode in ((EAGER, "eager"), (LAZY, "lazy")):
        try:
            kernel = device.jit_kernel(name, np.dtype("float32"), mode)
            kernel[rng](*arrays).wait()
            out[impl] = (lambda k=kernel: k[rng](*arrays), queue.wait)
            out[impl + " kernel"] = kernel
        except Exception as exc:
            out[impl] = _reason(exc)
    return out


def _launchers(name: str, items: int, queue: dpctl.SyclQueue, ocl: OpenCL | None, notes: dict):
    """impl -> (launch, drain) for one kernel and range, or impl -> skip reason."""
    dtype = np.dtype("float32")
    nargs = len(device.argtypes(name, dtype))
    host = [np.full(ARRAY_LEN, k, dtype) for k in range(nargs)]
    arrays = tuple(device.device_array(h, queue) for h in host)
    out = _dk_launchers(name, items, arrays, queue)
    eager = out.pop(EAGER + " kernel", None)
    out.pop(LAZY + " kernel", None)
    # The very SyclKernel the eager kernel launches; the compiler's own without a dispatcher.
    sycl_kernel = device.sycl_kernel_of(eager) if eager else device.compile_raw(name, dtype, queue)
    flat = device.flatten(arrays, device.argtypes(name, dtype))
    gsize = [items]

    def raw_keep_alive():
        event = queue.submit_async(sycl_kernel, flat, gsize)
        queue._submit_keep_args_alive(arrays, [event])
        return event

    out = {
        RAW: (lambda: queue.submit_async(sycl_kernel, flat, gsize), queue.wait),
        RAW_KA: (raw_keep_alive, queue.wait),
        **out,
    }
    if ocl is None:
        out[OCL] = notes["opencl"]
    else:
        knl = ocl.kernel(name, dtype)
        buffers = [ocl.buffer(h) for h in host]
        knl.set_args(*buffers)
        out[OCL] = (
            lambda keep=buffers: ocl.cl.enqueue_nd_range_kernel(ocl.queue, knl, (items,), None),
            ocl.queue.finish,
        )
    return out


def _time_case(
    case: str, mode: str, count: int, launchers: dict, cfg: Config, params: dict
) -> list[Row]:
    """Warm each launcher up, then time them in turns: one sample each per round."""
    loops, skipped = {}, {}
    for impl, entry in launchers.items():
        if isinstance(entry, str):
            skipped[impl] = entry
            continue
        launch, drain = entry
        loop = _async_loop(launch, drain) if mode == "async" else _sync_loop(launch)
        try:
            loop(max(count // 10, 10))  # warm-up
        except Exception as exc:
            skipped[impl] = _reason(exc)
            continue
        loops[impl] = lambda loop=loop: loop(count)
    stats, errors = interleave(loops, cfg.launch_repeat, cfg.launch_repeat, per=count, rewarm=False)
    skipped.update(errors)
    return [
        time_row("launch", case, impl, stats[impl], "us", **params)
        if impl in stats
        else skipped_row("launch", case, impl, "us", skipped[impl], **params)
        for impl in launchers
    ]


def run_launch(cfg: Config, queue: dpctl.SyclQueue, ocl: OpenCL | None, notes: dict) -> list[Row]:
    """Per-launch time of every implementation, 1 and 64 work-items, sync and async, 3/10 args.

    A sample is `launches` launches then one wait (async) or launch-and-wait pairs (sync).
    """
    rows = []
    for nargs, name in KERNEL_OF_NARGS.items():
        for items in (1, ARRAY_LEN):
            launchers = _launchers(name, items, queue, ocl, notes)
            for mode in ("async", "sync"):
                count = cfg.launches if mode == "async" else cfg.sync_launches
                params = {"items": items, "mode": mode, "nargs": nargs, "launches": count}
                case = case_name(items, mode, nargs)
                rows += _time_case(case, mode, count, launchers, cfg, params)
    return rows


def run_reject(cfg: Config, queue: dpctl.SyclQueue) -> list[Row]:
    """Time to reject a call whose arguments match no declared signature."""
    case = "float64 arrays into a float32 kernel"
    if not device.dispatcher_available():
        return [skipped_row("reject", case, EAGER, "us", device.NO_DISPATCHER)]
    kernel = device.jit_kernel("vecadd", np.dtype("float32"), "eager")
    wrong = [device.device_array(np.zeros(ARRAY_LEN), queue) for _ in range(3)]
    rng = dk.Range(ARRAY_LEN)

    def reject(count: int) -> None:
        for _ in range(count):
            try:
                kernel[rng](*wrong)
            except dk.KernelSignatureError:
                pass
            else:
                raise RuntimeError("a float32 kernel accepted float64 arrays")

    reject(10)
    stats = measure(lambda: reject(cfg.reject_calls), 0, cfg.launch_repeat, cfg.reject_calls)
    return [time_row("reject", case, EAGER, stats, "us", calls=cfg.reject_calls)]
