"""Python float constants follow NumPy 2 (NEP 50): float32 code stays float32."""

import math

import dpnp
import numpy as np

import dpex_kernels as dk

f32 = dk.usm_array(dk.float32, 1)
SCALE = 2.5


@dk.kernel(dk.void(f32, f32))
def _float32_with_constants(a, out):
    i = dk.get_global_id(0)
    x = 0.5
    if i > 3:
        x = a[i]
    out[i] = a[i] * 1.5 + a[i] / 3.0 + math.sqrt(a[i] + 1.0) + x * SCALE - 0.25


def test_float32_kernel_with_python_float_constants_has_no_double():
    sig = _float32_with_constants.signatures[0]
    assert " double" not in _float32_with_constants.inspect_llvm(sig)


def test_float32_kernel_with_constants_matches_numpy2_float32_arithmetic():
    host = np.linspace(0, 4, 8, dtype=np.float32)
    out = dpnp.empty(8, dtype="f4")
    _float32_with_constants[8](dpnp.asarray(host), out)
    x = np.where(np.arange(8) > 3, host, np.float32(0.5))
    expected = host * 1.5 + host / 3.0 + np.sqrt(host + 1.0) + x * SCALE - 0.25
    assert expected.dtype == np.float32  # NumPy 2 keeps it float32 too
    np.testing.assert_allclose(dpnp.asnumpy(out), expected, rtol=2e-6)


def test_constants_with_ints_or_alone_still_compute_in_float64():
    @dk.kernel
    def mixed(a, out):
        i = dk.get_global_id(0)
        out[i] = i * 0.1 + 1.0 / 3.0 + np.sqrt(2.0) + min(a[i], 0.3)

    host = np.linspace(0, 1, 16)
    out = dpnp.empty(16)
    mixed[16](dpnp.asarray(host), out)
    expected = np.arange(16) * 0.1 + 1.0 / 3.0 + np.sqrt(2.0) + np.minimum(host, 0.3)
    np.testing.assert_allclose(dpnp.asnumpy(out), expected, rtol=1e-15)
