"""numba-dpex's `numba_dpex.core` import paths: exceptions, launcher, decorators, types."""
