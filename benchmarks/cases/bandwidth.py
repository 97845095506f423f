"""Bandwidth (GB/s) of vecadd, triad (a = b + s*c) and a 2-D 5-point stencil, per implementation.

Bytes counted are the ideal traffic: every input read once, every output written once
(vecadd/triad 3 arrays, stencil 2 grids). Each timed run is launch + wait, wall clock.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader

# isort: split
import dpctl
import dpnp
import numpy as np

from .. import device, kernels
from ..config import Config
from ..opencl_peer import OpenCL
from ..results import DPNP, EAGER, NUMBA, NUMPY, OCL, RAW, Row, bandwidth_row, skipped_row
from ..timing import interleave

S, C0, C1 = 0.5, 0.5, 0.125
SLOW_RUN_S = 0.25


@dataclass
class Problem:
    """One case at one size, on the host: kernel arguments in order, and the answer."""

    name: str
    dtype: np.dtype
    size: int  # elements (vectors) or grid side (stencil)
    args: list  # NumPy arrays and NumPy scalars, in kernel-argument order
    out: int  # index of the output array in args
    gsize: tuple[int, ...]  # the SYCL global range
    expected: np.ndarray
    nbytes: int

    @property
    def label(self) -> str:
        """The case label: name, dtype and size."""
        if self.name == "stencil":
            return f"stencil {self.dtype.name} {self.size}x{self.size}"
        if self.size & (self.size - 1):  # not a power of two: a ragged size of device-time
            return f"{self.name} {self.dtype.name} {self.size}"
        return f"{self.name} {self.dtype.name} 2^{self.size.bit_length() - 1}"


def make_problem(name: str, dtype: np.dtype, size: int) -> Problem:
    """Random inputs, a zeroed output and the NumPy answer for one case and size."""
    rng = np.random.default_rng(size)
    item = dtype.itemsize
    if name == "stencil":
        x = rng.random((size, size), dtype=dtype)
        args = [x, np.zeros_like(x), dtype.type(C0), dtype.type(C1)]
        expected = np.zeros_like(x)
        kernels.ref_stencil(x, expected, args[2], args[3])
        return Problem(
            name, dtype, size, args, 1, (size - 2, size - 2), expected, 2 * size * size * item
        )
    a, b = rng.random(size, dtype=dtype), rng.random(size, dtype=dtype)
    if name == "vecadd":
        args, out, expected = [a, b, np.zeros_like(a)], 2, a + b
    else:
        s = dtype.type(S)
        args, out, expected = [np.zeros_like(a), a, b, s], 0, a + s * b
    return Problem(name, dtype, size, args, out, (size,), expected, 3 * size * item)


Setup = Callable[[Problem], tuple[Callable[[], object], Callable[[], np.ndarray]]]


class Implementations:
    """Builds, for a Problem, each implementation's run() (launch and wait) and result()."""

    def __init__(self, queue: dpctl.SyclQueue, ocl: OpenCL | None, notes: dict) -> None:
        self.queue, self.ocl, self.notes = queue, ocl, notes
        self._dk: dict = {}
        self._raw: dict = {}
        self._ocl: dict = {}
        self._inputs: list = []
        self._inputs_of: Problem | None = None

    def prepare(self, names: tuple[str, ...], dtypes: tuple[str, ...]) -> None:
        """Compile every kernel now, before Numba's host thread pool exists (compiles may fork)."""
        for name in names:
            for dtype in map(np.dtype, dtypes):
                if self.ocl is not None:
                    self._ocl[(name, dtype)] = self.ocl.kernel(name, dtype)
                with contextlib.suppress(Exception):  # reported on the rows later
                    self._sycl_kernel(name, dtype)

    def available(self) -> dict[str, Setup | str]:
        """impl -> setup function, or impl -> the reason it is skipped."""
        impls: dict[str, Setup | str] = {}
        impls[EAGER] = self.dk if device.dispatcher_available() else device.NO_DISPATCHER
        impls[RAW] = self.raw
        impls[OCL] = self.opencl if self.ocl is not None else self.notes["opencl"]
        impls[DPNP] = self.dpnp
        impls[NUMBA] = self.numba
        impls[NUMPY] = self.numpy
        return impls

    def _device_args(self, p: Problem) -> list:
        """Device copies of the inputs, shared by the device implementations; a private output."""
        if self._inputs_of is not p:
            self._inputs = [
                device.device_array(a, self.queue)
                if isinstance(a, np.ndarray) and i != p.out
                else a
                for i, a in enumerate(p.args)
            ]
            self._inputs_of = p
        args = list(self._inputs)
        args[p.out] = device.device_array(p.args[p.out], self.queue)
        return args

    def _kernel(self, name: str, dtype: np.dtype):
        key = (name, dtype)
        if key not in self._dk:
            self._dk[key] = device.jit_kernel(name, dtype, "eager")
        return self._dk[key]

    def dk(self, p: Problem):
        """The @dk.kernel eager kernel, launched as users do."""
        kernel, args, rng = self._kernel(p.name, p.dtype), self._device_args(p), dk.Range(*p.gsize)
        return (lambda: kernel[rng](*args).wait()), (lambda: dpnp.asnumpy(args[p.out]))

    def _sycl_kernel(self, name: str, dtype: np.dtype):
        """The dispatcher's SyclKernel (compiling the dk kernel); else the compiler's own."""
        key = (name, dtype)
        if key not in self._raw:
            found = None
            if device.dispatcher_available():
                with contextlib.suppress(Exception):  # reported on the dk row
                    found = device.sycl_kernel_of(self._kernel(name, dtype))
            self._raw[key] = found or device.compile_raw(name, dtype, self.queue)
        return self._raw[key]

    def raw(self, p: Problem):
        """The same SyclKernel through SyclQueue.submit_async with pre-flattened arguments."""
        sycl_kernel = self._sycl_kernel(p.name, p.dtype)
        args, gsize = self._device_args(p), list(p.gsize)
        flat = device.flatten(tuple(args), device.argtypes(p.name, p.dtype))
        queue = self.queue
        return (lambda: queue.submit_async(sycl_kernel, flat, gsize).wait()), (
            lambda: dpnp.asnumpy(args[p.out])
        )

    def opencl(self, p: Problem):
        """The OpenCL C kernel through pyopencl (global range reversed: OpenCL dim 0 is fastest)."""
        ocl = self.ocl
        key = (p.name, p.dtype)
        if key not in self._ocl:
            self._ocl[key] = ocl.kernel(p.name, p.dtype)
        knl = self._ocl[key]
        args = [ocl.buffer(a) if isinstance(a, np.ndarray) else a for a in p.args]
        extra = [np.int64(p.size)] if p.name == "stencil" else []
        knl.set_args(*args, *extra)
        gsize = tuple(reversed(p.gsize))

        def run(keep=args):  # `keep`: a pyopencl kernel does not hold its buffers alive
            ocl.cl.enqueue_nd_range_kernel(ocl.queue, knl, gsize, None).wait()

        return run, (lambda: ocl.read(args[p.out], p.args[p.out]))

    def dpnp(self, p: Problem):
        """dpnp's own functions (triad: multiply into a scratch array, then add)."""
        args, queue = self._device_args(p), self.queue
        if p.name == "vecadd":
            a, b, c = args

            def run():
                dpnp.add(a, b, out=c)
                queue.wait()
        elif p.name == "triad":
            a, b, c, s = args
            scratch = dpnp.empty_like(a)

            def run():
                dpnp.multiply(c, s, out=scratch)
                dpnp.add(b, scratch, out=a)
                queue.wait()
        else:
            x, y, c0, c1 = args

            def run():
                y[1:-1, 1:-1] = c0 * x[1:-1, 1:-1] + c1 * (
                    x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:]
                )
                queue.wait()

        return run, (lambda: dpnp.asnumpy(args[p.out]))

    def numba(self, p: Problem):
        """Numba @njit(parallel=True) on host NumPy arrays."""
        fn = {
            "vecadd": kernels.host_vecadd,
            "triad": kernels.host_triad,
            "stencil": kernels.host_stencil,
        }[p.name]
        args = _host_args(p)
        return (lambda: fn(*args)), (lambda: args[p.out])

    def numpy(self, p: Problem):
        """NumPy ufuncs with out= (no temporaries for vecadd and triad)."""
        args = _host_args(p)
        if p.name == "vecadd":
            a, b, c = args

            def run():
                np.add(a, b, out=c)
        elif p.name == "triad":
            a, b, c, s = args

            def run():
                np.multiply(c, s, out=a)
                np.add(a, b, out=a)
        else:
            x, y, c0, c1 = args

            def run():
                kernels.ref_stencil(x, y, c0, c1)

        return run, (lambda: args[p.out])


def _host_args(p: Problem) -> list:
    """The problem's arguments with a private copy of the output array."""
    return [a.copy() if i == p.out else a for i, a in enumerate(p.args)]


def _correct(result: np.ndarray, p: Problem) -> bool:
    rtol = 1e-5 if p.dtype == np.float32 else 1e-12
    return bool(np.allclose(result, p.expected, rtol=rtol, atol=0))


def _sizes(cfg: Config, name: str) -> list[int]:
    if name == "stencil":
        return list(cfg.stencil_sizes)
    return [2**e for e in cfg.vector_exponents]


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:160]


def _measure_problem(p: Problem, cfg: Config, impls: Implementations) -> list[Row]:
    """Set up, warm up and check every implementation, then time them interleaved."""
    rows: dict[str, Row] = {}
    runs: dict[str, object] = {}
    correct: dict[str, bool] = {}
    params = {"dtype": p.dtype.name, "size": p.size}
    for impl, setup in impls.available().items():
        if isinstance(setup, str):
            rows[impl] = skipped_row(p.name, p.label, impl, "GB/s", setup, **params)
            continue
        try:  # one broken implementation must not stop the others
            run, result = setup(p)
            for _ in range(cfg.warmup):
                begun = time.perf_counter()
                run()
                if time.perf_counter() - begun > SLOW_RUN_S:  # one warm-up is enough
                    break
            correct[impl] = _correct(result(), p)
            runs[impl] = run
        except Exception as exc:
            rows[impl] = skipped_row(p.name, p.label, impl, "GB/s", _reason(exc), **params)
    stats, errors = interleave(runs, cfg.rounds, cfg.repeat, cfg.min_time)
    for impl, reason in errors.items():
        rows[impl] = skipped_row(p.name, p.label, impl, "GB/s", reason, **params)
    for impl, st in stats.items():
        row = bandwidth_row(p.name, p.label, impl, st, p.nbytes, **params)
        row.note = "" if correct[impl] else "WRONG result"
        rows[impl] = row
    return [rows[impl] for impl in impls.available() if impl in rows]


def run_bandwidth(name: str, cfg: Config, impls: Implementations) -> list[Row]:
    """GB/s of every implementation of case `name` at every size and dtype of the config."""
    rows = []
    for dtype_name in cfg.dtypes:
        for size in _sizes(cfg, name):
            rows += _measure_problem(make_problem(name, np.dtype(dtype_name), size), cfg, impls)
            impls.queue.wait()
    return rows
