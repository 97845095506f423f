"""python -m dpex_kernels: the command line (dpex_kernels/cli/, docs/cli.md)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
