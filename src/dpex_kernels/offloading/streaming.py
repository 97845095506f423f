"""Lowering strategy (to come): a large 1-D loop on a CPU device as a host-SIMD kernel with
streaming stores; here, when it pays.

The AST outliner this package had before the parfor design launched such a kernel for a loop
whose arrays outgrow their share of the last-level cache (docs/offload.md). Its lowering from a
parfor is not rebuilt yet (issue 40): ranges.py launches the plain kernel for every loop, and
tests/test_offload_streaming.py marks the streaming tests as expected failures. This module
keeps the decision, which the strategy will read.
"""

from __future__ import annotations

import functools
from pathlib import Path

#: Consecutive iterations each work-item of a streaming loop runs (compiler/host_simd.py).
CHUNK = 1024


@functools.cache
def last_level_cache_bytes() -> int:
    """The size of the host CPU's largest cache (Linux sysfs; 32 MiB where it cannot be read)."""
    sizes = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        if text[:-1].isdigit() and text[-1] in "KMG":
            sizes.append(int(text[:-1]) << {"K": 10, "M": 20, "G": 30}[text[-1]])
    return max(sizes, default=32 << 20)


def streaming_bytes() -> int:
    """How much memory a loop's arrays take before its stores stream: a quarter of the
    last-level cache, the share glibc (2.38 and later) gives memcpy before it streams (the
    cache is shared with the machine's other cores; measurements in docs/offload.md)."""
    return last_level_cache_bytes() // 4


def worth_host_simd(iterations: int, chunk: int, nbytes: int) -> bool:
    """Whether a loop takes its streaming kernel rather than its plain one: a chunk of
    iterations or more over arrays that together outgrow their share of the cache (below it,
    streaming stores would evict what the next loop reads)."""
    return iterations >= chunk and nbytes >= streaming_bytes()


def first_address(array) -> int:
    """The address of a USM array's first element."""
    interface = array.__sycl_usm_array_interface__
    return interface["data"][0] + (interface.get("offset") or 0) * array.itemsize
