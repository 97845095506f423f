"""The damage tests/file_fuzzer.py does to a bundle or a cache directory, one mutation at a time.

Each mutation edits the files of one trial area in place and says what it did, and whether it
forged the result: "json" when it lied in a description and recomputed the checksums, "code"
when it changed the code itself (SPIR-V, LLVM IR, a device binary) and recomputed them. A
forged bundle or entry may be loaded and run other code than the original (the checksums say
nothing against whoever wrote them); damage that is not forged must be refused or harmless.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import struct
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tests.file_damage import (
    deep_json,
    descriptions,
    index_name,
    read_zip,
    rehash,
    rename_entry_point,
    zip_bytes,
)

#: Names a description could give a symbol, a kernel or a file, that must never become paths.
HOSTILE_NAMES = [
    "../../x",
    "../../../../../../../escaped",
    "{canary}/abs",
    "a\0b",
    "x" * 5000,
    "ünï_cödé",
    "",
    ".",
    "a/b",
    "-rf",
    "dpex_kernel_fill2",
]
HOSTILE_VALUES = [
    None,
    True,
    False,
    -1,
    0,
    1,
    2,
    3,
    2**31,
    2**63,
    -(2**63),
    10**40,
    1.5,
    1e308,
    float("inf"),
    "",
    "1",
    "x" * 100_000,
    [],
    {},
    [[[]]],
    {"a": 1},
    ["fp64"],
    {"scalar": "float64"},
]
SCALARS = ("bool", "int8", "uint16", "int32", "int64", "uint64", "float32", "float64", "complex64")


@dataclass
class Area:
    """The trial area of one mutation: a copy of the base bundle and cache directory."""

    root: Path
    canary: Path

    @property
    def bundle(self) -> Path:
        return self.root / "bundle.dpkb"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    def entries(self) -> list[Path]:
        return sorted(self.cache.glob("*.dpk"))

    def binaries(self) -> list[Path]:
        return sorted((self.cache / "binaries").glob("*.bin"))


def _hostile(rng: random.Random, area: Area) -> object:
    value = rng.choice(HOSTILE_NAMES + HOSTILE_VALUES)
    return value.format(canary=area.canary) if isinstance(value, str) else value


# --- bytes and zip archives -----------------------------------------------------------------


def _byte_damage(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    data = bytearray(data)
    how = rng.choice(["truncate", "flip", "insert", "delete", "zero", "append"])
    at = rng.randrange(len(data))
    if how == "truncate":
        del data[at:]
    elif how == "flip":
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif how == "insert":
        data[at:at] = rng.randbytes(rng.randint(1, 64))
    elif how == "delete":
        del data[at : at + rng.randint(1, 256)]
    elif how == "zero":
        data[at : at + rng.randint(1, 256)] = bytes(min(256, len(data) - at))
    else:
        data += rng.randbytes(rng.randint(1, 512))
    return bytes(data), f"{how} at {at}"


def _write_members(path: Path, files: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names: wanted here
        with zipfile.ZipFile(path, "w", compression=compression) as archive:
            for name, data in files.items():
                archive.writestr(name, data)


def _encrypted_flag(data: bytes, rng: random.Random) -> bytes:
    """The archive with one member's central-directory entry marked as encrypted."""
    starts = [i for i in range(len(data) - 4) if data[i : i + 4] == b"PK\x01\x02"]
    data = bytearray(data)
    at = rng.choice(starts) + 8  # the general purpose flags
    data[at] |= 1
    return bytes(data)


def zip_damage(rng: random.Random, path: Path) -> dict:
    """Damage to the archive's structure (checksums left as they are)."""
    files = read_zip(path)
    how = rng.choice(
        ["drop", "rename", "recompress", "encrypted", "many-members", "duplicate-index", "bytes"]
    )
    name = rng.choice(sorted(files))
    if how == "drop":
        del files[name]
    elif how == "rename":
        files[f"../../{name}" if rng.random() < 0.5 else name.upper()] = files.pop(name)
    elif how == "many-members":
        files.update({f"junk/{i}": b"j" for i in range(rng.choice([10, 3000]))})
    if how == "recompress":
        method = rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
        _write_members(path, files, method)
        return {"kind": f"zip-{how}-{method}", "forged": None}
    if how == "duplicate-index":  # a second index after the first: zipfile reads the last
        index = json.loads(files[index_name(files)])
        index["format"] = "something else"
        with zipfile.ZipFile(path, "a") as archive, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            archive.writestr(index_name(files), json.dumps(index))
        return {"kind": "zip-duplicate-index", "forged": "json"}
    if how == "bytes":
        data, note = _byte_damage(rng, path.read_bytes())
        path.write_bytes(data)
        return {"kind": f"bytes-{note.split()[0]}", "forged": None, "note": note}
    data = zip_bytes(files)
    if how == "encrypted":
        data = _encrypted_flag(data, rng)
    path.write_bytes(data)
    return {"kind": f"zip-{how}", "forged": None, "note": name}


# --- JSON lies ------------------------------------------------------------------------------


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys and indices) to a value inside a JSON document."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _at(document: object, path: tuple) -> tuple[object, object]:
    """(the container of the value at `path`, its key or index there)."""
    for step in path[:-1]:
        document = document[step]
    return document, path[-1]


def _lies(rng: random.Random, index: dict, area: Area) -> str:
    """One targeted lie about a definition, in place; says which."""
    definition = rng.choice(descriptions(index))
    params = definition["params"]
    kernels = index.get("kernels", [])
    lies = {
        "symbol-of-another": lambda: definition.update(symbol="dpex_kernel_fill2"),
        "symbol-hostile": lambda: definition.update(symbol=_hostile(rng, area)),
        "name-hostile": lambda: definition.update(name=_hostile(rng, area)),
        "param-dropped": lambda: params.pop(),
        "param-added": lambda: params.append({"scalar": rng.choice(SCALARS)}),
        "param-scalar": lambda: rng.choice(params).update(scalar=rng.choice(SCALARS)),
        "param-array": lambda: rng.choice(params).update(
            array={
                "dtype": "float32",
                "ndim": rng.choice([0, 1, 2, 9, 10**9]),
                "layout": "A",
                "usm_type": "device",
                "device": "opencl:cpu:0",
            }
        ),
        "debug-toggled": lambda: definition["options"].update(
            debug=not definition["options"]["debug"]
        ),
        "sub-group": lambda: definition["options"].update(sub_group_size=rng.choice([8, 16, -1])),
        "default-ndim": lambda: definition.update(default_ndim=rng.choice([0, 2, 3, 4, "1"])),
        "aspects": lambda: [
            v.update(aspects=["fp64", "fp16"]) for v in definition["variants"].values()
        ],
        "local-memory": lambda: [
            v.update(local_memory=2**40) for v in definition["variants"].values()
        ],
        "variant-key": lambda: definition["variants"].update(
            {rng.choice(["0", "4", "01", "-1"]): next(iter(definition["variants"].values()))}
        ),
        "device": lambda: definition["target"].update(
            device=rng.choice(["opencl:gpu:0", "level_zero:gpu:0", "../x", "opencl:cpu:9"])
        ),
        "exception-class": lambda: definition["exceptions"].update(
            {
                "7": [
                    rng.choice(
                        [
                            "SystemExit",
                            "KeyboardInterrupt",
                            "UnicodeDecodeError",
                            "os.system",
                            "ValueError",
                        ]
                    ),
                    ["boom"],
                ]
            }
        ),
        "exception-bounds": lambda: definition["exceptions"].update(
            {code: [entry[0], entry[1][:2]] for code, entry in definition["exceptions"].items()}
        ),
        "kernel-copies": lambda: kernels.extend(
            [dict(kernels[0], name=f"copy{i}") for i in range(rng.choice([2, 200]) * bool(kernels))]
        ),
        "param-names": lambda: kernels and kernels[0].update(params=kernels[0]["params"][:-1]),
        "signature-twice": lambda: (
            kernels and kernels[0]["definitions"].append(kernels[0]["definitions"][0])
        ),
        "version": lambda: index.update(version=rng.choice([2, "3", 4, None])),
    }
    name = rng.choice(sorted(lies))
    lies[name]()
    return name


def json_damage(rng: random.Random, path: Path, area: Area) -> dict:
    """A lie in the archive's JSON index, checksums recomputed after."""
    files = read_zip(path)
    index = json.loads(files[index_name(files)])
    how = rng.choice(["set", "delete", "duplicate", "lie", "lie", "deep"])
    note = ""
    deep = None
    if how == "lie":
        note = _lies(rng, index, area)
    else:
        where = rng.choice(_paths(index))
        container, key = _at(index, where)
        note = "/".join(map(str, where))
        if how == "set":
            container[key] = _hostile(rng, area)
        elif how == "delete":
            del container[key]
        elif how == "duplicate" and isinstance(container, list):
            container.insert(key, container[key])
        else:
            container[key] = "@deep@"
            deep = rng.choice([30, 3000, 300_000])
    text = json.dumps(index).encode()
    if deep:
        text = text.replace(b'"@deep@"', deep_json(deep))
    files[index_name(files)] = text
    rehash(files)
    path.write_bytes(zip_bytes(files))
    return {"kind": f"json-{how}", "forged": "json", "note": note[:200]}


# --- code -----------------------------------------------------------------------------------


def _instructions(words: list[int]) -> list[tuple[int, int]]:
    found, position = [], 5
    while position < len(words):
        count = words[position] >> 16
        if count == 0 or position + count > len(words):
            break
        found.append((position, count))
        position += count
    return found


def spirv_damage(rng: random.Random, spirv: bytes, area: Area) -> tuple[bytes, str, str | None]:
    """(changed module, what was done, a new symbol when it renamed the entry point)."""
    words = list(struct.unpack(f"<{len(spirv) // 4}I", spirv))
    spans = _instructions(words)
    how = rng.choice(
        [
            "cut",
            "cut-word",
            "cut-instruction",
            "flip",
            "word",
            "header",
            "delete",
            "duplicate",
            "swap",
            "garbage",
            "empty",
            "rename",
        ]
    )
    start, count = rng.choice(spans)
    if how == "cut":
        return spirv[: rng.randrange(len(spirv))], how, None
    if how == "cut-word":
        return spirv[: 4 * rng.randrange(len(words))], how, None
    if how == "cut-instruction":
        return spirv[: 4 * start], how, None
    if how == "garbage":
        return rng.randbytes(rng.choice([4, 20, 4096])), how, None
    if how == "empty":
        return b"", how, None
    if how == "rename":
        symbol = rng.choice(["../../escaped/k", "{canary}/abs", "dpex_kernel_other", "a b"])
        symbol = symbol.format(canary=area.canary)
        return b"", how, symbol  # the caller renames: it knows the old name
    if how == "flip":
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(5, len(words))
            words[at] ^= 1 << rng.randrange(32)
    elif how == "word":
        at = rng.randrange(5, len(words))
        words[at] = rng.choice([0, 1, 2, 0xFFFF, 0xFFFFFFFF, words[at] + 1, words[at] - 1])
    elif how == "header":
        words[rng.randrange(5)] = rng.choice([0, 1, 0x00010700, 0x3FFFFF + 1, 0xFFFFFFFF])
    elif how == "delete":
        del words[start : start + count]
    elif how == "duplicate":
        words[start:start] = words[start : start + count]
    else:
        other, other_count = rng.choice(spans)
        first, second = sorted([(start, count), (other, other_count)])
        a, b = words[first[0] : first[0] + first[1]], words[second[0] : second[0] + second[1]]
        words[second[0] : second[0] + second[1]] = a
        words[first[0] : first[0] + first[1]] = b
    words = [w & 0xFFFFFFFF for w in words]
    return struct.pack(f"<{len(words)}I", *words), how, None


def code_damage(rng: random.Random, path: Path, area: Area) -> dict:
    """A change of one SPIR-V module, or of the LLVM IR, with the checksums recomputed."""
    files = read_zip(path)
    index = json.loads(files[index_name(files)])
    if "linked.ll" in files and rng.random() < 0.3:
        text = files["linked.ll"]
        how = rng.choice(["cut", "garbage", "flip", "rename"])
        if how == "cut":
            text = text[: rng.randrange(len(text))]
        elif how == "garbage":
            text = rng.randbytes(200)
        elif how == "flip":
            text, _ = _byte_damage(rng, text)
        else:
            text = text.replace(b"dpex_kernel_", b"dpex_kernel_x")
        files["linked.ll"] = text
        rehash(files)
        path.write_bytes(zip_bytes(files))
        return {"kind": f"llvm-{how}", "forged": "code"}
    definition = rng.choice(descriptions(index))
    variant = rng.choice(sorted(definition["variants"].values(), key=lambda v: v["spirv"]))
    changed, how, symbol = spirv_damage(rng, files[variant["spirv"]], area)
    if symbol is not None:
        for other in definition["variants"].values():
            files[other["spirv"]] = rename_entry_point(
                files[other["spirv"]], definition["symbol"], symbol
            )
        definition["symbol"] = symbol
        files[index_name(files)] = json.dumps(index).encode()
    else:
        files[variant["spirv"]] = changed
    rehash(files)
    path.write_bytes(zip_bytes(files))
    return {"kind": f"spirv-{how}", "forged": "code", "note": variant["spirv"]}


# --- what stands at a path ------------------------------------------------------------------


def replace_file(rng: random.Random, path: Path, area: Area) -> dict:
    """Something other than a regular file where one is read."""
    how = rng.choice(["fifo", "directory", "dev-zero", "loop", "dangling", "empty", "copy-link"])
    copy = area.canary / f"copy-{path.name}"
    if how == "copy-link":
        shutil.copyfile(path, copy)
    path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    elif how == "directory":
        path.mkdir()
        (path / "inside").write_bytes(b"x")
    elif how == "dev-zero":
        path.symlink_to("/dev/zero")
    elif how == "loop":
        path.symlink_to(path.name)
    elif how == "dangling":
        path.symlink_to(area.root / "nothing-here")
    elif how == "empty":
        path.write_bytes(b"")
    else:
        path.symlink_to(copy)
    return {"kind": f"file-{how}", "forged": None}


def _rehashed_binary(data: bytes, rng: random.Random) -> bytes:
    """A device binary changed and given its new checksum, as someone who can write it could."""
    from dpex_kernels.program_binaries import MAGIC

    binary = bytearray(data[len(MAGIC) + 32 :])
    binary[rng.randrange(len(binary))] ^= 1 << rng.randrange(8)
    return MAGIC + hashlib.sha256(binary).digest() + bytes(binary)


def binary_damage(rng: random.Random, area: Area) -> dict:
    """Damage to the kept device binaries, or to the directories that must protect them."""
    binaries = area.binaries()
    how = rng.choice(["bytes", "file", "others-write-cache", "group-writes-binaries", "linked"])
    if how == "bytes":
        path = rng.choice(binaries)
        data, note = _byte_damage(rng, path.read_bytes())
        path.write_bytes(data)
        return {"kind": f"binary-{note.split()[0]}", "forged": None}
    if how == "file":
        found = replace_file(rng, rng.choice(binaries), area)
        return {**found, "kind": "binary-" + found["kind"]}
    for path in binaries:  # forged: the runtime would crash on these, were they loaded
        path.write_bytes(_rehashed_binary(path.read_bytes(), rng))
    if how == "others-write-cache":
        area.cache.chmod(0o757)
    elif how == "group-writes-binaries":
        (area.cache / "binaries").chmod(0o770)
    else:  # binaries/ a link to a directory of someone else's choosing
        elsewhere = area.canary / "binaries"
        shutil.copytree(area.cache / "binaries", elsewhere)
        shutil.rmtree(area.cache / "binaries")
        (area.cache / "binaries").symlink_to(elsewhere)
    return {"kind": f"binary-{how}", "forged": "code", "untrusted": True}


# --- one mutation ---------------------------------------------------------------------------


def mutate(rng: random.Random, target: str, area: Area) -> dict:
    """Damage the bundle or the cache directory of `area` in one way; say how."""
    if target == "bundle":
        path = area.bundle
    elif rng.random() < 0.2:
        return binary_damage(rng, area)
    else:
        path = rng.choice(area.entries())
    roll = rng.random()
    if roll < 0.03:
        return {"kind": "none", "forged": None}  # the control: must be ok
    if roll < 0.18:
        return replace_file(rng, path, area)
    if roll < 0.38:
        return zip_damage(rng, path)
    if roll < 0.68:
        return json_damage(rng, path, area)
    return code_damage(rng, path, area)
