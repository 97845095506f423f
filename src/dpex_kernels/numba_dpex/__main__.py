"""`python -m dpex_kernels.numba_dpex script.py [args]`: run a numba-dpex script unchanged,
its `import numba_dpex` resolved to dpex_kernels.numba_dpex (alias.py) where numba-dpex itself
is not installed."""

from __future__ import annotations

import os
import runpy
import sys

from .alias import install_alias


def main(argv: list[str]) -> int:
    """Install the alias, then run argv[0] as __main__ with argv as its sys.argv."""
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    if not install_alias():
        print("numba_dpex is installed: the script runs with it", file=sys.stderr)
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))  # as `python script.py` has it
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
