"""Device binaries of cache=True kernels (program_binaries.py): a second process loads them,
with the right results, and a damaged or foreign binary never reaches the runtime."""

import ctypes
import gc
import hashlib
import json
import types

import dpnp
import numpy as np
import pytest
from conftest_kernels import run_python

import dpex_kernels as dk
from dpex_kernels import program_binaries

# Two cache=True kernels (one with local memory and a barrier), run against NumPy; prints how
# many programs this process built from SPIR-V and whether the results were right.
SCRIPT = """
import json, sys
import dpnp, numpy as np
import dpex_kernels as dk
from dpex_kernels import device

spirv_builds = []
build = device._build
def counted(spirv, symbol, *rest):
    spirv_builds.append(symbol)
    return build(spirv, symbol, *rest)
device._build = counted

@dk.kernel(cache=True)
def scaled_sum(a, b, out):
    i = dk.get_global_id(0)
    out[i] = 2 * a[i] + b[i]

@dk.kernel(cache=True)
def reverse_blocks(x, out):
    scratch = dk.local.array(64, dk.float32)
    lid = dk.get_local_id(0)
    scratch[lid] = x[dk.get_global_id(0)]
    dk.barrier(dk.LOCAL_MEM_FENCE)
    out[dk.get_global_id(0)] = scratch[63 - lid]

rng = np.random.default_rng(int(sys.argv[1]))
a, b = rng.random(1000), rng.random(1000)
out = dpnp.empty(1000)
scaled_sum[1000](dpnp.asarray(a), dpnp.asarray(b), out)
x = rng.random(4096, dtype=np.float32)
reversed_ = dpnp.empty(4096, dtype=np.float32)
reverse_blocks[dk.NdRange(4096, 64)](dpnp.asarray(x), reversed_)
right = np.allclose(dpnp.asnumpy(out), 2 * a + b) and np.array_equal(
    dpnp.asnumpy(reversed_), x.reshape(64, 64)[:, ::-1].ravel()
)
print(json.dumps({"spirv_builds": sorted(spirv_builds), "right": bool(right)}))
"""


def _run(seed: int) -> dict:
    result = run_python(SCRIPT, str(seed))
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DPEX_KERNELS_CACHE_DIR", str(tmp_path))
    return tmp_path


def _binaries(cache_dir):
    return sorted((cache_dir / "binaries").glob("*.bin"))


def test_a_second_process_loads_the_binaries_and_builds_nothing(cache_dir):
    first = _run(1)
    assert first == {"spirv_builds": ["dpex_kernel_reverse_blocks", "dpex_kernel_scaled_sum"],
                     "right": True}  # fmt: skip
    assert len(_binaries(cache_dir)) == 2
    assert _run(2) == {"spirv_builds": [], "right": True}


def test_device_binaries_off_keeps_and_loads_none(cache_dir, monkeypatch):
    monkeypatch.setenv(program_binaries.ENABLE_VARIABLE, "0")
    assert _run(1)["spirv_builds"] == ["dpex_kernel_reverse_blocks", "dpex_kernel_scaled_sum"]
    assert not _binaries(cache_dir)
    monkeypatch.delenv(program_binaries.ENABLE_VARIABLE)
    _run(2)  # keeps them
    monkeypatch.setenv(program_binaries.ENABLE_VARIABLE, "0")
    assert _run(3) == {
        "spirv_builds": ["dpex_kernel_reverse_blocks", "dpex_kernel_scaled_sum"],
        "right": True,
    }


def _flip(data: bytes) -> bytes:
    damaged = bytearray(data)
    damaged[len(damaged) // 2] ^= 0xFF
    return bytes(damaged)


def _rechecksummed_garbage(data: bytes) -> bytes:
    """A file that passes the checksum but holds no binary: the runtime itself refuses it."""
    garbage = bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8))
    return program_binaries.MAGIC + hashlib.sha256(garbage).digest() + garbage


@pytest.mark.parametrize(
    "damage",
    [lambda d: d[: len(d) // 2], _flip, lambda d: b"x" + d[1:], _rechecksummed_garbage],
    ids=["truncated", "flipped byte", "foreign header", "refused by the runtime"],
)
def test_a_damaged_binary_is_rebuilt_from_spirv(cache_dir, damage):
    _run(1)
    for path in _binaries(cache_dir):
        if "scaled_sum" in path.name:
            path.write_bytes(damage(path.read_bytes()))
    # A flipped byte handed to the runtime ends the process ("Invalid encoding"): the checksum
    # keeps it out, and the program is built again from SPIR-V, its binary written anew.
    assert _run(2) == {"spirv_builds": ["dpex_kernel_scaled_sum"], "right": True}
    assert _run(3) == {"spirv_builds": [], "right": True}


def _device(**changes):
    queue = dpnp.empty(1).sycl_queue
    real = queue.sycl_device
    fields = {
        "name": real.name,
        "driver_version": real.driver_version,
        "sycl_platform": types.SimpleNamespace(version=real.sycl_platform.version),
        "is_cpu": real.is_cpu,
    }
    return types.SimpleNamespace(**{**fields, **changes})


def test_a_binary_is_named_by_its_code_device_driver_and_cpu(monkeypatch):
    spirv = b"\x03\x02\x23\x07" + bytes(60)
    names = {
        program_binaries.binary_path(spirv, "k", _device()),
        program_binaries.binary_path(spirv + b"\0", "k", _device()),
        program_binaries.binary_path(spirv, "other", _device()),
        program_binaries.binary_path(spirv, "k", _device(name="Another CPU")),
        program_binaries.binary_path(spirv, "k", _device(driver_version="0.0.0")),
    }
    monkeypatch.setattr(program_binaries, "_cpu_features", lambda: "flags : sse2")
    names.add(program_binaries.binary_path(spirv, "k", _device()))
    assert len(names) == 6
    assert program_binaries.binary_path(spirv, "k", _device()) in names  # stable


def _reference_counts(sycl_kernel):
    """(the cl_kernel's references besides this query's, its program's or None when refused)."""
    api = program_binaries.native_api()
    handle = api.kernel_native(sycl_kernel.addressof_ref())
    try:
        kernel_refs, program = ctypes.c_uint32(), ctypes.c_void_p()
        program_binaries.query(
            api.kernel_info, handle, program_binaries.CL_KERNEL_REFERENCE_COUNT, kernel_refs
        )
        program_binaries.query(api.kernel_info, handle, program_binaries.CL_KERNEL_PROGRAM, program)
        refs = ctypes.c_uint32()
        try:
            program_binaries.query(
                api.program_info, program.value, program_binaries.CL_PROGRAM_REFERENCE_COUNT, refs
            )
        except OSError:
            refs = None
    finally:
        api.release_kernel(handle)
    return kernel_refs.value - 1, refs and refs.value


def _resident_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


def test_a_loaded_kernel_holds_what_a_built_one_does_and_frees_it():
    @dk.kernel(cache=True)
    def triple(a):
        i = dk.get_global_id(0)
        a[i] = 3 * a[i]

    x = dpnp.asarray(np.arange(64, dtype=np.float32))
    triple[64](x)
    (compiled,) = triple.definitions.values()
    queue, spirv, symbol = x.sycl_queue, compiled.spirv, compiled.artifacts.symbol
    loaded = program_binaries.load(spirv, symbol, queue)
    assert loaded is not None and loaded.num_args == compiled.sycl_kernel.num_args
    assert _reference_counts(loaded) == _reference_counts(compiled.sycl_kernel) == (1, None)
    del loaded
    for _ in range(2):  # the first round lets the allocator settle
        gc.collect()
        before = _resident_mib()
        for _ in range(200):
            program_binaries.load(spirv, symbol, queue)
        gc.collect()
        grown = _resident_mib() - before
    assert grown < 8, f"200 loads and drops kept {grown:.1f} MiB"  # 0.45 MB each when leaking


def test_kernels_without_cache_keep_no_binaries(cache_dir):
    @dk.kernel
    def negate(a):
        i = dk.get_global_id(0)
        a[i] = -a[i]

    x = dpnp.asarray(np.ones(8, dtype=np.float32))
    negate[8](x)
    np.testing.assert_array_equal(dpnp.asnumpy(x), -np.ones(8))
    assert not (cache_dir / "binaries").exists()
