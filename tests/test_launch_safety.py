"""Debug-mode bounds checks, interpreter exit with kernels in flight, concurrent launches."""

import subprocess
import sys
import textwrap
import threading

import dpnp
import numpy as np
import pytest

import dpex_kernels as dk


@dk.kernel(debug=True)
def _shifted_store(a, shift):
    i = dk.get_global_id(0)
    a[i + shift] = i


def test_debug_kernel_in_bounds_runs_normally():
    x = dpnp.zeros(16)
    _shifted_store[16](x, 0)
    np.testing.assert_array_equal(dpnp.asnumpy(x), np.arange(16))


@pytest.mark.parametrize("shift", [1, 100, -100])
def test_debug_kernel_out_of_bounds_raises_and_writes_nothing_outside(shift):
    backing = dpnp.full(48, -1.0)
    view = backing[16:32]
    with pytest.raises(dk.KernelBoundsError, match="_shifted_store"):
        _shifted_store[16](view, shift)
    host = dpnp.asnumpy(backing)
    np.testing.assert_array_equal(host[:16], -1.0)
    np.testing.assert_array_equal(host[32:], -1.0)


def test_kernel_bounds_error_is_an_index_error():
    assert issubclass(dk.KernelBoundsError, IndexError)


def test_interpreter_exit_with_kernels_in_flight_neither_crashes_nor_hangs():
    script = textwrap.dedent(
        """
        import dpnp
        import dpex_kernels as dk

        @dk.kernel
        def spin(a, rounds):
            i = dk.get_global_id(0)
            x = a[i]
            for _ in range(rounds):
                x = x * 0.999 + 1.0
            a[i] = x

        for _ in range(20):
            spin[1 << 16](dpnp.ones(1 << 16, dtype="f4"), 2000)
        print("submitted")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "submitted" in done.stdout


def test_interpreter_exit_while_the_build_thread_warms_up_does_not_abort():
    # Making a kernel starts the runtime's set-up in the build thread; a script that ends a
    # few milliseconds later (here: one more import) used to exit while that build ran, and
    # the runtime's destructors aborted the process ("Pure virtual function called!").
    script = textwrap.dedent(
        """
        import dpex_kernels as dk

        @dk.kernel
        def unused(a):
            pass

        import difflib
        """
    )
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert "Pure virtual" not in done.stderr


@dk.kernel
def _axpy(x, y, out, alpha):
    i = dk.get_global_id(0)
    out[i] = alpha * x[i] + y[i]


def test_concurrent_launches_from_threads_are_all_correct():
    n = 4096
    x = dpnp.asarray(np.arange(n, dtype=np.float64))
    y = dpnp.ones(n)
    _axpy[n](x, y, dpnp.empty(n), 1.0).wait()
    outputs = [dpnp.empty(n) for _ in range(8)]
    errors = []

    def work(index):
        try:
            for _ in range(50):
                _axpy[n](x, y, outputs[index], float(index))
        except Exception as exc:  # collected and asserted on below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    host_x = np.arange(n, dtype=np.float64)
    for index, out in enumerate(outputs):
        np.testing.assert_allclose(dpnp.asnumpy(out), index * host_x + 1.0)
    assert _axpy.stats.compiles == 1


def test_missing_device_aspect_is_named_before_the_runtime_build(monkeypatch):
    from dpex_kernels import device as device_module

    class _NoFp64Device:
        filter_string = "opencl:cpu:0"
        name = "a device without fp64"
        has_aspect_fp64 = False

    class _Queue:
        sycl_context = object()
        sycl_device = _NoFp64Device()

    monkeypatch.setattr(device_module, "_kernels", {})
    with pytest.raises(dk.KernelCompileError, match="fp64"):
        device_module.build_kernel(b"\x03\x02\x23\x07", "k", _Queue(), ("fp64",))


@dk.kernel(debug=True)
def _refuse_tail(a):
    i = dk.get_global_id(0)
    if i > 2:
        raise ValueError("too far")
    a[i] = 1.0


def test_debug_kernel_reraises_a_constant_exception_on_the_host():
    x = dpnp.zeros(4)
    with pytest.raises(ValueError, match="_refuse_tail.*too far"):
        _refuse_tail[4](x)
    np.testing.assert_array_equal(dpnp.asnumpy(x), [1.0, 1.0, 1.0, 0.0])


def test_without_debug_a_raising_work_item_just_stops():
    @dk.kernel
    def refuse_tail(a):
        i = dk.get_global_id(0)
        if i > 2:
            raise ValueError("too far")
        a[i] = 1.0

    x = dpnp.zeros(4)
    refuse_tail[4](x).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(x), [1.0, 1.0, 1.0, 0.0])
