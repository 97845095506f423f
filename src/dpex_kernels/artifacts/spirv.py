"""Reading SPIR-V modules: their words, their instructions, and what their code asks of a device.

The back end reads the facts of the code it emits here (CodeFacts: the aspects its types need,
the bytes of its work-group local variables), so the launch never looks into IR again.
Numba-free.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator

from .kernel import CodeFacts

MAGIC = 0x07230203
HEADER_WORDS = 5

OP_TYPE_INT = 21
OP_TYPE_FLOAT = 22
OP_TYPE_VECTOR = 23
OP_TYPE_ARRAY = 28
OP_TYPE_STRUCT = 30
OP_TYPE_POINTER = 32
OP_CONSTANT = 43
OP_VARIABLE = 59
OP_FUNCTION = 54
OP_FUNCTION_PARAMETER = 55
OP_FUNCTION_END = 56
OP_ENTRY_POINT = 15
OP_LOAD = 61
OP_STORE = 62
OP_COPY_MEMORY, OP_COPY_MEMORY_SIZED = 63, 64
OP_ATOMIC_STORE = 228
#: Atomics that write their pointer operand (word 3): exchange, compare-exchange (strong and
#: weak), increment, decrement, add, sub, min, max, and, or, xor, and the float extensions.
_WRITING_ATOMICS = {229, 230, 231, *range(232, 243), 5614, 5615, 6035}
#: Instructions whose result is a value read from memory: taint stops there.
_VALUE_READS = {OP_LOAD, 227}  # OpLoad, OpAtomicLoad
OP_FUNCTION_CALL, OP_EXT_INST = 57, 12
#: OpenCL.std instructions that only read through a pointer operand: vloadn, vload_half,
#: vload_halfn, vloada_halfn, printf, prefetch (the others that take pointers write them).
_READING_EXT_INSTS = {171, 173, 174, 179, 184, 185}

STORAGE_WORKGROUP = 4
#: Capabilities that need a device aspect: Float16 -> fp16, Float64 -> fp64.
_CAPABILITY_ASPECTS = {9: "fp16", 10: "fp64"}
OP_CAPABILITY = 17


def words(spirv: bytes) -> array | None:
    """The module's 32-bit words in this machine's order, or None if it is not SPIR-V."""
    if len(spirv) < 4 * HEADER_WORDS or len(spirv) % 4:
        return None
    found = array("I", spirv)
    if sys.byteorder != "little":  # SPIR-V from LLVM's back end is little-endian
        found.byteswap()
    return found if found[0] == MAGIC else None


def instructions(module: array) -> Iterator[tuple[int, int, int]]:
    """(start, word count, opcode) of every instruction after the header; ValueError for an
    instruction of zero words or one that runs past the module's end."""
    position = HEADER_WORDS
    while position < len(module):
        count, opcode = module[position] >> 16, module[position] & 0xFFFF
        if count == 0 or position + count > len(module):
            raise ValueError(f"malformed SPIR-V: an instruction of {count} words at {position}")
        yield position, count, opcode
        position += count


def code_facts(spirv: bytes) -> CodeFacts:
    """The device aspects a module's capabilities need and its work-group variables' bytes."""
    module = words(spirv)
    if module is None:
        raise ValueError("not a SPIR-V module")
    aspects: set[str] = set()
    sizes: dict[int, int] = {}  # type id -> bytes
    constants: dict[int, int] = {}  # integer constant id -> value
    pointees: dict[int, int] = {}  # Workgroup pointer type id -> pointee type id
    local_memory = 0
    for start, count, opcode in instructions(module):
        operands = module[start + 1 : start + count]
        if opcode == OP_FUNCTION:
            break  # types, constants and module variables come before every function
        if opcode == OP_CAPABILITY and operands[0] in _CAPABILITY_ASPECTS:
            aspects.add(_CAPABILITY_ASPECTS[operands[0]])
        elif opcode in (OP_TYPE_INT, OP_TYPE_FLOAT):
            sizes[operands[0]] = operands[1] // 8
        elif opcode == OP_TYPE_VECTOR:
            sizes[operands[0]] = sizes.get(operands[1], 0) * operands[2]
        elif opcode == OP_TYPE_ARRAY:
            sizes[operands[0]] = sizes.get(operands[1], 0) * constants.get(operands[2], 0)
        elif opcode == OP_TYPE_STRUCT:
            sizes[operands[0]] = sum(sizes.get(member, 0) for member in operands[1:])
        elif opcode == OP_TYPE_POINTER and operands[1] == STORAGE_WORKGROUP:
            pointees[operands[0]] = operands[2]
        elif opcode == OP_CONSTANT and len(operands) >= 3:
            value = operands[2] | (operands[3] << 32 if len(operands) > 3 else 0)
            constants[operands[1]] = value
        elif opcode == OP_VARIABLE and operands[2] == STORAGE_WORKGROUP:
            local_memory += sizes.get(pointees.get(operands[0], -1), 0)
    return CodeFacts(tuple(sorted(aspects)), local_memory, written_arguments(module))


def written_arguments(module: array) -> tuple[int, ...]:
    """The entry point's pointer parameters (by position) through which its code may write
    memory.

    Every value computed from a pointer parameter (address arithmetic, casts, phis, selects)
    points where the parameter does; a store or a writing atomic through such a value, a memory
    copy into it, or a call given it (anything not inlined, conservatively) writes the
    parameter's memory, and so does storing such a value anywhere (where it goes cannot be
    followed). Integer parameters (an array's shape, a scalar) point nowhere: an index computed
    from them, or their value stored (debug mode's error record keeps an index and a bound),
    writes none of them. Values loaded from memory start afresh."""
    pointer_types = {
        module[start + 1] for start, _, opcode in instructions(module) if opcode == OP_TYPE_POINTER
    }
    body = _entry_function(module)
    derived: dict[int, frozenset[int]] = {}  # id -> the pointer parameters it is computed from
    for position, (_, operands) in enumerate(i for i in body if i[0] == OP_FUNCTION_PARAMETER):
        if operands[0] in pointer_types:
            derived[operands[1]] = frozenset({position})
    changed = True
    while changed:  # again until settled: a phi may name a value defined further down
        changed = False
        for opcode, operands in body:
            if opcode in _VALUE_READS or opcode == OP_FUNCTION_PARAMETER or len(operands) < 3:
                continue
            # An OpExtInst's set and instruction number are no values (the number would read
            # as the id of whatever value has that number).
            inputs = operands[4:] if opcode == OP_EXT_INST else operands[2:]
            sources = frozenset().union(*(derived.get(word, ()) for word in inputs))
            if sources and not sources <= derived.get(operands[1], frozenset()):
                derived[operands[1]] = sources | derived.get(operands[1], frozenset())
                changed = True
    written: set[int] = set()

    def writes(*ids: int) -> None:
        for word in ids:
            written.update(derived.get(word, ()))

    for opcode, operands in body:
        if opcode == OP_STORE:
            writes(operands[0], operands[1])  # through the pointer, or the pointer escapes
        elif opcode in (OP_COPY_MEMORY, OP_COPY_MEMORY_SIZED):
            writes(operands[0])
        elif opcode == OP_ATOMIC_STORE:
            writes(operands[0], operands[3])
        elif opcode in _WRITING_ATOMICS:
            writes(operands[2])
        elif opcode == OP_FUNCTION_CALL:  # a callee that was not inlined may write
            writes(*operands[3:])
        elif opcode == OP_EXT_INST and operands[3] not in _READING_EXT_INSTS:
            writes(*operands[4:])
    return tuple(sorted(written))


def _entry_function(module: array) -> list[tuple[int, array]]:
    """(opcode, operands) of every instruction of the module's first entry point's function."""
    entry, body, inside = None, [], False
    for start, count, opcode in instructions(module):
        operands = module[start + 1 : start + count]
        if opcode == OP_ENTRY_POINT and entry is None:
            entry = operands[1]
        elif opcode == OP_FUNCTION:
            inside = operands[1] == entry
        elif inside and opcode == OP_FUNCTION_END:
            break
        elif inside:
            body.append((opcode, operands))
    return body
