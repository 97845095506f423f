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
from ..float_atomics import atomic_orders_and_scopes, native_float_atomics

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
    #: The memory orders and scopes its atomic operations take ("RELAXED", "DEVICE", ...:
    #: dk.MemoryOrder and dk.MemoryScope names), and those its fences take; None: not known.
    atomic_memory: frozenset[str] | None = None
    atomic_fence: frozenset[str] | None = None

    @classmethod
    def of(cls, device: str) -> Target:
        """The target of a device given by its canonical filter string (DeviceNotFoundError
        for a device this machine does not have, before anything else asks for it)."""
        facts = _device_facts(device)
        memory, fence = atomic_orders_and_scopes(device)
        return cls(
            *facts,
            float_atomics=native_float_atomics(device),
            atomic_memory=memory,
            atomic_fence=fence,
        )

    @property
    def is_intel_opencl_cpu(self) -> bool:
        """Intel's OpenCL CPU runtime, whose faults several workarounds avoid."""
        return (self.backend, self.device_type, self.platform) == ("opencl", "cpu", INTEL_OPENCL)

    def key(self) -> str:
        """This object's part of a cache key."""
        return repr(sorted(self.to_json().items()))

    def to_json(self) -> dict:
        return {
            **asdict(self),
            **{name: _sorted(getattr(self, name)) for name in _NAME_SETS},
        }

    @classmethod
    def from_json(cls, data: object) -> Target:
        """A target written by to_json() (by this version, or by one before the atomic
        orders and scopes, which are then not known); ValueError for anything else."""
        texts = ("device", "backend", "device_type", "platform", "driver")
        if (
            not isinstance(data, dict)
            or not {*texts, "float_atomics"} <= set(data) <= {*texts, *_NAME_SETS}
            or not all(isinstance(data[name], str) for name in texts)
            or not isinstance(data["float_atomics"], list)
            or not all(_names_or_none(data.get(name)) for name in _NAME_SETS)
        ):
            raise ValueError("a target must be an object of the fields Target.to_json() writes")
        if not FILTER_STRING.fullmatch(data["device"]):
            raise ValueError(f"a target's device must be a filter string: {data['device']!r:.80}")
        sets = {
            name: None if data.get(name) is None else frozenset(data[name]) for name in _NAME_SETS
        }
        return cls(**{name: data[name] for name in texts}, **sets)


#: The fields that are sets of names (written as sorted lists; None where not known).
_NAME_SETS = ("float_atomics", "atomic_memory", "atomic_fence")


def _sorted(names: frozenset[str] | None) -> list[str] | None:
    return None if names is None else sorted(names)


def _names_or_none(value: object) -> bool:
    return value is None or (isinstance(value, list) and all(isinstance(v, str) for v in value))


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
