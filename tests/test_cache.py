"""cache=True (API.md §6): hits across processes, invalidation on edits, corrupt entries."""

import io
import json
import pickle
import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import dpnp
import numpy as np
import pytest

import dpex_kernels as dk

KERNEL_SOURCE = """
import dpex_kernels as dk

OFFSET = {offset}

@dk.func
def scale(x):
    return x * {factor}

f32 = dk.usm_array(dk.float32, 1)

@dk.kernel(dk.void(f32, f32), cache=True, fastmath={fastmath})
def shifted(a, out):
    i = dk.get_global_id(0)
    out[i] = scale(a[i]) + OFFSET
"""


def _define(offset=1.0, factor=2.0, fastmath=False):
    namespace = {}
    source = KERNEL_SOURCE.format(offset=offset, factor=factor, fastmath=fastmath)
    exec(compile(source, "<cached kernel>", "exec"), namespace)
    return namespace["shifted"]


def _check(kernel, offset=1.0, factor=2.0):
    host = np.arange(16, dtype=np.float32)
    out = dpnp.empty(16, dtype="f4")
    kernel[16](dpnp.asarray(host), out)
    np.testing.assert_allclose(dpnp.asnumpy(out), host * factor + offset)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DPEX_KERNELS_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_second_definition_loads_without_compiling(cache_dir):
    first = _define()
    assert (first.stats.compiles, first.stats.cache_misses, first.stats.cache_hits) == (1, 1, 0)
    assert len(list(cache_dir.glob("*.dpk"))) == 1
    second = _define()
    assert (second.stats.compiles, second.stats.cache_hits) == (0, 1)
    _check(second)


@pytest.mark.parametrize(
    "change",
    [{"offset": 3.0}, {"factor": 5.0}, {"fastmath": True}],
    ids=["global constant", "device function", "option"],
)
def test_an_edit_invalidates_the_entry(change):
    _check(_define())
    edited = _define(**change)
    assert (edited.stats.compiles, edited.stats.cache_hits) == (1, 0)
    _check(edited, **{k: v for k, v in change.items() if k != "fastmath"})


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_corrupt_entry_is_ignored_and_rebuilt(cache_dir, damage):
    _define()
    (entry,) = cache_dir.glob("*.dpk")
    data = bytearray(entry.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data[-10] ^= 0xFF
    entry.write_bytes(bytes(data))
    rebuilt = _define()
    assert (rebuilt.stats.compiles, rebuilt.stats.cache_misses) == (1, 1)
    _check(rebuilt)
    again = _define()
    assert again.stats.cache_hits == 1


class _Planted:
    """Unpickling this runs code: it writes the file named in its state."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _rewrite_entry(entry, change):
    """Rewrite a zip entry's entry.json through `change(dict)`, keeping every other file."""
    with zipfile.ZipFile(entry) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    if callable(change):
        description = json.loads(files["entry.json"])
        change(description)
        files["entry.json"] = json.dumps(description).encode()
    else:
        files["entry.json"] = change
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    entry.write_bytes(buffer.getvalue())


def _set(path, value):
    def change(description):
        target = description
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return change


@pytest.mark.parametrize(
    "damage",
    [
        "pickle",
        "not json",
        "foreign key",
        "wrong checksum",
        "checksum of other bytes",
        "bad field type",
        "missing default variant",
        "empty file",
    ],
)
def test_a_replaced_or_altered_entry_is_ignored_and_rebuilt(cache_dir, damage, tmp_path):
    _define()
    (entry,) = cache_dir.glob("*.dpk")
    marker = tmp_path / "unpickled"
    if damage == "pickle":
        entry.write_bytes(pickle.dumps(_Planted(marker)))
    elif damage == "not json":
        _rewrite_entry(entry, b"{not json")
    elif damage == "foreign key":
        _rewrite_entry(entry, _set(["key"], "another-kernel-0123"))
    elif damage == "wrong checksum":
        _rewrite_entry(entry, _set(["definition", "variants", "1", "spirv_sha256"], "0" * 64))
    elif damage == "checksum of other bytes":
        _rewrite_entry(entry, _set(["files", "linked.ll"], "f" * 64))
    elif damage == "bad field type":
        _rewrite_entry(entry, _set(["definition", "default_ndim"], "1"))
    elif damage == "missing default variant":
        _rewrite_entry(entry, _set(["definition", "variants"], {}))
    else:
        entry.write_bytes(b"")
    rebuilt = _define()
    assert (rebuilt.stats.compiles, rebuilt.stats.cache_misses) == (1, 1)
    assert not marker.exists()
    _check(rebuilt)
    again = _define()
    assert (again.stats.compiles, again.stats.cache_hits) == (0, 1)
    _check(again)


def test_loading_never_unpickles(cache_dir, monkeypatch):
    _define()

    def refuse(*args, **kwargs):
        raise AssertionError("the cache unpickled something")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    loaded = _define()
    assert loaded.stats.cache_hits == 1
    _check(loaded)


def test_an_entry_is_plain_data_with_checksums(cache_dir):
    _define()
    (entry,) = cache_dir.glob("*.dpk")
    with zipfile.ZipFile(entry) as archive:
        description = json.loads(archive.read("entry.json"))
        names = set(archive.namelist())
        spirv = archive.read(description["definition"]["variants"]["1"]["spirv"])
    assert description["key"] == entry.stem
    assert spirv[:4] == b"\x03\x02\x23\x07"  # the SPIR-V magic number, little-endian
    assert {"entry.json", "linked.ll", "types.txt", "code/1d.spv", "code/1d.ll"} <= names


def test_a_variant_built_after_a_hit_is_stored_too(cache_dir):
    source = """
import dpex_kernels as dk
f32 = dk.usm_array(dk.float32, 2)

@dk.kernel(dk.void(f32), cache=True)
def fill(out):
    out[dk.get_global_id(0), 0] = 7.0
"""

    def define():
        namespace = {}
        exec(compile(source, "<cached 2-d kernel>", "exec"), namespace)
        return namespace["fill"]

    first = define()
    assert first.definitions[first.signatures[0]].artifacts.has_variant(1)
    second = define()
    assert second.stats.cache_hits == 1
    out = dpnp.zeros((4, 3), dtype="f4")
    second[dk.Range(4, 3)](out).wait()  # a 2-d launch: the 2-d variant is built here
    expected = np.zeros((4, 3), dtype=np.float32)
    expected[:, 0] = 7.0
    np.testing.assert_array_equal(dpnp.asnumpy(out), expected)
    third = define()
    assert third.stats.compiles == 0
    assert third.definitions[third.signatures[0]].artifacts.has_variant(2)


def test_a_new_process_hits_the_cache(cache_dir, tmp_path):
    script = tmp_path / "user_module.py"
    script.write_text(
        KERNEL_SOURCE.format(offset=1.0, factor=2.0, fastmath=False)
        + textwrap.dedent(
            """
            import dpnp
            out = dpnp.empty(4, dtype="f4")
            shifted[4](dpnp.arange(4, dtype="f4"), out)
            print(shifted.stats.compiles, shifted.stats.cache_hits, dpnp.asnumpy(out).tolist())
            """
        )
    )
    runs = [
        subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
        for _ in range(2)
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    assert runs[0].stdout.split()[:2] == ["1", "0"]
    assert runs[1].stdout.split()[:2] == ["0", "1"]
    assert runs[1].stdout.strip().endswith("[1.0, 3.0, 5.0, 7.0]")


def test_cache_false_writes_nothing(cache_dir):
    f32 = dk.usm_array(dk.float32, 1)

    @dk.kernel(dk.void(f32, f32))
    def copy(a, out):
        i = dk.get_global_id(0)
        out[i] = a[i]

    assert copy.stats.cache_misses == 0
    assert not list(cache_dir.glob("*"))


def test_the_docs_example_runs(tmp_path):
    docs = Path(__file__).resolve().parent.parent / "docs" / "cache.md"
    (snippet,) = re.findall(r"```python\n(.*?)```", docs.read_text(), flags=re.S)
    script = tmp_path / "snippet.py"
    script.write_text(snippet)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]


def test_an_aot_bundle_with_an_altered_file_is_refused(tmp_path):
    from dpex_kernels.aot import runtime

    f32 = dk.usm_array(dk.float32, 1)

    @dk.kernel(dk.void(f32, f32))
    def copy(a, out):
        i = dk.get_global_id(0)
        out[i] = a[i]

    path = dk.aot.build([copy], tmp_path / "copy.dpkb")
    assert runtime.load(path).copy.definitions
    with zipfile.ZipFile(path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    spirv_name = next(name for name in files if name.endswith(".spv"))
    files[spirv_name] = files[spirv_name][:-1] + bytes([files[spirv_name][-1] ^ 0xFF])
    altered = tmp_path / "altered.dpkb"
    with zipfile.ZipFile(altered, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    with pytest.raises(ValueError, match="checksum"):
        runtime.load(altered)
