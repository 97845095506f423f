"""SYCL runtime set-up: the OpenCL ICD bootstrap and device lookup by canonical filter string.

Imported before anything touches dpctl, so the bootstrap can still steer the ICD loader.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path

_ICD_VARIABLES = ("OCL_ICD_FILENAMES", "OCL_ICD_VENDORS")
_INSTALL_HINT = (
    "Install the Intel OpenCL CPU runtime into this environment "
    "(pip install 'intel-opencl-rt>=2026.1,<2026.2') or point the OpenCL ICD loader at a "
    "runtime yourself (export OCL_ICD_FILENAMES=/path/to/libintelocl.so)."
)


def icd_registered(library: Path) -> bool:
    """Whether a vendor file the ICD loader reads already names an existing runtime library."""
    for folder in (Path(sys.prefix) / "etc/OpenCL/vendors", Path("/etc/OpenCL/vendors")):
        for icd in folder.glob("*.icd") if folder.is_dir() else ():
            try:
                named = Path(icd.read_text().strip())
            except OSError:
                continue
            if named.name == library.name and named.exists():
                return True
    return False


def bootstrap_opencl_icd() -> str | None:
    """Point the ICD loader at this environment's libintelocl.so when nothing else would find it.

    pip's intel-opencl-rt ships a vendor file holding a placeholder path, so without this the
    CPU device is invisible. A variable the user set is never overridden. Returns the path set.
    """
    if any(name in os.environ for name in _ICD_VARIABLES):
        return None
    library = Path(sys.prefix) / "lib" / "libintelocl.so"
    if not library.exists() or icd_registered(library):
        return None
    os.environ["OCL_ICD_FILENAMES"] = str(library)
    return str(library)


#: The path the bootstrap set OCL_ICD_FILENAMES to in this process, or None: what the
#: environment itself holds (python -m dpex_kernels env reports it).
BOOTSTRAPPED = bootstrap_opencl_icd()

import dpctl  # noqa: E402  (must come after the bootstrap)

from .errors import DeviceNotFoundError  # noqa: E402


def no_device_message(what: str) -> str:
    """One message for every 'no such device' failure: the devices there are, or the fix."""
    visible = [f"{d.filter_string} ({d.name})" for d in dpctl.get_devices()]
    if not visible:
        return f"No SYCL device matches {what}, and no SYCL device is visible. {_INSTALL_HINT}"
    return (
        f"No SYCL device matches {what}. The SYCL devices visible here are: "
        f"{', '.join(visible)}; pass one of their filter strings (e.g. device="
        f"'{dpctl.get_devices()[0].filter_string}')."
    )


@functools.cache
def _device_from_filter(filter_string: str) -> dpctl.SyclDevice:
    try:
        return dpctl.SyclDevice(filter_string)
    except Exception as exc:  # dpctl raises SyclDeviceCreationError or ValueError
        raise DeviceNotFoundError(no_device_message(repr(filter_string))) from exc


def default_device() -> dpctl.SyclDevice:
    """dpctl's default device, or DeviceNotFoundError saying what to install."""
    try:
        return dpctl.select_default_device()
    except Exception as exc:
        raise DeviceNotFoundError(no_device_message("the default selector")) from exc


def lookup_device(device: object) -> dpctl.SyclDevice:
    """A concrete SyclDevice from None, a filter string or a SyclDevice."""
    if device is None:
        return default_device()
    if isinstance(device, dpctl.SyclDevice):
        return device
    if isinstance(device, str):
        if not device.strip():
            raise DeviceNotFoundError(no_device_message("an empty filter string"))
        return _device_from_filter(device.strip())
    raise TypeError(
        f"device must be None, a filter string such as 'opencl:cpu:0' or a dpctl.SyclDevice; "
        f"got {device!r} of type {type(device).__name__}"
    )


def canonical_device(device: object) -> str:
    """The full filter string ('opencl:cpu:0') by which devices are compared everywhere."""
    return lookup_device(device).filter_string


@functools.cache
def device_by_canonical_name(name: str) -> dpctl.SyclDevice:
    """The SyclDevice for a canonical filter string, cached: used on hot paths."""
    return _device_from_filter(name)


#: DPC++ assumes every global id and range fits in a signed 32-bit int: beyond it the runtime
#: refuses the submission (measured: 2**31 - 1 work-items launch, 2**31 do not).
MAX_WORK_ITEMS = 2**31 - 1


@dataclass(frozen=True)
class DeviceLimits:
    """What a launch on one device may ask for: the one place the launch checks read."""

    max_work_items: int
    max_work_group_size: int
    max_work_item_sizes: tuple[int, ...]
    local_mem_size: int

    @classmethod
    def of(cls, device: dpctl.SyclDevice) -> DeviceLimits:
        return cls(
            MAX_WORK_ITEMS,
            device.max_work_group_size,
            tuple(device.max_work_item_sizes3d),
            device.local_mem_size,
        )


def device_label(device: dpctl.SyclDevice) -> str:
    """A device for messages: its filter string, or which root device it is a part of."""
    parent = getattr(device, "parent_device", None)
    if parent is None:
        return device.filter_string
    return f"a sub-device of {device_label(parent)}"
