"""IR rewrites that dodge miscompiles of the Intel OpenCL CPU runtime (runtime_workarounds.py)."""

import dpnp
import llvmlite.binding as ll
import numpy as np
import pytest

import dpex_kernels as dk
from dpex_kernels.compiler import codegen
from dpex_kernels.compiler.runtime_workarounds import negations_as_fma

SPECIAL = [0.0, -0.0, 0.1, -2.5, np.inf, -np.inf, 3e38, 1e-40]


def _bits(values: np.ndarray) -> np.ndarray:
    return values.view(f"u{values.itemsize}")


@pytest.mark.parametrize("dtype", ["f4", "f8"])
@pytest.mark.parametrize("barrier", ["group", "sub_group"])
def test_a_negation_live_across_a_barrier_keeps_each_work_items_value(dtype, barrier):
    """Every work-item of a group got one work-item's negation (fneg across a barrier)."""
    wait = dk.barrier if barrier == "group" else dk.sub_group.barrier

    @dk.kernel
    def negate(a, out):
        i = dk.get_global_id(0)
        value = -a[i]
        wait()
        out[i] = value

    host = np.array(SPECIAL * 2, dtype=dtype)
    out = dpnp.zeros(len(host), dtype=dtype)
    negate[dk.NdRange(len(host), 8)](dpnp.asarray(host), out).wait()
    np.testing.assert_array_equal(_bits(dpnp.asnumpy(out)), _bits(-host))


MODULE = """
define spir_kernel void @k(ptr addrspace(1) %p) {
entry:
  %x = load <2 x double>, ptr addrspace(1) %p, align 16
  %"y.1" = fneg fast <2 x double> %x
  store <2 x double> %"y.1", ptr addrspace(1) %p, align 16
  %s = load float, ptr addrspace(1) %p, align 4
  %t = fneg float %s
  store float %t, ptr addrspace(1) %p, align 4
  call spir_func void @_Z7barrierj(i32 1)
  ret void
}
declare spir_func void @_Z7barrierj(i32) #0
attributes #0 = { convergent }
"""


def test_the_rewrite_makes_valid_modules_of_scalar_and_vector_negations():
    header = f'target triple = "{codegen.TRIPLE}"\ntarget datalayout = "{codegen.DATA_LAYOUT}"\n'
    rewritten = negations_as_fma(header + MODULE)
    assert " fneg " not in rewritten
    assert "@llvm.fma.v2f64(<2 x double> %x, <2 x double> <double -1.0, double -1.0>" in rewritten
    assert "@llvm.fma.f32(float %s, float -1.0, float -0.0)" in rewritten
    module = ll.parse_assembly(rewritten)
    module.verify()
    codegen._ensure_llvm()
    assert codegen._target_machine(2).emit_object(module)[:4] == b"\x03\x02\x23\x07"


def test_modules_without_barriers_keep_their_negations():
    text = MODULE.replace("convergent", "nounwind")
    assert negations_as_fma(text) is text
