"""SPIR-V -> dpctl program -> SyclKernel, built once per (SPIR-V, context, device).

Numba-free: the AOT runtime builds its kernels here too.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, fields

import dpctl
import dpctl.program as dpctl_program

from ._runtime import device_label
from .errors import KernelCompileError


@dataclass(frozen=True)
class KernelAttributes:
    """What the device says about one compiled kernel (read from the SyclKernel)."""

    preferred_work_group_size_multiple: int
    max_work_group_size: int
    private_mem_size: int
    max_sub_group_size: int
    max_num_sub_groups: int
    compile_num_sub_groups: int
    compile_sub_group_size: int
    num_args: int

    @classmethod
    def of(cls, kernel: dpctl_program.SyclKernel) -> KernelAttributes:
        values = {f.name: getattr(kernel, f.name, None) for f in fields(cls)}
        values["max_work_group_size"] = kernel.work_group_size
        return cls(**values)


_lock = threading.Lock()
_kernels: dict[tuple, dpctl_program.SyclKernel] = {}


def _missing_aspects(device: dpctl.SyclDevice, aspects: tuple[str, ...]) -> list[str]:
    return [a for a in aspects if not getattr(device, f"has_aspect_{a}", True)]


def build_kernel(
    spirv: bytes, symbol: str, queue: dpctl.SyclQueue, aspects: tuple[str, ...] = ()
) -> dpctl_program.SyclKernel:
    """The SyclKernel `symbol` of `spirv` for `queue`'s context and device, built at most once.

    `aspects` names device features the code needs ("fp64", "fp16"); a device lacking one
    gets an error naming it rather than the runtime's empty build failure.
    """
    key = (hashlib.sha256(spirv).digest(), symbol, queue.sycl_context, queue.sycl_device)
    kernel = _kernels.get(key)
    if kernel is not None:
        return kernel
    with _lock:
        kernel = _kernels.get(key)
        if kernel is not None:
            return kernel
        device = queue.sycl_device
        missing = _missing_aspects(device, aspects)
        if missing:
            raise KernelCompileError(
                f"kernel '{symbol}' needs device aspect(s) {', '.join(missing)}, which "
                f"{device_label(device)} ({device.name}) does not have; use float32 data or "
                f"another device"
            )
        try:
            program = dpctl_program.create_program_from_spirv(queue, spirv)
            kernel = program.get_sycl_kernel(symbol)
        except Exception as exc:
            raise KernelCompileError(
                f"the SYCL runtime could not build kernel '{symbol}' for "
                f"{device_label(device)} ({device.name}): {exc or type(exc).__name__}"
            ) from exc
        _kernels[key] = kernel
        return kernel
