"""Lowering strategy: a loop that reduces into scalars (placeholder)."""

from __future__ import annotations

from .regions import Region


def takes(region: Region) -> bool:
    return bool(region.reductions)


def kernels(region: Region, cache: bool) -> list:
    raise region.error("reduces: not yet")
