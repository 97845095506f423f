"""Launch overhead (µs per launch) at a backlog of pending launches, and rejection time.

A sample, per implementation: a gate (one work-item busy for a while: `spin` in kernels.py),
then the backlog (launches that wait behind the gate), then a timed burst of launches while the
gate still runs, then a drain. docs/benchmarks.md explains the design.
"""

from __future__ import annotations

import ctypes
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader

# isort: split
import dpctl
import dpctl.memory as dpmem
import dpctl.program
import numpy as np
from dpctl.utils import SequentialOrderManager

from .. import device
from ..config import Config
from ..kernels import OPENCL_HEADER, OPENCL_KERNELS
from ..opencl_peer import OpenCL
from ..results import EAGER, LAZY, NJIT, OCL, PY_LOOP, RAW, SOM, Row, skipped_row, time_row
from ..timing import interleave, measure, summarise

ARRAY_LEN = 64
FLOAT32 = np.dtype("float32")
#: case label -> (kernel, scalar arguments after the arrays)
KERNELS = {
    "3 arrays": ("vecadd", ()),
    "10 arrays": ("add10", ()),
    "2 arrays 2 scalars": ("axpb", (np.float32(2.0), np.float32(1.0))),
}
#: (case label, mode): async at every backlog; launch + wait with nothing pending (the gate
#: takes one of the two cores, and a waiting launch then waits for a time slice: ~5 ms)
CASES = (
    ("3 arrays", "async"),
    ("10 arrays", "async"),
    ("2 arrays 2 scalars", "async"),
    ("3 arrays", "sync"),
)
#: the old ordering is shown once, with short bursts behind a backlog: at 1 000 pending it
#: costs milliseconds per launch
SOM_CASES = ("3 arrays",)
SOM_BURST = 20
#: launches timed together within a burst (one call of the @njit loop makes a whole chunk)
CHUNK = 25
#: the cases that also launch from a loop in @numba.njit code (API.md §2)
NJIT_CASES = ("3 arrays",)
#: a sample whose gate ended before its burst did is taken again with a longer gate
GATE_TRIES = 6
#: a gate lasts this many times the fill and burst of the sample before (it is opened as soon
#: as the burst ends, so a long one costs nothing)
GATE_MARGIN = 4.0
COMPLETE = dpctl.event_status_type.complete


def case_name(label: str, mode: str, backlog: int) -> str:
    """The launch case label."""
    return f"{label:<18} {mode:<5} backlog {backlog:>4}"


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:160]


class SyclGate:
    """Submits `spin` on the benchmark queue: an event that stays pending for about `seconds`,
    or until `open()`."""

    def __init__(self, queue: dpctl.SyclQueue):
        source = OPENCL_HEADER + OPENCL_KERNELS["spin"]
        self.queue = queue
        self.kernel = dpctl.program.create_program_from_source(queue, source).get_sycl_kernel(
            "spin"
        )
        self.out = dpmem.MemoryUSMDevice(4, queue=queue)
        self.out.memset(0)
        self.flag_memory = dpmem.MemoryUSMShared(4, queue=queue)
        self.flag = np.frombuffer(self.flag_memory, dtype=np.int32)
        self.flag[0] = 0
        self.steps_per_s = self._calibrate()

    def _run(self, steps: int):
        self.flag[0] = 0
        args = [self.out, ctypes.c_int64(steps), self.flag_memory]
        return self.queue.submit_async(self.kernel, args, [1])

    def _calibrate(self) -> float:
        self._run(10_000).wait()
        started = time.perf_counter()
        self._run(20_000_000).wait()
        return 20_000_000 / (time.perf_counter() - started)

    def __call__(self, seconds: float):
        return self._run(int(seconds * self.steps_per_s))

    def open(self) -> None:
        """Ends the gate now (the drain then waits only for what queued behind it)."""
        self.flag[0] = 1

    def drain(self) -> None:
        self.queue.wait()


class OpenCLGate:
    """The same gate on pyopencl's in-order queue: everything enqueued after it waits."""

    def __init__(self, ocl: OpenCL, steps_per_s: float):
        self.ocl, self.steps_per_s = ocl, steps_per_s
        self.kernel = ocl.kernel("spin", FLOAT32)
        self.out = ocl.buffer(np.zeros(1, FLOAT32))
        # host memory the kernel reads in place (zero-copy wants 64-byte alignment)
        raw = np.zeros(128, np.uint8)
        start = -raw.ctypes.data % 64
        self.flag = raw[start : start + 64].view(np.int32)
        mf = ocl.cl.mem_flags
        self.flag_buffer = ocl.cl.Buffer(
            ocl.context, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=self.flag
        )

    def __call__(self, seconds: float):
        self.flag[0] = 0
        self.kernel.set_args(self.out, np.int64(seconds * self.steps_per_s), self.flag_buffer)
        return self.ocl.cl.enqueue_nd_range_kernel(self.ocl.queue, self.kernel, (1,), None)

    def open(self) -> None:
        """Ends the gate now, where the runtime reads the host's memory in place."""
        self.flag[0] = 1

    def drain(self) -> None:
        self.ocl.queue.finish()


def _sycl_pending(event) -> bool:
    return event.execution_status != COMPLETE


@dataclass
class Impl:
    """One implementation of one case: how it launches, alone and behind a backlog.

    `fill(gate, n)` submits n launches, the first after `gate`, each after the one before, and
    returns their events. `behind(gate)`: the launch timed behind that backlog, which must wait
    too (no timed kernel runs during a burst, so none takes the core the host thread needs):
    dk, SOM per launch and OpenCL C (in-order queue) do by themselves; raw continues the chain,
    passing its previous event as its one dependency, as dk's launch does.
    `burst_cap`: fewer timed launches behind a backlog, for a launch that costs milliseconds.
    """

    launch: Callable[[], object]
    behind: Callable[[object], Callable[[], object]]
    fill: Callable[[object, int], list]
    gate: SyclGate | OpenCLGate
    pending: Callable[[object], bool] = _sycl_pending
    burst_cap: int | None = None
    #: a loop in compiled code: `many(n)` makes n launches in one call (one per timed chunk)
    many: Callable[[int], object] | None = None


def _dk_kernels(name: str, launch_args: tuple) -> dict:
    """dk eager and lazy kernels (each run once: lazy compiles then), or why they cannot run."""
    if not device.dispatcher_available():
        return {EAGER: device.NO_DISPATCHER, LAZY: device.NO_DISPATCHER}
    out: dict = {}
    rng = dk.Range(ARRAY_LEN)
    for impl, mode in ((EAGER, "eager"), (LAZY, "lazy")):
        try:
            kernel = device.jit_kernel(name, FLOAT32, mode)
            kernel[rng](*launch_args).wait()
            out[impl] = kernel
        except Exception as exc:
            out[impl] = _reason(exc)
    return out


def njit_burst(kernel):
    """A @numba.njit function making `count` launches of `kernel` (3 arrays, 64 work-items)."""
    import numba

    @numba.njit
    def burst(a, b, c, count):
        event = kernel[ARRAY_LEN](a, b, c)
        for _ in range(count - 1):
            event = kernel[ARRAY_LEN](a, b, c)
        return event

    return burst


def som_launcher(queue: dpctl.SyclQueue, sycl_kernel, flat: list, gsize: list):
    """The old design, for contrast: every launch depends on all of dpctl's pending events."""

    def launch():
        manager = SequentialOrderManager[queue]
        event = queue.submit_async(sycl_kernel, flat, gsize, None, manager.submitted_events)
        manager.add_event_pair(event, event)
        return event

    return launch


def _impls(label: str, gates: dict, ocl: OpenCL | None, notes: dict) -> dict:
    """impl -> Impl for one case (64 work-items), or impl -> why it cannot run."""
    name, scalars = KERNELS[label]
    queue, sycl_gate = gates["queue"], gates["sycl"]
    nbuffers = len(device.argtypes(name, FLOAT32)) - len(scalars)
    host = [np.full(ARRAY_LEN, k, FLOAT32) for k in range(nbuffers)]
    arrays = tuple(device.device_array(h, queue) for h in host)
    launch_args = arrays + scalars
    kernels = _dk_kernels(name, launch_args)
    eager = kernels.get(EAGER)
    # The very SyclKernel the eager kernel launches; the compiler's own without a dispatcher.
    if isinstance(eager, str):
        sycl_kernel = device.compile_raw(name, FLOAT32, queue)
    else:
        sycl_kernel = device.sycl_kernel_of(eager)
    flat = device.flatten(launch_args, device.argtypes(name, FLOAT32))
    gsize = [ARRAY_LEN]

    chain = [None]  # raw's newest launch behind the gate

    def raw_chained():
        chain[0] = queue.submit_async(sycl_kernel, flat, gsize, None, chain)
        return chain[0]

    def raw_fill(gate, n):
        chain[0] = gate
        return [raw_chained() for _ in range(n)]

    def same(launch):
        return lambda gate: launch

    raw = lambda: queue.submit_async(sycl_kernel, flat, gsize)  # noqa: E731
    out: dict = {RAW: Impl(raw, lambda gate: raw_chained, raw_fill, sycl_gate)}
    rng = dk.Range(ARRAY_LEN) if device.dispatcher_available() else None
    for impl in (EAGER, LAZY):
        kernel = kernels[impl]
        if isinstance(kernel, str):
            out[impl] = kernel
            continue

        def dk_fill(gate, n, kernel=kernel):
            if n == 0:
                return []
            first = kernel[rng](*launch_args, depends_on=[gate])
            return [first] + [kernel[rng](*launch_args) for _ in range(n - 1)]

        launch = lambda kernel=kernel: kernel[rng](*launch_args)  # noqa: E731
        out[impl] = Impl(launch, same(launch), dk_fill, sycl_gate)
        if impl == EAGER and label in NJIT_CASES:
            loop = njit_burst(kernel)
            loop(*launch_args, 1).wait()  # compiles
            many = lambda n, loop=loop: loop(*launch_args, n)  # noqa: E731
            out[NJIT] = Impl(launch, same(launch), dk_fill, sycl_gate, many=many)
    if label in SOM_CASES:

        def som_fill(gate, n):
            events = raw_fill(gate, n)
            if events:
                SequentialOrderManager[queue].add_event_pair(events, events)
            return events

        som = som_launcher(queue, sycl_kernel, flat, gsize)
        out[SOM] = Impl(som, same(som), som_fill, sycl_gate, burst_cap=SOM_BURST)
    if ocl is None:
        out[OCL] = notes["opencl"]
    else:
        knl = ocl.kernel(name, FLOAT32)
        buffers = [ocl.buffer(h) for h in host]
        knl.set_args(*buffers, *scalars)
        enqueue = ocl.cl.enqueue_nd_range_kernel
        complete = ocl.cl.command_execution_status.COMPLETE

        def ocl_fill(gate, n):
            return [enqueue(ocl.queue, knl, (ARRAY_LEN,), None) for _ in range(n)]

        launch = lambda keep=buffers: enqueue(ocl.queue, knl, (ARRAY_LEN,), None)  # noqa: E731
        out[OCL] = Impl(
            launch,
            same(launch),
            ocl_fill,
            gates["opencl"],
            lambda event: event.command_execution_status != complete,
        )
    return out


@dataclass
class Sample:
    """One burst, timed in chunks (a preempted chunk is one outlier, not a spoilt sample)."""

    seconds: list[float]  # per launch, of each chunk of the burst
    gate_held: bool  # no gate (backlog 0), or the gate was still running when the burst ended
    busy_s: float  # from the gate's submission to the burst's end: what the gate must outlast
    pending: tuple[int, int] = (0, 0)  # census only: pending launches before and after


def _count(impl: Impl, events: list) -> int:
    return sum(map(impl.pending, events))


def _sample(
    impl: Impl, backlog: int, burst: int, sync: bool, gate_s: float, census: bool = False
) -> Sample:
    """Gate and backlog (none at backlog 0), a timed burst, drain; a census keeps the events."""
    begun = time.perf_counter()
    gate, fill, launch = None, [], impl.launch
    if backlog:
        gate = impl.gate(gate_s)
        fill = impl.fill(gate, max(backlog - burst // 2, 0))  # mean pending ~ backlog
        launch = impl.behind(gate)
    before = _count(impl, fill) if census else 0
    timed: list = []
    chunk = max(1, min(CHUNK, burst // 4))
    per_call = chunk if impl.many else 1
    seconds = []
    if census:
        timed = [impl.many(chunk) if impl.many else launch() for _ in range(burst // per_call)]
        if sync:
            for event in timed:
                event.wait()
    elif impl.many:
        for _ in range(burst // chunk):
            started = time.perf_counter()
            impl.many(chunk)
            seconds.append((time.perf_counter() - started) / chunk)
    elif sync:
        for _ in range(burst // chunk):
            started = time.perf_counter()
            for _ in range(chunk):
                launch().wait()
            seconds.append((time.perf_counter() - started) / chunk)
    else:
        for _ in range(burst // chunk):
            started = time.perf_counter()
            for _ in range(chunk):
                launch()
            seconds.append((time.perf_counter() - started) / chunk)
    now = time.perf_counter()
    held = gate is None or impl.pending(gate)
    # the launches of one compiled call are chained: its last event stands for all of them
    after = _count(impl, fill) + per_call * _count(impl, timed) if census else 0
    if gate is not None:
        impl.gate.open()
    impl.gate.drain()
    return Sample(seconds, held, now - begun, (before, after))


class GatedTimer:
    """Samples of one implementation, each with a gate long enough to outlast its burst."""

    def __init__(self, impl: Impl, backlog: int, burst: int, sync: bool, gate_s: float):
        if backlog and impl.burst_cap:
            burst = min(burst, impl.burst_cap)
        self.impl, self.backlog, self.burst, self.sync = impl, backlog, burst, sync
        self.gate_s = self.min_gate_s = gate_s
        self.samples: list[Sample] = []
        self.pending = (0, 0)
        self.gate_ended_early = 0

    def take(self, census: bool = False) -> None:
        """One sample (a census is not kept); retaken with a longer gate when it ended early."""
        for _ in range(GATE_TRIES):
            s = _sample(self.impl, self.backlog, self.burst, self.sync, self.gate_s, census)
            if s.gate_held:
                if self.backlog:  # follows the last sample: one preempted fill does not stick
                    self.gate_s = max(self.min_gate_s, GATE_MARGIN * s.busy_s)
                break
            self.gate_s = max(2 * self.gate_s, 2 * s.busy_s)
        else:
            self.gate_ended_early += not census
        if census:
            self.pending = s.pending
        else:
            self.samples.append(s)


def _rows(case: str, timers: dict, params: dict, skipped: dict, order: list) -> list[Row]:
    rows = []
    for impl in order:
        if impl in skipped:
            rows.append(skipped_row("launch", case, impl, "us", skipped[impl], **params))
            continue
        t = timers[impl]
        stats = summarise([x for s in t.samples for x in s.seconds])
        extra = {
            "pending_start": t.pending[0],
            "pending_end": t.pending[1],
            "gate_s": t.gate_s if t.backlog else None,
            "burst": t.burst,
        }
        row = time_row("launch", case, impl, stats, "us", **params, **extra)
        if t.gate_ended_early:
            row.note = f"gate ended before the burst in {t.gate_ended_early} samples"
        rows.append(row)
    return rows


def _time_case(label: str, mode: str, impls: dict, cfg: Config) -> list[Row]:
    """Every backlog: a census of each implementation (also its warm-up), then samples
    interleaved round by round, in alternating order."""
    rows = []
    sync = mode == "sync"
    for backlog in (0,) if sync else cfg.launch_backlogs:
        burst = min(cfg.launch_burst, backlog) if backlog else cfg.launch_burst
        rounds = cfg.launch_samples * math.ceil(cfg.launch_burst / burst)
        timers, skipped = {}, {}
        for impl, entry in impls.items():
            if isinstance(entry, str):
                skipped[impl] = entry
                continue
            timer = GatedTimer(entry, backlog, burst, sync, cfg.gate_s)
            try:
                timer.take(census=True)
            except Exception as exc:
                skipped[impl] = _reason(exc)
                continue
            timers[impl] = timer
        for k in range(rounds):
            for impl in list(timers) if k % 2 == 0 else list(reversed(timers)):
                if impl in skipped:
                    continue
                try:
                    timers[impl].take()
                except Exception as exc:  # one broken implementation must not stop the others
                    skipped[impl] = _reason(exc)
        params = {
            "kernel": KERNELS[label][0],
            "label": label,
            "mode": mode,
            "backlog": backlog,
            "items": ARRAY_LEN,
        }
        case = case_name(label, mode, backlog)
        rows += _rows(
            case,
            {k: v for k, v in timers.items() if k not in skipped},
            params,
            skipped,
            list(impls),
        )
    return rows


def run_launch(cfg: Config, queue: dpctl.SyclQueue, ocl: OpenCL | None, notes: dict) -> list[Row]:
    """Per-launch time of every implementation at each backlog: async 3, 10 and 2+2 arguments,
    and launch + wait with 3."""
    sycl_gate = SyclGate(queue)
    gates = {"queue": queue, "sycl": sycl_gate}
    if ocl is not None:
        gates["opencl"] = OpenCLGate(ocl, sycl_gate.steps_per_s)
    rows, impls = [], {}
    for label, mode in CASES:
        if label not in impls:
            impls[label] = _impls(label, gates, ocl, notes)
        found = impls[label]
        if mode == "sync":  # the old ordering is about the backlog, the @njit loop about async
            found = {k: v for k, v in found.items() if k not in (SOM, NJIT)}
        rows += _time_case(label, mode, found, cfg)
    return rows + run_jacobi(cfg)


def run_jacobi(cfg: Config) -> list[Row]:
    """examples/jacobi_njit.py with its loop in @njit, against the same loop in Python."""
    if not device.dispatcher_available():
        return []
    import dpnp

    from examples import jacobi_njit as jacobi

    n, sweeps = 64, 400
    start = jacobi.initial(n)

    def python_loop():
        u = dpnp.asarray(start, device=device.DEVICE, usm_type="shared")
        out = dpnp.asarray(start, device=device.DEVICE, usm_type="shared")
        for _ in range(sweeps):
            jacobi.sweep[(n - 2, n - 2)](u, out)
            u, out = out, u
        u.sycl_queue.wait()

    def njit_loop():
        u = dpnp.asarray(start, device=device.DEVICE, usm_type="shared")
        out = dpnp.asarray(start, device=device.DEVICE, usm_type="shared")
        change = dpnp.zeros(n - 2, device=device.DEVICE, usm_type="shared")
        jacobi.solve(u, out, change, np.zeros(n - 2), -1.0, sweeps, sweeps + 1)
        u.sycl_queue.wait()

    python_loop()
    njit_loop()  # compiles
    stats, errors = interleave(
        {PY_LOOP: python_loop, NJIT: njit_loop}, 2, cfg.launch_samples, per=1, rewarm=False
    )
    case = f"Jacobi {n}x{n}, {sweeps} sweeps"
    return [
        time_row("launch", case, impl, stats[impl], "ms", sweeps=sweeps, n=n)
        if impl in stats
        else skipped_row("launch", case, impl, "ms", errors[impl], sweeps=sweeps, n=n)
        for impl in (PY_LOOP, NJIT)
    ]


def run_reject(cfg: Config, queue: dpctl.SyclQueue) -> list[Row]:
    """Time to reject a call whose arguments match no declared signature."""
    case = "float64 arrays into a float32 kernel"
    if not device.dispatcher_available():
        return [skipped_row("reject", case, EAGER, "us", device.NO_DISPATCHER)]
    kernel = device.jit_kernel("vecadd", FLOAT32, "eager")
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
