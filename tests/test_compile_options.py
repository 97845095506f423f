"""Kernel options that change code generation: fastmath, opt_level; and arrays of high rank."""

import dpnp
import numpy as np
import pytest

import dpex_kernels as dk

f32 = dk.usm_array(dk.float32, 1)


def _scale_add(a, b, out):
    i = dk.get_global_id(0)
    out[i] = a[i] * 1.5 + b[i] / 3.0


@pytest.mark.parametrize("fastmath", [False, True])
def test_fastmath_sets_llvm_fast_math_flags_only_when_asked(fastmath):
    kernel = dk.kernel(dk.void(f32, f32, f32), fastmath=fastmath)(_scale_add)
    llvm_ir = kernel.inspect_llvm(kernel.signatures[0])
    assert (" fast " in llvm_ir) is fastmath
    a = dpnp.asarray(np.linspace(0, 1, 64, dtype=np.float32))
    b = dpnp.asarray(np.linspace(1, 2, 64, dtype=np.float32))
    out = dpnp.empty_like(a)
    kernel[64](a, b, out)
    expected = dpnp.asnumpy(a) * 1.5 + dpnp.asnumpy(b) / 3.0
    np.testing.assert_allclose(dpnp.asnumpy(out), expected, rtol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_every_opt_level_compiles_and_computes_the_same(opt_level):
    kernel = dk.kernel(dk.void(f32, f32, f32), opt_level=opt_level)(_scale_add)
    a = dpnp.asarray(np.arange(32, dtype=np.float32))
    out = dpnp.empty_like(a)
    kernel[32](a, a, out)
    host = np.arange(32, dtype=np.float32)
    np.testing.assert_allclose(dpnp.asnumpy(out), host * 1.5 + host / 3.0, rtol=1e-6)


def test_eight_dimensional_arrays_index_like_numpy():
    @dk.kernel
    def sum_last_axes(a, out):
        i = dk.get_global_id(0)
        total = 0.0
        for j in range(a.shape[7]):
            total += a[i, 0, 1, 0, 1, 0, 1, j] * (j + 1)
        out[i] = total + a.ndim

    host = np.random.default_rng(3).random((3, 1, 2, 1, 2, 1, 2, 4))
    out = dpnp.empty(3)
    sum_last_axes[3](dpnp.asarray(host), out)
    expected = (host[:, 0, 1, 0, 1, 0, 1, :] * np.arange(1, 5)).sum(axis=1) + 8
    np.testing.assert_allclose(dpnp.asnumpy(out), expected)
