"""numba-dpex's `numba_dpex.core.types` import path (its index space types)."""
