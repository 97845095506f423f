"""Shared test set-up: import path, Hypothesis profile, and the one SYCL device of this machine."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # examples/ and tests/ import as packages; the package is in src/
    sys.path.insert(0, str(ROOT))

# Every SPIR-V module compiled by the tests is checked by spirv-val (where it is installed),
# subprocesses the tests start included.
os.environ.setdefault("DPEX_KERNELS_VALIDATE_SPIRV", "1")

# First, before any test module imports dpctl or dpnp: the package's OpenCL ICD bootstrap must
# run before dpctl enumerates platforms (API.md §5).
import dpex_kernels  # noqa: E402, F401

# Deterministic, quick and writing nothing outside tests/: no example database.
settings.register_profile(
    "dpex",
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# HYPOTHESIS_PROFILE=thorough: many more random examples, for a longer hunt.
settings.register_profile(
    "thorough",
    max_examples=2000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dpex"))

#: The canonical filter string of the only SYCL device these tests expect.
CPU = "opencl:cpu:0"


@pytest.fixture(scope="session")
def cpu_device():
    """The dpctl.SyclDevice of the OpenCL CPU runtime; skips when it is not visible."""
    import dpctl

    devices = dpctl.get_devices(backend="opencl", device_type="cpu")
    if not devices:
        pytest.skip("no OpenCL CPU device visible")
    return devices[0]


def launched(offloaded) -> set[str]:
    """The kernels an offloaded function launched so far, by name without the line."""
    return {
        k.name.split("_line")[0]
        for k in offloaded.inspect_kernels()
        if k.kernel.definitions[k.signature].bindings
    }


def param_id(value: object) -> str:
    """A test id showing `value` as repr does, without memory addresses: ids equal in every
    process (pytest-xdist's workers must collect the same tests)."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))
