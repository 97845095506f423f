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
    """The kernels of one AOT bundle, as attributes and items, ready to launch.

    ``dpex_kernels.aot.runtime.load`` returns one. ``bundle.vecadd`` and ``bundle["vecadd"]``
    are the kernel of that name: launched as ``kernel[range](*args)`` with the same checks of
    the arguments against its signatures, and its ``definitions[sig].attrs``, where a
    signature is its text. Iterating gives the kernels' names.

    Attributes
    ----------
    path : pathlib.Path
        The bundle's file.
    kernels : dict
        ``{name: kernel}``.

    Raises
    ------
    AttributeError
        For ``bundle.name`` when the bundle has no kernel of that name.
    KeyError
        For ``bundle["name"]`` when the bundle has no kernel of that name.

    Examples
    --------
    >>> import tempfile
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> from dpex_kernels.aot.runtime import load
    >>> @dk.kernel(dk.void(dk.usm_array(dk.float32, 1)))
    ... def ones(a):
    ...     a[dk.get_global_id(0)] = 1
    >>> folder = tempfile.TemporaryDirectory()
    >>> bundle = load(dk.aot.build([ones], f"{folder.name}/kernels.dpkb"))
    >>> list(bundle), bundle["ones"] is bundle.ones
    (['ones'], True)
    >>> folder.cleanup()
    """

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
    """Read a bundle that ``dk.aot.build`` wrote, and build its kernels on their devices.

    Imports neither Numba nor llvmlite: an application launches bundled kernels with dpctl
    and dpnp alone. Each kernel is built for the device its signatures name, which must be
    present here.

    Parameters
    ----------
    path : str or pathlib.Path
        The bundle's file.
    cache : bool, default False
        Keep the device binaries the runtime builds on disk, so that later processes load them
        instead of building the SPIR-V again (as for ``@dk.kernel(cache=True)``, docs/cache.md).

    Returns
    -------
    Bundle
        The bundle's kernels, launchable as ``bundle.name[range](*args)``.

    Raises
    ------
    BundleError
        A ValueError: the file is not a bundle this version of dpex_kernels reads, is damaged,
        or holds code that fails the checks of docs/security.md; the message names the file
        and the problem. Device binaries kept by `cache` are checked the same way.
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import tempfile
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> from dpex_kernels.aot.runtime import load
    >>> @dk.kernel(dk.void(dk.usm_array(dk.float32, 1)))
    ... def ones(a):
    ...     a[dk.get_global_id(0)] = 1
    >>> folder = tempfile.TemporaryDirectory()
    >>> bundle = load(dk.aot.build([ones], f"{folder.name}/kernels.dpkb"))
    >>> a = dpnp.zeros(3, dtype="f4")
    >>> bundle.ones[3](a).wait()
    >>> dpnp.asnumpy(a)
    array([1., 1., 1.], dtype=float32)
    >>> folder.cleanup()
    """
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
