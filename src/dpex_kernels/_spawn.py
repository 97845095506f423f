"""The tools this package runs in child processes (spirv-dis, spirv-val, a fresh emission)."""

from __future__ import annotations

import subprocess


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
