"""OpenCL C peers through pyopencl, on the same Intel OpenCL CPU runtime as dpctl."""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .kernels import OPENCL_HEADER, OPENCL_KERNELS


def _point_icd_loader() -> None:
    """pyopencl's ICD loader reads OCL_ICD_VENDORS (a folder of .icd files): make one if unset."""
    if os.environ.get("OCL_ICD_VENDORS"):
        return
    library = Path(sys.prefix) / "lib" / "libintelocl.so"
    if not library.exists():
        return
    folder = Path(tempfile.mkdtemp(prefix="dpex-bench-icd-"))
    (folder / "intelocl.icd").write_text(f"{library}\n")
    os.environ["OCL_ICD_VENDORS"] = str(folder)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)


@dataclass
class OpenCL:
    """A pyopencl context and in-order queue on the CPU device."""

    cl: object  # the pyopencl module
    context: object
    queue: object
    device_name: str

    def kernel(self, name: str, dtype: np.dtype, tag: str = ""):
        """Build OpenCL C kernel `name` for `dtype`; `tag` (a comment) makes the source unique."""
        options = ["-DUSE_DOUBLE"] if np.dtype(dtype) == np.float64 else []
        source = OPENCL_HEADER + OPENCL_KERNELS[name] + (f"\n// {tag}\n" if tag else "")
        program = self.cl.Program(self.context, source).build(options=options)
        return getattr(program, name)

    def buffer(self, host: np.ndarray):
        """A device buffer holding a copy of `host`."""
        mf = self.cl.mem_flags
        return self.cl.Buffer(self.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)

    def buffer_over(self, array):
        """A buffer over a dpnp array's own memory, so that OpenCL C reads the pages dk reads
        (CPU devices only: their USM memory is host memory)."""
        memory = array.get_array().usm_data
        pages = (ctypes.c_byte * memory.nbytes).from_address(int(memory._pointer))
        mf = self.cl.mem_flags
        return self.cl.Buffer(self.context, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=pages)

    def read(self, buffer, like: np.ndarray) -> np.ndarray:
        """The contents of `buffer` as a NumPy array shaped like `like`."""
        out = np.empty_like(like)
        self.cl.enqueue_copy(self.queue, out, buffer).wait()
        return out


def open_opencl() -> tuple[OpenCL | None, str]:
    """(OpenCL, "") on the CPU device, or (None, reason) when pyopencl cannot run here."""
    _point_icd_loader()
    os.environ.setdefault("PYOPENCL_NO_CACHE", "1")  # compile times must be real compiles
    os.environ.setdefault("PYOPENCL_COMPILER_OUTPUT", "0")
    try:
        import pyopencl as cl
    except ImportError as exc:
        return None, f"pyopencl not importable ({exc}); pip install pyopencl"
    try:
        devices = [
            d for p in cl.get_platforms() for d in p.get_devices() if d.type & cl.device_type.CPU
        ]
    except Exception as exc:  # no platform at all raises a pyopencl LogicError
        return None, f"pyopencl sees no OpenCL platform ({exc})"
    if not devices:
        return None, "pyopencl sees no OpenCL CPU device"
    import warnings

    warnings.filterwarnings("ignore", module="pyopencl")
    context = cl.Context([devices[0]])
    return OpenCL(cl, context, cl.CommandQueue(context), devices[0].name.strip()), ""
