"""Kernel artifacts as plain data: a JSON description plus SPIR-V and LLVM IR files, checksummed.

One writer and one reader, shared by AOT bundles (aot/bundle.py, aot/runtime.py) and the disk
cache (cache.py). Nothing here unpickles or imports anything named by the data: exception
classes are Python built-ins, by name. Numba-free, so a bundle loads without Numba.
"""

from __future__ import annotations

import builtins
import hashlib
from collections.abc import Callable
from dataclasses import asdict

from ..types.spec import ArraySpec
from .kernel import NDIMS, Builder, CodeFacts, KernelArtifact
from .options import CompileOptions
from .target import Target


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


def param_to_json(param: ArraySpec | str) -> dict:
    if isinstance(param, ArraySpec):
        fields = asdict(param)
        fields.pop("contiguity")
        return {"array": fields}
    return {"scalar": param}


def param_from_json(description: object) -> ArraySpec | str:
    if isinstance(description, dict) and isinstance(description.get("array"), dict):
        return ArraySpec(**description["array"])
    if isinstance(description, dict) and isinstance(description.get("scalar"), str):
        return description["scalar"]
    raise CorruptArtifacts(f"a parameter description is malformed: {description!r}")


def describe(artifact: KernelArtifact, put: Callable[[str, bytes], None], stem: str, ndims=NDIMS):
    """Write the SPIR-V and LLVM IR of `artifact`'s variants for `ndims` through `put(name,
    data)`, each under `stem`; return the JSON description that read() takes back."""
    variants = {}
    for ndim in ndims:
        llvm_ir, spirv = artifact.variant(ndim)
        facts = artifact.facts(ndim)
        llvm_bytes = llvm_ir.encode()
        put(f"{stem}/{ndim}d.spv", spirv)
        put(f"{stem}/{ndim}d.ll", llvm_bytes)
        variants[str(ndim)] = {
            "spirv": f"{stem}/{ndim}d.spv",
            "spirv_sha256": _digest(spirv),
            "llvm": f"{stem}/{ndim}d.ll",
            "llvm_sha256": _digest(llvm_bytes),
            "aspects": list(facts.aspects),
            "local_memory": facts.local_memory,
            "written_arguments": list(facts.written_arguments),
        }
    return {
        "name": artifact.name,
        "symbol": artifact.symbol,
        "params": [param_to_json(p) for p in artifact.params],
        "options": artifact.options.to_json(),
        "target": artifact.target.to_json(),
        "default_ndim": artifact.default_ndim,
        "front_end": artifact.front_end,
        "exceptions": {
            str(code): [exc.__name__ if exc is not None else None, [_json_arg(a) for a in args]]
            for code, (exc, args) in artifact.exceptions.items()
        },
        "float_atomics": artifact.float_atomics,
        "variants": variants,
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


def _facts(variant: dict) -> CodeFacts:
    aspects, local_memory = variant["aspects"], variant["local_memory"]
    written = variant["written_arguments"]
    if (
        not isinstance(aspects, list)
        or not all(isinstance(a, str) for a in aspects)
        or type(local_memory) is not int
        or local_memory < 0
        or not isinstance(written, list)
        or not all(type(w) is int and w >= 0 for w in written)
    ):
        raise CorruptArtifacts("a variant's facts have the wrong types")
    return CodeFacts(tuple(aspects), local_memory, tuple(written))


def read(
    description: object,
    get: Callable[[str], bytes],
    *,
    linked_ir: str | None = None,
    type_annotation: str = "",
    builder: Builder | None = None,
) -> KernelArtifact:
    """The artifact a description written by describe() stands for, each file checked against
    its checksum; with `linked_ir` and a `builder` it can make more variants. Raises
    CorruptArtifacts for anything else."""
    try:
        name, symbol = description["name"], description["symbol"]
        default_ndim, front_end = description["default_ndim"], description["front_end"]
        exceptions, float_atomics = description["exceptions"], description["float_atomics"]
        variants = description["variants"]
        if not (
            isinstance(name, str)
            and isinstance(symbol, str)
            and default_ndim in NDIMS
            and isinstance(front_end, str)
            and isinstance(exceptions, dict)
            and isinstance(variants, dict)
            and isinstance(float_atomics, dict)
            and all(path in ("native", "cas") for path in float_atomics.values())
        ):
            raise CorruptArtifacts("the description's fields have the wrong types")
        artifact = KernelArtifact(
            name=name,
            symbol=symbol,
            params=tuple(param_from_json(p) for p in description["params"]),
            options=CompileOptions.from_json(description["options"]),
            target=Target.from_json(description["target"]),
            default_ndim=default_ndim,
            exceptions={int(c): _exception(*entry) for c, entry in exceptions.items()},
            float_atomics={str(k): v for k, v in float_atomics.items()},
            front_end=front_end,
            linked_ir=linked_ir,
            type_annotation=type_annotation,
            builder=builder,
        )
        for ndim, variant in ((int(n), v) for n, v in variants.items()):
            if ndim in NDIMS:
                artifact.add_variant(
                    ndim,
                    checked_file(get, variant["llvm"], variant["llvm_sha256"]).decode(),
                    checked_file(get, variant["spirv"], variant["spirv_sha256"]),
                    _facts(variant),
                )
        if not artifact.has_variant(default_ndim):
            raise CorruptArtifacts("the description lacks its default variant")
        return artifact
    except CorruptArtifacts:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, UnicodeDecodeError) as exc:
        raise CorruptArtifacts(f"malformed description: {type(exc).__name__}: {exc}") from exc
