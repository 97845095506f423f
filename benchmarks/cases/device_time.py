"""Kernel time on the device (code generation): dk's generated code against OpenCL C.

The wall-clock bandwidth cases time launch + wait, so they include each runtime's launch and
queue cost (a SYCL launch ~11 µs, a pyopencl enqueue ~3 µs) and the noise of a shared machine.
Here each launch is timed by its own profiling event instead, start to end of the kernel on the
device, so what is compared is the code the two compilers generated, run by the same OpenCL CPU
runtime:

- dk eager: a `dpctl.SyclQueue(DEVICE, property="enable_profiling")`, the arrays allocated on it
  (dpnp, `sycl_queue=q`), `ev = kernel[dk.Range(...)](*args)` (it runs on the arrays' queue),
  `ev.wait()`, `ev.profiling_info_end - ev.profiling_info_start` (ns);
- OpenCL C: a pyopencl `CommandQueue` with `PROFILING_ENABLE`, `ev = knl(queue, gsize, None,
  *args)`, `ev.wait()`, `ev.profile.end - ev.profile.start` (ns);
- OpenCL C (dpctl), information only: the same OpenCL C source built by dpctl
  (`create_program_from_source`) on dk's profiling queue and launched by `submit_async` on
  **dk's own arrays**: same queue, same memory, only the kernel's code differs. The pyopencl
  kernel necessarily runs on other allocations in another context; this control shows how much
  of a dk/OpenCL C difference is the code and how much where the arrays happen to lie.

Besides the power-of-two sizes, vecadd runs at a prime size past the caches (RAGGED): there
dk's Range launch picks its own work-groups and OpenCL C's NULL local size leaves them to the
runtime, which finds no divisor but tiny ones.

The two are interleaved sample by sample, in alternating order (dk first, then OpenCL C first),
so a drift of the machine and any after-effect of the other kernel hit both alike. At the
in-cache size (information only) each timed launch follows an untimed one of its own, so its
data is in the cache whichever implementation ran before.
"""

from __future__ import annotations

import contextlib
import ctypes
import time
from collections.abc import Callable

import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader
from dpex_kernels.types.ranges import is_ragged

# isort: split
import dpctl
import dpctl.program
import dpnp
import numpy as np

from .. import device, kernels
from ..compare import CACHE_FACTOR, DEVICE_GROUP
from ..config import Config
from ..opencl_peer import OpenCL
from ..results import EAGER, OCL, OCL_DPCTL, RAW, Row, bandwidth_row, skipped_row
from ..timing import summarise
from .bandwidth import Problem, _correct, _reason, make_problem

GROUP = DEVICE_GROUP
CASES = ("vecadd", "triad", "stencil")
#: The one in-cache size per case, measured for information (in both modes' size lists).
IN_CACHE = {"vecadd": 2**20, "triad": 2**20, "stencil": 1024}
#: A prime size past the caches: a Range with no divisor for the runtime's work-groups, which
#: dk launches in work-groups of its own (docs/launcher.md, "Ranges with no good divisor") and
#: OpenCL C with a NULL local size leaves to the runtime.
RAGGED = {"vecadd": 16_777_259}

#: run() -> (device seconds of the kernel, wall seconds of launch + wait); result() -> output.
Timed = tuple[Callable[[], tuple[float, float]], Callable[[], np.ndarray]]


def _working_set(name: str, dtype: np.dtype, size: int) -> int:
    return (2 * size * size if name == "stencil" else 3 * size) * dtype.itemsize


def sizes(cfg: Config, name: str, dtype: np.dtype, cache_bytes: int) -> list[int]:
    """The in-cache size, then the config's sizes whose working set is past the caches."""
    if name == "stencil":
        listed = list(cfg.stencil_sizes)
    else:
        listed = [2**e for e in cfg.vector_exponents]
    past = [s for s in listed if _working_set(name, dtype, s) >= CACHE_FACTOR * cache_bytes]
    return [IN_CACHE[name], *(s for s in past if s != IN_CACHE[name])]


class Profiled:
    """dk and OpenCL C, each on its own profiling queue; the control on dk's queue and arrays."""

    def __init__(self, ocl: OpenCL | None, notes: dict) -> None:
        self.ocl, self.notes = ocl, notes
        self.queue = dpctl.SyclQueue(device.DEVICE, property="enable_profiling")
        self.cl_queue = None
        if ocl is not None:
            props = ocl.cl.command_queue_properties.PROFILING_ENABLE
            self.cl_queue = ocl.cl.CommandQueue(ocl.context, properties=props)
        self._dk: dict = {}
        self._raw: dict = {}
        self._ocl: dict = {}
        self._ocl_dpctl: dict = {}
        self._args: tuple[Problem | None, list] = (None, [])

    def prepare(self, dtypes: tuple[str, ...]) -> None:
        """Compile every kernel now, before Numba's host thread pool exists (compiles may fork)."""
        for name in CASES:
            for dtype in map(np.dtype, dtypes):
                with contextlib.suppress(Exception):  # reported on the rows later
                    if device.dispatcher_available():
                        self._kernel(name, dtype)
                    else:
                        self._raw_kernel(name, dtype)
                if self.ocl is not None:
                    with contextlib.suppress(Exception):
                        self._ocl_kernel(name, dtype)
                with contextlib.suppress(Exception):
                    self._ocl_dpctl_kernel(name, dtype)

    def available(self) -> dict[str, Callable[[Problem], Timed] | str]:
        """impl -> setup function, or impl -> the reason it is skipped."""
        impls: dict[str, Callable[[Problem], Timed] | str] = {}
        if device.dispatcher_available():
            impls[EAGER] = self.dk
        else:  # the compiler's own SPIR-V kernel, launched raw: still its code quality
            impls[RAW] = self.raw
        impls[OCL] = self.opencl if self.ocl is not None else self.notes["opencl"]
        impls[OCL_DPCTL] = self.opencl_dpctl
        return impls

    def _kernel(self, name: str, dtype: np.dtype):
        if (name, dtype) not in self._dk:
            self._dk[(name, dtype)] = device.jit_kernel(name, dtype, "eager")
        return self._dk[(name, dtype)]

    def _raw_kernel(self, name: str, dtype: np.dtype):
        if (name, dtype) not in self._raw:
            self._raw[(name, dtype)] = device.compile_raw(name, dtype, self.queue)
        return self._raw[(name, dtype)]

    def _ocl_kernel(self, name: str, dtype: np.dtype):
        if (name, dtype) not in self._ocl:
            self._ocl[(name, dtype)] = self.ocl.kernel(name, dtype)
        return self._ocl[(name, dtype)]

    def _ocl_dpctl_kernel(self, name: str, dtype: np.dtype):
        if (name, dtype) not in self._ocl_dpctl:
            source = kernels.OPENCL_HEADER + kernels.OPENCL_KERNELS[name]
            copts = "-DUSE_DOUBLE" if dtype == np.float64 else ""
            program = dpctl.program.create_program_from_source(self.queue, source, copts)
            self._ocl_dpctl[(name, dtype)] = program.get_sycl_kernel(name)
        return self._ocl_dpctl[(name, dtype)]

    def _device_args(self, p: Problem) -> list:
        """The problem's arguments on the profiling queue, shared by dk and OpenCL C (dpctl)."""
        if self._args[0] is not p:
            self._args = (None, [])  # free the last problem's arrays first
            args = [
                device.device_array(a, self.queue) if isinstance(a, np.ndarray) else a
                for a in p.args
            ]
            self._args = (p, args)
        return self._args[1]

    def dk(self, p: Problem) -> Timed:
        """The eager kernel launched as users do, on the arrays' (profiling) queue."""
        kernel, args, rng = self._kernel(p.name, p.dtype), self._device_args(p), dk.Range(*p.gsize)

        def run() -> tuple[float, float]:
            begun = time.perf_counter()
            ev = kernel[rng](*args)
            ev.wait()
            wall = time.perf_counter() - begun
            return (ev.profiling_info_end - ev.profiling_info_start) * 1e-9, wall

        return run, (lambda: dpnp.asnumpy(args[p.out]))

    def raw(self, p: Problem) -> Timed:
        """The compiler's SyclKernel through submit_async on the profiling queue."""
        sycl_kernel, args = self._raw_kernel(p.name, p.dtype), self._device_args(p)
        flat = device.flatten(tuple(args), device.argtypes(p.name, p.dtype))
        queue, gsize = self.queue, list(p.gsize)

        def run() -> tuple[float, float]:
            begun = time.perf_counter()
            ev = queue.submit_async(sycl_kernel, flat, gsize)
            ev.wait()
            wall = time.perf_counter() - begun
            return (ev.profiling_info_end - ev.profiling_info_start) * 1e-9, wall

        return run, (lambda: dpnp.asnumpy(args[p.out]))

    def opencl(self, p: Problem) -> Timed:
        """The OpenCL C kernel through pyopencl (global range reversed: dim 0 is fastest)."""
        ocl, queue, knl = self.ocl, self.cl_queue, self._ocl_kernel(p.name, p.dtype)
        args = [ocl.buffer(a) if isinstance(a, np.ndarray) else a for a in p.args]
        if p.name == "stencil":
            args.append(np.int64(p.size))
        gsize = tuple(reversed(p.gsize))

        def run() -> tuple[float, float]:
            begun = time.perf_counter()
            ev = knl(queue, gsize, None, *args)
            ev.wait()
            wall = time.perf_counter() - begun
            return (ev.profile.end - ev.profile.start) * 1e-9, wall

        return run, (lambda: ocl.read(args[p.out], p.args[p.out]))

    def opencl_dpctl(self, p: Problem) -> Timed:
        """The OpenCL C kernel built by dpctl, on dk's queue and dk's arrays (a control)."""
        sycl_kernel, args = self._ocl_dpctl_kernel(p.name, p.dtype), self._device_args(p)
        scalar = ctypes.c_double if p.dtype == np.float64 else ctypes.c_float
        flat = [a.get_array().usm_data if isinstance(a, dpnp.ndarray) else scalar(a) for a in args]
        if p.name == "stencil":
            flat.append(ctypes.c_int64(p.size))
        queue, gsize = self.queue, list(p.gsize)  # SYCL order: the runtime reverses it for OpenCL
        args[p.out].fill(0)  # dk wrote the same answer here: start from zeros to check this one
        queue.wait()

        def run() -> tuple[float, float]:
            begun = time.perf_counter()
            ev = queue.submit_async(sycl_kernel, flat, gsize)
            ev.wait()
            wall = time.perf_counter() - begun
            return (ev.profiling_info_end - ev.profiling_info_start) * 1e-9, wall

        return run, (lambda: dpnp.asnumpy(args[p.out]))


def _measure_problem(p: Problem, cfg: Config, impls: Profiled, past: bool) -> list[Row]:
    """Warm up and check both implementations, then time them sample by sample, alternating."""
    rows: dict[str, Row] = {}
    runs: dict[str, Callable[[], tuple[float, float]]] = {}
    correct: dict[str, bool] = {}
    params = {"kernel": p.name, "dtype": p.dtype.name, "size": p.size, "past_caches": past}
    params["ragged"] = is_ragged(p.gsize)
    available = impls.available()
    for impl, setup in available.items():
        if isinstance(setup, str):
            rows[impl] = skipped_row(GROUP, p.label, impl, "GB/s", setup, **params)
            continue
        try:  # one broken implementation must not stop the other
            run, result = setup(p)
            for _ in range(max(cfg.warmup, 2)):
                run()
            correct[impl] = _correct(result(), p)
            runs[impl] = run
        except Exception as exc:
            rows[impl] = skipped_row(GROUP, p.label, impl, "GB/s", _reason(exc), **params)
    device_s: dict[str, list[float]] = {impl: [] for impl in runs}
    wall_s: dict[str, list[float]] = {impl: [] for impl in runs}
    order = list(runs)
    for sample in range(cfg.device_samples):
        for impl in order if sample % 2 == 0 else order[::-1]:
            if impl in rows:  # it raised in an earlier sample
                continue
            try:
                if not past:  # in cache: re-warm, as the other implementation's data evicted it
                    runs[impl]()
                dev, wall = runs[impl]()
            except Exception as exc:
                rows[impl] = skipped_row(GROUP, p.label, impl, "GB/s", _reason(exc), **params)
                continue
            device_s[impl].append(dev)
            wall_s[impl].append(wall)
    for impl in runs:
        if impl in rows:
            continue
        st = summarise(device_s[impl])
        extra = {
            "device_us": st.median * 1e6,
            "wall_us": summarise(wall_s[impl]).median * 1e6,
            "wall_samples_s": wall_s[impl],
        }
        row = bandwidth_row(GROUP, p.label, impl, st, p.nbytes, **params, **extra)
        row.note = "" if correct[impl] else "WRONG result"
        rows[impl] = row
    return [rows[impl] for impl in available if impl in rows]


def run_device_time(cfg: Config, impls: Profiled, cache_bytes: int) -> list[Row]:
    """Device-time GB/s of dk and OpenCL C: every case, dtype, in-cache and past-cache size."""
    rows = []
    for name in CASES:
        for dtype in map(np.dtype, cfg.dtypes):
            ragged = [RAGGED[name]] if name in RAGGED else []
            for size in sizes(cfg, name, dtype, cache_bytes) + ragged:
                past = _working_set(name, dtype, size) >= CACHE_FACTOR * cache_bytes
                rows += _measure_problem(make_problem(name, dtype, size), cfg, impls, past)
                impls.queue.wait()
    return rows
