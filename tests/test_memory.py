"""A deleted kernel releases its compiled artefacts (issue 8): nothing of ours keeps them alive.

What a deleted kernel still costs in resident memory is measured by the benchmark's memory group
(benchmarks/memory_worker.py); see docs/benchmarks.md for the numbers and where the rest goes.
"""

import gc
import pickle
import weakref

import dpnp
import numpy as np
import pytest

import dpex_kernels as dk

f32 = dk.usm_array(dk.float32, 1)
f32_2d = dk.usm_array(dk.float32, 2)


@dk.func
def _twice(x):
    return 2 * x


def _lazy():
    @dk.kernel
    def scale(a, out):
        i = dk.get_global_id(0)
        out[i] = _twice(a[i]) + 1

    return scale


def _eager(**options):
    @dk.kernel(dk.void(f32, f32), **options)
    def scale(a, out):
        i = dk.get_global_id(0)
        out[i] = _twice(a[i]) + 1

    return scale


def _plain():
    @dk.kernel(dk.void(f32, f32))
    def scale(a, out):
        i = dk.get_global_id(0)
        out[i] = 2 * a[i] + 1

    return scale


def _launch(kernel):
    host = np.arange(32, dtype=np.float32)
    out = dpnp.empty(32, dtype="f4")
    kernel[dk.NdRange(32, 8)](dpnp.asarray(host), out).wait()
    np.testing.assert_allclose(dpnp.asnumpy(out), 2 * host + 1)


def _released(make, use):
    kernel = make()
    use(kernel)
    refs = [weakref.ref(kernel)]
    for compiled in kernel.definitions.values():
        refs += [weakref.ref(compiled), weakref.ref(compiled.artifacts)]
    del kernel, compiled
    gc.collect()
    return [r for r in refs if r() is not None]


@pytest.mark.parametrize(
    "make, use",
    [
        (_lazy, _launch),
        (_eager, _launch),
        (lambda: _eager(debug=True), _launch),
        (_eager, lambda k: k.inspect_llvm()),
        (_plain, lambda k: _launch(pickle.loads(pickle.dumps(k)))),
    ],
    ids=["lazy", "eager", "debug", "inspected", "pickled copy"],
)
def test_a_deleted_kernel_releases_its_artefacts(make, use):
    assert _released(make, use) == []


def _fill():
    @dk.kernel
    def fill(out):
        out[dk.get_global_id(0), dk.get_global_id(1)] = 1.0

    return fill


def test_a_kernel_launched_in_two_dimension_counts_is_released():
    def use(kernel):
        out = dpnp.zeros((4, 4), dtype="f4")
        kernel[dk.Range(4, 4)](out).wait()
        kernel[dk.Range(16)](dpnp.zeros((16, 1), dtype="f4")).wait()
        assert dpnp.asnumpy(out).sum() == 16

    assert _released(_fill, use) == []
