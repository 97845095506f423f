"""On-disk cache of compiled kernels (cache=True): content-hash keys, plain data, atomic writes.

An entry is a zip file of plain data: entry.json (the key and the description that AOT bundles
use too, artifacts/files.py: name, options, target, facts), the SPIR-V and optimised LLVM IR
of each launch dimension count built so far, and the linked LLVM IR from which the other
counts are built when a launch needs them. Every file has a SHA-256 in entry.json; nothing is
unpickled or imported from the cache directory. An entry's key hashes the kernel's bytecode,
everything the bytecode reaches by name (device functions, recursively; global constants),
the signature, the options, the target device and the library versions, so editing the
kernel or a device function it calls makes a new key. An entry that is foreign (another
key's), truncated, altered or anything but a regular file is ignored and rebuilt, never loaded:
its files are checked as a bundle's are (artifacts/files.py, docs/security.md).
"""

from __future__ import annotations

import builtins
import hashlib
import io
import json
import re
import types
import zipfile
from pathlib import Path

import llvmlite
import numba
import numba.core.dispatcher
import numpy as np

from .artifacts import files
from .artifacts.kernel import NDIMS, Builder, KernelArtifact
from .artifacts.options import CompileOptions
from .artifacts.target import Target
from .errors import KernelCompileError
from .file_checks import read_file
from .program_binaries import cache_dir, write_atomically

MAGIC = "dpex_kernels cache 3"
#: The largest entry read (one takes 10 KB to 1 MB).
MAX_ENTRY_BYTES = 64 * 2**20


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


def entry_key(py_func, argtypes, options: CompileOptions, target: Target) -> str:
    """The cache key of one kernel compilation."""
    from . import __version__

    hasher = hashlib.sha256()
    _hash_function(py_func, hasher, set())
    hasher.update(repr(tuple(str(t) for t in argtypes)).encode())
    hasher.update(options.key().encode())
    hasher.update(target.key().encode())
    hasher.update(f"{__version__}|{numba.__version__}|{llvmlite.__version__}".encode())
    name = re.sub(r"[^A-Za-z0-9_]", "_", py_func.__name__)[:64]  # a file name, never a path
    return f"{name}-{hasher.hexdigest()[:40]}"


def _path(key: str) -> Path:
    return cache_dir() / f"{key}.dpk"


def _entry_bytes(key: str, artifact: KernelArtifact) -> bytes | None:
    """The entry for `artifact` (a zip of entry.json and its files), or None when the
    artifact holds what plain data cannot name (a debug-mode exception of a user class)."""
    if not files.builtin_exceptions(artifact.exceptions):
        return None
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        ndims = [n for n in NDIMS if artifact.has_variant(n)]
        definition = files.describe(artifact, archive.writestr, "code", ndims)
        extra = {
            "linked.ll": artifact.linked_ir.encode(),
            "types.txt": artifact.type_annotation.encode(),
        }
        for name, data in extra.items():
            archive.writestr(name, data)
        entry = {
            "format": MAGIC,
            "key": key,
            "files": {name: hashlib.sha256(data).hexdigest() for name, data in extra.items()},
            "definition": definition,
        }
        archive.writestr("entry.json", json.dumps(entry, indent=1))
    return buffer.getvalue()


def _checked_builder(path: Path, builder: Builder) -> Builder:
    """`builder` for an artifact read from the entry at `path`: what it makes of the entry's
    linked IR is checked as read code is (files.check_code); should that or the build fail, the
    entry is deleted, so that the kernel's next definition compiles it anew."""

    def build(artifact: KernelArtifact, ndim: int, linked: object) -> tuple:
        try:
            llvm_ir, spirv, facts = builder(artifact, ndim, linked)
            if files.check_code(artifact, spirv) != facts:
                raise files.CorruptArtifacts("its facts are not its code's")
        except Exception as exc:  # whatever the entry's linked IR makes the back end do
            path.unlink(missing_ok=True)
            raise KernelCompileError(
                f"kernel '{artifact.name}': its {ndim}-d variant could not be made from the "
                f"cache entry {path} ({type(exc).__name__}: {exc}); the entry is deleted, so "
                f"the kernel compiles anew when it is next defined"
            ) from exc
        return llvm_ir, spirv, facts

    return build


def _artifact_of(key: str, data: bytes, builder: Builder) -> KernelArtifact:
    """The artifact an entry describes, which makes further variants with `builder`;
    CorruptArtifacts if it is not exactly an entry written for `key`."""
    archive = files.Archive(data)
    entry = files.parse_json(archive.read("entry.json"), "entry.json")
    if not isinstance(entry, dict) or entry.get("format") != MAGIC or entry.get("key") != key:
        raise files.CorruptArtifacts("a foreign entry")
    checksums = entry.get("files")
    if not isinstance(checksums, dict):
        raise files.CorruptArtifacts("the entry's checksums are not an object")

    def text(name: str) -> str:
        return files.checked_file(archive.read, name, checksums.get(name)).decode()

    artifact = files.read(
        entry.get("definition"),
        archive.read,
        linked_ir=text("linked.ll"),
        type_annotation=text("types.txt"),
        builder=_checked_builder(_path(key), builder),
        binaries=True,
    )
    # The key hashes the target it was written for; the description must name that one, a
    # device of this machine (DeviceNotFoundError, a ValueError, for any other).
    if Target.of(artifact.target.device) != artifact.target:
        raise files.CorruptArtifacts("the entry's target is not its device's")
    return artifact


def load(key: str, builder: Builder) -> KernelArtifact | None:
    """The artifact stored under `key` (making further variants with `builder`), or None when
    absent, foreign, truncated, corrupt or not a regular file (then the caller compiles and
    stores a new entry in its place). Nothing is unpickled."""
    try:
        return _artifact_of(key, read_file(_path(key), MAX_ENTRY_BYTES), builder)
    except (OSError, ValueError):  # unreadable; or refused: file_checks, files, UTF-8
        return None


def store(key: str, artifact: KernelArtifact) -> None:
    """Write an entry atomically (a temporary file renamed into place); failures are ignored."""
    payload = _entry_bytes(key, artifact)
    if payload is None:
        return
    write_atomically(_path(key), payload)
