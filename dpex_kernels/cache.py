"""On-disk cache of compiled kernels (cache=True): content-hash keys, checksummed atomic writes.

An entry holds a kernel's KernelArtifacts (its linked LLVM IR and SPIR-V per launch dimension
count). Its key hashes the kernel's bytecode, everything the bytecode reaches by name (device
functions, recursively; global constants), the signature, the options and the library
versions, so editing the kernel or a device function it calls makes a new key. An entry
whose checksum does not match is ignored and rebuilt, never loaded.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import pickle
import tempfile
import types
from pathlib import Path

import llvmlite
import numba
import numba.core.dispatcher
import numpy as np
import platformdirs

MAGIC = b"dpex_kernels cache 1\n"
_DIGEST = hashlib.sha256().digest_size


def cache_dir() -> Path:
    """$DPEX_KERNELS_CACHE_DIR, else the user's cache directory for dpex_kernels."""
    configured = os.environ.get("DPEX_KERNELS_CACHE_DIR")
    return Path(configured) if configured else Path(platformdirs.user_cache_dir("dpex_kernels"))


def _hash_value(value: object, hasher, seen: set[int]) -> None:
    """Feed what a kernel can observe of `value` into `hasher`."""
    from .compiler.functions import DeviceFunction

    if isinstance(value, (DeviceFunction, numba.core.dispatcher.Dispatcher)):
        value = value.py_func
    if isinstance(value, types.FunctionType):
        _hash_function(value, hasher, seen)
    elif isinstance(value, types.ModuleType):
        hasher.update(b"module:" + value.__name__.encode())
    elif isinstance(value, (bool, int, float, complex, str, bytes, np.generic, type(None))):
        hasher.update(f"{type(value).__name__}:{value!r}".encode())
    elif isinstance(value, tuple):
        hasher.update(b"tuple(")
        for item in value:
            _hash_value(item, hasher, seen)
        hasher.update(b")")
    elif isinstance(value, np.ndarray):
        hasher.update(f"ndarray:{value.dtype}:{value.shape}:".encode() + value.tobytes())
    else:
        hasher.update(f"object:{type(value).__module__}.{type(value).__qualname__}".encode())


def _hash_code(code: types.CodeType, func, hasher, seen: set[int]) -> None:
    hasher.update(code.co_code)
    hasher.update(repr(code.co_names).encode())
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            _hash_code(constant, func, hasher, seen)
        else:
            hasher.update(repr(constant).encode())
    for name in code.co_names:
        if name in func.__globals__:
            hasher.update(b"global:" + name.encode())
            _hash_value(func.__globals__[name], hasher, seen)
        elif not hasattr(builtins, name):
            hasher.update(b"unbound:" + name.encode())


def _hash_function(func: types.FunctionType, hasher, seen: set[int]) -> None:
    if id(func) in seen:
        hasher.update(b"recursion:" + func.__qualname__.encode())
        return
    seen.add(id(func))
    hasher.update(b"function:" + func.__qualname__.encode())
    _hash_code(func.__code__, func, hasher, seen)
    for cell in func.__closure__ or ():
        try:
            _hash_value(cell.cell_contents, hasher, seen)
        except ValueError:  # an empty cell
            hasher.update(b"empty-cell")
    _hash_value(func.__defaults__, hasher, seen)


def entry_key(py_func, argtypes, options: dict) -> str:
    """The cache key of one kernel compilation."""
    from . import __version__

    hasher = hashlib.sha256()
    _hash_function(py_func, hasher, set())
    hasher.update(repr(tuple(str(t) for t in argtypes)).encode())
    hasher.update(repr(sorted((k, v) for k, v in options.items() if k != "cache")).encode())
    hasher.update(f"{__version__}|{numba.__version__}|{llvmlite.__version__}".encode())
    return f"{py_func.__name__}-{hasher.hexdigest()[:40]}"


def _path(key: str) -> Path:
    return cache_dir() / f"{key}.dpk"


def load(key: str):
    """The KernelArtifacts stored under `key`, or None when absent, truncated or corrupt."""
    try:
        data = _path(key).read_bytes()
    except OSError:
        return None
    header = len(MAGIC) + _DIGEST
    if len(data) < header or not data.startswith(MAGIC):
        return None
    digest, payload = data[len(MAGIC) : header], data[header:]
    if hashlib.sha256(payload).digest() != digest:
        return None
    try:
        return pickle.loads(payload)
    except Exception:  # an entry from an incompatible build: rebuild it
        return None


def store(key: str, artifacts) -> None:
    """Write an entry atomically (a temporary file renamed into place); failures are ignored."""
    payload = pickle.dumps(artifacts, protocol=pickle.HIGHEST_PROTOCOL)
    folder = cache_dir()
    temporary = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, delete=False, suffix=".tmp") as handle:
            temporary = handle.name
            handle.write(MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(temporary, _path(key))
    except OSError:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
