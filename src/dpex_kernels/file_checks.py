"""Opening files anyone could have put there: regular files of bounded size, trusted directories.

Bundles and the cache directory are untrusted input (docs/security.md): a named pipe in place
of a file would block a read for ever, a device node or a huge file would exhaust memory, a
symbolic link would send a read elsewhere. So every file dpex_kernels reads from them comes
through read_file, and device binaries, which the runtime cannot check, only from a directory
that directory_problem finds nothing wrong with. Numba-free, and importing nothing of the
package: program_binaries and the AOT runtime use it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_KINDS = {
    stat.S_IFIFO: "a named pipe",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a directory",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
}


class RefusedFile(ValueError):
    """A path that is not a regular file of an acceptable size: it is never read."""


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def read_file(path: Path, limit: int, *, follow_symlinks: bool = False) -> bytes:
    """The bytes of the regular file at `path`, if it holds at most `limit` of them.

    RefusedFile for anything else: a named pipe, device, socket, directory, a larger file, and
    a symbolic link unless `follow_symlinks` (a path the user named may be one; nothing in the
    cache directory is). OSError when it cannot be read (absent, no permission)."""
    info = os.stat(path) if follow_symlinks else os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        raise RefusedFile(f"{path} is not a regular file but {_kind(info.st_mode)}")
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a link since the lstat
            raise RefusedFile(f"{path} is not a regular file but a symbolic link") from None
        raise
    with open(descriptor, "rb", closefd=True) as handle:
        info = os.fstat(descriptor)  # what was opened, whatever happened to the path since
        if not stat.S_ISREG(info.st_mode):
            raise RefusedFile(f"{path} is not a regular file but {_kind(info.st_mode)}")
        if info.st_size > limit:
            raise RefusedFile(f"{path} holds {info.st_size} bytes, more than the {limit} allowed")
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        raise RefusedFile(f"{path} holds more than the {limit} bytes allowed")
    return data


def directory_problem(path: Path, *, follow_symlinks: bool) -> str | None:
    """Why others than this user could change what the directory `path` holds, or None: it
    must be a directory this user owns that neither its group nor others can write. Absent is
    no problem (nothing is read from it)."""
    try:
        info = os.stat(path) if follow_symlinks else os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path} cannot be examined ({exc.strerror})"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory but {_kind(info.st_mode)}"
    if info.st_uid != os.getuid():
        return f"{path} belongs to user id {info.st_uid}, not to this user ({os.getuid()})"
    writers = [who for who, bit in (("its group", 0o020), ("others", 0o002)) if info.st_mode & bit]
    if writers:
        return f"{path} is writable by {' and '.join(writers)} (mode {info.st_mode & 0o777:o})"
    return None
