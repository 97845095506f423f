"""python -m dpex_kernels cache path|list|clear: the disk cache of cache=True kernels.

Read from the folder itself (program_binaries.cache_dir()): entries are `*.dpk` files named
after their kernel, device binaries `binaries/*.bin`. `clear` deletes only those (and the
temporary files of an interrupted write), never the folder: DPEX_KERNELS_CACHE_DIR may name
a folder that holds other things too.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from ..program_binaries import cache_dir

ENTRIES, BINARIES, LEFTOVERS = "*.dpk", "binaries/*.bin", ("*.tmp", "binaries/*.tmp")


def _files(folder: Path, *patterns: str) -> list[Path]:
    """The regular files (or links, never followed) of `folder` matching `patterns`."""
    found = [p for pattern in patterns for p in folder.glob(pattern)]
    return sorted(p for p in found if p.is_symlink() or p.is_file())


def _size(paths: list[Path]) -> int:
    return sum(p.lstat().st_size for p in paths)


def human_size(size: int) -> str:
    """Bytes as B, KiB, MiB or GiB, three figures."""
    value = float(size)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def show_path() -> int:
    """Print the cache folder."""
    print(cache_dir())
    return 0


def list_entries() -> int:
    """Print each entry (size, date, kernel and key) and the totals."""
    folder = cache_dir()
    if not folder.is_dir():
        print(f"{folder}: not there yet (no cache=True kernel has been stored)")
        return 0
    entries = _files(folder, ENTRIES)
    binaries = _files(folder, BINARIES)
    print(folder)
    for path in entries:
        info = path.lstat()
        when = datetime.datetime.fromtimestamp(info.st_mtime).strftime("%Y-%m-%d %H:%M")
        print(f"  {human_size(info.st_size):>10}  {when}  {path.stem}")
    print(
        f"entries: {len(entries)} ({human_size(_size(entries))}); device binaries: "
        f"{len(binaries)} ({human_size(_size(binaries))}, in binaries/)"
    )
    return 0


def clear() -> int:
    """Delete every entry and device binary; the folder stays."""
    folder = cache_dir()
    entries = _files(folder, ENTRIES)
    binaries = _files(folder, BINARIES)
    removed = entries + binaries + _files(folder, *LEFTOVERS)
    size = _size(removed)
    for path in removed:
        path.unlink(missing_ok=True)
    print(
        f"removed from {folder}: entries: {len(entries)}, device binaries: {len(binaries)} "
        f"({human_size(size)})"
    )
    return 0
