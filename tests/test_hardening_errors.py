"""Bad kernels get short errors that point at their line; compiler bugs say they are ours."""

import inspect

import dpnp
import numba
import numpy as np
import pytest

import dpex_kernels as dk
from dpex_kernels.compiler.backend import llvm

ARR = dk.usm_array(dk.float64, 1)


def _line_of(func, text: str) -> int:
    """The file line number of the first source line of `func` containing `text`."""
    lines, first = inspect.getsourcelines(func)
    return first + next(n for n, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("numba_type", [numba.float32[:], numba.int64[::1], numba.float64[:, :]])
def test_numba_array_type_in_a_kernel_signature_is_a_type_error(numba_type):
    with pytest.raises(TypeError, match=r"dk\.usm_array") as info:

        @dk.kernel(dk.void(numba_type))
        def fill(a):
            a[0] = 1

    assert "'a'" in str(info.value) and "fill" in str(info.value)


def test_string_signatures_for_scalar_device_functions():
    @dk.func("int64(int64)")
    def inc(x):
        return x + 1

    @dk.func(["float32(float32)", "float64(float64)"])
    def half(x):
        return x / 2

    @dk.kernel
    def use(out, f):
        i = dk.get_global_id(0)
        out[i] = inc(i) + half(f[i])

    f = np.arange(8, dtype=np.float64)
    out = dpnp.zeros(8, dtype="f8")
    use[8](out, dpnp.asarray(f))
    np.testing.assert_array_equal(dpnp.asnumpy(out), np.arange(8) + 1 + f / 2)


def _fact(n):
    return 1 if n <= 1 else n * _fact_device(n - 1)


_fact_device = dk.func(_fact)


def test_recursion_in_a_lazy_device_function_is_a_compile_error():
    @dk.kernel
    def uses(out):
        out[0] = _fact_device(5)

    with pytest.raises(dk.KernelCompileError, match="recurs") as info:
        uses[1](dpnp.zeros(1, dtype="i8"))
    assert f":{_line_of(_fact, '_fact_device(n - 1)')}" in str(info.value)
    assert "AttributeError" not in str(info.value)


def test_recursion_in_an_eager_device_function_is_a_compile_error():
    with pytest.raises(dk.KernelCompileError, match="recurs"):

        @dk.func(dk.int64(dk.int64))
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)


def test_typing_error_in_an_eager_device_function_names_its_line():
    def body(x):
        y = x + 1
        return y.nonexistent

    with pytest.raises(dk.KernelCompileError) as info:
        dk.func(dk.float32(dk.float32))(body)
    text = str(info.value)
    assert f":{_line_of(body, 'y.nonexistent')}" in text and "nonexistent" in text
    assert "During:" not in text


def test_print_of_an_array_names_the_print_line():
    @dk.kernel
    def show(a):
        i = dk.get_global_id(0)
        a[i] = 0.0
        print(a)

    with pytest.raises(dk.KernelCompileError) as info:
        show.compile(dk.void(ARR))
    text = str(info.value)
    assert f":{_line_of(show.py_func, 'print(a)')}" in text
    assert "print(a)" in text and "Hint" in text and "internal error" not in text


def test_an_internal_compiler_error_says_so_and_keeps_its_traceback(monkeypatch):
    def broken(*args, **kwargs):
        raise AttributeError("a bug in the compiler")

    monkeypatch.setattr(llvm, "link_modules", broken)

    @dk.kernel
    def fine(a):
        a[dk.get_global_id(0)] = 1.0

    with pytest.raises(dk.KernelCompileError, match="internal error") as info:
        fine.compile(dk.void(ARR))
    assert isinstance(info.value.__cause__, AttributeError)


def test_too_many_indices_does_not_get_the_exception_hint():
    @dk.kernel
    def two_d(a):
        i = dk.get_global_id(0)
        a[i, 0] = 1.0

    with pytest.raises(dk.KernelCompileError) as info:
        two_d.compile(dk.void(ARR))
    text = str(info.value)
    assert "raise only" not in text and "constant arguments" not in text
    assert "setitem" in text and f":{_line_of(two_d.py_func, 'a[i, 0]')}" in text
    assert "candidate implementations" not in text


@pytest.mark.parametrize(
    "body",
    [
        "a[0] = dk.get_global_id(5)",
        "a[0] = dk.get_local_id(-1)",
        "a[0] = dk.get_num_groups(3)",
    ],
)
def test_index_function_dimension_must_be_a_constant_0_1_or_2(body):
    namespace = {"dk": dk}
    exec(f"def bad(a):\n    {body}\n", namespace)
    kernel = dk.kernel(namespace["bad"])
    with pytest.raises(dk.KernelCompileError, match="constant 0, 1 or 2"):
        kernel.compile(dk.void(ARR))


@pytest.mark.parametrize("name", ["get_global_id", "get_local_size", "get_num_groups"])
def test_index_function_dimension_computed_at_run_time_is_a_compile_error(name):
    namespace = {"dk": dk}
    exec(f"def bad(a, d):\n    a[0] = dk.{name}(d)\n", namespace)
    kernel = dk.kernel(namespace["bad"])
    with pytest.raises(dk.KernelCompileError, match="not a value computed at run time") as info:
        kernel.compile(dk.void(ARR, dk.int64))
    assert "at " in str(info.value) and f"dk.{name}(d)" in str(info.value)


@pytest.mark.parametrize("flags", ["12345", "0", "4", "dk.LOCAL_MEM_FENCE + 8"])
def test_barrier_flags_must_be_fence_flags(flags):
    namespace = {"dk": dk}
    exec(f"def bad(a):\n    dk.barrier({flags})\n", namespace)
    kernel = dk.kernel(namespace["bad"])
    with pytest.raises(dk.KernelCompileError, match="LOCAL_MEM_FENCE"):
        kernel.compile(dk.void(ARR))


def test_both_fences_and_the_sub_group_barrier_still_compile():
    @dk.kernel
    def fences(a):
        dk.barrier(dk.LOCAL_MEM_FENCE | dk.GLOBAL_MEM_FENCE)
        dk.barrier(dk.GLOBAL_MEM_FENCE)
        dk.sub_group.barrier()
        a[dk.get_global_id(0)] = 2.0

    a = dpnp.zeros(4)
    fences[4](a)
    np.testing.assert_array_equal(dpnp.asnumpy(a), 2.0)


def test_eager_device_function_refuses_a_narrowing_argument():
    @dk.func(dk.int32(dk.int32))
    def same(x):
        return x

    @dk.kernel
    def narrow(out, v):
        out[0] = same(v)

    with pytest.raises(dk.KernelCompileError, match=r"same.*int64.*int32"):
        narrow[1](dpnp.zeros(1, dtype="i8"), 2**40 + 5)


def test_eager_device_function_takes_lossless_arguments_and_fitting_literals():
    @dk.func(dk.int32(dk.int32))
    def same(x):
        return x

    @dk.func(dk.float64(dk.float64))
    def widen(x):
        return x

    @dk.kernel
    def lossless(out, small, f32):
        out[0] = same(small)
        out[1] = same(7)
        out[2] = widen(f32[0]) + widen(small)

    out = dpnp.zeros(3, dtype="i8")
    lossless[1](out, np.int32(3), dpnp.full(1, 1.5, dtype="f4"))
    np.testing.assert_array_equal(dpnp.asnumpy(out), [3, 7, 4])


@pytest.mark.parametrize(
    "allocation",
    [
        "dk.local.array(4, dk.float64)",
        "dk.local.array(4, dtype=dk.float64)",
        "dk.local.array(shape=4, dtype=dk.float64)",
        "dk.local.array(dtype=dk.float64, shape=(4,))",
        "dk.private.array(4, dk.float64)",
        "dk.private.array(4, dtype=np.float64)",
        "dk.private.array(shape=(4,), dtype='f8')",
    ],
)
def test_local_and_private_arrays_take_shape_and_dtype_keywords(allocation):
    namespace = {"dk": dk, "np": np}
    exec(
        "def alloc(out):\n"
        f"    buf = {allocation}\n"
        "    i = dk.get_global_id(0)\n"
        "    for k in range(4):\n"
        "        buf[k] = k * 1.5\n"
        "    out[i] = buf[0] + buf[1] + buf[2] + buf[3]\n",
        namespace,
    )
    kernel = dk.kernel(namespace["alloc"])
    out = dpnp.zeros(4)
    kernel[dk.NdRange(4, 1)](out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), 9.0)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint64", "uint32", "int8"])
def test_integer_floor_division_and_remainder_follow_numpy(dtype):
    @dk.kernel
    def divide(x, y, quotient, remainder, both):
        i = dk.get_global_id(0)
        quotient[i] = x[i] // y[i]
        remainder[i] = x[i] % y[i]
        q, r = divmod(x[i], y[i])
        both[0, i] = q
        both[1, i] = r

    info = np.iinfo(dtype)
    values = [info.min, info.max, 0, 1, 7, 100, info.max // 2]
    divisors = [1, 2, 3, 7, info.max, 0]
    if info.min < 0:
        values += [-1, -7, -100]
        divisors += [-1, -2, -3, info.min]
    pairs = [(a, b) for a in values for b in divisors]
    x = np.array([a for a, _ in pairs], dtype=dtype)
    y = np.array([b for _, b in pairs], dtype=dtype)
    quotient, remainder = dpnp.empty_like(dpnp.asarray(x)), dpnp.empty_like(dpnp.asarray(x))
    both = dpnp.empty((2, len(pairs)), dtype=dtype)
    divide[len(pairs)](dpnp.asarray(x), dpnp.asarray(y), quotient, remainder, both)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(dpnp.asnumpy(quotient), np.floor_divide(x, y))
        np.testing.assert_array_equal(dpnp.asnumpy(remainder), np.remainder(x, y))
        np.testing.assert_array_equal(dpnp.asnumpy(both), np.stack(np.divmod(x, y)))


def test_no_gpu_lists_the_devices_there_are():
    import dpctl

    if dpctl.get_devices(device_type="gpu"):
        pytest.skip("this machine has a GPU")
    with pytest.raises(dk.DeviceNotFoundError) as info:
        dk.usm_array(dk.float32, 1, device="gpu")
    text = str(info.value)
    assert "'gpu'" in text
    for device in dpctl.get_devices():
        assert device.filter_string in text
    assert "Install the Intel OpenCL CPU runtime" not in text


def test_an_undefined_name_in_a_kernel_is_named():
    @dk.kernel
    def uses_a_typo(a):
        a[dk.get_global_id(0)] = no_such_name + 1.0  # noqa: F821

    with pytest.raises(dk.KernelCompileError, match="name 'no_such_name' is not defined"):
        uses_a_typo.compile(dk.void(ARR))
