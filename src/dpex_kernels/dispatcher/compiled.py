"""CompiledKernel: one signature's artefacts, its SyclKernel per context, and its launch facts.

Numba-free: JIT kernels and AOT bundles both hold CompiledKernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import dpctl

from .._runtime import DeviceLimits, device_by_canonical_name
from ..artifacts.kernel import KernelArtifact
from ..device import KernelAttributes, build_kernel
from ..errors import KernelCompileError
from ..types.params import kernel_slots


@dataclass
class KernelStats:
    """What happened to one kernel in this process."""

    compiles: int = 0
    cache_hits: int = 0
    cache_misses: int = 0


class CompiledKernel:
    """One signature's compiled kernel: its artefacts and its SyclKernel on the device."""

    def __init__(
        self,
        signature,
        artifacts: KernelArtifact,
        on_new_variant=None,
        keep_binaries: bool = False,
    ):
        self.signature = signature
        self.device = device = artifacts.target.device
        self.artifacts = artifacts
        #: The numba-free parameter descriptions (ArraySpec or scalar name) and their slots.
        self.params = artifacts.params
        self.slots = kernel_slots(self.params)
        self._on_new_variant = on_new_variant
        self._keep_binaries = keep_binaries  # cache=True: device binaries on disk too
        self._queue = dpctl.SyclQueue(device_by_canonical_name(device))
        self.local_memory = artifacts.facts(artifacts.default_ndim).local_memory
        limits = DeviceLimits.of(self._queue.sycl_device)
        if self.local_memory > limits.local_mem_size:
            raise KernelCompileError(
                f"kernel '{artifacts.name}' needs {self.local_memory} bytes of local memory for "
                f"its dk.local arrays, more than the {limits.local_mem_size} bytes {device} has; "
                f"make the local arrays smaller"
            )
        self.sycl_kernel = self.kernel_for(self._queue, artifacts.default_ndim)
        self.attrs = KernelAttributes.of(self.sycl_kernel)
        #: (queue, launch ndim) -> the compiled launcher's Binding (dispatcher/launch.py).
        self.bindings: dict = {}

    @property
    def spirv(self) -> bytes:
        return self.artifacts.spirv

    @property
    def llvm_ir(self) -> str:
        return self.artifacts.llvm_ir

    @property
    def float_atomics(self) -> dict[str, str]:
        """How each float atomic of the kernel is compiled for its device:
        {"float32.global.add": "native", "float64.local.max": "cas", …}."""
        return dict(self.artifacts.float_atomics)

    @property
    def default_queue(self) -> dpctl.SyclQueue:
        """Where a launch without array arguments runs."""
        return self._queue

    def kernel_for(self, queue: dpctl.SyclQueue, ndim: int):
        """The SyclKernel for `queue`'s context and `ndim`-dimensional launches (built once)."""
        built = self.artifacts.has_variant(ndim)
        _, spirv = self.artifacts.variant(ndim)
        if not built and self._on_new_variant is not None:
            self._on_new_variant(self.artifacts)
        aspects = self.artifacts.facts(ndim).aspects
        symbol = self.artifacts.symbol
        return build_kernel(spirv, symbol, queue, aspects, self, self._keep_binaries)

    def __repr__(self) -> str:
        return f"<CompiledKernel {self.artifacts.name} {self.signature} on {self.device}>"
