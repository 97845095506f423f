"""dk.LocalAccessor (API.md §3, SYCL 2020 forms): work-group memory whose shape a launch gives,
in 1-3 dimensions and every dtype, several per kernel, checked against NumPy; the launches it
needs and the sizes the device takes; declared signatures; the launcher telling accessors of
different kinds apart; the simulator, AOT bundles and the disk cache."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import dpctl
import dpnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpex_kernels as dk

CPU = "opencl:cpu:0"
DTYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")


@dk.kernel
def rotate_tiles(it, a, flat, square, cube, out):
    """Each work-item writes its value into three accessors (1-, 2- and 3-D, whatever their
    dtypes), then reads its right-hand neighbour's from each (the last one wraps round)."""
    g = it.get_global_linear_id()
    lid = it.get_local_linear_id()
    n = it.get_local_linear_range()
    columns = square.shape[1]
    rows, depth = cube.shape[1], cube.shape[2]
    flat[lid] = a[g]
    square[lid // columns, lid % columns] = a[g] * 2
    cube[lid // (rows * depth), lid // depth % rows, lid % depth] = a[g] * 3
    dk.group_barrier(it.get_group())
    k = (lid + 1) % n
    out[0, g] = flat[k]
    out[1, g] = square[k // columns, k % columns]
    out[2, g] = cube[k // (rows * depth), k // depth % rows, k % depth]


def _expected_rotation(a: np.ndarray, local: int) -> np.ndarray:
    neighbours = np.roll(a.reshape(-1, local), -1, axis=1).ravel()
    return np.stack([neighbours, neighbours * 2, neighbours * 3])


def _accessors(local: int, dtypes: tuple) -> tuple:
    """A 1-D accessor of `local` elements, a 2-D and a 3-D one of as many."""
    columns = next(c for c in (4, 3, 2, 1) if local % c == 0)
    depth = next(d for d in (2, 1) if (local // columns) % d == 0)
    return (
        dk.LocalAccessor(local, dtypes[0]),
        dk.LocalAccessor((local // columns, columns), dtypes[1]),
        dk.LocalAccessor((local // columns // depth, columns, depth), dtypes[2]),
    )


@given(
    local=st.sampled_from([1, 2, 6, 8, 12, 16, 64]),
    groups=st.integers(1, 4),
    dtypes=st.tuples(*[st.sampled_from(DTYPES)] * 3),
    seed=st.integers(0, 2**16),
)
def test_accessors_of_one_to_three_dimensions_and_every_dtype_match_numpy(
    local, groups, dtypes, seed
):
    n = local * groups
    host = np.random.default_rng(seed).integers(0, 1000, n).astype("f8")
    out = dpnp.zeros((3, n), dtype="f8")
    rotate_tiles[dk.NdRange(n, local)](dpnp.asarray(host), *_accessors(local, dtypes), out).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), _expected_rotation(host, local))


def test_the_work_group_size_is_chosen_at_launch_without_compiling_again():
    @dk.kernel
    def block_sums(it, a, tile, out):
        lid = it.get_local_id(0)
        tile[lid] = a[it.get_global_id(0)]
        dk.group_barrier(it.get_group())
        if lid == 0:
            total = tile[0] * 0
            for k in range(tile.shape[0]):
                total += tile[k]
            out[it.get_group().get_group_id(0)] = total

    host = np.arange(96, dtype="i8")
    for local in (4, 8, 16, 32, 96):
        out = dpnp.zeros(96 // local, dtype="i8")
        block_sums[dk.NdRange(96, local)](dpnp.asarray(host), dk.LocalAccessor(local, "i8"), out)
        np.testing.assert_array_equal(dpnp.asnumpy(out), host.reshape(-1, local).sum(axis=1))
    assert block_sums.stats.compiles == 1


def test_a_range_launch_of_a_kernel_with_an_accessor_is_refused():
    @dk.kernel
    def plain(a, tile):
        tile[0] = a[dk.get_global_id(0)]

    a = dpnp.zeros(8, dtype="f4")
    with pytest.raises(dk.InvalidRangeError, match=r"'plain' takes a dk.LocalAccessor.*NdRange"):
        plain[dk.Range(8)](a, dk.LocalAccessor(4, "f4"))
    with pytest.raises(dk.InvalidRangeError, match="NdRange"):
        plain[8](a, dk.LocalAccessor(4, "f4"))


@dk.kernel
def fill(it, out, first, second):
    lid = it.get_local_id(0)
    first[lid] = 1
    second[lid] = 2
    dk.group_barrier(it.get_group())
    out[it.get_global_id(0)] = first[lid] + second[lid]


def test_accessors_larger_than_the_device_s_local_memory_are_refused_before_submission():
    limit = dpctl.SyclDevice(CPU).local_mem_size
    out = dpnp.full(8, -1, dtype="f4")
    too_large = limit // 4 + 1  # float32 elements: one more than fit
    with pytest.raises(dk.InvalidRangeError) as info:
        fill[dk.NdRange(8, 8)](out, dk.LocalAccessor(too_large, "f4"), dk.LocalAccessor(8, "f4"))
    message = str(info.value)
    assert "'fill'" in message and f"take {too_large * 4 + 32} bytes" in message, message
    assert "make them smaller" in message
    # Two that fit one at a time but not together.
    half = limit // 4 // 2 + 8
    with pytest.raises(dk.InvalidRangeError, match="LocalAccessor arguments take"):
        fill[dk.NdRange(8, 8)](out, dk.LocalAccessor(half, "f4"), dk.LocalAccessor(half, "f4"))
    assert (dpnp.asnumpy(out) == -1).all()  # nothing ran
    fill[dk.NdRange(8, 8)](out, dk.LocalAccessor(limit // 8, "f4"), dk.LocalAccessor(8, "f4"))
    assert (dpnp.asnumpy(out) == 3).all()


def test_declared_signatures_take_dk_local_accessor_types():
    f8 = dk.usm_array(dk.float64, 2, device="opencl:cpu")
    f8_1d = dk.usm_array(dk.float64, 1, device="opencl:cpu")
    signature = dk.void(
        f8_1d,
        dk.local_accessor(dk.float32, 1),
        dk.local_accessor("int64", 2),
        dk.local_accessor(np.float64, 3),
        f8,
    )
    eager = dk.kernel(signature)(rotate_tiles.py_func)
    host = np.arange(16, dtype="f8")
    out = dpnp.zeros((3, 16), dtype="f8")
    eager[dk.NdRange(16, 8)](dpnp.asarray(host), *_accessors(8, ("f4", "i8", "f8")), out).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), _expected_rotation(host, 8))
    with pytest.raises(dk.KernelSignatureError, match="'square'"):  # a 2-D int32 accessor
        eager[dk.NdRange(16, 8)](dpnp.asarray(host), *_accessors(8, ("f4", "i4", "f8")), out)
    with pytest.raises(dk.KernelSignatureError, match="'flat'"):
        accessors = _accessors(8, ("f4", "i8", "f8"))[1:]
        eager[dk.NdRange(16, 8)](dpnp.asarray(host), dpnp.zeros(8), *accessors, out)
    assert len(eager.definitions) == 1


@pytest.mark.parametrize(
    ("dtype", "ndim", "error"),
    [("bool", 1, TypeError), ("f4", 0, ValueError), ("f4", 4, ValueError), ("f4", 1.0, ValueError)],
)
def test_local_accessor_types_are_checked(dtype, ndim, error):
    with pytest.raises(error):
        dk.local_accessor(dtype, ndim)


def test_the_launcher_tells_accessors_of_different_kinds_apart():
    @dk.kernel
    def shape_of(it, tile, out):
        if it.get_global_linear_id() == 0:
            out[0] = tile.ndim
            out[1] = tile.size

    launcher = shape_of[dk.NdRange(4, 4)]  # one launcher, its bindings per kind of accessor
    cases = [
        (dk.LocalAccessor(6, "f4"), 1, 6),
        (dk.LocalAccessor(6, "i8"), 1, 6),
        (dk.LocalAccessor((2, 3), "f4"), 2, 6),
        (dk.LocalAccessor((2, 3, 4), "f4"), 3, 24),
        (dk.LocalAccessor(6, "f4"), 1, 6),
    ]
    for accessor, ndim, size in cases:
        out = dpnp.zeros(2, dtype="f8")
        launcher(accessor, out).wait()
        assert dpnp.asnumpy(out).tolist() == [ndim, size], accessor
    assert len(shape_of.definitions) == 4  # f4 1-d, i8 1-d, f4 2-d, f4 3-d


def test_stored_values_keep_the_accessor_s_dtype():
    @dk.kernel
    def store_half(it, tile, out):
        lid = it.get_local_id(0)
        tile[lid] = lid + 0.5
        dk.group_barrier(it.get_group())
        out[it.get_global_id(0)] = tile[lid]

    launcher = store_half[dk.NdRange(8, 4)]
    for dtype in DTYPES:
        out = dpnp.zeros(8, dtype="f8")
        launcher(dk.LocalAccessor(4, dtype), out).wait()
        expected = (np.arange(8) % 4 + 0.5).astype(dtype).astype("f8")
        np.testing.assert_array_equal(dpnp.asnumpy(out), expected, err_msg=dtype)


@pytest.mark.parametrize(
    ("shape", "dtype", "error", "message"),
    [
        (0, "f4", TypeError, "positive int"),
        (-3, "f4", TypeError, "positive int"),
        ((2, 0), "f4", TypeError, "positive int"),
        ((1, 2, 3, 4), "f4", TypeError, "1 to 3"),
        ((), "f4", TypeError, "1 to 3"),
        (2.0, "f4", TypeError, "positive int"),
        (True, "f4", TypeError, "positive int"),
        ("8", "f4", TypeError, "positive int"),
        (8, "bool", TypeError, "integer or float"),
        (8, "complex64", TypeError, "integer or float"),
        (8, object, TypeError, "integer or float"),
        (8, "not a dtype", TypeError, "integer or float"),
    ],
)
def test_local_accessor_arguments_are_validated(shape, dtype, error, message):
    with pytest.raises(error, match=message):
        dk.LocalAccessor(shape, dtype)


def test_a_local_accessor_is_a_value():
    accessor = dk.LocalAccessor((np.int64(2), 3), dk.float32)
    assert accessor.shape == (2, 3) and accessor.dtype == np.float32 and accessor.ndim == 2
    assert accessor.nbytes == 24 and repr(accessor) == "LocalAccessor((2, 3), float32)"
    with pytest.raises(AttributeError, match="cannot change"):
        accessor.shape = (4,)


def test_the_simulator_runs_accessors_as_the_device_does():
    host = np.random.default_rng(5).integers(0, 100, 24).astype("f8")
    simulated = np.zeros((3, 24))
    rotate_tiles.simulate[dk.NdRange(24, 12)](host, *_accessors(12, ("f4", "i8", "u4")), simulated)
    np.testing.assert_array_equal(simulated, _expected_rotation(host, 12))
    on_device = dpnp.zeros((3, 24), dtype="f8")
    accessors = _accessors(12, ("f4", "i8", "u4"))
    rotate_tiles[dk.NdRange(24, 12)](dpnp.asarray(host), *accessors, on_device).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(on_device), simulated)


BUNDLED = textwrap.dedent(
    """
    import dpex_kernels as dk

    f8 = dk.usm_array(dk.float64, 1)

    @dk.kernel(dk.void(f8, dk.local_accessor(dk.float64, 1), f8), cache=True)
    def block_max(it, a, tile, out):
        lid = it.get_local_id(0)
        tile[lid] = a[it.get_global_id(0)]
        dk.group_barrier(it.get_group())
        if lid == 0:
            best = tile[0]
            for k in range(tile.shape[0]):
                best = max(best, tile[k])
            out[it.get_group().get_group_id(0)] = best
    """
)

RUN_BUNDLE = textwrap.dedent(
    """
    import sys
    import dpnp, numpy as np
    import dpex_kernels as dk
    from dpex_kernels.aot.runtime import load

    kernel = load(sys.argv[1]).block_max
    host = np.random.default_rng(0).random(64)
    for local in (8, 16):
        out = dpnp.zeros(64 // local, dtype="f8")
        kernel[dk.NdRange(64, local)](dpnp.asarray(host), dk.LocalAccessor(local, "f8"), out)
        assert np.array_equal(dpnp.asnumpy(out), host.reshape(-1, local).max(axis=1))
    assert "numba" not in sys.modules and "llvmlite" not in sys.modules
    print("ok")
    """
)


def test_an_aot_bundle_and_the_disk_cache_keep_accessor_parameters(tmp_path, monkeypatch):
    module = tmp_path / "bundled_accessor.py"
    module.write_text(BUNDLED)
    monkeypatch.setenv("DPEX_KERNELS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))
    import bundled_accessor

    bundle = tmp_path / "accessor.dpkb"
    dk.aot.build(bundled_accessor, bundle)
    script = tmp_path / "run_bundle.py"
    script.write_text(RUN_BUNDLE)
    done = subprocess.run(
        [sys.executable, str(script), str(bundle)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
    # A second definition from the same source loads from the disk cache and runs the same.
    namespace: dict = {}
    exec(compile(BUNDLED, str(module), "exec"), namespace)  # noqa: S102
    again = namespace["block_max"]
    assert (again.stats.cache_hits, again.stats.compiles) == (1, 0)
    host = np.arange(32, dtype="f8")[::-1].copy()
    out = dpnp.zeros(4, dtype="f8")
    again[dk.NdRange(32, 8)](dpnp.asarray(host), dk.LocalAccessor(8, "f8"), out).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), host.reshape(4, 8).max(axis=1))
