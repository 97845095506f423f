"""numba-dpex's `numba_dpex.core.types`: its names of the types kernel signatures take, as
dpex_kernels' own (`usm_ndarray(ndim, layout, dtype)` is the equal `dk.usm_array`)."""

from __future__ import annotations

import dpctl

import dpex_kernels as dk

void = none = dk.void
boolean = bool_ = b1 = dk.boolean
int32 = i4 = dk.int32
int64 = i8 = dk.int64
uint32 = u4 = dk.uint32
uint64 = u8 = dk.uint64
float32 = f4 = float_ = dk.float32  # numba-dpex's float_ is float32, unlike NumPy's
float64 = f8 = double = dk.float64


def usm_ndarray(
    ndim: int,
    layout: str = "C",
    dtype=None,
    usm_type: str = "device",
    device: str | dpctl.SyclDevice | None = None,
    queue: dpctl.SyclQueue | None = None,
):
    """numba-dpex's `usm_ndarray(ndim, layout, dtype, ...)` as the equal `dk.usm_array`."""
    if queue is not None:
        if device is not None:
            raise TypeError("usm_ndarray: give `device` or `queue`, not both")
        device = queue.sycl_device
    array = dk.usm_array(dtype or dk.float64, ndim, layout, usm_type, device)
    if dtype is None and not array.sycl_device.has_aspect_fp64:
        # numba-dpex took dpctl's default floating type of the device
        return dk.usm_array(dk.float32, ndim, layout, usm_type, device)
    return array


USMNdArray = DpnpNdArray = usm_ndarray

__all__ = [
    "DpnpNdArray",
    "USMNdArray",
    "b1",
    "bool_",
    "boolean",
    "double",
    "f4",
    "f8",
    "float32",
    "float64",
    "float_",
    "i4",
    "i8",
    "int32",
    "int64",
    "none",
    "u4",
    "u8",
    "uint32",
    "uint64",
    "usm_ndarray",
    "void",
]
