"""Ship kernels without a compiler: build a bundle, then load it without Numba or llvmlite."""

import subprocess
import sys
import tempfile
from pathlib import Path

import dpex_kernels as dk
from examples import vecadd

LOADER = """
import sys
import dpnp
from dpex_kernels.aot.runtime import load

bundle = load(sys.argv[1])
a = dpnp.arange(8, dtype="f4")
c = dpnp.empty_like(a)
bundle.vecadd[8](a, a, c)
print(dpnp.asnumpy(c), "numba imported:", "numba" in sys.modules)
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        bundle = dk.aot.build(vecadd, Path(folder) / "kernels.dpkb")
        done = subprocess.run(
            [sys.executable, "-c", LOADER, str(bundle)], check=True, capture_output=True, text=True
        )
        print(done.stdout.strip())


if __name__ == "__main__":
    main()
