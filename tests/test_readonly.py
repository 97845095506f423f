"""Read-only arrays (API.md §3, issue 36): a launch that would write into an array whose
flags.writable is false is refused before submission, naming the argument; a kernel that only
reads takes read-only and writable arrays alike; writability is part of the usm_array type."""

from __future__ import annotations

import dpnp
import numpy as np
import pytest

import dpex_kernels as dk

F8 = dk.usm_array(dk.float64, 1)
READ_ONLY = dk.usm_array(dk.float64, 1, readonly=True)


def _read_only(values) -> dpnp.ndarray:
    array = dpnp.asarray(np.asarray(values, dtype=np.float64))
    array.flags.writable = False
    return array


@dk.func
def _store(out, i, value):
    out[i] = value


def _plain_write(src, dst):
    i = dk.get_global_id(0)
    dst[i] = src[i] * 2.0


def _aliased_write(src, dst):
    i = dk.get_global_id(0)
    view = dst[1:]
    view[i - 1] = src[i]


def _atomic_write(src, dst):
    i = dk.get_global_id(0)
    dk.atomic.add(dst, 0, src[i])


def _device_function_write(src, dst):
    i = dk.get_global_id(0)
    _store(dst, i, src[i])


@pytest.mark.parametrize(
    "function", [_plain_write, _aliased_write, _atomic_write, _device_function_write]
)
def test_writing_a_read_only_array_is_refused_before_submission(function):
    kernel = dk.kernel(function)
    src = dpnp.arange(1, 5, dtype=np.float64)
    dst = _read_only([7.0, 7.0, 7.0, 7.0])
    with pytest.raises(dk.KernelSignatureError, match=r"argument 1 'dst', a read-only array"):
        kernel[4](src, dst)
    np.testing.assert_array_equal(dpnp.asnumpy(dst), 7.0)  # nothing ran


def test_reading_a_read_only_array_works_in_a_lazy_and_an_eager_kernel():
    host = np.arange(6, dtype=np.float64)
    for kernel in (dk.kernel(_plain_write), dk.kernel(dk.void(F8, F8))(_plain_write)):
        out = dpnp.zeros(6)
        kernel[6](_read_only(host), out)
        np.testing.assert_array_equal(dpnp.asnumpy(out), host * 2)
        out[:] = 0
        kernel[6](dpnp.asarray(host), out)  # the writable array takes its own launch path
        np.testing.assert_array_equal(dpnp.asnumpy(out), host * 2)


def test_a_read_only_parameter_takes_both_and_cannot_be_written():
    copy = dk.kernel(dk.void(READ_ONLY, F8))(_plain_write)
    for src in (_read_only([1.0, 2.0]), dpnp.asarray([1.0, 2.0])):
        out = dpnp.zeros(2)
        copy[2](src, out)
        np.testing.assert_array_equal(dpnp.asnumpy(out), [2.0, 4.0])

    def writes_its_input(src, dst):
        src[0] = 1.0

    with pytest.raises(dk.KernelCompileError, match="readonly"):
        dk.kernel(dk.void(READ_ONLY, F8))(writes_its_input)


def test_writability_is_part_of_the_type():
    assert dk.typeof(_read_only([1.0])) == READ_ONLY
    assert dk.typeof(dpnp.zeros(1)) == F8 != READ_ONLY
    assert str(READ_ONLY) == "readonly usm_array(float64, 1d, C, device, opencl:cpu:0)"
    assert READ_ONLY.spec.readonly and not F8.spec.readonly


class _ThirdParty:
    """An array of another library, read-only through its interface's data flag."""

    def __init__(self, array):
        self._array = array

    @property
    def __sycl_usm_array_interface__(self):
        interface = dict(self._array.__sycl_usm_array_interface__)
        interface["data"] = (interface["data"][0], True)
        return interface


def test_a_read_only_third_party_array_is_refused_where_written():
    kernel = dk.kernel(_plain_write)
    backing = dpnp.zeros(3)
    with pytest.raises(dk.KernelSignatureError, match="'dst', a read-only array"):
        kernel[3](dpnp.ones(3), _ThirdParty(backing))
    out = dpnp.zeros(3)
    kernel[3](_ThirdParty(dpnp.ones(3)), out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), 2.0)


def test_an_aot_bundle_refuses_a_read_only_array_where_its_kernel_writes(tmp_path):
    from dpex_kernels.aot.runtime import load

    kernel = dk.kernel(dk.void(F8, F8))(_plain_write)
    bundle = load(dk.aot.build([kernel], tmp_path / "k.dpkb"))
    out = dpnp.zeros(2)
    bundle._plain_write[2](_read_only([1.0, 3.0]), out)
    np.testing.assert_array_equal(dpnp.asnumpy(out), [2.0, 6.0])
    with pytest.raises(dk.KernelSignatureError, match="'dst', a read-only array"):
        bundle._plain_write[2](dpnp.ones(2), _read_only([0.0, 0.0]))
