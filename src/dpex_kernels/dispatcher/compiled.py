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
    """Count what happened to one kernel in this process: compiles and disk cache lookups.

    ``kernel.stats`` holds a kernel's; tests and users read it to see whether a launch
    compiled, or a ``cache=True`` kernel came from the disk cache.

    Attributes
    ----------
    compiles : int
        Compilations run in this process (a disk cache hit is none).
    cache_hits : int
        Signatures loaded from the disk cache (``cache=True``).
    cache_misses : int
        Signatures the disk cache did not have, compiled and stored.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.kernel
    ... def fill(a):
    ...     a[dk.get_global_id(0)] = 1
    >>> fill[4](dpnp.zeros(4)).wait()
    >>> fill[4](dpnp.zeros(4)).wait()
    >>> fill.stats
    KernelStats(compiles=1, cache_hits=0, cache_misses=0)
    """

    compiles: int = 0
    cache_hits: int = 0
    cache_misses: int = 0


class CompiledKernel:
    """One signature's compiled kernel: its code, its device handle and what the device says.

    ``kernel.definitions[sig]`` is one (for AOT bundles too); a kernel makes them as it
    compiles.

    Attributes
    ----------
    signature : Signature
        The signature it was compiled for (its text, in an AOT bundle).
    device : str
        The device's filter string, e.g. ``"opencl:cpu:0"``.
    sycl_kernel : dpctl.program.SyclKernel
        The kernel built on the device, a public handle: usable with
        ``dpctl.SyclQueue.submit`` by anyone, and its ``addressof_ref()`` is the C-level
        ``DPCTLSyclKernelRef``.
    attrs : KernelAttributes
        What the device reports for the built kernel, a frozen dataclass:
        ``preferred_work_group_size_multiple``, ``max_work_group_size``, ``private_mem_size``,
        ``max_sub_group_size``, ``max_num_sub_groups``, ``compile_num_sub_groups``,
        ``compile_sub_group_size`` (0 unless ``sub_group_size`` fixed it) and ``num_args``.
    spirv : bytes
        The SPIR-V module.
    llvm_ir : str
        The optimised LLVM IR the SPIR-V was made from.
    float_atomics : dict
        How each float atomic of the kernel compiles for its device.

    Examples
    --------
    >>> import dpex_kernels as dk
    >>> @dk.kernel(dk.void(dk.usm_array(dk.float32, 1)))
    ... def fill(a):
    ...     a[dk.get_global_id(0)] = 1
    >>> compiled = fill.definitions[fill.signatures[0]]
    >>> compiled.attrs.max_work_group_size >= compiled.attrs.preferred_work_group_size_multiple
    True
    >>> compiled.spirv[:4] == b"\x03\x02\x23\x07"  # SPIR-V's magic number
    True
    """

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
        """The SPIR-V module, as the device loads it.

        Returns
        -------
        bytes
            The binary; ``kernel.inspect_spirv(sig)`` disassembles it.

        Examples
        --------
        >>> import dpex_kernels as dk
        >>> @dk.kernel(dk.void(dk.usm_array(dk.float32, 1)))
        ... def fill(a):
        ...     a[dk.get_global_id(0)] = 1
        >>> len(fill.definitions[fill.signatures[0]].spirv) % 4  # 32-bit words
        0
        """
        return self.artifacts.spirv

    @property
    def llvm_ir(self) -> str:
        """The optimised LLVM IR the SPIR-V was made from.

        Returns
        -------
        str
            The module's text, as ``kernel.inspect_llvm(sig)`` gives it.

        Examples
        --------
        >>> import dpex_kernels as dk
        >>> @dk.kernel(dk.void(dk.usm_array(dk.float32, 1)))
        ... def fill(a):
        ...     a[dk.get_global_id(0)] = 1
        >>> "spir_kernel" in fill.definitions[fill.signatures[0]].llvm_ir
        True
        """
        return self.artifacts.llvm_ir

    @property
    def float_atomics(self) -> dict[str, str]:
        """How each float atomic of the kernel compiles for its device.

        The device's native float atomic where it has one, else a compare-and-swap loop
        (``DPEX_KERNELS_FLOAT_ATOMICS=cas`` makes every one a loop).

        Returns
        -------
        dict
            ``{"dtype.space.operation": "native" or "cas"}``, e.g.
            ``{"float32.global.add": "native"}``; empty without float atomics.

        Examples
        --------
        >>> import dpex_kernels as dk
        >>> @dk.kernel(dk.void(dk.usm_array(dk.float32, 1)))
        ... def total(a):
        ...     dk.atomic.add(a, 0, 1.0)
        >>> path = total.definitions[total.signatures[0]].float_atomics["float32.global.add"]
        >>> path in ("native", "cas")
        True
        """
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
