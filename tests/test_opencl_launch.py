"""Launches from compiled code go straight to OpenCL on OpenCL queues (docs/launcher.md).

The launcher enqueues them on the SYCL queue's own cl_command_queue with a cl_kernel of each
Binding's own, whose arguments stay set between launches; launches with dependencies, from
Python, or after one through SYCL go through SYCL. Each test checks results against NumPy.
"""

from __future__ import annotations

import textwrap

import dpctl
import dpnp
import numba
import numpy as np
import pytest
from conftest import CPU
from conftest_kernels import run_python, spin
from hypothesis import given
from hypothesis import strategies as st

import dpex_kernels as dk

F4 = dk.usm_array(dk.float32, 1, device=CPU)
N = 64


@dk.kernel(dk.void(F4, F4, dk.float32, dk.float32))
def accumulate(x, out, alpha, beta):
    i = dk.get_global_id(0)
    out[i] = out[i] * alpha + x[i] + beta


@dk.kernel(debug=True)
def shifted_store(a, shift):
    i = dk.get_global_id(0)
    a[i + shift] = i


@numba.njit
def _run_plan(inputs0, inputs1, out0, out1, plan):
    """Launch `accumulate` once per plan row: (input, output, alpha, beta)."""
    for k in range(plan.shape[0]):
        x = inputs0 if plan[k, 0] == 0 else inputs1
        out = out0 if plan[k, 1] == 0 else out1
        accumulate[N](x, out, np.float32(plan[k, 2]), np.float32(plan[k, 3]))


def _bindings(kernel) -> list:
    return [b for compiled in kernel.definitions.values() for b in compiled.bindings.values()]


@given(
    st.lists(
        st.tuples(
            st.integers(0, 1), st.integers(0, 1), st.sampled_from([-1, 1]), st.integers(-9, 9)
        ),
        min_size=1,
        max_size=24,
    )
)
def test_arguments_left_set_between_launches_change_with_each_call(plan):
    """Which arrays and scalars each launch gets changes from one launch to the next; the
    cl_kernel keeps the previous launch's arguments, so only what changed is set again."""
    host_in = [np.arange(N, dtype="f4"), np.arange(N, dtype="f4")[::-1].copy()]
    inputs = [dpnp.asarray(h, device=CPU) for h in host_in]
    outs = [dpnp.zeros(N, dtype="f4", device=CPU) for _ in range(2)]
    expected = [np.zeros(N, dtype="f4") for _ in range(2)]
    for which_in, which_out, alpha, beta in plan:
        expected[which_out] = expected[which_out] * alpha + host_in[which_in] + beta
    _run_plan(*inputs, *outs, np.array(plan, dtype=np.int64))
    for out, want in zip(outs, expected):
        np.testing.assert_array_equal(dpnp.asnumpy(out), want)
    assert all(b.opencl for b in _bindings(accumulate))


def test_queue_wait_waits_for_launches_on_opencl():
    """queue.wait() finishes SYCL's OpenCL queue, so it covers launches enqueued on it."""

    @numba.njit
    def gated(gate, x, out):
        spin[1](gate, 200_000_000)  # about 0.3 s here: the launches after it stay pending
        event = accumulate[N](x, out, np.float32(1.0), np.float32(1.0))
        for _ in range(20):
            event = accumulate[N](x, out, np.float32(1.0), np.float32(1.0))
        return event

    gate = dpnp.zeros(1, dtype="f8", device=CPU)
    x = dpnp.asarray(np.arange(N, dtype="f4"), device=CPU)
    out = dpnp.zeros(N, dtype="f4", device=CPU)
    event = gated(gate, x, out)
    assert isinstance(event, dpctl.SyclEvent)
    assert event.execution_status != dpctl.event_status_type.complete
    out.sycl_queue.wait()
    assert event.execution_status == dpctl.event_status_type.complete
    np.testing.assert_array_equal(dpnp.asnumpy(out), 21 * (np.arange(N, dtype="f4") + 1))


@numba.njit
def _first_and_last(gate, x, out, before, after, rounds):
    """`before` launches, then the one whose event is kept, then `after` more, behind a gate
    of `rounds` steps: (the kept launch's event, the last one's)."""
    spin[1](gate, rounds)
    for _ in range(before):
        accumulate[N](x, out, np.float32(1.0), np.float32(1.0))
    first = accumulate[N](x, out, np.float32(1.0), np.float32(1.0))
    last = first
    for _ in range(after):
        last = accumulate[N](x, out, np.float32(1.0), np.float32(1.0))
    return first, last


@pytest.mark.parametrize("before", range(8))
def test_an_earlier_launchs_event_waits_for_that_launch(before):
    """The launcher lets go of a compiled launch's cl_event once the next launch on its queue
    is enqueued after it (the later launch then answers for it, docs/launcher.md): whatever
    its position among those launches, an earlier launch's event is pending while the gate
    holds it and waiting for it sees its result."""
    gate = dpnp.zeros(1, dtype="f8", device=CPU)
    x = dpnp.asarray(np.arange(N, dtype="f4"), device=CPU)
    out = dpnp.zeros(N, dtype="f4", device=CPU)
    first, last = _first_and_last(gate, x, out, before, 10, 100_000_000)
    assert first.execution_status != dpctl.event_status_type.complete
    first.wait()
    assert first.execution_status == dpctl.event_status_type.complete
    done = dpnp.asnumpy(out) / (np.arange(N, dtype="f4") + 1)
    assert before + 1 <= done[0] <= before + 11 and np.all(done == done[0])
    last.wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), (before + 11) * (np.arange(N) + 1.0))


@pytest.mark.parametrize("before", range(8))
def test_on_a_profiling_queue_each_compiled_launch_keeps_its_own_event(before):
    """On a profiling queue no launch's event stands in for another's: the first of two
    launches in program order ends before the second starts."""
    queue = dpctl.SyclQueue(CPU, property="enable_profiling")
    gate = dpnp.zeros(1, dtype="f8", sycl_queue=queue)
    x = dpnp.asarray(np.arange(N, dtype="f4"), sycl_queue=queue)
    out = dpnp.zeros(N, dtype="f4", sycl_queue=queue)
    first, last = _first_and_last(gate, x, out, before, 1, 1000)
    last.wait()
    first.wait()
    assert first.profiling_info_end <= last.profiling_info_start


def test_python_and_compiled_launches_interleave_in_program_order():
    """A launch from Python depends on the compiled launches before it (a sycl::event made of
    their cl_event), and the compiled ones after it wait for it through SYCL."""

    @numba.njit
    def twice(x, out, alpha):
        accumulate[N](x, out, alpha, np.float32(0.0))
        accumulate[N](x, out, alpha, np.float32(0.0))

    x = dpnp.asarray(np.ones(N, dtype="f4"), device=CPU)
    out = dpnp.zeros(N, dtype="f4", device=CPU)
    expected = np.zeros(N, dtype="f4")
    for step in range(6):
        twice(x, out, np.float32(2.0))
        accumulate[N](x, out, np.float32(-1.0), np.float32(step))
        for alpha, beta in ((2, 0), (2, 0), (-1, step)):
            expected = expected * alpha + 1 + beta
    np.testing.assert_array_equal(dpnp.asnumpy(out), expected)


def test_a_debug_kernel_launched_on_opencl_raises_its_error_from_compiled_code():
    @numba.njit
    def store(a, shift):
        shifted_store[16](a, shift)

    backing = dpnp.full(48, -1.0, device=CPU)
    store(backing[16:32], 0)
    with pytest.raises(dk.KernelBoundsError, match="shifted_store"):
        store(backing[16:32], 100)
    host = dpnp.asnumpy(backing)
    np.testing.assert_array_equal(host[16:32], np.arange(16))
    np.testing.assert_array_equal(np.r_[host[:16], host[32:]], -1.0)
    assert all(b.opencl for b in _bindings(shifted_store))


REUSED_ADDRESSES = """
import dpnp, numpy as np
import dpex_kernels as dk

@dk.offload
def reductions(a, b):  # partial-result buffers allocated and freed in every call
    return a.sum(), (a - b).min(), dpnp.amax(a)

rng = np.random.default_rng(0)
for k in range(100):
    a, b = rng.random(700).astype("f4"), rng.random(700).astype("f4")
    got = reductions(dpnp.asarray(a), dpnp.asarray(b))
    np.testing.assert_allclose(got, (a.sum(), (a - b).min(), a.max()), rtol=1e-5)
print("ok")
"""


def test_arrays_at_a_freed_arrays_address_are_set_again(tmp_path):
    """The runtime ties a USM pointer argument to its allocation when it is set: keeping the
    pointer set once its launch's arrays were freed crashed a later launch on new arrays at
    the same address: wrong minima or a crash within 100 calls of this offloaded function. A
    subprocess, so that a crash is a failure rather than the end of the test run."""
    script = tmp_path / "reused.py"  # a file: @dk.offload reads the function's source
    script.write_text(textwrap.dedent(REUSED_ADDRESSES))
    done = run_python(f"import runpy; runpy.run_path({str(script)!r})", timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "ok"


SYCL_ONLY = """
import os
os.environ["DPEX_KERNELS_OPENCL_LAUNCH"] = "0"  # read when dpex_kernels' launcher loads
import dpnp, numba, numpy as np
import dpex_kernels as dk

@dk.kernel
def add_one(x):
    i = dk.get_global_id(0)
    x[i] += 1

@numba.njit
def loop(x, times):
    for _ in range(times):
        add_one[x.shape[0]](x)

x = dpnp.zeros(1000, dtype="f4")
loop(x, 50)
assert (dpnp.asnumpy(x) == 50).all()
(compiled,) = add_one.definitions.values()
print([b.opencl for b in compiled.bindings.values()])
"""


def test_dpex_kernels_opencl_launch_0_sends_compiled_launches_through_sycl():
    """The path every other backend (Level Zero) takes, chosen here by the variable."""
    done = run_python(textwrap.dedent(SYCL_ONLY), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "[False]"
