"""Helpers shared by the kernel-language, dispatcher and pickling tests.

Imported as a plain module (`from conftest_kernels import ...`); it holds no pytest hooks.
tests/conftest.py has already imported dpex_kernels (its OpenCL ICD bootstrap precedes dpnp).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dpnp
import numpy as np

import dpex_kernels as dk

ROOT = Path(__file__).resolve().parent.parent

#: The canonical filter string of the device these tests run on.
CPU = "opencl:cpu:0"

#: Every scalar dtype a kernel parameter may have (API.md §1), as NumPy names.
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOAT_DTYPES = ("float32", "float64")
COMPLEX_DTYPES = ("complex64", "complex128")
ALL_DTYPES = ("bool", *INT_DTYPES, *FLOAT_DTYPES, *COMPLEX_DTYPES)


@dk.kernel(dk.void(dk.usm_array(dk.float64, 1, device=CPU), dk.int64))
def spin(a, rounds):
    """One work-item busy for `rounds` steps (~1.7 ns each here): keeps later launches pending."""
    x = a[0]
    for _ in range(rounds):
        x = x * 0.999999 + 1e-6
    a[0] = x


_TOLERANCES = {
    "float32": {"rtol": 2e-6, "atol": 1e-6},
    "complex64": {"rtol": 2e-6, "atol": 1e-6},
    "float64": {"rtol": 1e-13, "atol": 1e-14},
    "complex128": {"rtol": 1e-13, "atol": 1e-14},
}


def tol(dtype, scale: float = 1.0) -> dict:
    """assert_allclose tolerances for `dtype` (exact for integers and bool)."""
    name = np.dtype(dtype).name
    base = _TOLERANCES.get(name, {"rtol": 0, "atol": 0})
    return {k: v * scale for k, v in base.items()}


def assert_close(actual, expected, dtype=None, scale: float = 1.0) -> None:
    """Compare a device result (dpnp or numpy) with a NumPy expectation, per-dtype tolerance."""
    actual = to_host(actual)
    expected = np.asarray(expected)
    dtype = np.dtype(dtype if dtype is not None else expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if dtype.kind in "fc":
        np.testing.assert_allclose(actual, expected, **tol(dtype, scale))
    else:
        np.testing.assert_array_equal(actual, expected)


def to_device(x, **kwargs):
    """A dpnp copy of the NumPy array `x` on the default device (opencl:cpu:0)."""
    return dpnp.asarray(np.asarray(x), **kwargs)


def to_host(x) -> np.ndarray:
    """The NumPy copy of a dpnp array (waits through dpctl's order manager), or `x` itself."""
    if isinstance(x, dpnp.ndarray):
        return dpnp.asnumpy(x)
    return np.asarray(x)


def random_values(dtype, shape, seed: int = 0, low=None, high=None) -> np.ndarray:
    """Deterministic values of `dtype`: small enough that + - * stay in range."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo = max(int(info.min), -100) if low is None else low
        hi = min(int(info.max), 100) if high is None else high
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    lo = -10.0 if low is None else low
    hi = 10.0 if high is None else high
    if dtype.kind == "c":
        re = rng.uniform(lo, hi, size=shape)
        im = rng.uniform(lo, hi, size=shape)
        return (re + 1j * im).astype(dtype)
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def only_signature(kernel):
    """The one signature of a kernel compiled for exactly one argument-type tuple."""
    sigs = kernel.signatures
    assert len(sigs) == 1, sigs
    return sigs[0]


def run_python(code: str, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter that imports this checkout's dpex_kernels.

    Used for the cases that could take the whole interpreter down (a back-end abort) and for
    the cross-process pickling tests.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=str(ROOT),
    )


__all__ = [
    "ALL_DTYPES",
    "COMPLEX_DTYPES",
    "CPU",
    "FLOAT_DTYPES",
    "INT_DTYPES",
    "assert_close",
    "dk",
    "only_signature",
    "random_values",
    "run_python",
    "to_device",
    "to_host",
    "tol",
]
