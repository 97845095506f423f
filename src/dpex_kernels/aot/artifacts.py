"""Compiled code as plain data: a JSON description plus SPIR-V and LLVM IR files, checksummed.

One writer and one reader, shared by AOT bundles (aot/bundle.py, aot/runtime.py) and the disk
cache (cache.py). Numba-free, so a bundle loads with dpctl alone. Nothing here unpickles or
imports anything named by the data: exception classes are Python built-ins, by name.
"""

from __future__ import annotations

import builtins
import hashlib
from collections.abc import Callable

NDIMS = (1, 2, 3)


class CorruptArtifacts(ValueError):
    """A description or file that does not match what was written: never loaded."""


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _json_arg(value):
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


def builtin_exceptions(exceptions: dict) -> bool:
    """Whether every debug-mode exception class is a Python built-in (what the data can name)."""
    return all(
        exc is None or getattr(builtins, exc.__name__, None) is exc
        for exc, _ in exceptions.values()
    )


def describe(artifacts, put: Callable[[str, bytes], None], stem: str, ndims=NDIMS) -> dict:
    """Write the SPIR-V and LLVM IR of `artifacts`' variants for `ndims` through `put(name,
    data)`, each under `stem`; return the JSON description that read() takes back."""
    variants = {}
    for ndim in ndims:
        llvm_ir, spirv = artifacts.variant(ndim)
        llvm_bytes = llvm_ir.encode()
        put(f"{stem}/{ndim}d.spv", spirv)
        put(f"{stem}/{ndim}d.ll", llvm_bytes)
        variants[str(ndim)] = {
            "spirv": f"{stem}/{ndim}d.spv",
            "spirv_sha256": _digest(spirv),
            "llvm": f"{stem}/{ndim}d.ll",
            "llvm_sha256": _digest(llvm_bytes),
        }
    return {
        "symbol": artifacts.symbol,
        "default_ndim": artifacts.default_ndim,
        "error_flag": bool(artifacts.error_flag),
        "exceptions": {
            str(code): [exc.__name__ if exc is not None else None, [_json_arg(a) for a in args]]
            for code, (exc, args) in artifacts.exceptions.items()
        },
        "variants": variants,
        "float_atomics": artifacts.float_atomics,
    }


def checked_file(get: Callable[[str], bytes], name: object, sha256: object) -> bytes:
    """The file `name` read through `get`, if its SHA-256 is `sha256`."""
    if not isinstance(name, str) or not isinstance(sha256, str):
        raise CorruptArtifacts(f"a file entry is not a name and a checksum: {name!r}")
    data = get(name)
    if _digest(data) != sha256:
        raise CorruptArtifacts(f"{name} does not match its checksum")
    return data


def _exception(name, args) -> tuple:
    if name is not None and not isinstance(name, str) or not isinstance(args, list):
        raise CorruptArtifacts(f"an exception entry is malformed: {name!r}, {args!r}")
    found = getattr(builtins, name, None) if name else None
    if name and not (isinstance(found, type) and issubclass(found, BaseException)):
        found = RuntimeError
    return found, tuple(args)


def read(description: object, get: Callable[[str], bytes]) -> dict:
    """The fields of a description written by describe(), each file checked against its
    checksum: symbol, default_ndim, error_flag, exceptions and variants {ndim: (ir, spirv)}.
    Raises CorruptArtifacts for anything else."""
    try:
        symbol, default_ndim = description["symbol"], description["default_ndim"]
        error_flag, exceptions = description["error_flag"], description["exceptions"]
        variants = description["variants"]
        float_atomics = description.get("float_atomics", {})  # absent in older bundles
        if not (
            isinstance(symbol, str)
            and default_ndim in NDIMS
            and isinstance(error_flag, bool)
            and isinstance(exceptions, dict)
            and isinstance(variants, dict)
            and isinstance(float_atomics, dict)
            and all(path in ("native", "cas") for path in float_atomics.values())
        ):
            raise CorruptArtifacts("the description's fields have the wrong types")
        code = {
            ndim: (
                checked_file(get, v["llvm"], v["llvm_sha256"]).decode(),
                checked_file(get, v["spirv"], v["spirv_sha256"]),
            )
            for ndim, v in ((int(n), v) for n, v in variants.items())
            if ndim in NDIMS
        }
        if default_ndim not in code:
            raise CorruptArtifacts("the description lacks its default variant")
        return {
            "symbol": symbol,
            "default_ndim": default_ndim,
            "error_flag": error_flag,
            "exceptions": {int(c): _exception(*entry) for c, entry in exceptions.items()},
            "variants": code,
            "float_atomics": {str(k): v for k, v in float_atomics.items()},
        }
    except CorruptArtifacts:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, UnicodeDecodeError) as exc:
        raise CorruptArtifacts(f"malformed description: {type(exc).__name__}: {exc}") from exc


class BundledArtifacts:
    """A definition's code read back from plain data: SPIR-V and LLVM IR per launch dimension
    count, what the launch path needs of compiled artifacts (the variants written are all
    there are)."""

    def __init__(self, name: str, fields: dict):
        self.name = name
        self.symbol = fields["symbol"]
        self.default_ndim = fields["default_ndim"]
        self.error_flag = fields["error_flag"]
        self.exceptions = fields["exceptions"]
        self._variants = fields["variants"]
        self.float_atomics = fields["float_atomics"]
        self.host_simd = ""  # bundles hold @dk.kernel definitions, never offloaded loops

    def has_variant(self, ndim: int) -> bool:
        return ndim in self._variants

    def variant(self, ndim: int) -> tuple[str, bytes]:
        return self._variants[ndim]

    @property
    def llvm_ir(self) -> str:
        return self._variants[self.default_ndim][0]

    @property
    def spirv(self) -> bytes:
        return self._variants[self.default_ndim][1]
