"""Reading SPIR-V modules: their words, their instructions, their kernels and what their code
asks of a device.

The back end reads the facts of the code it emits here (CodeFacts: the aspects its types need,
the bytes of its work-group local variables), so the launch never looks into IR again. A
module read from a file (a bundle, a cache entry) is checked here before the runtime sees it:
the runtime's own reader crashes the process on a malformed one (docs/security.md).
Numba-free.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from ..types.params import LOCAL_MEMORY, POINTER
from .kernel import CodeFacts

MAGIC = 0x07230203
HEADER_WORDS = 5
#: The newest SPIR-V version a module may have (1.6), and the spec's least id bound limit.
MAX_VERSION = 0x00010600
MAX_ID_BOUND = 0x3FFFFF

OP_NAME = 5
OP_CAPABILITY = 17
OP_ENTRY_POINT = 15
OP_EXECUTION_MODE = 16
OP_TYPE_VOID = 19
OP_TYPE_INT = 21
OP_TYPE_FLOAT = 22
OP_TYPE_VECTOR = 23
OP_TYPE_ARRAY = 28
OP_TYPE_STRUCT = 30
OP_TYPE_POINTER = 32
OP_CONSTANT = 43
OP_FUNCTION = 54
OP_FUNCTION_PARAMETER = 55
OP_FUNCTION_END = 56
OP_VARIABLE = 59
OP_DECORATE = 71
OP_LABEL = 248
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

EXECUTION_MODEL_KERNEL = 6
MODE_SUBGROUP_SIZE = 35
DECORATION_LINKAGE = 41
STORAGE_WORKGROUP = 4
STORAGE_CROSS_WORKGROUP = 5
#: Capabilities that need a device aspect: Float16 -> fp16, Float64 -> fp64.
_CAPABILITY_ASPECTS = {9: "fp16", 10: "fp64"}
#: The fewest words of each instruction this reader looks into.
_MIN_WORDS = {
    OP_NAME: 3,
    OP_DECORATE: 3,
    OP_CAPABILITY: 2,
    OP_ENTRY_POINT: 4,
    OP_EXECUTION_MODE: 3,
    OP_TYPE_VOID: 2,
    OP_TYPE_INT: 4,
    OP_TYPE_FLOAT: 3,
    OP_TYPE_VECTOR: 4,
    OP_TYPE_ARRAY: 4,
    OP_TYPE_STRUCT: 2,
    OP_TYPE_POINTER: 4,
    OP_FUNCTION: 5,
    OP_FUNCTION_PARAMETER: 3,
    OP_VARIABLE: 4,
}
#: What of a function's instructions this reader reads: its signature, blocks and end.
_FUNCTION_STRUCTURE = frozenset((OP_FUNCTION, OP_FUNCTION_PARAMETER, OP_FUNCTION_END, OP_LABEL))
_SIZE_CAP = 2**40  # type sizes stop growing here: a hostile module's nested arrays stay cheap

#: The SPIR-V type of a kernel argument of each slot kind (types/params.py).
ARGUMENT_TYPES = {
    POINTER: "a global pointer",
    LOCAL_MEMORY: f"a pointer of storage class {STORAGE_WORKGROUP}",
    "bool": "i8",
    "int8": "i8",
    "uint8": "i8",
    "int16": "i16",
    "uint16": "i16",
    "int32": "i32",
    "uint32": "i32",
    "int64": "i64",
    "uint64": "i64",
    "float32": "f32",
    "float64": "f64",
}


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


class Kernel(NamedTuple):
    """One kernel entry point of a module, as a loader needs to know it."""

    #: Each parameter's type: "a global pointer", "i64", "f32", ...
    arguments: tuple[str, ...]
    #: Its SubgroupSize execution mode; 0 without one.
    sub_group_size: int


class Module(NamedTuple):
    """What one pass over a module finds: its kernels, by entry point name, and its facts."""

    kernels: dict[str, Kernel]
    facts: CodeFacts


def _header(module: array) -> None:
    version, bound, schema = module[1], module[3], module[4]
    if version & 0xFF0000FF or not 0x10000 <= version <= MAX_VERSION:
        raise ValueError(f"its version word {version:#010x} is no SPIR-V version from 1.0 to 1.6")
    if not 0 < bound <= MAX_ID_BOUND:
        raise ValueError(f"its id bound {bound} is not from 1 to {MAX_ID_BOUND}")
    if schema:
        raise ValueError(f"its schema word is {schema}, not 0")


def _literal(spirv: bytes, start: int, end: int) -> bytes:
    """The bytes of the literal string in words `start` to `end` (exclusive), NUL included."""
    literal = spirv[4 * start : 4 * end]
    found = literal.find(b"\0")
    return literal if found < 0 else literal[: found + 1]


def _entry_point(spirv: bytes, start: int, count: int) -> str:
    """The name of the OpEntryPoint at `start`: a literal string of UTF-8, NUL-terminated and
    padded with NULs to a whole word, so that every reader reads the same name."""
    literal = _literal(spirv, start + 3, start + count)
    padded = spirv[4 * (start + 3) : 4 * (start + 3) + -(-len(literal) // 4) * 4]
    if not literal.endswith(b"\0") or padded.rstrip(b"\0") != literal[:-1]:
        raise ValueError(f"the name of the entry point at word {start} is not a padded string")
    try:
        return literal[:-1].decode()
    except UnicodeDecodeError:
        raise ValueError(f"the name of the entry point at word {start} is not UTF-8") from None


def _names_agree(spirv: bytes, entries: dict[str, int], names: list, linkage: set) -> None:
    """Every name the runtime may call a kernel by is its entry point's: the runtime names a
    kernel's function by its OpName, and a name or linkage name that another id shares, or
    that differs from the entry point's, leaves the runtime without the kernel (it crashed).
    `names`: (target id, first word, end word) of each OpName."""
    for name, function in entries.items():
        text = name.encode() + b"\0"
        padded = text + b"\0" * (-len(text) % 4)
        if text in linkage:
            raise ValueError(f"a linkage name is that of its kernel '{name[:80]}'")
        for target, start, end in names:
            if target == function and spirv[4 * start : 4 * end] != padded:
                raise ValueError(f"its kernel '{name[:80]}' has another OpName")
            if target != function and spirv.startswith(text, 4 * start):
                raise ValueError(f"another id than its kernel has the OpName '{name[:80]}'")


def read_module(spirv: bytes) -> Module:
    """Its kernels and facts, if `spirv` is a well-formed module: header, every instruction
    within the module and long enough for what is read of it, every function ended, every
    entry point a kernel with a body that returns void; ValueError saying what is wrong."""
    module = words(spirv)
    if module is None:
        raise ValueError("it is not SPIR-V (no magic number, or not a whole number of words)")
    _header(module)
    types: dict[int, str] = {}  # type id -> what an argument of it is called
    entries: dict[str, int] = {}  # entry point name -> function id
    sub_groups: dict[int, int] = {}  # function id -> SubgroupSize
    defined: dict[int, tuple[str, tuple[str, ...]]] = {}  # function id -> (returns, arguments)
    function, returns, arguments, body = None, "", [], False  # the function being read
    aspects: set[str] = set()
    sizes: dict[int, int] = {}  # type id -> bytes
    constants: dict[int, int] = {}  # integer constant id -> value
    pointees: dict[int, int] = {}  # Workgroup pointer type id -> pointee type id
    local_memory = 0
    names: list[tuple[int, int, int]] = []  # OpName: target id, its literal's words
    linkage: set[bytes] = set()  # the names of LinkageAttributes decorations, NUL included
    position, end = HEADER_WORDS, len(module)
    while position < end:  # instructions(), inlined: this loop is most of a cache hit's check
        start, count, opcode = position, module[position] >> 16, module[position] & 0xFFFF
        if count == 0 or position + count > end:
            raise ValueError(f"an instruction of {count} words at word {start} leaves the module")
        position += count
        if function is not None and opcode not in _FUNCTION_STRUCTURE:
            continue  # the body's instructions: spirv_tools.py checks them where it can
        if count < _MIN_WORDS.get(opcode, 1):
            raise ValueError(f"the instruction at word {start} (opcode {opcode}) is too short")
        if opcode == OP_LABEL:  # the commonest first
            if function is None:
                raise ValueError(f"a block begins outside a function at word {start}")
            body = True
        elif opcode == OP_NAME:
            names.append((module[start + 1], start + 2, start + count))
        elif opcode == OP_DECORATE and module[start + 2] == DECORATION_LINKAGE:
            linkage.add(_literal(spirv, start + 3, start + count))
        elif opcode == OP_CONSTANT and count >= 4:
            value = module[start + 3] | (module[start + 4] << 32 if count > 4 else 0)
            constants[module[start + 2]] = value
        elif opcode == OP_FUNCTION:
            if function is not None:
                raise ValueError(f"a function begins inside another at word {start}")
            function, returns, arguments, body = (
                module[start + 2],
                types.get(module[start + 1], ""),
                [],
                False,
            )
        elif opcode == OP_FUNCTION_PARAMETER:
            if function is None or body:
                raise ValueError(f"a function parameter stands outside a signature at word {start}")
            arguments.append(types.get(module[start + 1], "another type"))
        elif opcode == OP_FUNCTION_END:
            if function is None:
                raise ValueError(f"a function ends that never began, at word {start}")
            if body:
                defined[function] = (returns, tuple(arguments))
            function = None
        elif opcode == OP_ENTRY_POINT:
            name = _entry_point(spirv, start, count)
            if module[start + 1] != EXECUTION_MODEL_KERNEL:
                raise ValueError(f"its entry point '{name[:80]}' is not a kernel")
            if name in entries:
                raise ValueError(f"two entry points are named '{name[:80]}'")
            entries[name] = module[start + 2]
        elif opcode == OP_EXECUTION_MODE and module[start + 2] == MODE_SUBGROUP_SIZE:
            sub_groups[module[start + 1]] = module[start + 3] if count > 3 else 0
        elif opcode == OP_CAPABILITY and module[start + 1] in _CAPABILITY_ASPECTS:
            aspects.add(_CAPABILITY_ASPECTS[module[start + 1]])
        elif opcode == OP_TYPE_VOID:
            types[module[start + 1]] = "void"
        elif opcode in (OP_TYPE_INT, OP_TYPE_FLOAT):
            width = module[start + 2]
            types[module[start + 1]] = f"{'i' if opcode == OP_TYPE_INT else 'f'}{width}"
            sizes[module[start + 1]] = min(width // 8, _SIZE_CAP)
        elif opcode == OP_TYPE_VECTOR:
            size = sizes.get(module[start + 2], 0) * module[start + 3]
            sizes[module[start + 1]] = min(size, _SIZE_CAP)
        elif opcode == OP_TYPE_ARRAY:
            size = sizes.get(module[start + 2], 0) * constants.get(module[start + 3], 0)
            sizes[module[start + 1]] = min(size, _SIZE_CAP)
        elif opcode == OP_TYPE_STRUCT:
            size = sum(sizes.get(member, 0) for member in module[start + 2 : start + count])
            sizes[module[start + 1]] = min(size, _SIZE_CAP)
        elif opcode == OP_TYPE_POINTER:
            storage = module[start + 2]
            types[module[start + 1]] = (
                ARGUMENT_TYPES[POINTER]
                if storage == STORAGE_CROSS_WORKGROUP
                else f"a pointer of storage class {storage}"
            )
            if storage == STORAGE_WORKGROUP:
                pointees[module[start + 1]] = module[start + 3]
        elif opcode == OP_VARIABLE and module[start + 3] == STORAGE_WORKGROUP:
            local_memory += sizes.get(pointees.get(module[start + 1], -1), 0)
    if function is not None:
        raise ValueError("its last function has no end: the module is cut short")
    _names_agree(spirv, entries, names, linkage)
    kernels = {}
    for name, function in entries.items():
        if function not in defined:
            raise ValueError(f"its entry point '{name[:80]}' names no function with a body")
        returns, arguments = defined[function]
        if returns != "void":
            raise ValueError(f"its entry point '{name[:80]}' does not return void")
        kernels[name] = Kernel(arguments, sub_groups.get(function, 0))
    facts = CodeFacts(
        tuple(sorted(aspects)), min(local_memory, _SIZE_CAP), written_arguments(module)
    )
    return Module(kernels, facts)


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


def code_facts(spirv: bytes) -> CodeFacts:
    """The device aspects a module's capabilities need, its work-group variables' bytes and
    the parameters its kernel writes through."""
    return read_module(spirv).facts


def check_kernel(spirv: bytes, symbol: str, kinds: Sequence[str], sub_group_size: int) -> CodeFacts:
    """The facts of `spirv` if it is a well-formed module (read_module) whose kernel `symbol`
    takes arguments of the slot `kinds` (types/params.py) and requires `sub_group_size`;
    ValueError saying what differs."""
    module = read_module(spirv)
    kernel = module.kernels.get(symbol)
    if kernel is None:
        found = ", ".join(f"'{name[:80]}'" for name in sorted(module.kernels)[:3]) or "none"
        raise ValueError(f"it has no entry point '{symbol}' (its kernels: {found})")
    expected = [ARGUMENT_TYPES.get(kind, f"an unknown kind {kind!r}") for kind in kinds]
    if len(kernel.arguments) != len(expected):
        raise ValueError(
            f"its kernel '{symbol}' takes {len(kernel.arguments)} arguments where the "
            f"description's parameters make {len(expected)}"
        )
    for position, (found, wanted) in enumerate(zip(kernel.arguments, expected)):
        if found != wanted:
            raise ValueError(
                f"argument {position} of its kernel '{symbol}' is {found} where the "
                f"description's parameters make it {wanted}"
            )
    if kernel.sub_group_size != sub_group_size:
        raise ValueError(
            f"its kernel '{symbol}' requires sub-groups of {kernel.sub_group_size} where the "
            f"description's options say {sub_group_size}"
        )
    return module.facts
