"""numba-dpex 0.23's `numba_dpex.core.types.kernel_api` import path."""
