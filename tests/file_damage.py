"""Rewriting bundles and cache entries the way a careless tool or an attacker would (tests only).

A bundle (aot.build) and a cache entry (cache=True) are zip archives: manifest.json or
entry.json describing each definition (artifacts/files.py), and the SPIR-V and LLVM IR files
those name, each with a SHA-256. These helpers edit the JSON, replace files and recompute the
checksums, so that what is tested is the reader's validation, not only its checksums.
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

OP_NAME, OP_ENTRY_POINT = 5, 15


def read_zip(path: Path) -> dict[str, bytes]:
    """Every member of a zip archive, by name."""
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def index_name(files: dict[str, bytes]) -> str:
    """The archive's JSON index: manifest.json (a bundle) or entry.json (a cache entry)."""
    return "manifest.json" if "manifest.json" in files else "entry.json"


def descriptions(index: dict) -> list[dict]:
    """The definition descriptions an index holds (a bundle's, or a cache entry's one)."""
    if "definition" in index:
        return [index["definition"]]
    return [d for kernel in index["kernels"] for d in kernel["definitions"]]


def rehash(files: dict[str, bytes]) -> None:
    """Recompute every checksum the index holds, for whatever the files now are; an index
    that no longer has the shape of one is left as it is."""
    try:
        index = json.loads(files[index_name(files)])
        for description in descriptions(index):
            for variant in description["variants"].values():
                for kind in ("spirv", "llvm"):
                    data = files.get(variant[kind])
                    if data is not None:
                        variant[f"{kind}_sha256"] = hashlib.sha256(data).hexdigest()
        for name in index.get("files", {}):
            if name in files:
                index["files"][name] = hashlib.sha256(files[name]).hexdigest()
    except (ValueError, RecursionError, LookupError, TypeError, AttributeError):
        return
    files[index_name(files)] = json.dumps(index).encode()


def rewrite(path: Path, change: Callable[[dict[str, bytes]], None], checksums=True) -> None:
    """Rewrite the archive at `path` through `change(files)`, checksums recomputed."""
    files = read_zip(path)
    change(files)
    if checksums:
        rehash(files)
    path.write_bytes(zip_bytes(files))


def edit_index(change: Callable[[dict], object]) -> Callable[[dict[str, bytes]], None]:
    """A change of the archive's JSON index: `change(index)` edits it in place or returns a
    replacement."""

    def edit(files: dict[str, bytes]) -> None:
        index = json.loads(files[index_name(files)])
        replaced = change(index)
        files[index_name(files)] = json.dumps(index if replaced is None else replaced).encode()

    return edit


def spirv_files(files: dict[str, bytes]) -> list[str]:
    return sorted(name for name in files if name.endswith(".spv"))


def _literal(name: str) -> list[int]:
    data = name.encode() + b"\0"
    data += b"\0" * (-len(data) % 4)
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def rename_entry_point(spirv: bytes, old: str, new: str) -> bytes:
    """The module with its entry point `old` (and the function's OpName) called `new`."""
    words = list(struct.unpack(f"<{len(spirv) // 4}I", spirv))
    out, position = words[:5], 5
    while position < len(words):
        count, opcode = words[position] >> 16, words[position] & 0xFFFF
        instruction = words[position : position + count]
        start = {OP_ENTRY_POINT: 3, OP_NAME: 2}.get(opcode)
        if start is not None:
            old_words = _literal(old)
            if instruction[start : start + len(old_words)] == old_words:
                rest = instruction[start + len(old_words) :]
                instruction = instruction[1:start] + _literal(new) + rest
                instruction = [(len(instruction) + 1) << 16 | opcode, *instruction]
        out += instruction
        position += count
    return struct.pack(f"<{len(out)}I", *out)


def deep_json(depth: int) -> bytes:
    """A JSON document nested `depth` lists deep."""
    return b"[" * depth + b"]" * depth
