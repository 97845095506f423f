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
    """Write eager kernels' SPIR-V and signatures to a file that launches without the compiler.

    ``dpex_kernels.aot.runtime.load`` reads the bundle back with neither Numba nor llvmlite:
    an application can ship its kernels compiled. ``python -m dpex_kernels aot build MODULE -o
    FILE`` does the same from the command line. Each definition is read back as
    ``load`` will read it, checks and all, before the file is written.

    Parameters
    ----------
    kernels : list of JitKernel, or module
        The eager kernels (``@dk.kernel(sig)``) to bundle; of a module, every eager kernel
        among its globals (its lazy ones are skipped).
    path : str or pathlib.Path
        The file to write (conventionally ``*.dpkb``), replaced if it exists.

    Returns
    -------
    pathlib.Path
        `path`.

    Raises
    ------
    TypeError
        If an item is not a ``@dk.kernel``, or a listed kernel is lazy (its signatures are
        unknown).
    ValueError
        If there is no eager kernel to bundle, or two kernels share a name.

    Examples
    --------
    >>> import tempfile
    >>> import dpex_kernels as dk
    >>> @dk.kernel(dk.void(dk.usm_array(dk.float32, 1)))
    ... def ones(a):
    ...     a[dk.get_global_id(0)] = 1
    >>> folder = tempfile.TemporaryDirectory()
    >>> dk.aot.build([ones], f"{folder.name}/kernels.dpkb").name
    'kernels.dpkb'
    >>> folder.cleanup()
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
