"""cache=True (API.md §6): hits across processes, invalidation on edits, corrupt entries."""

import subprocess
import sys
import textwrap

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
