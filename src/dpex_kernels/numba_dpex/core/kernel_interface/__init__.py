"""numba-dpex 0.21's `numba_dpex.core.kernel_interface` import path (its indexers)."""
