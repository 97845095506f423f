"""Float atomics: native (cl_ext_float_atomics) where the device has them, compare-and-swap
loops elsewhere or when forced; both paths against NumPy, the path visible in the SPIR-V."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import CPU

import dpex_kernels as dk
from dpex_kernels import float_atomics

OPS = ("add", "sub", "min", "max")
GROUP = 64
N = 8 * GROUP


def _force(monkeypatch, path: str) -> None:
    """Compile what follows with native float atomics (all the device has) or CAS loops."""
    monkeypatch.setenv(float_atomics.FORCE_VARIABLE, path)
    if path == "native" and not float_atomics.native_float_atomics(CPU):
        pytest.skip("this device has no native float atomics")


def _all_ops_kernel():
    @dk.kernel
    def all_ops(values, totals, groups):
        i = dk.get_global_id(0)
        lid = dk.get_local_id(0)
        v = values[i]
        dk.atomic.add(totals, 0, v)
        dk.atomic.sub(totals, 1, v)
        dk.atomic.min(totals, 2, v)
        dk.atomic.max(totals, 3, v)
        acc = dk.local.array(4, values.dtype)
        if lid == 0:
            acc[0] = 0
            acc[1] = 0
            acc[2] = v
            acc[3] = v
        dk.barrier()
        dk.atomic.add(acc, 0, v)
        dk.atomic.sub(acc, 1, v)
        dk.atomic.min(acc, 2, v)
        dk.atomic.max(acc, 3, v)
        dk.barrier()
        if lid < 4:
            groups[dk.get_group_id(0), lid] = acc[lid]

    return all_ops


@pytest.mark.parametrize("path", ["native", "cas"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_add_sub_min_max_on_global_and_local_arrays_match_numpy(monkeypatch, path, dtype):
    import dpnp

    _force(monkeypatch, path)
    # Integers in floating point: every order of the additions gives the exact sum.
    host = np.random.default_rng(3).integers(-1000, 1000, N).astype(dtype)
    start = np.array([0, 0, np.inf, -np.inf], dtype)
    values = dpnp.asarray(host, device=CPU)
    totals = dpnp.asarray(start, device=CPU)
    groups = dpnp.zeros((N // GROUP, 4), dtype=dtype, device=CPU)
    kernel = _all_ops_kernel()
    kernel[dk.NdRange(N, GROUP)](values, totals, groups).wait()

    expected = np.array([host.sum(), -host.sum(), host.min(), host.max()], dtype)
    np.testing.assert_array_equal(dpnp.asnumpy(totals), expected)
    blocks = host.reshape(-1, GROUP)
    per_group = np.stack(
        [blocks.sum(1), -blocks.sum(1), blocks.min(1), blocks.max(1)], axis=1
    ).astype(dtype)
    np.testing.assert_array_equal(dpnp.asnumpy(groups), per_group)

    (compiled,) = kernel.definitions.values()
    keys = {f"{dtype}.{space}.{op}" for space in ("global", "local") for op in OPS}
    assert compiled.float_atomics == dict.fromkeys(sorted(keys), path)
    spirv = kernel.inspect_spirv(kernel.signatures[0])
    if path == "native":
        assert spirv.count("OpAtomicFAddEXT") == 4  # sub adds the negated value
        assert spirv.count("OpAtomicFMinEXT") == 2 and spirv.count("OpAtomicFMaxEXT") == 2
        assert "OpAtomicCompareExchange" not in spirv
    else:
        assert "AtomicF" not in spirv and "SPV_EXT_shader_atomic_float" not in spirv
        assert spirv.count("OpAtomicCompareExchange") == 8


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_exchange_returns_every_old_value_once(dtype):
    import dpnp

    @dk.kernel
    def swap_in(values, slot, olds):
        i = dk.get_global_id(0)
        olds[i] = dk.atomic.exchange(slot, 0, values[i])

    host = np.random.default_rng(4).permutation(256).astype(dtype) - 0.5
    slot = dpnp.asarray(np.array([1e9], dtype), device=CPU)
    olds = dpnp.zeros(256, dtype=dtype, device=CPU)
    swap_in[256](dpnp.asarray(host, device=CPU), slot, olds).wait()
    seen = np.concatenate([dpnp.asnumpy(olds), dpnp.asnumpy(slot)])
    np.testing.assert_array_equal(np.sort(seen), np.sort(np.append(host, 1e9).astype(dtype)))
    assert "OpAtomicExchange" in swap_in.inspect_spirv(swap_in.signatures[0])


def test_device_query_agrees_with_the_opencl_extension_list(monkeypatch):
    monkeypatch.setenv(float_atomics.FORCE_VARIABLE, "native")
    from benchmarks.opencl_peer import open_opencl

    opencl, reason = open_opencl()
    assert opencl is not None, reason
    has_extension = "cl_ext_float_atomics" in opencl.queue.device.extensions.split()
    native = float_atomics.native_float_atomics(CPU)
    assert bool(native) == has_extension
    allowed = {
        f"{dtype}.{space}.{op}"
        for dtype in ("float32", "float64")
        for space in ("global", "local")
        for op in ("add", "minmax")
    }
    assert native <= allowed


def test_the_default_is_every_float_atomic_the_device_reports(monkeypatch):
    monkeypatch.delenv(float_atomics.FORCE_VARIABLE, raising=False)
    default = float_atomics.native_float_atomics(CPU)
    monkeypatch.setenv(float_atomics.FORCE_VARIABLE, "native")
    assert default == float_atomics.native_float_atomics(CPU)
    monkeypatch.setenv(float_atomics.FORCE_VARIABLE, "cas")
    assert float_atomics.native_float_atomics(CPU) == frozenset()


def test_an_unknown_mode_is_a_clear_error(monkeypatch):
    import dpnp

    monkeypatch.setenv(float_atomics.FORCE_VARIABLE, "fast")

    @dk.kernel
    def total(values, out):
        dk.atomic.add(out, 0, values[dk.get_global_id(0)])

    with pytest.raises(ValueError, match="ATOMICS='fast' is not one of native, cas"):
        total[4](dpnp.ones(4, dtype="f4", device=CPU), dpnp.zeros(1, dtype="f4", device=CPU))


def test_forcing_cas_changes_the_cache_key_and_the_entry(monkeypatch, tmp_path):
    import dpnp

    monkeypatch.setenv("DPEX_KERNELS_CACHE_DIR", str(tmp_path))

    def total(values, out):
        dk.atomic.add(out, 0, values[dk.get_global_id(0)])

    def run(path: str):
        _force(monkeypatch, path)
        kernel = dk.kernel(cache=True)(total)
        out = dpnp.zeros(1, dtype="f4", device=CPU)
        kernel[64](dpnp.ones(64, dtype="f4", device=CPU), out).wait()
        assert dpnp.asnumpy(out)[0] == 64
        (compiled,) = kernel.definitions.values()
        return kernel.stats, compiled.float_atomics

    stats, paths = run("native")
    assert (stats.cache_misses, paths) == (1, {"float32.global.add": "native"})
    stats, paths = run("cas")
    assert (stats.cache_misses, paths) == (1, {"float32.global.add": "cas"})
    for path in ("native", "cas"):
        stats, paths = run(path)
        assert (stats.cache_hits, stats.compiles, paths) == (1, 0, {"float32.global.add": path})


@pytest.mark.parametrize("path", ["native", "cas"])
@pytest.mark.parametrize("space", ["global", "local"])
def test_debug_mode_checks_float_atomics_on_both_paths(monkeypatch, path, space):
    import dpnp

    _force(monkeypatch, path)

    def global_overrun(out):
        dk.atomic.add(out, dk.get_global_id(0) + 1, 1.5)

    def local_overrun(out):
        i = dk.get_global_id(0)
        acc = dk.local.array(16, dk.float32)
        acc[i] = 0
        dk.atomic.max(acc, i + 1, 1.5)

    overrun = dk.kernel(debug=True)(global_overrun if space == "global" else local_overrun)
    backing = dpnp.full(48, -1, dtype="f4", device=CPU)
    with pytest.raises(dk.KernelBoundsError) as info:
        overrun[dk.NdRange(16, 16)](backing[16:32])
    assert "index 16" in str(info.value) and "size 16" in str(info.value)
    np.testing.assert_array_equal(dpnp.asnumpy(backing)[32:], -1)
    (compiled,) = overrun.definitions.values()
    assert set(compiled.float_atomics.values()) == {path}


def test_an_aot_bundle_keeps_the_float_atomic_paths(monkeypatch, tmp_path):
    from dpex_kernels.aot import runtime

    _force(monkeypatch, "native")
    f32 = dk.usm_array(dk.float32, 1, device=CPU)

    @dk.kernel(dk.void(f32, f32))
    def bundled_total(values, out):
        dk.atomic.add(out, 0, values[dk.get_global_id(0)])

    expected = bundled_total.definitions[bundled_total.signatures[0]].float_atomics
    bundle = runtime.load(dk.aot.build([bundled_total], tmp_path / "total.dpkb"))
    (definition,) = bundle.bundled_total.definitions.values()
    assert definition.float_atomics == expected
    assert list(expected) == ["float32.global.add"]


@pytest.mark.parametrize("path", ["native", "cas"])
def test_a_negation_computed_before_a_barrier_is_added_right(monkeypatch, path):
    """The CPU runtime once added wrong values when a native atomic add took a negation made
    before a barrier (runtime_workarounds.float_atomic_adds_of_no_negation): -11200 for -8128
    here."""
    import dpnp

    _force(monkeypatch, path)

    @dk.kernel
    def negated_total(values, negated, total, groups):
        i = dk.get_global_id(0)
        w = -values[i]
        negated[i] = w
        acc = dk.local.array(1, dk.float32)
        if dk.get_local_id(0) == 0:
            acc[0] = 0
        dk.barrier()
        dk.atomic.add(total, 0, w)
        dk.atomic.sub(acc, 0, values[i])
        dk.barrier()
        if dk.get_local_id(0) == 0:
            groups[dk.get_group_id(0)] = acc[0]

    host = np.arange(128, dtype="f4")
    negated = dpnp.zeros(128, dtype="f4", device=CPU)
    total = dpnp.zeros(1, dtype="f4", device=CPU)
    groups = dpnp.zeros(2, dtype="f4", device=CPU)
    values = dpnp.asarray(host, device=CPU)
    negated_total[dk.NdRange(128, 64)](values, negated, total, groups).wait()
    assert dpnp.asnumpy(total)[0] == -host.sum()
    np.testing.assert_array_equal(dpnp.asnumpy(groups), -host.reshape(2, -1).sum(1))
    np.testing.assert_array_equal(dpnp.asnumpy(negated), -host)


def test_a_device_the_opencl_loader_does_not_list_gets_loops():
    from types import SimpleNamespace

    unknown = SimpleNamespace(
        sycl_platform=SimpleNamespace(name="No such platform"),
        name="No such device",
        vendor="nobody",
        driver_version="0",
    )
    assert float_atomics._opencl_capabilities(unknown) == frozenset()
