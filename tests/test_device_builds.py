"""Device builds (device.py): a deleted kernel frees its program on the device (issue 8).

dpctl 0.22 kept every program it built from SPIR-V (1.9 MB each on the CPU runtime), and the
build memo kept every build of the process; now the leaked references are released and a
build lives while a kernel holds it, and a little after.
"""

import ctypes
import gc
import json
import subprocess
import threading

import dpnp
import numpy as np
import pytest
from conftest_kernels import run_python

import dpex_kernels as dk
from dpex_kernels import device, program_binaries
from dpex_kernels._spawn import tool
from dpex_kernels.program_binaries import (
    CL_KERNEL_PROGRAM,
    CL_KERNEL_REFERENCE_COUNT,
    CL_PROGRAM_REFERENCE_COUNT,
    query,
)


def _new_kernel(k: int):
    namespace = {"dk": dk}
    source = f"def scale(a, out):\n    i = dk.get_global_id(0)\n    out[i] = a[i] * {k}\n"
    exec(source, namespace)
    return dk.kernel(namespace["scale"])


def _launch(kernel, k: int) -> None:
    a = dpnp.arange(8, dtype="f4")
    out = dpnp.zeros(8, dtype="f4")
    kernel[8](a, out).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.arange(8, dtype="f4") * k)


def _reference_counts(sycl_kernel) -> tuple[int, int | None]:
    """The cl_kernel's and its cl_program's reference counts, less the query's own.

    The program's is None once only its kernel holds it (OpenCL then refuses the handle).
    """
    api = program_binaries.native_api()
    handle = api.kernel_native(sycl_kernel.addressof_ref())
    try:
        kernel_refs, program, program_refs = ctypes.c_uint32(), ctypes.c_void_p(), ctypes.c_uint32()
        query(api.kernel_info, handle, CL_KERNEL_REFERENCE_COUNT, kernel_refs)
        query(api.kernel_info, handle, CL_KERNEL_PROGRAM, program)
        try:
            query(api.program_info, program.value, CL_PROGRAM_REFERENCE_COUNT, program_refs)
        except OSError:
            program_refs = None
    finally:
        api.release_kernel(handle)
    return kernel_refs.value - 1, program_refs and program_refs.value


def test_a_build_holds_only_the_sycl_runtimes_references():
    kernel = _new_kernel(3)
    _launch(kernel, 3)
    (compiled,) = kernel.definitions.values()
    assert program_binaries.native_api() is not None
    assert _reference_counts(compiled.sycl_kernel) == (1, None)  # was (2, 2): dpctl's leaks


def test_a_deleted_kernels_build_leaves_the_memo_after_a_few_others():
    before = set(device._kernels)
    kernel = _new_kernel(5)
    _launch(kernel, 5)
    mine = set(device._kernels) - before
    assert mine
    del kernel
    gc.collect()
    assert mine <= set(device._unowned)
    before = set(device._kernels)
    redefined = _new_kernel(5)  # the same source: its builds are reused, not rebuilt
    _launch(redefined, 5)
    assert set(device._kernels) == before and not mine & set(device._unowned)
    del redefined
    gc.collect()
    others = [_new_kernel(10 + k) for k in range(device.KEEP_UNOWNED)]
    for k, other in enumerate(others):
        _launch(other, 10 + k)
    del others, other
    gc.collect()
    assert not mine & set(device._kernels)


CHURN = """
import gc, json
from pathlib import Path
import dpex_kernels as dk
import dpnp

def rss_mib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

a = dpnp.arange(64, dtype="f4")
out = dpnp.empty_like(a)

def once(k):
    namespace = {"dk": dk}
    exec(f"def churn(a, out):\\n    out[dk.get_global_id(0)] = a[dk.get_global_id(0)] * {k}\\n",
         namespace)
    dk.kernel(namespace["churn"])[64](a, out).wait()

for k in range(20):  # more than the unowned builds the memo keeps
    once(k)
gc.collect()
before = rss_mib()
for k in range(20, 60):
    once(k)
gc.collect()
print(json.dumps({"per_kernel_mib": (rss_mib() - before) / 40}))
"""


@pytest.mark.timeout(600)
def test_deleted_lazy_specialisations_do_not_keep_their_device_builds():
    """Resident memory per deleted specialisation: 1.9 MiB before, about 0.15 MiB now."""
    run = run_python(CHURN, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    per_kernel = json.loads(run.stdout.strip().splitlines()[-1])["per_kernel_mib"]
    assert per_kernel < 0.8, f"{per_kernel:.2f} MiB stays resident per deleted kernel"


# --- the build thread -------------------------------------------------------------------------


def test_the_empty_warm_up_kernel_is_valid_spirv_and_builds(tmp_path):
    spirv = device._empty_kernel_spirv()
    path = tmp_path / "warm_up.spv"
    path.write_bytes(spirv)
    subprocess.run([tool("spirv-val"), str(path)], check=True)
    assert device._build_empty_program(dpnp.empty(1).sycl_device)


def test_every_build_runs_in_the_one_build_thread(monkeypatch):
    threads = []
    original = device.dpctl_program.create_program_from_spirv

    def recording(queue, spirv):
        threads.append(threading.current_thread().name)
        return original(queue, spirv)

    monkeypatch.setattr(device.dpctl_program, "create_program_from_spirv", recording)
    for k in (101, 102):
        _launch(_new_kernel(k), k)
    assert len(threads) == 2 and len(set(threads)) == 1
    assert threads[0].startswith("dpex_kernels-build")


def test_a_collection_in_the_build_thread_can_release_another_build(monkeypatch):
    """A kernel collected while the build thread runs Python must not deadlock the build that
    the main thread waits for (its finalizer takes the memo's lock)."""
    doomed = _new_kernel(103)
    _launch(doomed, 103)
    doomed.cycle = doomed  # only a collection frees it
    del doomed
    original = device.dpctl_program.create_program_from_spirv
    collected = []

    def collecting(queue, spirv):
        collected.append(gc.collect())
        return original(queue, spirv)

    monkeypatch.setattr(device.dpctl_program, "create_program_from_spirv", collecting)
    worker = threading.Thread(target=_launch, args=(_new_kernel(104), 104))
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the build deadlocked"
    assert collected and collected[0] > 0


def test_a_forked_child_gets_a_build_thread_of_its_own():
    """Only the forking thread survives a fork: work queued for the parent's build thread
    would wait for ever. (Whether SYCL itself works in the child is SYCL's matter.)"""
    code = """
import os
from dpex_kernels import device, program_binaries
from dpex_kernels.program_binaries import (
    CL_KERNEL_PROGRAM,
    CL_KERNEL_REFERENCE_COUNT,
    CL_PROGRAM_REFERENCE_COUNT,
    query,
)

assert device._build_thread().submit(lambda: 1).result() == 1  # the parent's thread runs
pid = os.fork()
if pid == 0:
    fresh = device._builder is None and device._build_thread().submit(lambda: 2).result() == 2
    os._exit(0 if fresh else 1)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""
    result = run_python(code, timeout=120)
    assert result.stdout.strip().splitlines()[-1] == "0", result.stderr


def test_making_a_kernel_sets_the_build_thread_up_for_the_default_device():
    """The runtime's first-build cost is paid while the program goes on, so that a first
    launch from the cache does not wait for it; a process with no device makes kernels all the
    same (the launch says what is missing)."""
    code = """
import dpex_kernels as dk
from dpex_kernels import device, program_binaries
from dpex_kernels.program_binaries import (
    CL_KERNEL_PROGRAM,
    CL_KERNEL_REFERENCE_COUNT,
    CL_PROGRAM_REFERENCE_COUNT,
    query,
)
from dpex_kernels._runtime import default_device

assert not device._warmed
@dk.kernel
def nothing(a):
    pass
name = default_device().filter_string
assert device._warmed == {name}, device._warmed
assert device._build_thread().submit(lambda: 1).result(timeout=60) == 1  # behind the warm-up
print("ok")
"""
    result = run_python(code, timeout=120)
    assert result.stdout.strip().splitlines()[-1] == "ok", result.stderr


def test_without_a_device_making_a_kernel_warms_nothing(monkeypatch):
    def no_device():
        raise dk.DeviceNotFoundError("no device here")

    monkeypatch.setattr(device, "default_device", no_device)
    monkeypatch.setattr(device, "_warmed", set())
    submitted = []
    monkeypatch.setattr(device, "_build_thread", lambda: submitted.append(1))
    device.warm_up_builds()
    assert submitted == [] and device._warmed == set()
