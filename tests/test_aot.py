"""AOT bundles (API.md §6): build, the CLI, and a runtime that loads without Numba."""

import json
import subprocess
import sys
import textwrap
import zipfile

import pytest

import dpex_kernels as dk

MODULE_SOURCE = textwrap.dedent(
    """
    import dpex_kernels as dk

    f32 = dk.usm_array(dk.float32, 1)
    f64 = dk.usm_array(dk.float64, 1)

    @dk.kernel([dk.void(f32, f32, f32), dk.void(f64, f64, f64)])
    def vecadd(a, b, c):
        i = dk.get_global_id(0)
        c[i] = a[i] + b[i]

    @dk.kernel(dk.void(dk.usm_array(dk.float32, 2), dk.float32))
    def scale2d(a, s):
        i = dk.get_global_id(0)
        j = dk.get_global_id(1)
        a[i, j] = a[i, j] * s + i * 10 + j

    @dk.kernel
    def lazy_one(a):
        a[dk.get_global_id(0)] = 1
    """
)

RUNTIME_SCRIPT = textwrap.dedent(
    """
    import sys
    from dpex_kernels.aot.runtime import load
    import dpnp, numpy as np

    bundle = load(sys.argv[1])
    a = dpnp.asarray(np.arange(8, dtype=np.float32))
    c = dpnp.empty_like(a)
    bundle.vecadd[8](a, a, c)
    assert np.array_equal(dpnp.asnumpy(c), 2 * np.arange(8, dtype=np.float32))
    x = dpnp.ones((3, 4), dtype="f4")
    bundle["scale2d"][3, 4](x, 2.5)
    i, j = np.indices((3, 4))
    assert np.array_equal(dpnp.asnumpy(x), 2.5 + i * 10 + j)
    sig = bundle.vecadd.signatures[0]
    assert bundle.vecadd.definitions[sig].attrs.max_work_group_size > 0
    try:
        bundle.vecadd[8](a, a, dpnp.empty(8, dtype="i4"))
    except TypeError as exc:
        assert type(exc).__name__ == "KernelSignatureError", exc
        assert "'c'" in str(exc) and "dtype" in str(exc)
    else:
        raise AssertionError("a mismatched call was accepted")
    print(sorted(bundle), "numba" in sys.modules, "llvmlite" in sys.modules)
    """
)


@pytest.fixture
def user_module(tmp_path):
    path = tmp_path / "user_kernels.py"
    path.write_text(MODULE_SOURCE)
    return path


def _run(*args, cwd=None):
    done = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def test_cli_builds_a_bundle_that_runs_without_numba_or_llvmlite(tmp_path, user_module):
    bundle = tmp_path / "kernels.dpkb"
    out = _run(
        "-m", "dpex_kernels", "aot", "build", "user_kernels", "-o", str(bundle), cwd=tmp_path
    )
    assert "vecadd: 2 signature(s)" in out
    script = tmp_path / "use_bundle.py"
    script.write_text(RUNTIME_SCRIPT)
    assert _run(str(script), str(bundle)).strip() == "['scale2d', 'vecadd'] False False"


def test_build_from_a_list_and_the_manifest(tmp_path):
    f32 = dk.usm_array(dk.float32, 1)

    @dk.kernel(dk.void(f32, f32))
    def copy(a, out):
        out[dk.get_global_id(0)] = a[dk.get_global_id(0)]

    path = dk.aot.build([copy], tmp_path / "one.dpkb")
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        names = archive.namelist()
    (kernel,) = manifest["kernels"]
    assert kernel["name"] == "copy" and kernel["params"] == ["a", "out"]
    (definition,) = kernel["definitions"]
    assert definition["signature"] == str(copy.signatures[0])
    assert {f"copy/0/{n}d.spv" for n in (1, 2, 3)} <= set(names)


def test_lazy_kernels_and_empty_inputs_are_refused(tmp_path):
    @dk.kernel
    def lazy(a):
        a[0] = 1

    with pytest.raises(TypeError, match="lazy"):
        dk.aot.build([lazy], tmp_path / "x.dpkb")
    with pytest.raises(ValueError, match="no eager"):
        dk.aot.build([], tmp_path / "x.dpkb")


def test_loading_something_else_is_a_clear_error(tmp_path):
    from dpex_kernels.aot.runtime import load

    junk = tmp_path / "junk.dpkb"
    junk.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a readable dpex_kernels bundle"):
        load(junk)


def test_a_bundle_loaded_with_cache_keeps_its_device_binaries(tmp_path, monkeypatch):
    f32 = dk.usm_array(dk.float32, 1)

    @dk.kernel(dk.void(f32, f32))
    def halve(a, out):
        out[dk.get_global_id(0)] = a[dk.get_global_id(0)] / 2

    bundle = dk.aot.build([halve], tmp_path / "halve.dpkb")
    monkeypatch.setenv("DPEX_KERNELS_CACHE_DIR", str(tmp_path / "cache"))
    script = tmp_path / "use.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            import dpnp, numpy as np
            from dpex_kernels import device
            from dpex_kernels.aot.runtime import load

            builds = []
            build = device._build
            device._build = lambda *args: builds.append(args[1]) or build(*args)
            bundle = load(sys.argv[1], cache=True)
            out = dpnp.empty(8, dtype="f4")
            bundle.halve[8](dpnp.arange(8, dtype="f4"), out)
            assert np.array_equal(dpnp.asnumpy(out), np.arange(8, dtype="f4") / 2)
            print(len(builds))
            """
        )
    )
    assert _run(str(script), str(bundle)).split() == ["1"]  # built from SPIR-V, binary kept
    assert _run(str(script), str(bundle)).split() == ["0"]  # loaded from the binary
    assert len(list((tmp_path / "cache" / "binaries").glob("*.bin"))) == 1
