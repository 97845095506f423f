"""Target: the device a kernel's code is made for, as the back end needs to know it.

The back end specialises code per device (native float atomics, the workarounds that one
runtime needs: compiler/backend/workarounds.py), so the target is part of what a compile
produces and of its cache key. Numba-free.
"""

from __future__ import annotations

import functools
import re
from dataclasses import asdict, dataclass

from .._runtime import device_by_canonical_name
from ..float_atomics import native_float_atomics

#: The platform name of Intel's OpenCL runtimes (CPU and GPU).
INTEL_OPENCL = "Intel(R) OpenCL"
#: A canonical filter string: backend, device type, number ("opencl:cpu:0").
FILTER_STRING = re.compile(r"[a-z_]{1,32}:[a-z_]{1,32}:[0-9]{1,4}")


@dataclass(frozen=True)
class Target:
    """One SYCL device, described by what decides its code."""

    #: The canonical filter string ("opencl:cpu:0").
    device: str
    #: dpctl's backend name: "opencl", "level_zero", ...
    backend: str
    #: "cpu", "gpu" or "accelerator".
    device_type: str
    #: The platform's name ("Intel(R) OpenCL") and the driver's version.
    platform: str
    driver: str
    #: The float atomics the device does natively ("float32.global.add", ...): float_atomics.py.
    float_atomics: frozenset[str] = frozenset()

    @classmethod
    def of(cls, device: str) -> Target:
        """The target of a device given by its canonical filter string."""
        return cls(*_device_facts(device), float_atomics=native_float_atomics(device))

    @property
    def is_intel_opencl_cpu(self) -> bool:
        """Intel's OpenCL CPU runtime, whose faults several workarounds avoid."""
        return (self.backend, self.device_type, self.platform) == ("opencl", "cpu", INTEL_OPENCL)

    def key(self) -> str:
        """This object's part of a cache key."""
        return repr(sorted(self.to_json().items()))

    def to_json(self) -> dict:
        return {**asdict(self), "float_atomics": sorted(self.float_atomics)}

    @classmethod
    def from_json(cls, data: object) -> Target:
        """A target written by to_json(); ValueError for anything else."""
        texts = ("device", "backend", "device_type", "platform", "driver")
        if (
            not isinstance(data, dict)
            or set(data) != {*texts, "float_atomics"}
            or not all(isinstance(data[name], str) for name in texts)
            or not isinstance(data["float_atomics"], list)
            or not all(isinstance(item, str) for item in data["float_atomics"])
        ):
            raise ValueError("a target must be an object of the fields Target.to_json() writes")
        if not FILTER_STRING.fullmatch(data["device"]):
            raise ValueError(f"a target's device must be a filter string: {data['device']!r:.80}")
        return cls(
            **{name: data[name] for name in texts}, float_atomics=frozenset(data["float_atomics"])
        )


@functools.cache
def _device_facts(device: str) -> tuple[str, str, str, str, str]:
    found = device_by_canonical_name(device)
    return (
        device,
        found.backend.name,
        found.device_type.name,
        found.sycl_platform.name,
        found.driver_version,
    )
