"""IR rewrites that dodge miscompiles of the Intel OpenCL CPU runtime (runtime_workarounds.py)."""

import subprocess
import sys

import dpnp
import llvmlite.binding as ll
import numpy as np
import pytest
from conftest import param_id

import dpex_kernels as dk
from dpex_kernels.compiler.backend import llvm
from dpex_kernels.compiler.backend.rewrites import (
    count_down_exits_on_the_new_count,
    float_atomic_adds_of_no_negation,
    integer_min_max_abs_as_select,
    loads_volatile_in_sub_groups_of_4,
    negations_as_fma,
    phis_after_compare_exchange_loops_through_memory,
    private_arrays_as_one,
    stores_through_chosen_private_pointers_volatile,
)

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
    header = f'target triple = "{llvm.TRIPLE}"\ntarget datalayout = "{llvm.DATA_LAYOUT}"\n'
    rewritten = negations_as_fma(header + MODULE)
    assert " fneg " not in rewritten
    assert "@llvm.fma.v2f64(<2 x double> %x, <2 x double> <double -1.0, double -1.0>" in rewritten
    assert "@llvm.fma.f32(float %s, float -1.0, float -0.0)" in rewritten
    module = ll.parse_assembly(rewritten)
    module.verify()
    llvm.ensure_llvm()
    assert llvm.target_machine(2).emit_object(module)[:4] == b"\x03\x02\x23\x07"


def test_modules_without_barriers_keep_their_negations():
    text = MODULE.replace("convergent", "nounwind")
    assert negations_as_fma(text) is text


def _private_select_kernel(sub_group_call: bool):
    @dk.kernel
    def pick(a, out, n):
        i = dk.get_global_id(0)
        lane = dk.get_local_id(0)
        first = dk.private.array(4, dk.int32)
        for q in range(4):
            first[q] = q + i
        second = dk.private.array(2, dk.int32)
        for q in range(2):
            second[q] = q + i
        if sub_group_call:
            dk.sub_group.barrier()
        second[0] = first[lane % 4] if max(a[0], n) > 0 else second[0]  # a select of addresses
        out[i] = second[second[0] % 2] - lane

    return pick


@pytest.mark.parametrize("sub_group_call", [False, True])
@pytest.mark.parametrize("local", [4, 8, 16, 32])
def test_a_pointer_into_either_of_two_private_arrays_reads_the_right_one(sub_group_call, local):
    """The runtime read the wrong private array through a select of two arrays' addresses."""
    size = 64
    out = dpnp.zeros(size, dtype=np.int64)
    a = dpnp.asarray(np.array([5], np.uint32))
    _private_select_kernel(sub_group_call)[dk.NdRange(size, local)](a, out, 0).wait()
    i = np.arange(size)
    lane = i % local
    second = np.stack([lane % 4 + i, i + 1])
    want = second[second[0] % 2, i] - lane
    np.testing.assert_array_equal(dpnp.asnumpy(out), want)


SELECTED = """
define spir_kernel void @k(ptr addrspace(1) %out, i1 %c, i64 %i) {
entry:
  %a = alloca [4 x i32], align 4
  %b = alloca [2 x i64], align 8
  %alone = alloca [3 x float], align 4
  call void @llvm.lifetime.start.p0(ptr nonnull %a)
  call void @llvm.lifetime.start.p0(ptr nonnull %alone)
  store i32 1, ptr %a, align 4
  store i64 2, ptr %b, align 8
  %e = getelementptr i32, ptr %a, i64 %i
  %s = select i1 %c, ptr %e, ptr %b
  %v = load i32, ptr %s, align 4
  store i32 %v, ptr addrspace(1) %out, align 4
  %f = getelementptr float, ptr %alone, i64 %i
  store float 1.0, ptr %f, align 4
  call void @llvm.lifetime.end.p0(ptr nonnull %a)
  call void @llvm.lifetime.end.p0(ptr nonnull %alone)
  ret void
}
declare void @llvm.lifetime.start.p0(ptr)
declare void @llvm.lifetime.end.p0(ptr)
"""


def test_only_private_arrays_that_meet_become_one():
    header = f'target triple = "{llvm.TRIPLE}"\ntarget datalayout = "{llvm.DATA_LAYOUT}"\n'
    rewritten = private_arrays_as_one(header + SELECTED)
    assert "%dpex.private.0 = alloca [32 x i8], align 8" in rewritten  # 16 bytes, then 16
    assert "%a = getelementptr inbounds i8, ptr %dpex.private.0, i64 0" in rewritten
    assert "%b = getelementptr inbounds i8, ptr %dpex.private.0, i64 16" in rewritten
    assert "%alone = alloca [3 x float], align 4" in rewritten
    assert "lifetime.start.p0(ptr nonnull %a)" not in rewritten
    assert "lifetime.start.p0(ptr nonnull %alone)" in rewritten
    module = ll.parse_assembly(rewritten)
    module.verify()
    llvm.ensure_llvm()
    assert llvm.target_machine(2).emit_object(module)[:4] == b"\x03\x02\x23\x07"
    apart = SELECTED.replace("ptr %e, ptr %b", "ptr %e, ptr %e")
    assert private_arrays_as_one(apart) is apart
    later = SELECTED.replace(  # an alloca past the entry block need not dominate the others
        "  %b = alloca [2 x i64], align 8\n", ""
    ).replace(
        "  store i64 2,",
        "  br label %next\nnext:\n  %b = alloca [2 x i64], align 8\n  store i64 2,",
    )
    ll.parse_assembly(later).verify()
    assert private_arrays_as_one(later) is later
    # The entry block is the first block, whatever its label (after inlining, a merged block
    # named for the callee's first block, as "B0.endif.i", is the entry block)
    renamed = SELECTED.replace("entry:", "B0.endif.i:")
    assert "%dpex.private.0 = alloca [32 x i8]" in private_arrays_as_one(renamed)


COUNT_DOWN = """
define spir_kernel void @k(ptr addrspace(1) %out, i64 %n, i64 %m) {
entry:
  br label %loop
loop:
  %count = phi i64 [ %n, %entry ], [ %next, %loop ]
  %other = phi i64 [ %m, %entry ], [ %less, %loop ]
  %old = atomicrmw add ptr addrspace(1) %out, i64 1 monotonic, align 8
  %next = add nsw i64 %count, -1
  %less = add nsw i64 %other, -1
  %more = icmp samesign ugt i64 %count, 1
  %other.more = icmp sgt i64 %other, 1
  %both = and i1 %more, %other.more
  br i1 %both, label %loop, label %done
done:
  %again = icmp sgt i64 %count, 1
  ret void
}
"""


def test_only_a_loop_counters_test_is_rewritten():
    header = f'target triple = "{llvm.TRIPLE}"\ntarget datalayout = "{llvm.DATA_LAYOUT}"\n'
    rewritten = count_down_exits_on_the_new_count(header + COUNT_DOWN)
    assert "%more = icmp sgt i64 %next, 0" in rewritten
    assert "%other.more = icmp sgt i64 %less, 0" in rewritten
    assert "%again = icmp sgt i64 %count, 1" in rewritten  # another block: kept as it was
    ll.parse_assembly(rewritten).verify()
    not_a_counter = COUNT_DOWN.replace("[ %next, %loop ]", "[ %m, %loop ]")
    assert "%more = icmp samesign ugt i64 %count, 1" in count_down_exits_on_the_new_count(
        not_a_counter
    )
    unsigned = COUNT_DOWN.replace("samesign ugt", "ugt").replace("icmp sgt", "icmp ugt")
    assert count_down_exits_on_the_new_count(unsigned) is unsigned  # 0 would pass as ugt -1


# Run in a child process: without the rewrite, the runtime kills the process.
SUB_GROUPS_OF_4 = """
import dpnp
import numpy as np
import dpex_kernels as dk


@dk.kernel(sub_group_size=4)
def clamped(it, a, out):
    i = it.get_global_id(0)
    u = max(int(a[3]), 2)
    out[i] = a[u & 31]


@dk.kernel(sub_group_size=4)
def stored_then_reduced(it, a, b, out):
    i = it.get_global_id(0)
    u = int(a[3]) if a[3] > 2 else 2
    b[i, 2] = 1
    out[i] = dk.reduce_over_group(it.get_group(), a[u % 32], dk.maximum)


@dk.kernel(sub_group_size=4)
def swapped(it, a, out, local):
    i = it.get_global_id(0)
    j = it.get_local_id(0)
    local[j] = a[(i & 31) ^ 3]
    dk.group_barrier(it.get_group())
    out[i] = local[(j & 15) ^ 1]


rng = np.random.default_rng(3)
for dtype in ("i4", "i8", "f4", "f8"):
    host = rng.integers(-40, 40, 32).astype(dtype)
    a, out = dpnp.asarray(host), dpnp.zeros(64, dtype=dtype)
    first = int(host[3])
    clamped[dk.NdRange(64, 8)](a, out).wait()
    assert (dpnp.asnumpy(out) == host[max(first, 2) & 31]).all()
    b = dpnp.zeros((64, 4), dtype=dtype)
    stored_then_reduced[dk.NdRange(64, 8)](a, b, out).wait()
    assert (dpnp.asnumpy(out) == host[(first if first > 2 else 2) % 32]).all()
    assert (dpnp.asnumpy(b)[:, 2] == 1).all()
    swapped[dk.NdRange(64, 16)](a, out, dk.LocalAccessor(16, dtype=dtype)).wait()
    i = np.arange(64)
    j = (i % 16 ^ 1) + i // 16 * 16
    assert (dpnp.asnumpy(out) == host[(j & 31) ^ 3]).all()
print("equal")
"""


def test_loads_in_sub_groups_of_4_work_items():
    """Intel's CPU runtime crashed the process (AVX2 host) on sub_group_size=4 kernels that
    load at an index computed from a loaded value or at `(i & 31) ^ 3`; with the rewrite
    they run, as NumPy computes."""
    done = subprocess.run(
        [sys.executable, "-c", SUB_GROUPS_OF_4], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.strip() == "equal", done.stderr[-2000:]


LOADS = """
define spir_kernel void @k(ptr addrspace(1) %a, ptr addrspace(3) %l, ptr %p, i64 %i)
entry:
  %first = getelementptr i8, ptr addrspace(1) %a, i64 24
  %u = load i64, ptr addrspace(1) %first, align 8
  %at = getelementptr i64, ptr addrspace(3) %l, i64 %u
  %shared = load i64, ptr addrspace(3) %at, align 8
  %private = load i64, ptr %p, align 8
  %kept = load atomic i64, ptr addrspace(1) %a monotonic, align 8
  %sum = add i64 %shared, %private
  store i64 %sum, ptr addrspace(1) %a, align 8
  ret void
}
""".replace("%i)\n", "%i) !intel_reqd_sub_group_size !{i32 4} {\n")


def test_loads_of_memory_become_volatile_in_sub_groups_of_4_only():
    rewritten = loads_volatile_in_sub_groups_of_4(LOADS)
    assert "%u = load volatile i64, ptr addrspace(1) %first, align 8" in rewritten
    assert "%shared = load volatile i64, ptr addrspace(3) %at, align 8" in rewritten
    assert "%private = load i64, ptr %p, align 8" in rewritten  # private: registers
    assert "%kept = load atomic i64" in rewritten
    ll.parse_assembly(rewritten).verify()
    other_size = LOADS.replace("!{i32 4}", "!{i32 8}")
    assert loads_volatile_in_sub_groups_of_4(other_size) is other_size
    numbered = LOADS.replace("!{i32 4}", "!0") + "!0 = !{i32 4}\n"
    assert "load volatile i64" in loads_volatile_in_sub_groups_of_4(numbered)


SHARED_MIN_AS_INDEX = """
import dpnp
import numpy as np
import dpex_kernels as dk


@dk.kernel
def clamped_below(a, out):
    i = dk.get_global_id(0)
    out[i] = a[min(a[dk.get_group_id(0)], 7)]


@dk.kernel
def clamped_above(a, out):
    i = dk.get_global_id(0)
    out[i] = a[max(a[dk.get_group_id(0)], 24)]


@dk.kernel
def absolute(a, out):
    i = dk.get_global_id(0)
    out[i] = a[abs(np.int64(a[dk.get_group_id(0)])) % 32]


rng = np.random.default_rng(5)
for dtype in ("u4", "i4", "u2", "i8"):
    host = rng.integers(0, 32, 32).astype(dtype)
    a, out = dpnp.asarray(host), dpnp.zeros(64, dtype=dtype)
    shared = host[np.arange(64) // 8].astype(np.int64)
    clamped_below[dk.NdRange(64, 8)](a, out).wait()
    assert (dpnp.asnumpy(out) == host[np.minimum(shared, 7)]).all()
    clamped_above[dk.NdRange(64, 8)](a, out).wait()
    assert (dpnp.asnumpy(out) == host[np.maximum(shared, 24)]).all()
for dtype in ("i4", "i8"):
    host = rng.integers(-40, 40, 32).astype(dtype)
    a, out = dpnp.asarray(host), dpnp.zeros(64, dtype=dtype)
    absolute[dk.NdRange(64, 8)](a, out).wait()
    assert (dpnp.asnumpy(out) == host[np.abs(host[np.arange(64) // 8].astype(np.int64)) % 32]).all()
print("equal")
"""


def test_a_shared_min_as_an_index_loads_in_bounds():
    """Intel's CPU runtime (sub-groups of 8, AVX2 host) read `a[min(a[g], 7)]` far outside
    `a` and crashed the process; with the min as a compare and a select it reads as NumPy, and
    so does an index through an abs, rewritten the same way (the abs crashed only in the
    fuzzer's larger kernel, tests/fuzz_cases/uniform_abs_as_load_index.json)."""
    done = subprocess.run(
        [sys.executable, "-c", SHARED_MIN_AS_INDEX], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.strip() == "equal", done.stderr[-2000:]


MIN_MAX = """
define spir_kernel void @k(ptr addrspace(1) %a, i32 %n, i64 %m) {
entry:
  %x = load i32, ptr addrspace(1) %a, align 4
  %low = tail call i32 @llvm.umin.i32(i32 %x, i32 7)
  %wide = zext nneg i32 %x to i64
  %"high.1" = call noundef i64 @llvm.smax.i64(i64 -3, i64 %wide)
  %both = tail call i32 @llvm.smin.i32(i32 %low, i32 %n)
  %argument = tail call i64 @llvm.umax.i64(i64 %m, i64 5)
  %lanes = tail call <2 x i32> @llvm.umax.v2i32(<2 x i32> zeroinitializer, <2 x i32> splat (i32 1))
  %f = tail call float @llvm.minnum.f32(float 1.0, float 2.0)
  %size = call range(i32 0, -2147483648) i32 @llvm.abs.i32(i32 %x, i1 false)
  %other = call i32 @llvm.abs.i32(i32 %n, i1 true)
  store i32 %both, ptr addrspace(1) %a, align 4
  ret void
}

declare i32 @llvm.umin.i32(i32, i32)
declare i64 @llvm.smax.i64(i64, i64)
declare i32 @llvm.smin.i32(i32, i32)
declare i64 @llvm.umax.i64(i64, i64)
declare <2 x i32> @llvm.umax.v2i32(<2 x i32>, <2 x i32>)
declare float @llvm.minnum.f32(float, float)
declare i32 @llvm.abs.i32(i32, i1 immarg)
"""


def test_integer_min_max_and_abs_of_loaded_values_become_a_compare_and_a_select():
    rewritten = integer_min_max_abs_as_select(MIN_MAX)
    assert '%"dpex.order.1" = icmp ult i32 %x, 7' in rewritten
    assert '%low = select i1 %"dpex.order.1", i32 %x, i32 7' in rewritten
    assert '%"dpex.order.2" = icmp sgt i64 -3, %wide' in rewritten  # a cast of a loaded value
    assert '%"high.1" = select i1 %"dpex.order.2", i64 -3, i64 %wide' in rewritten
    body = rewritten.split("declare")[0]
    assert "@llvm.smin.i32(i32 %low, i32 %n)" in body  # neither operand was loaded
    assert "@llvm.umax.i64(i64 %m, i64 5)" in body
    assert "@llvm.umax.v2i32(" in body  # vectors are left alone
    assert "@llvm.minnum.f32(" in body  # floats too
    assert '%"dpex.absolute.3" = sub i32 0, %x' in rewritten  # an abs of a loaded value
    assert '%"dpex.order.3" = icmp slt i32 %x, 0' in rewritten
    assert '%size = select i1 %"dpex.order.3", i32 %"dpex.absolute.3", i32 %x' in rewritten
    assert "@llvm.abs.i32(i32 %n, i1 true)" in body  # %n was not loaded
    ll.parse_assembly(rewritten).verify()
    without = MIN_MAX.split("  %low")[0] + "  ret void\n}\n"
    assert integer_min_max_abs_as_select(without) is without


TWO_REWRITES = """
define spir_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %f) {
entry:
  %x = load i32, ptr addrspace(1) %a, align 4
  %y = call i32 @llvm.abs.i32(i32 %x, i1 false)
  store i32 %y, ptr addrspace(1) %a, align 4
  %old = atomicrmw fsub ptr addrspace(1) %f, float 1.0 seq_cst, align 4
  ret void
}

declare i32 @llvm.abs.i32(i32, i1 immarg)
"""


def test_rewrites_name_their_new_values_apart():
    """Each rewrite's new values have names of their own: the abs's negation once took the
    float atomics' name and the module did not parse (fuzzer case 1218003714)."""
    rewritten = integer_min_max_abs_as_select(float_atomic_adds_of_no_negation(TWO_REWRITES))
    assert "@llvm.abs.i32(i32 %x" not in rewritten.split("declare")[0]
    assert "atomicrmw fadd" in rewritten
    ll.parse_assembly(rewritten).verify()


def _chosen_element(a, out):
    i = dk.get_global_id(0)
    p = dk.private.array(4, dk.int32)
    for q in range(4):
        p[q] = q + i
    v = p[a[i] % 4]
    p[3 if i > 0 else 0] = v + 1
    w = p[3 if v > 20 else 1]
    p[2 if w > 30 else 1] = v + w
    out[i] = p[0] * 1000 + p[1] * 100 + p[2] * 10 + p[3]


def _chosen_element_reference(a: np.ndarray) -> np.ndarray:
    out = []
    for i, value in enumerate(a):
        p = [q + i for q in range(4)]
        v = p[value % 4]
        p[3 if i > 0 else 0] = v + 1
        w = p[3 if v > 20 else 1]
        p[2 if w > 30 else 1] = v + w
        out.append(p[0] * 1000 + p[1] * 100 + p[2] * 10 + p[3])
    return np.array(out)


@pytest.mark.parametrize("sub_group_size", [None, 4, 8, 16])
def test_a_store_at_a_chosen_element_of_a_private_array_lands(sub_group_size):
    """Vectorised for sub-groups of 4, 8 (the runtime's own choice here) or 16,
    `p[3 if i > 0 else 0] = v` after a load of `p` at a computed index left `p` unchanged in
    every work-item."""
    host = np.random.default_rng(7).integers(0, 100, 64)
    out = dpnp.zeros(64, dtype=np.int64)
    kernel = dk.kernel(_chosen_element, sub_group_size=sub_group_size)
    kernel[dk.NdRange(64, 16)](dpnp.asarray(host), out).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(out), _chosen_element_reference(host))


CHOSEN = """
define spir_kernel void @k(ptr addrspace(1) %out, ptr addrspace(1) %other, i1 %c, i64 %i) {
entry:
  %p = alloca [4 x i32], align 4
  %third = getelementptr inbounds nuw i8, ptr %p, i64 12
  %s = select i1 %c, ptr %p, ptr %third
  store i32 1, ptr %s, align 4
  %e = getelementptr i32, ptr %s, i64 %i
  store i32 2, ptr %e, align 4, !nontemporal !0
  store i32 3, ptr %third, align 4
  %g = select i1 %c, ptr addrspace(1) %out, ptr addrspace(1) %other
  store i32 4, ptr addrspace(1) %g, align 4
  br label %next

use:
  %h = getelementptr i32, ptr %f, i64 1
  store i32 6, ptr %h, align 4
  ret void

next:
  %f = phi ptr [ %p, %entry ]
  store i32 5, ptr %f, align 4
  br label %use
}
!0 = !{i32 1}
"""


def test_stores_through_chosen_private_pointers_become_volatile():
    rewritten = stores_through_chosen_private_pointers_volatile(CHOSEN)
    assert "store volatile i32 1, ptr %s, align 4" in rewritten
    assert (
        "store volatile i32 2, ptr %e, align 4, !nontemporal !0" in rewritten
    )  # computed from one
    assert "store i32 3, ptr %third, align 4" in rewritten  # a fixed element
    assert "store i32 4, ptr addrspace(1) %g" in rewritten  # global memory
    assert "store volatile i32 5, ptr %f, align 4" in rewritten
    assert "store volatile i32 6, ptr %h, align 4" in rewritten  # a block before the phi's
    ll.parse_assembly(rewritten).verify()
    unchosen = (
        CHOSEN.replace("ptr %s, align 4", "ptr %third, align 4")
        .replace("ptr %s, i64", "ptr %p, i64")
        .replace("  store i32 5, ptr %f, align 4\n", "")
        .replace("  store i32 6, ptr %h, align 4\n", "")
    )
    assert stores_through_chosen_private_pointers_volatile(unchosen) is unchosen


@dk.func
def _add_by_exchange(ga, k, x):
    """ga[k] += x in a compare-exchange loop."""
    seen = ga[k]
    while True:
        old = dk.atomic.compare_exchange(ga, k, seen, seen + x)
        if old == seen:
            break
        seen = old


def _flag_beside_exchange_loops(ga, flags, out):
    """`v` set in one arm; each arm adds to its own element of `ga` in a compare-exchange loop."""
    i = dk.get_global_id(0)
    v = 100 + dk.get_group_id(0)
    if flags[i] > 0:
        v = 7
        _add_by_exchange(ga, 0, 1)
    else:
        _add_by_exchange(ga, 1, 2)
    out[i] = v


@pytest.mark.parametrize("sub_group_size", [None, 16], ids=param_id)
@pytest.mark.parametrize("dtype", ["int32", "float32"], ids=param_id)
def test_values_set_beside_compare_exchange_loops(dtype, sub_group_size):
    """Intel's CPU runtime gave each sub-group its first work-item's `v` at the join of two
    compare-exchange loops; through a private slot every work-item keeps its own."""
    kernel = dk.kernel(sub_group_size=sub_group_size)(_flag_beside_exchange_loops)
    rng = np.random.default_rng(7)
    for _ in range(5):
        flags = rng.integers(0, 2, 64)
        ga, out = dpnp.zeros(2, dtype=dtype), dpnp.zeros(64, dtype=np.int64)
        kernel[dk.NdRange(64, 16)](ga, dpnp.asarray(flags), out).wait()
        np.testing.assert_array_equal(
            dpnp.asnumpy(out), np.where(flags > 0, 7, 100 + np.arange(64) // 16)
        )
        np.testing.assert_array_equal(dpnp.asnumpy(ga), [flags.sum(), 2 * (64 - flags.sum())])


EXCHANGE_LOOPS = """
define spir_kernel void @k(ptr addrspace(1) %a, i1 %c, i64 %g) {
entry:
  br i1 %c, label %left, label %right

left:
  %first = load i32, ptr addrspace(1) %a, align 4
  br label %loop

loop:
  %seen = phi i32 [ %first, %left ], [ %old, %loop ]
  %pair = cmpxchg ptr addrspace(1) %a, i32 %seen, i32 1 monotonic monotonic, align 4
  %old = extractvalue { i32, i1 } %pair, 0
  %done = extractvalue { i32, i1 } %pair, 1
  br i1 %done, label %join, label %loop

right:
  br label %join

join:
  %v = phi i64 [ 7, %loop ], [ %g, %right ]
  %flag = phi i1 [ true, %loop ], [ false, %right ]
  %w = phi double [ 1.0, %loop ], [ 2.0, %right ]
  %gap = add i64 %v, 1
  store i64 %gap, ptr addrspace(1) %a, align 8
  ret void
}
"""


def test_phis_after_compare_exchange_loops_go_through_memory():
    rewritten = phis_after_compare_exchange_loops_through_memory(EXCHANGE_LOOPS)
    body = rewritten.split("join:")[1]
    assert '%v = load volatile i64, ptr %"dpex.slot.1", align 8' in body
    assert '%w = load volatile double, ptr %"dpex.slot.2", align 8' in body
    assert "%flag = phi i1" in body  # an i1 cannot be stored in SPIR-V: left alone
    assert body.index("%flag = phi") < body.index("load volatile")  # phis stay first
    loop = rewritten.split("loop:")[1].split("right:")[0]
    assert "%seen = phi i32" in loop  # the loop's own phi stays
    assert 'store volatile i64 7, ptr %"dpex.slot.1"' in loop
    right = rewritten.split("right:")[1].split("join:")[0]
    assert 'store volatile i64 %g, ptr %"dpex.slot.1"' in right
    assert right.index("store volatile") < right.index("br label %join")
    ll.parse_assembly(rewritten).verify()
    straight = EXCHANGE_LOOPS.replace("br i1 %done, label %join, label %loop", "br label %join")
    straight = straight.replace("[ %first, %left ], [ %old, %loop ]", "[ %first, %left ]")
    assert phis_after_compare_exchange_loops_through_memory(straight) is straight  # no loop
