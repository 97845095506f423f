"""API.md §5: the OpenCL ICD bootstrap, and device lookup (§1's device row)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import dpctl
import pytest

import dpex_kernels as dk
from dpex_kernels import _runtime
from tests.conftest import param_id

ROOT = Path(__file__).resolve().parent.parent
ICD_VARIABLES = ("OCL_ICD_FILENAMES", "OCL_ICD_VENDORS")
CPU = "opencl:cpu:0"


def run_python(code: str, **env_changes: str | None) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter of this venv, with the ICD variables of the user's
    choosing (None removes one), and the package importable from the checkout."""
    env = dict(os.environ)
    for name in ICD_VARIABLES:  # the parent's values may come from our own bootstrap
        env.pop(name, None)
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


REPORT = """
    import json, os
    before = {k: os.environ.get(k) for k in ("OCL_ICD_FILENAMES", "OCL_ICD_VENDORS")}
    import dpex_kernels
    import dpctl
    after = {k: os.environ.get(k) for k in ("OCL_ICD_FILENAMES", "OCL_ICD_VENDORS")}
    devices = [d.filter_string for d in dpctl.get_devices()]
    print(json.dumps({"before": before, "after": after, "devices": devices}))
"""


def report(**env_changes: str | None) -> dict:
    result = run_python(REPORT, **env_changes)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def libintelocl() -> Path:
    return Path(sys.prefix) / "lib" / "libintelocl.so"


# --------------------------------------------------------------------------------------------
# The bootstrap never overrides what the user set
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["/nonexistent/libOpenCL-vendor.so", "real-library", ""],
    ids=["bogus-path", "real-library", "empty"],
)
def test_user_set_ocl_icd_filenames_is_never_overridden(value):
    if value == "real-library":
        value = str(libintelocl())
    got = report(OCL_ICD_FILENAMES=value)
    assert got["before"]["OCL_ICD_FILENAMES"] == value
    assert got["after"]["OCL_ICD_FILENAMES"] == value


@pytest.mark.parametrize(
    "value", ["/nonexistent-vendors-dir", "vendors-dir", ""], ids=["bogus-dir", "real-dir", "empty"]
)
def test_user_set_ocl_icd_vendors_is_never_overridden(value, tmp_path):
    if value == "vendors-dir":
        (tmp_path / "intel.icd").write_text(f"{libintelocl()}\n")
        value = str(tmp_path)
    got = report(OCL_ICD_VENDORS=value)
    assert got["after"]["OCL_ICD_VENDORS"] == value
    if value:
        # The user chose the vendors: the package must not point the loader elsewhere either.
        assert got["after"]["OCL_ICD_FILENAMES"] is None


def test_user_choice_of_runtime_is_what_dpctl_sees():
    got = report(OCL_ICD_FILENAMES=str(libintelocl()))
    assert any(d.startswith("opencl:cpu") for d in got["devices"])
    got = report(OCL_ICD_FILENAMES="/nonexistent/libOpenCL-vendor.so")
    assert got["after"]["OCL_ICD_FILENAMES"] == "/nonexistent/libOpenCL-vendor.so"
    assert not any(d.startswith("opencl:cpu") for d in got["devices"])


def test_fresh_environment_finds_the_opencl_cpu_device():
    got = report(OCL_ICD_FILENAMES=None, OCL_ICD_VENDORS=None)
    assert got["before"] == {"OCL_ICD_FILENAMES": None, "OCL_ICD_VENDORS": None}
    assert any(d.startswith("opencl:cpu") for d in got["devices"]), got
    assert CPU in got["devices"]


def test_fresh_environment_usm_array_and_dpnp_work():
    result = run_python(
        """
        import dpex_kernels as dk
        import dpnp
        t = dk.usm_array("f4", 1, device="opencl:cpu")
        x = dpnp.ones(4, dtype="f4", device="opencl:cpu")
        assert dk.typeof(x) == t, (dk.typeof(x), t)
        print(t)
        """,
        OCL_ICD_FILENAMES=None,
        OCL_ICD_VENDORS=None,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"usm_array(float32, 1d, C, device, {CPU})"


def test_no_device_visible_gives_device_not_found_not_a_crash():
    result = run_python(
        """
        import dpex_kernels as dk
        for device in (None, "opencl:cpu", "cpu", "opencl:cpu:0"):
            try:
                dk.usm_array("f4", 1, device=device)
            except dk.DeviceNotFoundError as exc:
                assert isinstance(exc, ValueError)
                assert str(exc)
            else:
                raise SystemExit(f"no error for device={device!r}")
        print("ok")
        """,
        OCL_ICD_FILENAMES="/nonexistent/libOpenCL-vendor.so",
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert result.stdout.strip().splitlines()[-1] == "ok"


# --------------------------------------------------------------------------------------------
# bootstrap_opencl_icd in this process
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ICD_VARIABLES)
@pytest.mark.parametrize("value", ["/some/user/choice", ""], ids=["path", "empty"])
def test_bootstrap_leaves_a_set_variable_alone(monkeypatch, name, value):
    for other in ICD_VARIABLES:
        monkeypatch.delenv(other, raising=False)
    monkeypatch.setenv(name, value)
    _runtime.bootstrap_opencl_icd()
    assert os.environ[name] == value


def test_bootstrap_is_idempotent_and_points_at_this_environment(monkeypatch):
    for name in ICD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    first = _runtime.bootstrap_opencl_icd()
    value = os.environ.get("OCL_ICD_FILENAMES")
    if first is not None:
        assert first == value == str(libintelocl())
        assert Path(first).exists()
    second = _runtime.bootstrap_opencl_icd()
    assert second is None  # now set: left alone
    assert os.environ.get("OCL_ICD_FILENAMES") == value


# --------------------------------------------------------------------------------------------
# Device lookup
# --------------------------------------------------------------------------------------------


@pytest.fixture
def cpu(cpu_device):
    return cpu_device


@pytest.mark.parametrize("spelling", ["cpu", "opencl:cpu", "opencl:cpu:0", None])
def test_canonical_device(cpu, spelling):
    assert _runtime.canonical_device(spelling) == CPU
    device = _runtime.lookup_device(spelling)
    assert isinstance(device, dpctl.SyclDevice)
    assert device.filter_string == CPU


def test_canonical_device_of_a_sycl_device(cpu):
    assert _runtime.canonical_device(cpu) == CPU
    assert _runtime.lookup_device(cpu) == cpu


@pytest.mark.parametrize("device", ["level_zero:gpu:0", "opencl:gpu:0", "nonsense", "", "  "])
def test_lookup_unknown_device(cpu, device):
    with pytest.raises(dk.DeviceNotFoundError):
        _runtime.lookup_device(device)
    with pytest.raises(dk.DeviceNotFoundError):
        _runtime.canonical_device(device)


@pytest.mark.parametrize("device", [0, 1.0, b"cpu", object(), dpctl.SyclQueue], ids=param_id)
def test_lookup_device_of_wrong_type(cpu, device):
    with pytest.raises((TypeError, ValueError)) as info:
        _runtime.lookup_device(device)
    assert "device" in str(info.value)


# --------------------------------------------------------------------------------------------
# python -m dpex_kernels
# --------------------------------------------------------------------------------------------


def test_python_m_dpex_kernels_self_check():
    result = subprocess.run(
        [sys.executable, "-m", "dpex_kernels"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    assert CPU in result.stdout
    assert "self-check vecadd" in result.stdout and ": OK" in result.stdout
