"""The user's modules and kernels, as the commands name them, and the mistakes they can make."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType


class UserError(Exception):
    """A mistake on the command line (or a missing piece of the set-up): one line on stderr
    and exit status 2 (1 for the set-up), no traceback."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


def check_module(spec: str) -> None:
    """A UserError unless `spec` names a module that exists: a .py file, or a module name
    importable from the current folder or sys.path (its parent packages are imported)."""
    if Path(spec).suffix == ".py":
        if not Path(spec).is_file():
            raise UserError(f"no file {spec}: give a module name or the path of a .py file")
        return
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        found = importlib.util.find_spec(spec)
    except (ModuleNotFoundError, ValueError):  # a missing parent package, or an empty name
        found = None
    if found is None:
        raise UserError(
            f"no module named {spec!r} in the current folder or on sys.path: give a module "
            f"name (package.module) or the path of a .py file"
        )


def import_module(spec: str) -> ModuleType:
    """A module given by name (importable from the current folder) or by a .py file's path.

    Errors raised by the module's own code (an import it lacks, a kernel that does not
    compile) keep their traceback: it points into the user's code."""
    check_module(spec)
    path = Path(spec)
    if path.suffix != ".py":
        return importlib.import_module(spec)
    if str(path.resolve().parent) not in sys.path:  # as `python file.py`: its siblings import
        sys.path.insert(0, str(path.resolve().parent))
    loaded = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(loaded)
    sys.modules[path.stem] = module
    loaded.loader.exec_module(module)
    return module


def kernels_of(module: ModuleType) -> dict[str, object]:
    """The @dk.kernel objects a module defines, by name."""
    from ..dispatcher.jit_kernel import JitKernel

    return {name: v for name, v in vars(module).items() if isinstance(v, JitKernel)}


def find_kernel(target: str) -> tuple[ModuleType, object]:
    """The module and the kernel of MODULE:KERNEL."""
    module_spec, colon, name = target.rpartition(":")
    if not colon or not module_spec or not name:
        raise UserError(f"{target!r} is not MODULE:KERNEL (for example app.kernels:vecadd)")
    module = import_module(module_spec)
    kernels = kernels_of(module)
    if name in kernels:
        return module, kernels[name]
    listed = ", ".join(sorted(kernels)) or "none"
    if hasattr(module, name):
        what = type(getattr(module, name)).__name__
        raise UserError(
            f"{module_spec}:{name} is not a kernel (type {what}); its kernels: {listed}"
        )
    raise UserError(f"{module_spec} has no kernel {name!r}; its kernels: {listed}")
