"""The compiled launch path (API.md §2 Launch): ordering with dpnp under real races, a cost
that does not grow with the backlog, device limits, and bad input at launch."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import dpctl
import dpnp
import numpy as np
import pytest
from conftest import CPU
from conftest_kernels import spin
from dpctl.utils import SequentialOrderManager

import dpex_kernels as dk
from dpex_kernels.dispatcher import _launcher

F4 = dk.usm_array(dk.float32, 1, device=CPU)
F8 = dk.usm_array(dk.float64, 1, device=CPU)
C16 = dk.usm_array(dk.complex128, 1, device=CPU)
I8 = dk.usm_array(dk.int64, 1, device=CPU)

#: Big enough that dpnp's fills and reductions take longer than a launch (measured races).
N = 1 << 22
TRIALS = 100


@dk.kernel(dk.void(F4, F4))
def plus_one(src, dst):
    i = dk.get_global_id(0)
    dst[i] = src[i] + 1.0


@dk.kernel(dk.void(F4, dk.float32))
def fill_with(dst, value):
    dst[dk.get_global_id(0)] = value


@dk.kernel(dk.void(F4, F4))
def add_into(src, dst):
    i = dk.get_global_id(0)
    dst[i] += src[i]


# --- ordering with dpnp, against producers and consumers that really race ---------------------


@pytest.mark.parametrize(
    "produce",
    [
        pytest.param(lambda t: dpnp.full(N, float(t), dtype="f4", device=CPU), id="dpnp.full"),
        pytest.param(lambda t: _filled_in_place(t), id="x.fill"),
        pytest.param(lambda t: dpnp.ones(N, dtype="f4", device=CPU) * float(t), id="arithmetic"),
    ],
)
def test_kernel_sees_dpnp_work_issued_just_before(produce):
    wrong = 0
    for trial in range(TRIALS):
        src = produce(trial + 2)
        dst = dpnp.empty(N, dtype="f4", device=CPU)
        plus_one[N](src, dst)
        host = dpnp.asnumpy(dst)
        wrong += not np.all(host == np.float32(trial + 3))
    assert wrong == 0, f"{wrong} of {TRIALS} trials read dpnp's data before it was written"


def _filled_in_place(t):
    x = dpnp.empty(N, dtype="f4", device=CPU)
    x.fill(float(t))
    return x


def test_dpnp_reduction_issued_right_after_sees_the_kernel():
    wrong = 0
    out = dpnp.zeros(N, dtype="f4", device=CPU)
    for trial in range(TRIALS):
        fill_with[N](out, np.float32(trial % 7 + 1))
        total = float(dpnp.sum(out))  # no wait: dpnp orders itself after the launch
        wrong += total != N * (trial % 7 + 1)
    assert wrong == 0, f"{wrong} of {TRIALS} sums missed the kernel's writes"


def test_chains_of_kernels_and_dpnp_interleaved_without_waits():
    x = dpnp.zeros(N, dtype="f4", device=CPU)
    acc = dpnp.zeros(N, dtype="f4", device=CPU)
    expected = 0.0
    for trial in range(20):
        x.fill(float(trial))
        add_into[N](x, acc)  # acc += trial
        acc *= 2.0  # dpnp in place, after the kernel
        add_into[N](x, acc)
        expected = (expected + trial) * 2.0 + trial
    np.testing.assert_array_equal(dpnp.asnumpy(acc), np.full(N, expected, dtype="f4"))


def test_dpnp_work_on_another_queue_object_of_the_same_queue_is_ordered():
    src = dpnp.full(N, 5.0, dtype="f4", device=CPU)
    dst = dpnp.empty_like(src)
    for _ in range(10):
        plus_one[N](src, dst)
        src = dst * 1.0  # a new array from dpnp, reading the kernel's output
        dst = dpnp.empty_like(src)
    plus_one[N](src, dst)
    np.testing.assert_array_equal(dpnp.asnumpy(dst), np.full(N, 16.0, dtype="f4"))


@dk.kernel(dk.void(F8, F8, dk.int64))
def shifted_copy(src, dst, shift):
    i = dk.get_global_id(0)
    dst[i] = src[i] + shift


@dk.kernel(dk.void(F8, dk.int64))
def triple_every_other(dst, start):
    i = dk.get_global_id(0) * 2 + start
    dst[i] = dst[i] * 3.0


def test_a_kernel_sees_the_results_of_the_kernel_launched_before_it():
    """Program order on one queue, through the keep-alive ring's releases (every 8th launch):
    the second kernel reads what the first wrote, on arrays dpnp just filled."""
    src = dpnp.asarray(np.random.default_rng(0).random(37), device=CPU)
    host_src = dpnp.asnumpy(src)
    wrong = []
    for trial in range(TRIALS):
        shift = trial % 7
        dst = dpnp.full(37, -1.0, device=CPU)
        shifted_copy[37 - shift](src, dst, shift)
        triple_every_other[len(range(shift, 36, 2))](dst, shift)
        expected = np.full(37, -1.0)
        expected[: 37 - shift] = host_src[: 37 - shift] + shift
        expected[shift:36:2] *= 3
        if not np.array_equal(dpnp.asnumpy(dst), expected):
            wrong.append(trial)
    assert not wrong, f"{len(wrong)} of {TRIALS} trials ran the second kernel out of order"


# --- a launch's cost does not depend on the backlog -----------------------------------------


def test_launches_do_not_pile_up_in_dpctls_order_manager():
    a = dpnp.ones(1, dtype="f8", device=CPU)
    queue = a.sycl_queue
    spin[1](a, 200_000_000)  # about 0.3 s here: keeps what follows pending
    for _ in range(2000):
        last = spin[1](a, 1)
    pending = SequentialOrderManager[queue]._state.get_num_submitted_events()
    assert pending <= 2, f"{pending} of our launches were registered one by one"
    # Reading the manager as dpnp does hands it the newest launch, which covers the rest; the
    # manager drops events that are complete, so an empty list is right only once it is done.
    events = SequentialOrderManager[queue].submitted_events
    done = last.execution_status == dpctl.event_status_type.complete
    assert events or done, "the newest launch was pending but not handed to the manager"
    dpctl.SyclEvent.wait_for(events)
    _launcher.drain()
    assert _launcher.in_flight() == 0


def test_keep_alive_ring_drains_and_backs_off_when_full():
    x = dpnp.zeros(64, dtype="f4", device=CPU)
    for _ in range(3 * _launcher.MAX_IN_FLIGHT):  # more launches than may be in flight
        fill_with[64](x, 3.0)
        assert _launcher.in_flight() <= _launcher.MAX_IN_FLIGHT
    _launcher.drain()
    assert _launcher.in_flight() == 0
    np.testing.assert_array_equal(dpnp.asnumpy(x), 3.0)


def test_ring_release_never_frees_a_pending_launch_of_another_queue():
    """Another queue's launches among completed ones in the keep-alive ring, still pending,
    keep their arguments whatever the release infers (each `lead` puts them at other places
    among the ring's releases)."""
    slow, fast = dpctl.SyclQueue(CPU), dpctl.SyclQueue(CPU)
    gate = dpnp.zeros(1, dtype="f8", sycl_queue=slow)
    quick = dpnp.zeros(64, dtype="f4", sycl_queue=fast)
    held = [dpnp.zeros(64, dtype="f4", sycl_queue=slow) for _ in range(2)]
    before = [sys.getrefcount(x) for x in held]
    informative = 0
    for lead in range(1, 9):
        _launcher.drain()
        for _ in range(lead):
            fill_with[64](quick, 1.0)
        gated = spin[1](gate, 150_000_000)  # about 0.25 s: what follows on `slow` waits
        [fill_with[64](x, float(lead)) for x in held]  # a comprehension: no name stays bound
        for _ in range(2):  # these complete at once; every 8th launch releases the ring
            for _ in range(16):
                last = fill_with[64](quick, 3.0)
            last.wait()
        alive = [sys.getrefcount(x) for x in held]
        if gated.execution_status != dpctl.event_status_type.complete:
            informative += 1
            assert alive == [n + 1 for n in before], f"lead {lead}: a pending launch was freed"
        _launcher.drain()
        assert [sys.getrefcount(x) for x in held] == before
        np.testing.assert_array_equal([dpnp.asnumpy(x) for x in held], float(lead))
    assert informative, "every gate ended before the check: nothing was shown"


# --- device limits, before anything is submitted ----------------------------------------------


@pytest.mark.parametrize("launch_range", [2**31, (2**16, 2**16), (2**11, 2**10, 2**10)])
def test_ranges_the_runtime_cannot_index_raise_invalid_range_error(launch_range):
    a = dpnp.zeros(1, dtype="f8", device=CPU)
    with pytest.raises(dk.InvalidRangeError, match=r"2147483647.*spin|spin.*2147483647"):
        spin[launch_range](a, 1)


def test_local_arrays_larger_than_local_memory_are_a_compile_error():
    too_many = dpctl.SyclDevice(CPU).local_mem_size // 8 + 1

    def big_local(a):
        tile = dk.local.array(too_many, dk.float64)
        i = dk.get_local_id(0)
        tile[i] = a[i]
        dk.barrier()
        a[i] = tile[too_many - 1 - i]

    with pytest.raises(dk.KernelCompileError, match=rf"big_local.*{too_many * 8} bytes"):
        dk.kernel(dk.void(F8))(big_local)


# --- scalars: one set of rules -----------------------------------------------------------------


@dk.kernel(dk.void(C16, dk.complex128))
def store_complex(out, value):
    out[dk.get_global_id(0)] = value


@pytest.mark.parametrize("value", [1 + 2j, np.complex128(3 - 1j), np.complex64(0.5 + 0.25j)])
def test_eager_complex_parameter_takes_python_and_numpy_complex(value):
    out = dpnp.zeros(4, dtype="c16", device=CPU)
    store_complex[4](out, value)
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.full(4, complex(value)))


@dk.kernel([dk.void(I8, dk.int32), dk.void(I8, dk.int64)])
def store_int(out, value):
    out[0] = value


def test_int_too_big_for_the_first_signature_uses_the_next_every_time():
    out = dpnp.zeros(1, dtype="i8", device=CPU)
    for value in (5, 2**40 + 5, 7, -(2**35), 2**31 - 1):
        store_int[1](out, value)
        assert int(dpnp.asnumpy(out)[0]) == value


def test_int_beyond_int64_is_a_signature_error_not_an_overflow():
    @dk.kernel
    def store(out, value):
        out[0] = value

    out = dpnp.zeros(1, dtype="i8", device=CPU)
    store[1](out, 3)
    with pytest.raises(dk.KernelSignatureError, match="value"):
        store[1](out, 2**70)


# --- bad input at launch -----------------------------------------------------------------------


def test_keyword_arguments_at_launch_name_the_kernel():
    a = dpnp.zeros(4, dtype="f4", device=CPU)
    with pytest.raises(TypeError, match=r"kernel 'plus_one'.*depends_on.*'dst'"):
        plus_one[4](a, dst=a)


class _Malformed:
    def __init__(self, interface):
        self.__sycl_usm_array_interface__ = interface


@pytest.mark.parametrize(
    "interface",
    [
        {},
        {"shape": (4,), "typestr": "<f4"},
        {"data": (0, False), "shape": "four", "typestr": "<f4"},
        {"data": None, "shape": (4,), "typestr": "<f4"},
        {"data": (123, False), "shape": (4,), "typestr": "not a dtype"},
    ],
    ids=["empty", "no-data", "bad-shape", "data-none", "bad-typestr"],
)
def test_malformed_usm_interface_is_a_type_error_naming_the_argument(interface):
    good = dpnp.zeros(4, dtype="f4", device=CPU)
    with pytest.raises(TypeError, match=r"argument 1 'dst'.*_Malformed"):
        plus_one[4](good, _Malformed(interface))


def test_third_party_arrays_launch_through_a_view():
    src = dpnp.arange(8, dtype="f4", device=CPU)
    dst = dpnp.zeros(8, dtype="f4", device=CPU)
    plus_one[8](_Malformed(src.__sycl_usm_array_interface__), dst)
    np.testing.assert_array_equal(dpnp.asnumpy(dst), np.arange(8, dtype="f4") + 1)


def test_finalizers_that_launch_while_the_ring_releases_are_safe():
    """Releasing a launch drops its arguments; a third-party array's finalizer that launches
    (and so releases the ring again) runs in the middle of a release."""
    code = textwrap.dedent(
        f"""
        import dpnp, numpy as np
        import dpex_kernels as dk
        from dpex_kernels.dispatcher import _launcher
        F4 = dk.usm_array(dk.float32, 1, device="{CPU}")

        @dk.kernel(dk.void(F4, F4))
        def add_into(src, dst):
            i = dk.get_global_id(0)
            dst[i] += src[i]

        ones = dpnp.ones(64, dtype="f4", device="{CPU}")
        total = dpnp.zeros(64, dtype="f4", device="{CPU}")

        class Foreign:  # only its interface: launches read it through a usm_ndarray view
            def __init__(self):
                self.__sycl_usm_array_interface__ = ones.__sycl_usm_array_interface__
            def __del__(self):
                add_into[64](ones, total)

        for _ in range(3000):
            add_into[64](Foreign(), total)
        _launcher.drain()
        np.testing.assert_array_equal(dpnp.asnumpy(total), 6000.0)
        assert _launcher.in_flight() == 0
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_opt_level_outside_0_to_3_is_a_value_error():
    for bad in (99, -1, True, 2.0):
        with pytest.raises(ValueError, match="opt_level"):

            @dk.kernel(opt_level=bad)
            def k(a):
                pass


# --- import-time checks and process exit ---------------------------------------------------


def _run(script: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize("package", ["dpnp", "dpctl"])
def test_unsupported_dpnp_or_dpctl_version_is_an_import_error(package):
    done = _run(
        f"""
        import dpex_kernels, {package}
        {package}.__version__ = "9.9.0"
        try:
            import dpex_kernels.dispatcher.launch
        except ImportError as exc:
            print("ImportError:", exc)
        """
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ImportError:" in done.stdout and "9.9.0" in done.stdout, done.stdout


#: A child's start: a one-work-item kernel that runs for as many rounds as it is told.
_SPIN = """
import dpnp, dpex_kernels as dk
a = dpnp.ones(1, dtype="f8")

@dk.kernel
def spin(a, rounds):
    x = a[0]
    for _ in range(rounds):
        x = x * 0.999999 + 1e-6
    a[0] = x
"""


def test_exit_with_thousands_of_launches_in_flight():
    done = _run(
        _SPIN
        + textwrap.dedent(
            """
            spin[1](a, 3_000_000)
            for _ in range(5000):
                spin[1](a, 1)
            print("submitted", flush=True)
            """
        )
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "submitted" in done.stdout
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_ctrl_c_while_exit_waits_for_a_kernel_is_quiet():
    script = _SPIN + textwrap.dedent(
        """
        spin[1](a, 1)
        spin[1](a, 400_000_000)
        print("exiting", flush=True)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "exiting"
    time.sleep(0.5)  # the interpreter is in its exit handlers, waiting for the kernel
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=300)
    assert "Exception ignored" not in stderr and "Traceback" not in stderr, stderr[-2000:]


def test_loading_the_launcher_runs_no_dpnp_kernel():
    """The layout probes read arrays' structs, not their values: filling or copying one built
    dpnp's own kernels for the device, 0.2-0.4 s of every process's first launch."""
    script = textwrap.dedent(
        """
        import dpnp.tensor as dpt

        def refuse(*args, **kwargs):
            raise AssertionError("a dpnp kernel ran while the launcher loaded")

        for name in ("arange", "asarray", "full", "zeros", "ones", "copy", "astype"):
            setattr(dpt, name, refuse)
        from dpex_kernels.dispatcher import _native

        assert _native.launcher is not None
        print("loaded")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("loaded")
