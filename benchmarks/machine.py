"""A description of the machine and software a run measured, for the report."""

from __future__ import annotations

import os
import platform
import re
from importlib import metadata
from pathlib import Path

PACKAGES = (
    "dpex_kernels",
    "numba",
    "llvmlite",
    "dpctl",
    "dpnp",
    "numpy",
    "pyopencl",
    "intel-opencl-rt",
)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _size_bytes(text: str) -> int:
    match = re.match(r"([\d.]+)\s*([KMG])", text.strip(), re.IGNORECASE)
    if not match:
        return 0
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}[match.group(2).upper()]
    return int(float(match.group(1)) * scale)


def last_level_cache_bytes() -> int:
    """Size of the largest CPU cache (L3 usually); 32 MiB when sysfs does not say."""
    sizes = [
        _size_bytes(f.read_text())
        for f in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size")
    ]
    return max(sizes, default=0) or 32 * 2**20


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        pass
    try:  # dpex_kernels runs from its source tree, uninstalled
        return str(__import__(name.replace("-", "_")).__version__) + " (source tree)"
    except (ImportError, AttributeError):
        return "not installed"


def _memory_gib() -> float:
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 0.0
    return round(pages / 2**30, 1)


def load_average() -> float:
    """The 1-minute load average (other processes make every number noisier)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return -1.0


def describe(device_text: str) -> dict:
    """CPU, cores, caches, memory, OS, Python and package versions, and the SYCL device."""
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "last_level_cache_mib": last_level_cache_bytes() / 2**20,
        "memory_gib": _memory_gib(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "device": device_text,
        "packages": {name: _version(name) for name in PACKAGES},
    }
