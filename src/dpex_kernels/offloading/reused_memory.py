"""The memory of large arrays offloaded code makes, reused once the arrays die.

NumPy takes a large array's memory from malloc, which keeps what the last array of that size
gave back: its pages are mapped already. A USM allocation of the OpenCL CPU runtime is a new
mapping each time, and the first writes into it fault its pages in: a returned 16 MiB `x[m]`
spent about 20 ms of its 30 there, on the 2-core Zen 3. Here the memory of an array of at
least REUSED_BYTES goes back to a pool when the last array on it dies, and the next array of
the same size, queue and USM type takes it.

An array dies only when no launch still uses it: dpex_kernels' launcher and dpnp keep their
arguments alive until their kernels complete, which is also what lets dpctl free memory at
that moment. The launcher lets a completed launch's arguments go at its next launch, or when
an allocation here asks it to.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict

import dpctl
import dpctl.memory
import dpnp
import numpy as np
from dpnp import tensor
from dpnp.tensor._device import normalize_queue_device

from ..dispatcher._native import launcher

#: Arrays from this many bytes up take their memory from the pool (below it a fresh
#: allocation costs microseconds).
REUSED_BYTES = 1 << 20
#: Allocations kept of one size, queue and USM type: a loop making two arrays a call reuses both.
KEPT_PER_KEY = 2
#: Bytes kept in all: above it the least recently kept size is let go (freed by dpctl).
KEPT_BYTES = 256 << 20

_MEMORY_TYPES = {
    "device": dpctl.memory.MemoryUSMDevice,
    "shared": dpctl.memory.MemoryUSMShared,
    "host": dpctl.memory.MemoryUSMHost,
}
_kept: OrderedDict[tuple, list] = OrderedDict()  # (queue, usm_type, bytes) -> memory objects
_kept_bytes = 0
_lock = threading.RLock()  # a block may die in any thread, or in a collection under the lock


class _Block:
    """One USM allocation lent to the arrays made on it; back to the pool when they are gone."""

    __slots__ = ("memory", "key")

    def __init__(self, memory, key: tuple):
        self.memory, self.key = memory, key

    @property
    def __sycl_usm_array_interface__(self) -> dict:
        return self.memory.__sycl_usm_array_interface__

    def __del__(self):
        if not sys.is_finalizing():
            _keep(self.key, self.memory)


def _keep(key: tuple, memory) -> None:
    global _kept_bytes
    with _lock:
        kept = _kept.get(key, [])
        if len(kept) >= KEPT_PER_KEY or key[2] > KEPT_BYTES:
            return  # dropped here: dpctl frees it
        kept.append(memory)
        _kept[key] = kept
        _kept.move_to_end(key)
        _kept_bytes += key[2]
        while _kept_bytes > KEPT_BYTES:
            oldest, memories = next(iter(_kept.items()))
            _kept_bytes -= oldest[2] * len(memories)
            del _kept[oldest]


def _take(key: tuple):
    global _kept_bytes
    with _lock:
        kept = _kept.get(key)
        if not kept:
            return None
        _kept_bytes -= key[2]
        memory = kept.pop()
        if not kept:
            del _kept[key]  # nor its queue kept alive
        return memory


def empty(shape, dtype, usm_type: str, placement: dict) -> tuple[dpnp.ndarray, bool]:
    """An uninitialised C-contiguous array, and whether its memory is new (never written)."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    if nbytes < REUSED_BYTES:
        return dpnp.empty(shape, dtype=dtype, usm_type=usm_type, **placement), True
    queue = normalize_queue_device(
        sycl_queue=placement.get("sycl_queue"), device=placement.get("device")
    )
    key = (queue, usm_type, nbytes)
    launcher.release_completed()  # the arrays of finished launches die now, if nothing holds them
    memory = _take(key)
    fresh = memory is None
    if fresh:
        memory = _MEMORY_TYPES[usm_type](nbytes, queue=queue)
    buffer = dpctl.memory.as_usm_memory(_Block(memory, key))
    array = tensor.usm_ndarray(shape, dtype=dtype, buffer=buffer)
    return dpnp.ndarray._create_from_usm_ndarray(array), fresh
