"""Kernel options that change code generation: fastmath, opt_level, sub_group_size; and arrays
of high rank."""

import dpnp
import numpy as np
import pytest

import dpex_kernels as dk

f32 = dk.usm_array(dk.float32, 1)


def _scale_add(a, b, out):
    i = dk.get_global_id(0)
    out[i] = a[i] * 1.5 + b[i] / 3.0


@pytest.mark.parametrize("fastmath", [False, True])
def test_fastmath_sets_llvm_fast_math_flags_only_when_asked(fastmath):
    kernel = dk.kernel(dk.void(f32, f32, f32), fastmath=fastmath)(_scale_add)
    llvm_ir = kernel.inspect_llvm(kernel.signatures[0])
    assert (" fast " in llvm_ir) is fastmath
    a = dpnp.asarray(np.linspace(0, 1, 64, dtype=np.float32))
    b = dpnp.asarray(np.linspace(1, 2, 64, dtype=np.float32))
    out = dpnp.empty_like(a)
    kernel[64](a, b, out)
    expected = dpnp.asnumpy(a) * 1.5 + dpnp.asnumpy(b) / 3.0
    np.testing.assert_allclose(dpnp.asnumpy(out), expected, rtol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_every_opt_level_compiles_and_computes_the_same(opt_level):
    kernel = dk.kernel(dk.void(f32, f32, f32), opt_level=opt_level)(_scale_add)
    a = dpnp.asarray(np.arange(32, dtype=np.float32))
    out = dpnp.empty_like(a)
    kernel[32](a, a, out)
    host = np.arange(32, dtype=np.float32)
    np.testing.assert_allclose(dpnp.asnumpy(out), host * 1.5 + host / 3.0, rtol=1e-6)


def test_eight_dimensional_arrays_index_like_numpy():
    @dk.kernel
    def sum_last_axes(a, out):
        i = dk.get_global_id(0)
        total = 0.0
        for j in range(a.shape[7]):
            total += a[i, 0, 1, 0, 1, 0, 1, j] * (j + 1)
        out[i] = total + a.ndim

    host = np.random.default_rng(3).random((3, 1, 2, 1, 2, 1, 2, 4))
    out = dpnp.empty(3)
    sum_last_axes[3](dpnp.asarray(host), out)
    expected = (host[:, 0, 1, 0, 1, 0, 1, :] * np.arange(1, 5)).sum(axis=1) + 8
    np.testing.assert_allclose(dpnp.asnumpy(out), expected)


def _lanes(out):
    i = dk.get_global_id(0)
    out[i] = dk.sub_group.get_size() * 1000 + dk.sub_group.get_local_id()


def _execution_modes(kernel) -> list[str]:
    (compiled,) = kernel.definitions.values()
    spirv = kernel.inspect_spirv(compiled.signature)
    return [line.split()[-2:] for line in spirv.splitlines() if "OpExecutionMode" in line]


@pytest.mark.parametrize("size", [4, 8, 16])
def test_sub_group_size_is_what_every_work_item_sees_and_what_the_kernel_reports(size):
    kernel = dk.kernel(sub_group_size=size)(_lanes)
    out = dpnp.zeros(256, dtype="i4")
    kernel[dk.NdRange(256, 64)](out)
    lane = np.arange(256) % 64 % size
    np.testing.assert_array_equal(dpnp.asnumpy(out), size * 1000 + lane)
    (compiled,) = kernel.definitions.values()
    assert compiled.attrs.compile_sub_group_size == size
    assert ["SubgroupSize", str(size)] in _execution_modes(kernel)


def _count(values, bins):
    i = dk.get_global_id(0)
    dk.atomic.add(bins, values[i], 1)


def test_sub_groups_of_one_work_item_on_a_cpu_device_count_as_numpy_does():
    """Size 1, on CPU devices only: the runtime runs the work-items one after another."""
    kernel = dk.kernel(sub_group_size=1)(_count)
    values = np.random.default_rng(5).integers(0, 16, 4096).astype(np.int32)
    bins = dpnp.zeros(16, dtype="i4")
    kernel[4096](dpnp.asarray(values), bins)
    np.testing.assert_array_equal(dpnp.asnumpy(bins), np.bincount(values, minlength=16))
    (compiled,) = kernel.definitions.values()
    assert compiled.attrs.compile_sub_group_size == 1
    assert ["SubgroupSize", "1"] in _execution_modes(kernel)


def test_sub_groups_of_one_work_item_with_sub_group_operations_are_a_compile_error():
    kernel = dk.kernel(sub_group_size=1)(_lanes)
    with pytest.raises(dk.KernelCompileError, match=r"kernel '_lanes': sub_group_size=1 leaves"):
        kernel[dk.NdRange(64, 64)](dpnp.zeros(64, dtype="i4"))


def test_without_sub_group_size_the_runtime_chooses_and_the_spirv_asks_for_none():
    kernel = dk.kernel(_lanes)
    out = dpnp.zeros(64, dtype="i4")
    kernel[dk.NdRange(64, 64)](out)
    assert not [mode for mode in _execution_modes(kernel) if mode[0] == "SubgroupSize"]
    assert dpnp.asnumpy(out)[0] // 1000 in out.sycl_device.sub_group_sizes


@pytest.mark.parametrize("bad", [0, -4, 2.0, "8", True])
def test_a_sub_group_size_that_is_no_positive_int_is_a_value_error(bad):
    with pytest.raises(ValueError, match=r"kernel '_lanes': sub_group_size must be"):
        dk.kernel(sub_group_size=bad)(_lanes)


def test_a_sub_group_size_the_device_lacks_is_a_compile_error_naming_its_sizes():
    kernel = dk.kernel(sub_group_size=3)(_lanes)
    with pytest.raises(dk.KernelCompileError, match=r"sub_group_size=3 .*\(it takes \[1, .*\]\)"):
        kernel[64](dpnp.zeros(64, dtype="i4"))
    assert kernel.definitions == {}


def _lanes_any_rank(out):
    i = dk.get_global_id(0) + dk.get_global_id(1)  # one of them is 0: 1-D or (1, n) launches
    out[i] = dk.sub_group.get_size() * 1000 + dk.sub_group.get_local_id()


def test_a_cached_kernel_keeps_its_sub_group_size_for_variants_built_later(tmp_path, monkeypatch):
    """The entry records the size: a 2-D launch of the cached definition, a variant not in the
    entry, still runs in sub-groups of 8 (along the last dimension, as SYCL forms them)."""
    monkeypatch.setenv("DPEX_KERNELS_CACHE_DIR", str(tmp_path))
    first = dk.kernel(cache=True, sub_group_size=8)(_lanes_any_rank)
    first[dk.NdRange(64, 64)](dpnp.zeros(64, dtype="i4"))
    again = dk.kernel(cache=True, sub_group_size=8)(_lanes_any_rank)
    out = dpnp.zeros(64, dtype="i4")
    again[dk.NdRange((1, 64), (1, 64))](out)
    assert again.stats.cache_hits == 1 and again.stats.compiles == 0
    np.testing.assert_array_equal(dpnp.asnumpy(out), 8000 + np.arange(64) % 8)


def _repeat_add(a, out):
    i = dk.get_global_id(0)
    for _ in range(5):
        out[i] += a[i]


@pytest.mark.parametrize("front_end", ["direct", "numba"])
@pytest.mark.parametrize("noalias", [False, True])
def test_noalias_marks_the_arrays_data_pointers_only_when_set(front_end, noalias, monkeypatch):
    """Offloaded loops set it (CompileOptions.noalias); either front end honours it, and LLVM
    then keeps `a[i]` in a register across the stores into `out`."""
    from dpex_kernels.compiler.frontend import direct

    monkeypatch.setattr(direct, "enabled", lambda: front_end == "direct")
    kernel = dk.JitKernel(_repeat_add, noalias=noalias)
    a, out = dpnp.arange(16, dtype="f8"), dpnp.zeros(16)
    kernel[16](a, out)
    (compiled,) = kernel.definitions.values()
    assert compiled.artifacts.front_end.startswith(front_end)
    define = next(
        line for line in compiled.artifacts.linked_ir.splitlines() if "spir_kernel" in line
    )
    assert define.count("noalias") == (2 if noalias else 0), define
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.arange(16.0) * 5)
    # the promise broken on purpose: the same array as both arguments
    same = dpnp.ones(16)
    kernel = dk.JitKernel(_repeat_add, noalias=noalias)
    kernel[16](same, same)
    expected = np.full(16, 6.0 if noalias else 32.0)  # a[i] kept in a register, or re-read
    np.testing.assert_array_equal(dpnp.asnumpy(same), expected)


def test_compile_options_written_before_noalias_read_as_without_it():
    from dpex_kernels.artifacts.options import CompileOptions

    written = CompileOptions(fastmath=True).to_json()
    del written["noalias"]
    assert CompileOptions.from_json(written) == CompileOptions(fastmath=True)
    with pytest.raises(ValueError, match="noalias must be True or False"):
        CompileOptions(noalias=1)
