"""Fixes and checks for LLVM 22's SPIR-V back end, which now and then numbers basic blocks
twice, and with loop strength reduction can mix integer widths in one instruction.

Measured here: for the same input module, between 1 and 9 emissions in 10 give OpLabel ids
that collide with the module's first type ids ("Id 2 is defined more than once"); the SYCL
runtime can crash loading such a module. The repair gives every OpLabel a fresh id past the
module's bound and rewrites the operands that name labels: branch targets, phi parents,
merge blocks and switch targets. Names of labels that collided with types are dropped (debug
only); an emission with a label of a function's id is redone, as the name is either's.
"""

from __future__ import annotations

import sys
from array import array

from ...artifacts.spirv import instructions as _instructions
from ...artifacts.spirv import words as _words

OP_NAME = 5
OP_TYPE_FIRST, OP_TYPE_LAST = 19, 38  # OpTypeVoid .. OpTypePipeStorage-era types: result = w1
OP_TYPE_INT = 21
OP_FUNCTION = 54
OP_PHI = 245
OP_LOOP_MERGE = 246
OP_SELECTION_MERGE = 247
OP_LABEL = 248
OP_BRANCH = 249
OP_BRANCH_CONDITIONAL = 250
OP_SWITCH = 251
#: Module-level opcodes whose result id is word 2 (word 1 is the result type).
_TYPED_MODULE_RESULTS = {1, 41, 42, 43, 44, 45, 46, 48, 49, 50, 51, 52, 59}
#: Module-level opcodes whose result id is word 1.
_UNTYPED_MODULE_RESULTS = {7, 11, 73}


class AmbiguousLabels(ValueError):
    """Two blocks of one function got the same label id: branches to it cannot be told apart,
    so the emission cannot be repaired, only redone."""


def repair_label_ids(spirv: bytes) -> bytes:
    """`spirv` with every OpLabel renumbered to a fresh id (see the module docstring).

    Raises AmbiguousLabels for an emission whose labels collide with each other.
    """
    words = _words(spirv)
    if words is None:
        return spirv
    module_ids: set[int] = set()
    int_widths: dict[int, int] = {}
    value_types: dict[int, int] = {}
    labels: dict[tuple[int, int], int] = {}  # (function index, old id) -> new id
    functions: set[int] = set()  # the functions' ids
    bound = words[3]
    function = -1
    for start, count, opcode in _instructions(words):
        if opcode == OP_FUNCTION:
            function += 1
            functions.add(words[start + 2])
        if function < 0:
            if OP_TYPE_FIRST <= opcode <= OP_TYPE_LAST:
                module_ids.add(words[start + 1])
                if opcode == OP_TYPE_INT:
                    int_widths[words[start + 1]] = words[start + 2]
            elif opcode in _TYPED_MODULE_RESULTS:
                module_ids.add(words[start + 2])
            elif opcode in _UNTYPED_MODULE_RESULTS:
                module_ids.add(words[start + 1])
        elif opcode == OP_LABEL:
            key = (function, words[start + 1])
            if key in labels:
                raise AmbiguousLabels(f"label id {key[1]} defined twice in function {function}")
            labels[key] = bound
            bound += 1
        elif count >= 3:  # [result type, result id, ...]: the first sighting is the definition
            value_types.setdefault(words[start + 2], words[start + 1])
    if not labels:
        return spirv
    all_old = {old for (_, old) in labels}

    def rename(position: int, fn: int) -> None:
        words[position] = labels.get((fn, words[position]), words[position])

    kept = array("I", words[:5])
    kept[3] = bound
    function = -1
    for start, count, opcode in _instructions(words):
        if opcode == OP_FUNCTION:
            function += 1
        if opcode == OP_NAME and words[start + 1] in all_old:
            target = words[start + 1]
            if target in module_ids:
                continue  # a collided label's name: it cannot be told from the type's
            if target in functions:  # a kernel's name could go to the block (fuzz case 1214003845)
                raise AmbiguousLabels(f"label id {target} is also a function's, which is named")
            owners = [fn for (fn, old) in labels if old == target]
            words[start + 1] = labels[(owners[0], target)]
        elif function >= 0:
            if opcode in (OP_LABEL, OP_BRANCH, OP_SELECTION_MERGE):
                rename(start + 1, function)
            elif opcode == OP_BRANCH_CONDITIONAL:
                rename(start + 2, function)
                rename(start + 3, function)
            elif opcode == OP_LOOP_MERGE:
                rename(start + 1, function)
                rename(start + 2, function)
            elif opcode == OP_PHI:
                for position in range(start + 4, start + count, 2):
                    rename(position, function)
            elif opcode == OP_SWITCH:
                rename(start + 2, function)
                width = int_widths.get(value_types.get(words[start + 1], 0), 32)
                step = 1 + (2 if width > 32 else 1)
                for position in range(start + 3 + step - 1, start + count, step):
                    rename(position, function)
        kept.extend(words[start : start + count])
    if sys.byteorder != "little":
        kept.byteswap()
    return kept.tobytes()


#: Integer arithmetic whose operands must have its result's width: OpIAdd, OpISub, OpIMul,
#: OpUDiv, OpSDiv, OpUMod, OpSRem, OpSMod, OpBitwiseOr, OpBitwiseXor, OpBitwiseAnd.
_SAME_WIDTH_ARITHMETIC = {128, 130, 132, 134, 135, 137, 138, 139, 197, 198, 199}
#: Opcodes whose word 1 is the result type and word 2 the result id, among those that give
#: integer values: the above, and OpUndef, OpExtInst, OpConstant, OpConstantNull,
#: OpSpecConstant, OpFunctionParameter, OpFunctionCall, OpLoad, OpCompositeExtract, the
#: conversions, OpSNegate, OpSelect, the shifts, OpNot, the atomics that return a value, OpPhi.
_TYPED_RESULTS = _SAME_WIDTH_ARITHMETIC | {
    1, 12, 43, 46, 50, 55, 57, 61, 81, 109, 110, 113, 114, 117, 124, 126, 169,
    194, 195, 196, 200, 227, 229, 230, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242,
    245,
}  # fmt: skip


def mixed_integer_widths(spirv: bytes) -> bool:
    """Whether an integer arithmetic or bitwise operation has an operand of another width
    than its result: invalid SPIR-V, which the runtime's build refuses with an empty message.
    LLVM's loop strength reduction led the back end to write such a multiply (fuzz case
    20261265784569: an i32 induction variable times the 64-bit global id)."""
    words = _words(spirv)
    if words is None:
        return False
    int_widths: dict[int, int] = {}
    value_types: dict[int, int] = {}
    for start, count, opcode in _instructions(words):
        if opcode == OP_TYPE_INT:
            int_widths[words[start + 1]] = words[start + 2]
        elif opcode in _TYPED_RESULTS and count >= 3:
            value_types[words[start + 2]] = words[start + 1]
        if opcode not in _SAME_WIDTH_ARITHMETIC or count != 5:
            continue
        width = int_widths.get(words[start + 1])  # None: not an integer (a vector, say)
        for operand in (words[start + 3], words[start + 4]):
            found = int_widths.get(value_types.get(operand, 0))
            if width is not None and found is not None and found != width:
                return True
    return False


def phi_integer_widths(spirv: bytes) -> set[int]:
    """The widths of the integers the module's OpPhi instructions give."""
    words = _words(spirv)
    if words is None:
        return set()
    int_widths: dict[int, int] = {}
    widths = set()
    for start, _count, opcode in _instructions(words):
        if opcode == OP_TYPE_INT:
            int_widths[words[start + 1]] = words[start + 2]
        elif opcode == OP_PHI and words[start + 1] in int_widths:
            widths.add(int_widths[words[start + 1]])
    return widths
