"""Load the compiled launcher and check, before any launch, that it reads dpctl and dpnp right.

_launcher.c reads two object layouts directly (dpnp's usm_ndarray, dpctl's USM memory) and
calls dpctl's C API. A dpctl or dpnp whose layout differs must be an ImportError here, never a
crash later: the versions are checked, then live arrays are read through the C declarations and
compared with what their public attributes say.
"""

from __future__ import annotations

import dpctl
import dpctl._sycl_event
import dpctl.memory
import dpnp
import dpnp.tensor
import numpy as np

from ..device import SYCL_INTERFACE_LIBRARY
from ..types.ranges import NdRange, Range
from . import events

try:
    from . import _launcher as launcher
except ImportError as exc:  # pragma: no cover - an install without its compiled module
    raise ImportError(
        "dpex_kernels' compiled launcher (dispatcher/_launcher.c) is not built; reinstall with "
        "`pip install -e .` (it needs gcc and the Python headers, docs/launcher.md)"
    ) from exc

#: The dpnp releases whose usm_ndarray layout _launcher.c declares.
DPNP_VERSIONS = ("0.20.",)
_NUMERIC_TYPECODES = [c for c in np.typecodes["All"] if c not in "OSUVMm"]


def _refuse(what: str) -> ImportError:
    return ImportError(
        f"dpex_kernels' compiled launcher does not match the installed dpctl {dpctl.__version__} "
        f"/ dpnp {dpnp.__version__}: {what}. Install the versions pyproject.toml pins "
        f"(dpctl 0.22.x, dpnp 0.20.x)."
    )


def _check_reads(array: dpnp.tensor.usm_ndarray) -> None:
    data, ndim, shape, strides, typenum, flags, memory, queue = launcher.check_layouts(array)
    iface = array.__sycl_usm_array_interface__
    expected_data = iface["data"][0] + iface["offset"] * array.itemsize
    if (data, ndim, shape) != (expected_data, array.ndim, array.shape):
        raise _refuse("usm_ndarray's data, ndim or shape are not where expected")
    if strides != array.strides:
        raise _refuse("usm_ndarray's strides are not where expected")
    contiguity = array.flags.c_contiguous | 2 * array.flags.f_contiguous
    if typenum != array.dtype.num or (flags & 3) != contiguity:
        raise _refuse("usm_ndarray's typenum or flags are not where expected")
    if memory is not array.usm_data or queue is not array.usm_data.sycl_queue:
        raise _refuse("the USM memory object's queue is not where expected")


def _init() -> None:
    if not dpnp.__version__.startswith(DPNP_VERSIONS):
        raise _refuse(f"it was written for dpnp {', '.join(v + 'x' for v in DPNP_VERSIONS)}")
    devices = dpctl.get_num_devices()  # loads the runtime's libraries that init looks up
    launcher.init(
        library=str(SYCL_INTERFACE_LIBRARY),
        event_capi=dpctl._sycl_event.__pyx_capi__,
        usm_ndarray=dpnp.tensor.usm_ndarray,
        dpnp_ndarray=dpnp.ndarray,
        sycl_event=dpctl.SyclEvent,
        memory_types=(
            dpctl.memory.MemoryUSMDevice,
            dpctl.memory.MemoryUSMShared,
            dpctl.memory.MemoryUSMHost,
        ),
        # Every NumPy type number of each size (int64 is both "long" and "longlong").
        itemsizes={np.dtype(c).num: np.dtype(c).itemsize for c in _NUMERIC_TYPECODES},
        completed_event=dpctl.SyclEvent,
        submit_error=dpctl.SyclKernelSubmitError,
        range_type=Range,
        nd_range_type=NdRange,
        wait=events.wait,
        # Launches on OpenCL queues go straight to OpenCL (docs/launcher.md), by these sonames.
        opencl_library="libOpenCL.so.1",
        sycl_library="libsycl.so.9",
    )
    if not devices:
        return  # nothing can launch; the probes need a device
    # Uninitialised arrays and views of them: the probes read layouts, not values, and filling
    # or copying one would build dpnp's own kernels for the device (0.4 s on a CPU device).
    base = dpnp.tensor.usm_ndarray((2, 3, 4), dtype="i4")
    f_order = dpnp.tensor.usm_ndarray((2, 3, 4), dtype="i4", order="F")
    for probe in (base, base[:, 1:, ::2], dpnp.tensor.permute_dims(base, (2, 0, 1)), f_order):
        _check_reads(probe)
    wrapped = dpnp.ndarray._create_from_usm_ndarray(base)
    if launcher.array_key(wrapped) != launcher.array_key(base):
        raise _refuse("dpnp.ndarray's usm_ndarray is not where expected")


_init()

__all__ = ["launcher"]
