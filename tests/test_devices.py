"""One kernel object serves every device, sub-device and context its arrays live on (API.md §8)."""

from __future__ import annotations

import hashlib

import dpctl
import dpnp
import numpy as np
import pytest
from conftest import CPU

import dpex_kernels as dk
from dpex_kernels import device as device_builds


@pytest.fixture(scope="module")
def sub_devices():
    root = dpctl.SyclDevice(CPU)
    subs = root.create_sub_devices(partition=1)
    if len(subs) < 2:
        pytest.skip("the CPU device splits into fewer than two sub-devices here")
    return subs


def _scale_kernel():
    @dk.kernel(dk.void(dk.usm_array(dk.float32, 1, device=CPU), dk.float32))
    def scale(a, factor):
        i = dk.get_global_id(0)
        a[i] = a[i] * factor

    return scale


def test_arrays_on_sub_devices_have_their_root_devices_type(sub_devices):
    x = dpnp.zeros(4, dtype="f4", sycl_queue=dpctl.SyclQueue(sub_devices[0]))
    assert dk.typeof(x) == dk.usm_array(dk.float32, 1, device=CPU)


def test_one_definition_runs_on_every_sub_device_built_once_per_device(sub_devices):
    scale = _scale_kernel()
    arrays = []
    for k, sub in enumerate(sub_devices):
        x = dpnp.asarray(np.arange(16, dtype="f4"), sycl_queue=dpctl.SyclQueue(sub))
        scale[16](x, float(k + 2))
        arrays.append(x)
    for k, x in enumerate(arrays):
        np.testing.assert_array_equal(dpnp.asnumpy(x), np.arange(16) * (k + 2))
        assert x.sycl_queue.sycl_device == sub_devices[k]
    assert scale.stats.compiles == 1 and len(scale.definitions) == 1
    (compiled,) = scale.definitions.values()
    digest = hashlib.sha256(compiled.spirv).digest()
    built_on = [key[3] for key in device_builds._kernels if key[0] == digest]
    assert all(built_on.count(sub) == 1 for sub in sub_devices)  # one build per sub-device


def test_a_second_context_gets_its_own_build():
    scale = _scale_kernel()
    root = dpctl.SyclDevice(CPU)
    queue = dpctl.SyclQueue(dpctl.SyclContext(root), root)
    x = dpnp.asarray(np.ones(8, dtype="f4"), sycl_queue=queue)
    scale[8](x, 3.0)
    np.testing.assert_array_equal(dpnp.asnumpy(x), 3.0)
    assert scale.stats.compiles == 1


def test_arrays_on_two_sub_devices_raise_execution_queue_error(sub_devices):
    @dk.kernel
    def copy(src, dst):
        i = dk.get_global_id(0)
        dst[i] = src[i]

    src = dpnp.ones(8, dtype="f4", sycl_queue=dpctl.SyclQueue(sub_devices[0]))
    dst = dpnp.zeros(8, dtype="f4", sycl_queue=dpctl.SyclQueue(sub_devices[1]))
    with pytest.raises(dk.ExecutionQueueError, match="'src'.*'dst'"):
        copy[8](src, dst)
