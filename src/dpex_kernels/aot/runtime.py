"""Load an AOT bundle and launch its kernels with dpctl and dpnp: no Numba, no llvmlite.

from dpex_kernels.aot.runtime import load
bundle = load("kernels.dpkb")
bundle.vecadd[dk.Range(n)](a, b, c)       # same launch API, signature checks and attrs

A bundle is untrusted input (docs/security.md): everything in it is checked before its code
reaches the runtime, and a bundle that is not exactly what aot.build writes is refused with a
BundleError naming the file and the problem.
"""

from __future__ import annotations

from pathlib import Path

from ..artifacts.files import Archive, CorruptArtifacts, parse_json, read, shown
from ..dispatcher.compiled import CompiledKernel
from ..dispatcher.launch import KernelBase
from ..errors import DeviceNotFoundError, KernelCompileError
from ..file_checks import RefusedFile, read_file

FORMAT = "dpex_kernels bundle"
VERSION = 3  # 3: options, target and code facts in the shared description (artifacts/files.py)
#: The largest bundle file read, and the most definitions (signatures) one may hold.
MAX_BUNDLE_BYTES = 256 * 2**20
MAX_DEFINITIONS = 4096


class BundleError(ValueError):
    """A bundle that cannot be loaded: which file, what is wrong with it, what to do."""


class BundledKernel(KernelBase):
    """A kernel from a bundle: its definitions are keyed by their signatures' text."""

    def __repr__(self) -> str:
        return f"<bundled kernel {self.__name__} ({len(self.definitions)} signature(s))>"


class Bundle:
    """The kernels of one bundle, as attributes and items."""

    def __init__(self, path: Path, kernels: dict[str, BundledKernel]):
        self.path = path
        self.kernels = kernels

    def __getattr__(self, name: str) -> BundledKernel:
        try:
            return self.__dict__["kernels"][name]
        except KeyError:
            raise AttributeError(
                f"bundle {self.__dict__.get('path')} has no kernel {name!r}"
            ) from None

    def __getitem__(self, name: str) -> BundledKernel:
        try:
            return self.kernels[name]
        except KeyError:
            raise KeyError(f"bundle {self.path} has no kernel {name!r}") from None

    def __iter__(self):
        return iter(self.kernels)

    def __repr__(self) -> str:
        return f"<dpex_kernels bundle {self.path}: {', '.join(self.kernels)}>"


def _kernel_entries(archive: Archive) -> list[dict]:
    """The manifest's kernels, each an object of a name, parameter names and definitions."""
    manifest = parse_json(archive.read("manifest.json"), "manifest.json")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CorruptArtifacts("its manifest.json is not a dpex_kernels bundle's")
    if manifest.get("version") != VERSION:
        raise CorruptArtifacts(
            f"it is a version {shown(manifest.get('version'))} bundle; this dpex_kernels "
            f"reads version {VERSION}"
        )
    entries = manifest.get("kernels")
    if not isinstance(entries, list):
        raise CorruptArtifacts("its manifest's kernels are not a list")
    names, count = set(), 0
    for entry in entries:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not (isinstance(name, str) and name.isidentifier()) or name in names:
            raise CorruptArtifacts(f"a kernel's name {shown(name)} is no identifier of its own")
        params, definitions = entry.get("params"), entry.get("definitions")
        if not (isinstance(params, list) and all(isinstance(p, str) for p in params)):
            raise CorruptArtifacts(f"kernel '{name}': its parameter names are not a list")
        if not (isinstance(definitions, list) and definitions):
            raise CorruptArtifacts(f"kernel '{name}': its definitions are not a list of some")
        names.add(name)
        count += len(definitions)
    if count > MAX_DEFINITIONS:
        raise CorruptArtifacts(f"it holds {count} definitions, more than {MAX_DEFINITIONS}")
    return entries


def _kernel(archive: Archive, entry: dict, cache: bool) -> BundledKernel:
    """One kernel of the manifest, its definitions read, checked and built for their devices."""
    name, params = entry["name"], entry["params"]
    kernel = BundledKernel(name, tuple(params))
    for definition in entry["definitions"]:
        signature = definition.get("signature") if isinstance(definition, dict) else None
        if not isinstance(signature, str) or signature in kernel.definitions:
            raise CorruptArtifacts(f"kernel '{name}': a signature {shown(signature)} is no text")
        try:
            artifact = read(definition, archive.read, binaries=cache)
        except CorruptArtifacts as exc:
            raise CorruptArtifacts(f"kernel '{name}' {signature}: {exc}") from None
        if artifact.name != name or len(artifact.params) != len(params):
            raise CorruptArtifacts(
                f"kernel '{name}' {signature}: the definition is of kernel '{artifact.name}' "
                f"with {len(artifact.params)} parameters, not of its {len(params)}"
            )
        try:
            compiled = CompiledKernel(signature, artifact, keep_binaries=cache)
        except (DeviceNotFoundError, KernelCompileError) as exc:
            raise CorruptArtifacts(f"kernel '{name}' {signature} cannot run here: {exc}") from exc
        kernel.definitions[signature] = compiled
    return kernel


def load(path: str | Path, cache: bool = False) -> Bundle:
    """Read a bundle written by dpex_kernels.aot.build and build its kernels on their devices;
    with `cache`, their device binaries are kept on disk and later processes load those (the
    device binaries of cache=True kernels, docs/cache.md), skipping the runtime's builds.

    BundleError (a ValueError) for a file that is not such a bundle, or whose kernels cannot
    run here; OSError when it cannot be read at all."""
    path = Path(path)
    try:
        archive = Archive(read_file(path, MAX_BUNDLE_BYTES, follow_symlinks=True))
        kernels = {}
        for entry in _kernel_entries(archive):
            kernels[entry["name"]] = _kernel(archive, entry, cache)
    except (RefusedFile, CorruptArtifacts) as exc:
        raise BundleError(
            f"{path} is not a readable dpex_kernels bundle: {exc}; rebuild it with "
            f"`python -m dpex_kernels aot build`"
        ) from exc
    return Bundle(path, kernels)


__all__ = ["Bundle", "BundleError", "BundledKernel", "load"]
