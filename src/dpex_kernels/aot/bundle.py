"""Ahead-of-time bundles: build() writes the SPIR-V and signatures of eager kernels to a file.

A bundle is a zip archive: manifest.json (kernels, their parameter names and signatures, and
each definition's description from artifacts/files.py) and, per definition and launch
dimension count, its SPIR-V and LLVM IR. aot/runtime.py reads it back without Numba.
"""

from __future__ import annotations

import json
import types
import zipfile
from pathlib import Path

from ..artifacts.files import CorruptArtifacts, describe, read
from ..dispatcher.jit_kernel import JitKernel
from .runtime import FORMAT, VERSION


def _collect(kernels) -> list[JitKernel]:
    if isinstance(kernels, types.ModuleType):  # a module's lazy kernels are left out
        found = [v for v in vars(kernels).values() if isinstance(v, JitKernel) and v._eager]
    else:
        found = list(kernels)
    chosen = []
    for kernel in found:
        if not isinstance(kernel, JitKernel):
            raise TypeError(f"aot.build takes @dk.kernel objects; got {kernel!r}")
        if not kernel._eager:
            raise TypeError(
                f"kernel '{kernel.__name__}' is lazy: declare its signatures "
                f"(@dk.kernel(dk.void(...))) so the bundle knows what to compile"
            )
        chosen.append(kernel)
    if not chosen:
        raise ValueError("aot.build found no eager @dk.kernel to bundle")
    names = [k.__name__ for k in chosen]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"two kernels share the name(s) {duplicates}; bundle names must differ")
    return chosen


def build(kernels, path: str | Path) -> Path:
    """Write a bundle of the eager kernels in `kernels`: a list of them, or a module.

    A listed lazy kernel is an error (its signatures are unknown); a module's are skipped.
    Each definition is read back as aot.runtime.load will read it, checks and all.
    """
    path = Path(path)
    manifest = {"format": FORMAT, "version": VERSION, "kernels": []}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for kernel in _collect(kernels):
            entry = {"name": kernel.__name__, "params": list(kernel.param_names), "definitions": []}
            for index, (sig, compiled) in enumerate(kernel.definitions.items()):
                written: dict[str, bytes] = {}

                def put(name: str, data: bytes, written=written) -> None:
                    written[name] = data
                    archive.writestr(name, data)

                description = describe(compiled.artifacts, put, f"{kernel.__name__}/{index}")
                try:
                    read(description, written.__getitem__)
                except CorruptArtifacts as exc:
                    raise ValueError(
                        f"kernel '{kernel.__name__}' {sig}: aot.runtime.load would refuse what "
                        f"it compiled to ({exc}); please report this dpex_kernels bug"
                    ) from exc
                entry["definitions"].append({"signature": str(sig), **description})
            manifest["kernels"].append(entry)
        archive.writestr("manifest.json", json.dumps(manifest, indent=1))
    return path
