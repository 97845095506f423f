"""Package attributes imported on first use, so the numba-free parts load without Numba."""

from __future__ import annotations

import importlib


def lazy_attributes(package: str, where: dict[str, str]):
    """__getattr__ and __dir__ for a package whose names live in submodules imported lazily.

    `where` maps each public name to the submodule (relative to `package`) that defines it,
    or to None for a subpackage of that very name.
    """

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = where[name]
        if module is None:
            value = importlib.import_module(f".{name}", package)
        else:
            value = getattr(importlib.import_module(module, package), name)
        globals_of_package = importlib.import_module(package).__dict__
        globals_of_package[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(importlib.import_module(package).__dict__) | set(where))

    return __getattr__, __dir__
