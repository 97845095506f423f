"""CompiledKernel: one signature's artefacts, its SyclKernel per context, and its launch facts.

Numba-free: JIT kernels and AOT bundles both hold CompiledKernels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import dpctl

from .._runtime import DeviceLimits, device_by_canonical_name
from ..device import KernelAttributes, build_kernel
from ..errors import KernelCompileError
from ..types.params import kernel_slots

_LLVM_SIZES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "float": 4, "double": 8}
# A work-group local array: a global in addrspace(3) of an array type, e.g. [16 x [16 x float]].
_LOCAL_ARRAY = re.compile(r"addrspace\(3\) global ((?:\[\d+ x )+)(\w+)\]")


def _needed_aspects(llvm_ir: str) -> tuple[str, ...]:
    return ("fp64",) if " double" in llvm_ir else ()


def local_memory_bytes(llvm_ir: str) -> int:
    """The bytes of work-group local memory the kernel's local arrays take."""
    total = 0
    for dims, element in _LOCAL_ARRAY.findall(llvm_ir):
        count = 1
        for n in re.findall(r"\d+", dims):
            count *= int(n)
        total += count * _LLVM_SIZES.get(element, 8)
    return total


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
        device: str,
        artifacts,
        params: tuple,
        on_new_variant=None,
        keep_binaries: bool = False,
    ):
        self.signature = signature
        self.device = device
        self.artifacts = artifacts
        #: The numba-free parameter descriptions (ArraySpec or scalar name) and their slots.
        self.params = params
        self.slots = kernel_slots(params)
        self._on_new_variant = on_new_variant
        self._keep_binaries = keep_binaries  # cache=True: device binaries on disk too
        self._queue = dpctl.SyclQueue(device_by_canonical_name(device))
        self.local_memory = local_memory_bytes(artifacts.llvm_ir)
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
        llvm_ir, spirv = self.artifacts.variant(ndim)
        if not built and self._on_new_variant is not None:
            self._on_new_variant(self.artifacts)
        aspects = _needed_aspects(llvm_ir)
        symbol = self.artifacts.symbol
        return build_kernel(spirv, symbol, queue, aspects, self, self._keep_binaries)

    def __repr__(self) -> str:
        return f"<CompiledKernel {self.artifacts.name} {self.signature} on {self.device}>"
