"""Load an AOT bundle and launch its kernels with dpctl and dpnp: no Numba, no llvmlite.

from dpex_kernels.aot.runtime import load
bundle = load("kernels.dpkb")
bundle.vecadd[dk.Range(n)](a, b, c)       # same launch API, signature checks and attrs
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from ..artifacts.files import CorruptArtifacts, read
from ..dispatcher.compiled import CompiledKernel
from ..dispatcher.launch import KernelBase

FORMAT = "dpex_kernels bundle"
VERSION = 3  # 3: options, target and code facts in the shared description (artifacts/files.py)


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
        instead of building the SPIR-V again (as for ``@dk.kernel(cache=True)``).

    Returns
    -------
    Bundle
        The bundle's kernels, launchable as ``bundle.name[range](*args)``.

    Raises
    ------
    ValueError
        If the file is not a bundle this version of dpex_kernels reads, or is damaged; the
        message names the file and the problem.
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
        with zipfile.ZipFile(path) as archive:
            manifest = json.loads(archive.read("manifest.json"))
            if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
                raise ValueError(f"{path} is not a version {VERSION} dpex_kernels bundle")
            kernels = {}
            for entry in manifest["kernels"]:
                kernel = BundledKernel(entry["name"], tuple(entry["params"]))
                for definition in entry["definitions"]:
                    artifact = read(definition, archive.read)
                    signature = definition["signature"]
                    kernel.definitions[signature] = CompiledKernel(
                        signature, artifact, keep_binaries=cache
                    )
                kernels[entry["name"]] = kernel
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, CorruptArtifacts) as exc:
        raise ValueError(f"{path} is not a readable dpex_kernels bundle: {exc}") from exc
    return Bundle(path, kernels)
