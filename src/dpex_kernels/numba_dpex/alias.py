"""`import numba_dpex` as dpex_kernels.numba_dpex, where numba-dpex itself is not installed.

Opt-in: `dpex_kernels.numba_dpex.install_alias()`, or `python -m dpex_kernels.numba_dpex
script.py` (which installs it and runs the script). The alias puts this package and each of
its modules in `sys.modules` under numba-dpex's names (`numba_dpex.kernel_api`,
`numba_dpex.core.exceptions`, ...), so both names reach the same module objects. An
importable numba_dpex (installed, on sys.path, or already imported) always wins: the alias is
then not installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys

ALIAS = "numba_dpex"
_PACKAGE = __name__.rsplit(".", 1)[0]  # dpex_kernels.numba_dpex


def _compat_modules() -> dict[str, object]:
    """numba-dpex name -> module, for this package and every module in it."""
    package = importlib.import_module(_PACKAGE)
    modules = {ALIAS: package}
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{_PACKAGE}."):
        if info.name.endswith(".__main__"):
            continue  # the script runner, which runs when imported
        modules[ALIAS + info.name[len(_PACKAGE) :]] = importlib.import_module(info.name)
    return modules


def install_alias() -> bool:
    """Make `import numba_dpex` give dpex_kernels.numba_dpex, unless a numba_dpex is
    importable; True if the alias is in place (now or from before)."""
    found = sys.modules.get(ALIAS)
    if found is not None:
        return found is importlib.import_module(_PACKAGE)
    if importlib.util.find_spec(ALIAS) is not None:
        return False  # numba-dpex itself is installed: it wins
    sys.modules.update(_compat_modules())
    return True


__all__ = ["install_alias"]
