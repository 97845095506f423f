"""Rewrites of optimised LLVM IR that keep LLVM 22's SPIR-V back end and Intel's OpenCL CPU
runtime from mistranslating or miscompiling it.

Each rewrite gives the same results bit for bit unless its docstring says otherwise, and
returns its input unchanged, the same object, when there is nothing to rewrite. The back end's
"rewrite" stage applies those whose record (workarounds.py) applies to the target, just before
SPIR-V emission, after LLVM's optimisation, which would fold them back.
"""

from __future__ import annotations

import re

# A constant address: `getelementptr <flags> (i8, ptr addrspace(N) @global, i64 <offset>)`.
_CONSTANT_GEP = re.compile(
    r"getelementptr ((?:inbounds |nuw |nusw )*)\((i8, ptr(?: addrspace\(\d+\))? "
    r"@[-\w.$]+, i64 -?\d+)\)"
)
_INSTRUCTION = re.compile(r"^(\s+)(?!.*= phi )\S")


def constant_addresses_as_instructions(text: str) -> str:
    """Compute every constant byte-offset address inside a function (an element of a local
    array at a constant index) by its own getelementptr instruction.

    LLVM 22's SPIR-V back end gives such a constant the element type of one of its uses
    (cmpxchg's {value, i1} result, an i32 load) and scales the byte offset by that type's
    size: atomics and loads of local arrays at constant indices read and wrote past the
    element, even past the array (tests/test_fuzz_regressions.py). Returns `text` itself when
    there is nothing to rewrite.
    """
    if "getelementptr" not in text:
        return text
    lines, count = [], 0
    for line in text.splitlines():
        indent = _INSTRUCTION.match(line)
        if indent is not None and "getelementptr" in line:
            while (found := _CONSTANT_GEP.search(line)) is not None:
                count += 1
                name = f'%"dpex.address.{count}"'
                lines.append(
                    f"{indent.group(1)}{name} = getelementptr {found.group(1)}{found.group(2)}"
                )
                line = line[: found.start()] + name + line[found.end() :]
        lines.append(line)
    return "\n".join(lines) + "\n" if count else text


_FLOAT_SUFFIX = {"half": "f16", "float": "f32", "double": "f64"}
_VALUE = r'%(?:"[^"]*"|[-\w.$]+)'
_FNEG = re.compile(
    rf"^(\s+)({_VALUE}) = fneg (?:(?:fast|nnan|ninf|nsz|arcp|contract|afn|reassoc) )*"
    rf"(half|float|double|<(\d+) x (half|float|double)>) ({_VALUE})(,.*)?$"
)


def _constant(scalar: str, lanes: str | None, value: str) -> str:
    if lanes is None:
        return value
    return "<" + ", ".join([f"{scalar} {value}"] * int(lanes)) + ">"


def negations_as_fma(text: str) -> str:
    """Every `fneg x` of a module that synchronises work-items, as `fma(x, -1.0, -0.0)`.

    The Intel OpenCL CPU runtime gives every work-item of a work-group one work-item's value
    of a negation that is live across a barrier (OpFNegate; `x * -1.0`, `-0.0 - x` and a
    sign-bit xor too: its optimiser makes each an fneg again). It leaves fma alone, and
    fma(x, -1.0, -0.0) is -x exactly, signed zeros and infinities included
    (tests/fuzz_findings/fneg_across_barrier.py). Only modules with a convergent call (a
    barrier, a sub-group or group operation) are rewritten; others keep the cheaper fneg.
    """
    if " fneg " not in text or "convergent" not in text:
        return text
    lines, declared = [], set()
    for line in text.splitlines():
        found = _FNEG.match(line)
        if found is None:
            lines.append(line)
            continue
        indent, result, type_, lanes, element, operand, metadata = found.groups()
        scalar = element or type_
        suffix = _FLOAT_SUFFIX[scalar] if lanes is None else f"v{lanes}{_FLOAT_SUFFIX[scalar]}"
        declared.add((f"llvm.fma.{suffix}", type_))
        minus_one, minus_zero = _constant(scalar, lanes, "-1.0"), _constant(scalar, lanes, "-0.0")
        lines.append(
            f"{indent}{result} = call {type_} @llvm.fma.{suffix}({type_} {operand}, "
            f"{type_} {minus_one}, {type_} {minus_zero}){metadata or ''}"
        )
    if not declared:
        return text
    for name, type_ in sorted(declared):
        if not re.search(rf"^declare .*@{re.escape(name)}\(", text, re.MULTILINE):
            lines.append(f"declare {type_} @{name}({type_}, {type_}, {type_})")
    return "\n".join(lines) + "\n"


_ATOMIC_OPERAND_FNEG = re.compile(r"^\s+(\S+) = fneg (?:[a-z]+ )*(?:float|double) (\S+)$")
_FLOAT_ATOMIC_ADD = re.compile(
    r"^(?P<head>.* = atomicrmw (?:volatile )?)(?P<op>fadd|fsub) (?P<ptr>ptr(?: addrspace\(\d+\))? "
    r"\S+), (?P<type>float|double) (?P<value>\S+) (?P<tail>.*)$"
)


def float_atomic_adds_of_no_negation(text: str) -> str:
    """Give every native float atomic add a value that is no negation: `atomicrmw fsub p, v`
    and `atomicrmw fadd p, (fneg v)` become `atomicrmw fadd p, (0.0 - v)`.

    The Intel OpenCL CPU runtime adds wrong values when an OpAtomicFAddEXT takes an OpFNegate
    computed before a barrier (the back end lowers fsub so, and shares one negation between
    atomics); `0.0 - v` differs from `-v` only in the sign of a zero sum.
    """
    if "atomicrmw fadd" not in text and "atomicrmw fsub" not in text:
        return text
    negated = {}
    lines, count = [], 0
    for line in text.splitlines():
        found = _ATOMIC_OPERAND_FNEG.match(line)
        if found is not None:
            negated[found.group(1)] = found.group(2)
        atomic = _FLOAT_ATOMIC_ADD.match(line)
        if atomic is not None and (atomic["op"] == "fsub" or atomic["value"] in negated):
            operand = atomic["value"] if atomic["op"] == "fsub" else negated[atomic["value"]]
            count += 1
            name = f'%"dpex.negated.{count}"'
            indent = line[: len(line) - len(line.lstrip())]
            lines.append(f"{indent}{name} = fsub {atomic['type']} 0.0, {operand}")
            line = f"{atomic['head']}fadd {atomic['ptr']}, {atomic['type']} {name} {atomic['tail']}"
        lines.append(line)
    return "\n".join(lines) + "\n" if count else text


_ALLOCA = re.compile(
    rf"^\s+({_VALUE}) = alloca (\[\d+ x (?:i8|i16|i32|i64|half|float|double)\]|"
    rf"i8|i16|i32|i64|half|float|double), align (\d+)$"
)
_POINTER = r"ptr(?: addrspace\(\d+\))?"
_SAME_OBJECT = re.compile(  # a pointer result and the pointers it is computed from
    rf"^\s+({_VALUE}) = (?:getelementptr (?:(?:inbounds|nuw|nusw) )*[^,]+, {_POINTER} ({_VALUE})|"
    rf"select (?:[a-z]+ )*i1 {_VALUE}, {_POINTER} ({_VALUE}), {_POINTER} ({_VALUE})|"
    rf"phi {_POINTER} (.*)|addrspacecast {_POINTER} ({_VALUE}) to .*)"
)
_PHI_VALUE = re.compile(rf"\[ ({_VALUE}), ")
_LIFETIME = re.compile(
    rf"^\s+call void @llvm\.lifetime\.(?:start|end)\.p0\(ptr (?:nonnull )?({_VALUE})\)$"
)
_SIZES = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "float": 4, "double": 8}


def _size(type_: str) -> int:
    if type_.startswith("["):
        count, element = type_[1:-1].split(" x ")
        return int(count) * _SIZES[element]
    return _SIZES[type_]


_LABEL = re.compile(r'^(?:"[^"]*"|[-\w.$]+):')


def _root(parent: dict, key: tuple) -> tuple:
    while parent.get(key, key) != key:
        key = parent[key]
    return key


def private_arrays_as_one(text: str) -> str:
    """Private arrays whose pointers meet in a `select` or `phi` become parts of one array.

    The Intel OpenCL CPU runtime addresses a pointer that may point into either of two
    private arrays as if it pointed into one of them: `x = p0[i] if c else p1[0]` (LLVM makes
    it a load of a select of the two addresses) read the wrong element in work-groups of 16
    or more, and in any work-group once the kernel has a sub-group operation
    (tests/test_runtime_workarounds.py). Into one array it addresses them right. Arrays that
    never meet stay apart, so the runtime may still keep each in registers.
    """
    if "alloca" not in text or not (" select " in text or " phi ptr" in text):
        return text
    lines = text.splitlines()
    allocas, parent, function = {}, {}, 0  # names are a function's own: keyed by its number
    entry = False  # in a function's entry block, whose allocas dominate all its code
    started = False  # the function has an instruction yet: a label now starts another block
    for at, line in enumerate(lines):
        if line.startswith("define "):
            function, entry, started = function + 1, True, False
        elif _LABEL.match(line):  # the entry block's own label (any name) comes first
            entry = entry and not started
        elif line.startswith("  "):
            started = True
        if entry and (found := _ALLOCA.match(line)):
            allocas[(function, found.group(1))] = (at, found.group(2), int(found.group(3)))
        elif found := _SAME_OBJECT.match(line):
            result, base, first, second, phi, cast = found.groups()
            sources = [s for s in (base, first, second, cast) if s]
            sources += _PHI_VALUE.findall(phi) if phi else []
            for source in sources:  # the result points into the object each source does
                parent[_root(parent, (function, source))] = _root(parent, (function, result))
    groups: dict[tuple, list[tuple]] = {}
    for key in allocas:
        groups.setdefault(_root(parent, key), []).append(key)
    merged = [keys for keys in groups.values() if len(keys) > 1]
    if not merged:
        return text
    replaced: dict[int, str] = {}
    dropped: set[tuple] = set()
    for number, keys in enumerate(merged):
        whole, offset, align = f"%dpex.private.{number}", 0, 1
        for key in keys:
            at, type_, alignment = allocas[key]
            offset = -(-offset // alignment) * alignment
            replaced[at] = f"  {key[1]} = getelementptr inbounds i8, ptr {whole}, i64 {offset}"
            offset, align = offset + _size(type_), max(align, alignment)
            dropped.add(key)
        first = min(allocas[key][0] for key in keys)
        replaced[first] = f"  {whole} = alloca [{offset} x i8], align {align}\n{replaced[first]}"
    out, function = [], 0
    for at, line in enumerate(lines):
        function += line.startswith("define ")
        lifetime = _LIFETIME.match(line)
        if lifetime and (function, lifetime.group(1)) in dropped:
            continue  # a lifetime marker must name an alloca itself
        out.append(replaced.get(at, line))
    return "\n".join(out) + "\n"


def _reached(seeds: set, edges: list[tuple]) -> set:
    """`seeds` and every value computed from one of them along `edges` ((value, its source)
    pairs), however often: blocks need not come in the order of their values' definitions."""
    reached = set(seeds)
    grown = True
    while grown:
        before = len(reached)
        reached.update(value for value, source in edges if source in reached)
        grown = len(reached) > before
    return reached


_PRIVATE_STORE = re.compile(rf"^(\s+store )(?!volatile |atomic )(.*, ptr ({_VALUE})(?:, .*)?)$")


def stores_through_chosen_private_pointers_volatile(text: str) -> str:
    """Every store through a pointer into private memory that a `select` or `phi` chose (or
    an address computed from one) is volatile.

    The Intel OpenCL CPU runtime, vectorising for sub-groups of 4, 8 or 16, lost such a store
    after a load of the same array at a computed index: `v = p[a[i] % 4]; p[3 if i > 0 else
    0] = v + 1` (LLVM stores through a select of the two addresses) left `p` as it was in
    every work-item (tests/test_runtime_workarounds.py, fuzz case 1214003867). A volatile
    store is kept as written and lands where it should.
    """
    if "store " not in text or not (" select " in text or " phi ptr" in text):
        return text
    lines = text.splitlines()
    chosen: set[tuple[int, str]] = set()  # (function, pointer) pairs
    derived: list[tuple[tuple, tuple]] = []  # (address, the pointer it is computed from)
    function = 0
    for line in lines:
        function += line.startswith("define ")
        found = _SAME_OBJECT.match(line)
        if found is None:
            continue
        result, base, first, _second, phi, cast = found.groups()
        if first is not None or phi is not None:
            chosen.add((function, result))  # a select or phi of pointers
        else:
            derived.append(((function, result), (function, base or cast)))
    chosen = _reached(chosen, derived)
    out, changed, function = [], False, 0
    for line in lines:
        function += line.startswith("define ")
        found = _PRIVATE_STORE.match(line)
        if found is not None and (function, found.group(3)) in chosen:
            line, changed = f"{found.group(1)}volatile {found.group(2)}", True
        out.append(line)
    return "\n".join(out) + "\n" if changed else text


_COUNT_DOWN = re.compile(rf"^\s+({_VALUE}) = add nsw (i32|i64) ({_VALUE}), -1$")
_COUNTER_PHI = re.compile(rf"^\s+({_VALUE}) = phi (i32|i64) (.*)$")
_EXIT_TEST = re.compile(rf"^(\s+{_VALUE}) = icmp (?:samesign ugt|sgt) (i32|i64) ({_VALUE}), 1$")


def count_down_exits_on_the_new_count(text: str) -> str:
    """A count-down loop's test `count > 1` as `count - 1 > 0`, on the value it counts down to.

    LLVM tests a counter before its decrement (InstCombine folds `count - 1 > 0` to that form,
    so only a rewrite after optimisation keeps the other); the Intel OpenCL CPU runtime then
    ran an atomic operation in such a loop, nested in another, many more times than the loop
    iterates (tests/fuzz_findings/atomic_in_count_down_loop.py). Tested on the decremented
    value, it runs it once an iteration. Only a loop counter is rewritten: a phi whose value
    around the loop is its own decrement, `add nsw count, -1`, which starts from a trip
    count (never negative), so the two tests agree wherever the decrement is defined; and
    only a test that follows the decrement in its block, where the decrement is defined.
    """
    if " icmp " not in text or ", -1\n" not in text:
        return text
    lines = text.splitlines()
    counters, function = set(), 0  # (function, phi, its value from around the loop)
    for line in lines:
        function += line.startswith("define ")
        if found := _COUNTER_PHI.match(line):
            for value in _PHI_VALUE.findall(found.group(3)):
                counters.add((function, found.group(1), value))
    out, changed, function = [], False, 0
    decremented: dict[str, str] = {}  # in this block: a counter -> its decrement
    for line in lines:
        if line.startswith("define ") or _LABEL.match(line):
            function += line.startswith("define ")
            decremented = {}
        elif found := _COUNT_DOWN.match(line):
            decremented[found.group(3)] = found.group(1)
        elif found := _EXIT_TEST.match(line):
            result, type_, count = found.groups()
            next_ = decremented.get(count)
            if next_ is not None and (function, count, next_) in counters:
                line, changed = f"{result} = icmp sgt {type_} {next_}, 0", True
        out.append(line)
    return "\n".join(out) + "\n" if changed else text


_SUB_GROUPS_OF_4 = re.compile(r"!intel_reqd_sub_group_size !(?:\{i32 4\}|(\d+))")
_MEMORY_LOAD = re.compile(
    rf"^(\s+{_VALUE} = load )(?!volatile |atomic )(.*, ptr addrspace\([13]\) .*)$"
)


def _requires_sub_groups_of_4(text: str) -> bool:
    for found in _SUB_GROUPS_OF_4.finditer(text):
        number = found.group(1)
        if number is None or re.search(rf"^!{number} = !\{{i32 4\}}$", text, re.MULTILINE):
            return True
    return False


def loads_volatile_in_sub_groups_of_4(text: str) -> str:
    """In a kernel that requires sub-groups of 4 work-items, every load of global or local
    memory is volatile.

    The Intel OpenCL CPU runtime's vectoriser miscompiles loads in such kernels (an AVX2 host;
    tests/test_runtime_workarounds.py): at an index computed from a loaded value (`u =
    max(a[3], 2); out[i] = a[u & 31]`) its compiler crashed the process at the first launch,
    and at an index `(i & 31) ^ 3` the kernel read far outside the array and crashed it
    (the fuzzer's tests/fuzz_cases/sub_groups_of_4_*.json). It leaves a volatile load as
    written, one load a work-item, which reads the same value: `c[i] = a[i] * 2.0 + b[i]` of
    2^22 float32 took 1.91 ms against 1.71. Modules without that requirement are left alone.
    """
    if " load " not in text or not _requires_sub_groups_of_4(text):
        return text
    lines, changed = [], False
    for line in text.splitlines():
        if found := _MEMORY_LOAD.match(line):
            line, changed = f"{found.group(1)}volatile {found.group(2)}", True
        lines.append(line)
    return "\n".join(lines) + "\n" if changed else text


#: Attributes LLVM prints on a call's result or operand (`noundef`, `range(i32 0, 32)`).
_ATTRIBUTES = r"(?:(?:noundef|range\([^)]*\)) )*"
_INTEGER_MIN_MAX = re.compile(
    rf"^(\s+)({_VALUE}) = (?:tail |notail )?call {_ATTRIBUTES}(i\d+) @llvm\.([us])(min|max)\.i\d+"
    rf"\(i\d+ {_ATTRIBUTES}({_VALUE}|-?\d+), i\d+ {_ATTRIBUTES}({_VALUE}|-?\d+)\)"
)
_INTEGER_ABS = re.compile(
    rf"^(\s+)({_VALUE}) = (?:tail |notail )?call {_ATTRIBUTES}(i\d+) @llvm\.abs\.i\d+"
    rf"\(i\d+ {_ATTRIBUTES}({_VALUE}), i1 (?:immarg )?(?:true|false)\)"
)
_ORDER = {"min": "lt", "max": "gt"}
#: A loaded value (group 2 None) or an integer cast of a value (group 2).
_LOADED = re.compile(
    rf"^\s+({_VALUE}) = "
    rf"(?:load (?:volatile )?i\d+, |(?:zext|sext|trunc) (?:nneg )?i\d+ ({_VALUE}) to )"
)


def integer_min_max_abs_as_select(text: str) -> str:
    """Every scalar integer min, max (`llvm.umin`, `smax`, ...) or abs of a value loaded from
    memory as a compare and a select.

    The Intel OpenCL CPU runtime, vectorising a kernel for sub-groups of 8 on an AVX2 host,
    computed `min(a[g], 7)` of a loaded value the same for every work-item (OpExtInst u_min)
    as a 32-bit vector and read it back as 64-bit indices: the load `a[min(a[g], 7)]` read
    far outside its array and crashed the process (tests/fuzz_cases/
    uniform_min_as_load_index.json); `a[abs(a[n % 32]) % 32]` (OpExtInst s_abs), `n` the
    work-group's size, did the same in a larger kernel (tests/fuzz_cases/
    uniform_abs_as_load_index.json). A compare and a select compute the
    same value, and the runtime vectorises them as it does any other (`vpminud` again where it
    can). Other mins and maxes are left alone: the runtime's instruction selection aborted on
    the selects of `min(max(group, 5), n & 7)` scanned over a sub-group of 4
    (tests/fuzz_cases/sub_group_scan_of_min_max.json).
    """
    if "@llvm.u" not in text and "@llvm.s" not in text and "@llvm.abs." not in text:
        return text
    loaded: set[tuple[int, str]] = set()  # (function, a value loaded from memory)
    casts: list[tuple[tuple, tuple]] = []  # (an integer cast, its operand)
    function = 0
    for line in text.splitlines():
        function += line.startswith("define ")
        if found := _LOADED.match(line):
            value, source = found.groups()
            if source is None:
                loaded.add((function, value))
            else:
                casts.append(((function, value), (function, source)))
    loaded = _reached(loaded, casts)
    lines, count, function = [], 0, 0
    for line in text.splitlines():
        function += line.startswith("define ")
        min_max, absolute = _INTEGER_MIN_MAX.match(line), _INTEGER_ABS.match(line)
        operands = min_max.group(6, 7) if min_max else (absolute.group(4),) if absolute else ()
        if not any((function, operand) in loaded for operand in operands):
            lines.append(line)
            continue
        count += 1
        test = f'%"dpex.order.{count}"'
        if absolute:
            indent, result, type_, value = absolute.groups()
            negated = f'%"dpex.absolute.{count}"'
            lines.append(f"{indent}{negated} = sub {type_} 0, {value}")
            lines.append(f"{indent}{test} = icmp slt {type_} {value}, 0")
            lines.append(f"{indent}{result} = select i1 {test}, {type_} {negated}, {type_} {value}")
            continue
        indent, result, type_, sign, which, left, right = min_max.groups()
        lines.append(f"{indent}{test} = icmp {sign}{_ORDER[which]} {type_} {left}, {right}")
        lines.append(f"{indent}{result} = select i1 {test}, {type_} {left}, {type_} {right}")
    return "\n".join(lines) + "\n" if count else text


_COMPARE_EXCHANGE = re.compile(r"AtomicCompareExchange|= cmpxchg ")
_SUCCESSOR = re.compile(rf"label ({_VALUE})")
_PHI = re.compile(rf"^(\s+)({_VALUE}) = phi (?:[a-z]+ )*(i8|i16|i32|i64|half|float|double) (.*)$")
_INCOMING = re.compile(rf"\[ ([^,\]]+), ({_VALUE}) \]")


def _blocks(body: list[str]) -> list[tuple[str, list[str]]] | None:
    """A function's blocks as (label, lines: its label's line first), None where its entry
    block has no label."""
    blocks: list[tuple[str, list[str]]] = []
    for line in body:
        if found := _LABEL.match(line):
            blocks.append(("%" + found.group(0)[:-1], [line]))
        elif line.strip() and not blocks:
            return None
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


def _compare_exchange_loops(blocks: list[tuple[str, list[str]]]) -> tuple[set[str], set[str]]:
    """The blocks of the loops that hold an atomic compare-exchange, and the loops' exits."""
    edges = [  # (a block, a block that branches to it)
        (target, label)
        for label, lines in blocks
        for line in lines
        for target in _SUCCESSOR.findall(line)
    ]
    backward = [(source, target) for target, source in edges]
    loops: set[str] = set()
    for label, lines in blocks:
        if any(_COMPARE_EXCHANGE.search(line) for line in lines):
            after = _reached({target for target, source in edges if source == label}, edges)
            before = _reached({source for target, source in edges if target == label}, backward)
            loops |= after & before
    return loops, {target for target, source in edges if source in loops} - loops


def phis_after_compare_exchange_loops_through_memory(text: str) -> str:
    """Every phi outside a loop that holds an atomic compare-exchange, with a value from
    that loop or one of its exit blocks, as volatile stores into a private slot on its
    incoming edges and a volatile load where the phi was.

    The Intel OpenCL CPU runtime's vectoriser chose one value for a whole sub-group at such a
    phi: with a compare-exchange loop in each arm of an `if` whose condition differs between
    work-items, `v = 7` in one arm and a value every work-item shares before it, each
    sub-group of 8 stored the value of its first work-item's arm (fuzzer case 1220004112,
    tests/fuzz_cases/compare_exchange_loops_in_both_arms.json). Through memory each work-item
    keeps its own. Phis of other types (i1, pointers, vectors) are left alone.
    """
    if not _COMPARE_EXCHANGE.search(text):
        return text
    lines = text.splitlines()
    out: list[str] = []
    count, position = 0, 0
    while position < len(lines):
        line = lines[position]
        out.append(line)
        position += 1
        if not line.startswith("define ") or not line.rstrip().endswith("{"):
            continue
        end = lines.index("}", position)
        body = lines[position:end]
        position = end
        blocks = _blocks(body)
        loops, exits = _compare_exchange_loops(blocks) if blocks else (set(), set())
        if not loops:
            out.extend(body)
            continue
        after_loops = loops | exits
        stores: dict[str, list[str]] = {}  # block -> the stores before its terminator
        slots: list[str] = []
        rewritten = []
        for label, block in blocks:
            phis, others = [], []
            for line in block[1:]:
                found = _PHI.match(line) if label not in loops else None
                incoming = _INCOMING.findall(found.group(4)) if found else []
                if not any(source in after_loops for _, source in incoming):
                    (phis if " = phi " in line else others).append(line)
                    continue
                indent, result, type_, _ = found.groups()
                count += 1
                slot, align = f'%"dpex.slot.{count}"', _size(type_)
                slots.append(f"  {slot} = alloca {type_}, align {align}")
                for value, source in incoming:
                    store = f"  store volatile {type_} {value}, ptr {slot}, align {align}"
                    stores.setdefault(source, []).append(store)
                load = f"{indent}{result} = load volatile {type_}, ptr {slot}, align {align}"
                others.insert(0, load)
            rewritten.append((label, [block[0], *phis, *others]))
        if not slots:
            out.extend(body)
            continue
        for index, (label, block) in enumerate(rewritten):
            out.append(block[0])
            if index == 0:
                out.extend(slots)
            block = block[1:]
            terminator = max(
                (i for i, line in enumerate(block) if line.strip().startswith(("br ", "switch "))),
                default=len(block),
            )
            out.extend(block[:terminator] + stores.get(label, []) + block[terminator:])
    return "\n".join(out) + "\n" if count else text
