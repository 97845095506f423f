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


def load(path: str | Path, cache: bool = False) -> Bundle:
    """Read a bundle written by dpex_kernels.aot.build and build its kernels on their devices;
    with `cache`, their device binaries are kept on disk and later processes load those (the
    device binaries of cache=True kernels, docs/cache.md), skipping the runtime's builds."""
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
