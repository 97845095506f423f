"""Launching kernels from @numba.njit host code (API.md §2 "Launching from compiled code")."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import dpctl
import dpnp
import numba
import numpy as np
import pytest
from conftest import CPU
from conftest_kernels import spin
from numba.core.errors import TypingError

import dpex_kernels as dk
from dpex_kernels.dispatcher import _launcher

F4 = dk.usm_array(dk.float32, 1, device=CPU)
F4_2D = dk.usm_array(dk.float32, 2, device=CPU)
F8 = dk.usm_array(dk.float64, 1, device=CPU)


@dk.kernel(dk.void(F4, F4, F4))
def vecadd(a, b, c):
    i = dk.get_global_id(0)
    c[i] = a[i] + b[i]


@dk.kernel(dk.void(F4, F4, dk.float32, dk.int64))
def axpb(x, out, alpha, beta):
    i = dk.get_global_id(0)
    out[i] = alpha * x[i] + beta


@dk.kernel(dk.void(F4_2D))
def index_2d(out):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    out[i, j] = i * 100 + j + dk.get_local_id(1) * 0.0


def _arrays(n=256):
    a = dpnp.asarray(np.arange(n, dtype="f4"), device=CPU)
    b = dpnp.asarray(np.full(n, 2.0, dtype="f4"), device=CPU)
    return a, b, dpnp.zeros(n, dtype="f4", device=CPU)


@numba.njit
def _launch_loop(a, b, c, times):
    event = vecadd[a.shape[0]](a, b, c)
    for _ in range(times):
        event = vecadd[a.shape[0]](c, b, c)
    event.wait()
    return event


def test_njit_loop_launches_and_returns_a_sycl_event():
    a, b, c = _arrays()
    event = _launch_loop(a, b, c, 10)
    assert isinstance(event, dpctl.SyclEvent)
    np.testing.assert_array_equal(dpnp.asnumpy(c), np.arange(256, dtype="f4") + 2.0 * 11)


def test_usm_ndarrays_and_scalars_from_compiled_code():
    @numba.njit
    def run(x, out, alpha, beta):
        return axpb[x.shape[0]](x, out, alpha, beta)

    x = dpnp.asarray(np.linspace(0, 1, 128, dtype="f4"), device=CPU)
    out = dpnp.zeros(128, dtype="f4", device=CPU)
    run(x.get_array(), out.get_array(), np.float32(3.0), 7).wait()
    np.testing.assert_allclose(dpnp.asnumpy(out), 3.0 * dpnp.asnumpy(x) + 7, rtol=1e-6)


@pytest.mark.parametrize(
    "make_range",
    [
        pytest.param(numba.njit(lambda n, m: (n, m)), id="tuple"),
        pytest.param(numba.njit(lambda n, m: dk.Range(n, m)), id="Range"),
        pytest.param(numba.njit(lambda n, m: dk.NdRange((n, m), (2, 4))), id="NdRange"),
    ],
)
def test_ranges_built_in_compiled_code(make_range):
    @numba.njit
    def run(out, n, m):
        return index_2d[make_range(n, m)](out)

    out = dpnp.zeros((6, 8), dtype="f4", device=CPU)
    run(out, 6, 8).wait()
    i, j = np.indices((6, 8))
    np.testing.assert_array_equal(dpnp.asnumpy(out), (i * 100 + j).astype("f4"))


def test_nd_range_passed_in_from_python():
    @numba.njit
    def run(out, nd_range):
        return index_2d[nd_range](out)

    out = dpnp.zeros((4, 8), dtype="f4", device=CPU)
    run(out, dk.NdRange((4, 8), (2, 2))).wait()
    i, j = np.indices((4, 8))
    np.testing.assert_array_equal(dpnp.asnumpy(out), (i * 100 + j).astype("f4"))


def test_compiled_launches_are_ordered_with_dpnp_without_waits():
    n = 1 << 20

    @numba.njit
    def accumulate(a, b, c, times):
        for _ in range(times):
            vecadd[n](c, b, c)

    for trial in range(20):
        a = dpnp.zeros(n, dtype="f4", device=CPU)
        b = dpnp.full(n, float(trial + 1), dtype="f4", device=CPU)  # races the first launch
        c = dpnp.zeros(n, dtype="f4", device=CPU)
        accumulate(a, b, c, 5)
        assert float(dpnp.sum(c)) == n * 5.0 * (trial + 1)


def test_compiled_launches_in_flight_hold_no_objects_the_collector_tracks():
    @numba.njit
    def burst(gate, a, b, c, times):
        spin[1](gate, 200_000_000)  # about 0.3 s here: what follows stays in flight
        for _ in range(times):
            event = vecadd[a.shape[0]](a, b, c)
        return event

    a, b, c = _arrays()
    gate = dpnp.ones(1, dtype="f8", device=CPU)
    burst(gate, a, b, c, 1).wait()  # compiles
    gc.collect()
    tracked = len(gc.get_objects())
    event = burst(gate, a, b, c, 500)
    in_flight = _launcher.in_flight()
    grown = len(gc.get_objects()) - tracked
    event.wait()
    np.testing.assert_array_equal(dpnp.asnumpy(c), np.arange(256) + 2.0)
    if in_flight >= 400:  # the gate held them: each launch kept its arguments alive
        assert grown < 50, f"{grown} tracked objects for 500 launches in flight"


def test_lazy_kernels_compile_when_the_host_function_compiles():
    @dk.kernel
    def scale(x, factor):
        i = dk.get_global_id(0)
        x[i] = x[i] * factor

    @numba.njit
    def run(x):
        scale[x.shape[0]](x, 3.0).wait()

    x = dpnp.asarray(np.arange(16, dtype="f8"), device=CPU)
    run(x)
    assert scale.stats.compiles == 1
    np.testing.assert_array_equal(dpnp.asnumpy(x), np.arange(16) * 3.0)


def test_zero_sized_range_from_compiled_code_is_complete():
    @numba.njit
    def run(a, b, c):
        return vecadd[0](a, b, c)

    event = run(*_arrays())
    assert event.execution_status == dpctl.event_status_type.complete


# --- bad input ------------------------------------------------------------------------------


def test_signature_mismatch_is_a_typing_error_naming_kernel_argument_and_field():
    @numba.njit
    def run(a, b, c):
        vecadd[a.shape[0]](a, b, c)

    a, b, _ = _arrays()
    with pytest.raises(TypingError, match=r"(?s)kernel 'vecadd'.*argument 2 'c' differs in dtype"):
        run(a, b, dpnp.zeros(256, dtype="f8", device=CPU))


def test_numpy_arrays_are_a_typing_error_saying_what_to_pass():
    @numba.njit
    def run(a, b, c):
        vecadd[a.shape[0]](a, b, c)

    a, b, c = _arrays()
    with pytest.raises(TypingError, match=r"(?s)argument 0 'a'.*NumPy array.*dpnp"):
        run(np.zeros(256, dtype="f4"), b, c)


def test_bad_range_type_is_a_typing_error():
    @numba.njit
    def run(a, b, c):
        vecadd[1.5](a, b, c)

    with pytest.raises(TypingError, match="launch range"):
        run(*_arrays())


def test_arrays_on_different_queues_raise_from_compiled_code():
    @numba.njit
    def run(a, b, c):
        vecadd[a.shape[0]](a, b, c)

    device = dpctl.SyclDevice(CPU)
    a, b, _ = _arrays()
    c = dpnp.zeros(256, dtype="f4", sycl_queue=dpctl.SyclQueue(device))
    with pytest.raises(dk.ExecutionQueueError, match="'c'"):
        run(a, b, c)


def test_invalid_range_computed_at_run_time_raises_from_compiled_code():
    @numba.njit
    def run(out, n):
        index_2d[dk.NdRange((n, 8), (3, 8))](out)

    out = dpnp.zeros((4, 8), dtype="f4", device=CPU)
    with pytest.raises(dk.InvalidRangeError, match="does not divide"):
        run(out, 4)


def test_kernels_calling_device_functions_compile_after_cpu_njit_code():
    # Numba's CPU target, once used, registers a dispatcher-constant lowering that embeds an
    # address; device code must not pick it up. A fresh process controls the order.
    script = textwrap.dedent(
        """
        import numba, numpy as np, dpnp
        import dpex_kernels as dk

        print(numba.njit(lambda x: x + 1)(2))

        @dk.func
        def cube(x):
            return x * x * x

        @dk.kernel(dk.void(dk.usm_array(dk.float64, 1), dk.usm_array(dk.float64, 1)))
        def apply(a, out):
            i = dk.get_global_id(0)
            out[i] = cube(a[i]) + 1

        a = dpnp.asarray(np.linspace(-2, 2, 9))
        out = dpnp.zeros(9)
        apply[9](a, out)
        np.testing.assert_allclose(dpnp.asnumpy(out), np.linspace(-2, 2, 9) ** 3 + 1)
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]


def test_nogil_host_functions_launch():
    @numba.njit(nogil=True)
    def run(x, out):
        axpb[x.shape[0]](x, out, 2.0, 1).wait()

    x = dpnp.asarray(np.arange(32, dtype="f4"), device=CPU)
    out = dpnp.zeros(32, dtype="f4", device=CPU)
    run(x, out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), 2 * np.arange(32, dtype="f4") + 1)


def test_host_functions_that_launch_say_they_cannot_be_cached():
    @numba.njit(cache=True)
    def run(a, b, c):
        vecadd[a.shape[0]](a, b, c).wait()

    with pytest.warns(numba.NumbaWarning, match="dynamic globals"):
        run(*_arrays())


def test_threads_launching_from_nogil_compiled_loops():
    import threading

    @numba.njit(nogil=True)
    def loop(x, out, times):
        for _ in range(times):
            axpb[x.shape[0]](x, out, 1.0, 1)
        axpb[(x.shape[0],)](x, out, 1.0, 1).wait()

    x = dpnp.zeros(512, dtype="f4", device=CPU)
    outputs = [dpnp.zeros(512, dtype="f4", device=CPU) for _ in range(4)]
    loop(x, outputs[0], 1)  # compile first
    errors = []

    def work(out):
        try:
            loop(x, out, 200)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(out,)) for out in outputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for out in outputs:
        np.testing.assert_array_equal(dpnp.asnumpy(out), 1.0)  # out = 1*x + 1 each time


# --- typing of arguments (patches.argument_typeof_fast_path) -------------------------------


def test_njit_types_usm_arguments_as_numba_typeof_does_on_every_call():
    """The dispatcher's fast path (by each array's C struct) agrees with Numba's typeof, for
    every kind of array, on its first call (Numba's path) and on later ones (the fast path)."""
    other_queue = dpctl.SyclQueue(CPU)
    arrays = [
        dpnp.ones(4, dtype="f4", device=CPU),
        dpnp.ones((3, 4), dtype="i8", device=CPU)[:, ::2],
        dpnp.ones((3, 4), dtype="c8", device=CPU).T,
        dpnp.ones(5, dtype="u2", usm_type="shared", device=CPU),
        dpnp.ones(5, dtype="f8", usm_type="host", device=CPU),
        dpnp.ones(6, dtype="f4", sycl_queue=other_queue),
        dpnp.ones((2, 3), dtype="?", device=CPU).get_array(),
    ]

    @numba.njit
    def first_extent(x):
        return x.shape[0]

    for x in arrays:
        for _ in range(2):
            assert first_extent.typeof_pyval(x) == numba.typeof(x)
            assert first_extent(x) == x.shape[0]
    assert first_extent.typeof_pyval(np.ones(3)) == numba.typeof(np.ones(3))
    assert first_extent.typeof_pyval(object()) == numba.types.pyobject
