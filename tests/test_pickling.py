"""JitKernel pickles (API.md §2): in this process and in a fresh one, without recompiling."""

from __future__ import annotations

import json
import pickle

import cloudpickle
import dpctl
import dpnp
import numpy as np
import pytest
from conftest_kernels import CPU, assert_close, dk, run_python, to_device

F4 = dk.usm_array(dk.float32, 1)
F8 = dk.usm_array(dk.float64, 1)
SIGS = [dk.void(F4, F4, F4), dk.void(F8, F8, F8)]

OFFSET = 0.5


@dk.kernel(SIGS)
def pickled_axpy(a, b, c):
    i = dk.get_global_id(0)
    c[i] = a[i] * 2 + b[i] + OFFSET


@dk.func
def cube(x):
    return x * x * x


def with_func_body(a, out):
    i = dk.get_global_id(0)
    out[i] = cube(a[i]) + 1


@dk.kernel
def pickled_lazy(a, out):
    i = dk.get_global_id(0)
    out[i] = a[i] - 1


DUMPERS = {"pickle": pickle.dumps, "cloudpickle": cloudpickle.dumps}


def _expected(dtype, n=16):
    a = np.arange(n, dtype=dtype)
    return a * 2 + 1 + np.asarray(OFFSET, dtype=dtype)


def _run_axpy(kernel, dtype, n=16):
    a = to_device(np.arange(n, dtype=dtype))
    b = dpnp.ones(n, dtype=dtype)
    c = dpnp.zeros(n, dtype=dtype)
    ev = kernel[n](a, b, c)
    assert isinstance(ev, dpctl.SyclEvent)
    return c


@pytest.mark.parametrize("how", sorted(DUMPERS))
def test_round_trip_in_process(how):
    data = DUMPERS[how](pickled_axpy)
    clone = pickle.loads(data)
    assert clone is not pickled_axpy
    assert clone.__name__ == "pickled_axpy"
    assert clone.signatures == SIGS
    assert list(clone.definitions) == SIGS
    assert clone.stats.compiles == 0
    for sig in SIGS:
        orig, new = pickled_axpy.definitions[sig], clone.definitions[sig]
        assert new.spirv == orig.spirv
        assert new.device == CPU
        assert new.attrs == orig.attrs
        assert isinstance(new.sycl_kernel, dpctl.program.SyclKernel)
    for dtype in ("f4", "f8"):
        assert_close(_run_axpy(clone, dtype), _expected(dtype))
    assert clone.stats.compiles == 0
    # Still eager: a mismatch raises instead of compiling.
    with pytest.raises(dk.KernelSignatureError):
        clone[4](to_device(np.zeros(4, dtype="i4")), dpnp.ones(4), dpnp.ones(4))
    assert clone.stats.compiles == 0
    assert clone.signatures == SIGS


@pytest.mark.parametrize("how", sorted(DUMPERS))
def test_round_trip_of_kernel_calling_device_function(how):
    # Built here, not at import: a compile failure must fail this test only.
    pickled_with_func = dk.kernel(dk.void(F8, F8))(with_func_body)
    clone = pickle.loads(DUMPERS[how](pickled_with_func))
    x = np.linspace(-2, 2, 9)
    out = dpnp.zeros(9)
    clone[9](to_device(x), out)
    assert_close(out, x**3 + 1)
    assert clone.stats.compiles == 0


def test_lazy_kernel_round_trip():
    out = dpnp.zeros(4, dtype="f4")
    pickled_lazy[4](to_device(np.arange(4, dtype="f4")), out)
    clone = pickle.loads(cloudpickle.dumps(pickled_lazy))
    assert clone.signatures == pickled_lazy.signatures
    assert clone.stats.compiles == 0
    out2 = dpnp.zeros(4, dtype="f4")
    clone[4](to_device(np.arange(4, dtype="f4")), out2)
    assert clone.stats.compiles == 0
    assert_close(out2, np.arange(4, dtype="f4") - 1)
    # Still lazy: new types compile once.
    out3 = dpnp.zeros(4, dtype="i8")
    clone[4](to_device(np.arange(4, dtype="i8")), out3)
    assert clone.stats.compiles == 1
    np.testing.assert_array_equal(dpnp.asnumpy(out3), np.arange(4) - 1)


SUBPROCESS_SCRIPT = r"""
import json
import pickle
import sys

path, import_first = sys.argv[1], sys.argv[2] == "1"
if import_first:
    import dpex_kernels as dk  # noqa: F401
with open(path, "rb") as f:
    kernel = pickle.load(f)  # unpickling imports dpex_kernels itself when needed

import dpctl
import dpnp
import numpy as np

import dpex_kernels as dk

report = {
    "name": kernel.__name__,
    "signatures": [str(s) for s in kernel.signatures],
    "compiles_after_load": kernel.stats.compiles,
    "results": {},
}
for dtype in ("f4", "f8"):
    n = 16
    a = dpnp.asarray(np.arange(n, dtype=dtype))
    b = dpnp.ones(n, dtype=dtype)
    c = dpnp.zeros(n, dtype=dtype)
    ev = kernel[n](a, b, c)
    report["is_event"] = isinstance(ev, dpctl.SyclEvent)
    report["results"][dtype] = dpnp.asnumpy(c).tolist()
try:
    kernel[4](dpnp.zeros(4, dtype="i4"), dpnp.zeros(4), dpnp.zeros(4))
    report["mismatch"] = "accepted"
except dk.KernelSignatureError:
    report["mismatch"] = "KernelSignatureError"
report["compiles"] = kernel.stats.compiles
report["device"] = [kernel.definitions[s].device for s in kernel.signatures]
print("REPORT " + json.dumps(report))
"""


@pytest.mark.parametrize(
    ("how", "import_first"),
    [("pickle", "1"), ("cloudpickle", "1"), ("pickle", "0")],
    ids=["pickle", "cloudpickle", "pickle-no-import"],
)
def test_unpickle_and_launch_in_subprocess(tmp_path, how, import_first):
    path = tmp_path / "kernel.pkl"
    path.write_bytes(DUMPERS[how](pickled_axpy))
    proc = run_python(SUBPROCESS_SCRIPT, str(path), import_first)
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("REPORT ")]
    assert lines, (proc.stdout[-2000:], proc.stderr[-2000:])
    report = json.loads(lines[-1][len("REPORT ") :])
    assert report["name"] == "pickled_axpy"
    assert report["signatures"] == [str(s) for s in SIGS]
    assert report["compiles_after_load"] == 0
    assert report["compiles"] == 0
    assert report["is_event"] is True
    assert report["mismatch"] == "KernelSignatureError"
    assert report["device"] == [CPU, CPU]
    for dtype in ("f4", "f8"):
        assert_close(np.array(report["results"][dtype], dtype=dtype), _expected(dtype))


# --- kernels calling device functions, pickled by value ----------------------------------


def _nested_kernel(eager: bool):
    """A kernel calling three levels of device functions (lazy, eager, lazy), built afresh.

    Defined in a function, as in a notebook or __main__: cloudpickle carries everything by
    value, device functions included.
    """

    @dk.func
    def twice(x):
        return x * 2

    @dk.func(dk.float64(dk.float64))
    def plus_one(x):
        return twice(x) + 1

    @dk.func
    def outer(x):
        return plus_one(x) * x

    def nested(a, out):
        i = dk.get_global_id(0)
        out[i] = outer(a[i])

    return dk.kernel(dk.void(F8, F8))(nested) if eager else dk.kernel(nested)


def _nested_expected(x):
    return (2 * x + 1) * x


STATES = ["lazy-unlaunched", "lazy-launched", "eager"]


def _nested_in_state(state: str):
    kernel = _nested_kernel(eager=state == "eager")
    if state == "lazy-launched":
        kernel[4](to_device(np.ones(4)), dpnp.zeros(4))
    return kernel


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("how", sorted(DUMPERS))
def test_kernel_with_nested_device_functions_round_trip(how, state):
    clone = pickle.loads(DUMPERS[how](_nested_in_state(state)))
    x = np.linspace(-3, 3, 16)
    out = dpnp.zeros(16)
    clone[16](to_device(x), out)
    assert_close(out, _nested_expected(x))
    assert clone.stats.compiles == (1 if state == "lazy-unlaunched" else 0)


@dk.func([dk.float64(dk.float64), dk.float32(dk.float32)])
def eager_halve(x):
    return x / 2


def test_device_function_pickles_alone_and_keeps_its_signatures():
    for dumps in DUMPERS.values():
        clone = pickle.loads(dumps(eager_halve))
        assert isinstance(clone, dk.DeviceFunction) and clone is not eager_halve
        assert clone.overloads == {}  # loading compiles nothing
        again = pickle.loads(dumps(clone))  # nor does pickling it again
        assert clone.overloads == {}
        for copy in (clone, again):
            assert copy.nopython_signatures == eager_halve.nopython_signatures
        with pytest.raises(TypeError, match="device function"):
            clone(1.0)


def test_unpickled_eager_device_function_compiles_when_a_new_kernel_calls_it():
    clone = pickle.loads(pickle.dumps(eager_halve))

    @dk.kernel
    def halve_all(a, out):
        i = dk.get_global_id(0)
        out[i] = clone(a[i])

    x = np.arange(8, dtype="f4")
    out = dpnp.zeros(8, dtype="f4")
    halve_all[8](to_device(x), out)
    assert_close(out, x / 2)
    assert len(clone.overloads) == 2  # its declared signatures, no new one


NESTED_SUBPROCESS_SCRIPT = r"""
import json
import pickle
import sys

with open(sys.argv[1], "rb") as f:
    kernel = pickle.load(f)

import dpnp
import numpy as np

report = {"compiles_after_load": kernel.stats.compiles}
x = np.linspace(-3, 3, 16)
out = dpnp.zeros(16)
kernel[16](dpnp.asarray(x), out)
report["f8"] = dpnp.asnumpy(out).tolist()
report["compiles_f8"] = kernel.stats.compiles
if sys.argv[2] == "lazy":  # a new specialisation compiles the device functions here
    out4 = dpnp.zeros(16, dtype="f4")
    kernel[16](dpnp.asarray(x.astype("f4")), out4)
    report["f4"] = dpnp.asnumpy(out4).tolist()
    report["compiles_f4"] = kernel.stats.compiles
print("REPORT " + json.dumps(report))
"""


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("how", sorted(DUMPERS))
def test_nested_device_functions_unpickle_in_fresh_process(tmp_path, how, state):
    path = tmp_path / "nested.pkl"
    path.write_bytes(DUMPERS[how](_nested_in_state(state)))
    kind = "eager" if state == "eager" else "lazy"
    proc = run_python(NESTED_SUBPROCESS_SCRIPT, str(path), kind)
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("REPORT ")]
    assert lines, (proc.stdout[-2000:], proc.stderr[-2000:])
    report = json.loads(lines[-1][len("REPORT ") :])
    x = np.linspace(-3, 3, 16)
    assert report["compiles_after_load"] == 0
    assert report["compiles_f8"] == (1 if state == "lazy-unlaunched" else 0)
    assert_close(np.array(report["f8"]), _nested_expected(x))
    if kind == "lazy":
        assert report["compiles_f4"] == report["compiles_f8"] + 1
        assert_close(np.array(report["f4"], dtype="f4"), _nested_expected(x.astype("f4")))
