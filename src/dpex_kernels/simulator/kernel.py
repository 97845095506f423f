"""SimulatedKernel: what @dk.kernel(simulate=True) (or DPEX_KERNELS_SIMULATE=1) returns."""

from __future__ import annotations

from ..dispatcher.jit_kernel import JitKernel, _unpickle_kernel


class SimulatedKernel(JitKernel):
    """A kernel whose every launch from Python runs in the simulator (launches from compiled
    @numba.njit code still go to the device: the compiled launcher bypasses Python)."""

    def __getitem__(self, launch_range):
        return self.simulate[launch_range]

    def __repr__(self) -> str:
        return super().__repr__().replace("<dk.kernel", "<dk.kernel (simulated)", 1)

    def __reduce__(self):
        _, (payload,) = super().__reduce__()
        return _unpickle_simulated, (payload,)


def _unpickle_simulated(payload) -> SimulatedKernel:
    kernel = _unpickle_kernel(payload)
    kernel.__class__ = SimulatedKernel
    return kernel
