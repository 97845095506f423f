"""Emission: an optimised, rewritten module -> SPIR-V bytes, repaired and (optionally) validated.

LLVM 22's SPIR-V back end now and then numbers basic blocks over other ids (spirv_repair.py
renumbers them; an emission whose labels collide with each other is emitted again, in fresh
processes if it must), and with loop strength reduction it can mix integer widths in one
instruction (emitted again without it). With DPEX_KERNELS_VALIDATE_SPIRV=1 and spirv-val
installed every result is validated too, and emitted again should anything else be wrong.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections import OrderedDict

import llvmlite.binding as ll

from ..._spawn import run_tool, tool
from ...errors import KernelCompileError
from .. import patches
from . import llvm
from .fresh_process import emit_in_fresh_processes
from .spirv_repair import (
    AmbiguousLabels,
    mixed_integer_widths,
    phi_integer_widths,
    repair_label_ids,
)

_SPIRV_VAL = tool("spirv-val")
_EMIT_ATTEMPTS = 8


def _validating() -> bool:
    """DPEX_KERNELS_VALIDATE_SPIRV=1 runs spirv-val on every module (tests and CI set it)."""
    return _SPIRV_VAL is not None and os.environ.get("DPEX_KERNELS_VALIDATE_SPIRV") == "1"


def _valid(spirv: bytes) -> bool:
    """spirv-val's verdict when validation is on (about 15 ms a module); else True."""
    if not _validating():
        return True
    with tempfile.NamedTemporaryFile(suffix=".spv") as handle:
        handle.write(spirv)
        handle.flush()
        return run_tool([_SPIRV_VAL, handle.name]).returncode == 0


_INTEGER_ATOMIC = re.compile(
    r"atomicrmw (?:volatile )?(?:add|sub|and|or|xor|max|min|umax|umin|xchg) "
)
_FLOAT_ATOMIC = re.compile(r"atomicrmw (?:volatile )?f(?:add|sub|max|min) ")


def strength_reduction(llvm_ir: str) -> bool:
    """Whether SPIR-V emission for the Intel OpenCL CPU runtime may run loop strength
    reduction on this module (other devices keep LLVM's default: on).

    Loop strength reduction rewrites a loop's array indices into byte offsets shared by the
    arrays (i8 access chains), which keep the OpenCL CPU runtime from vectorising the loop
    across work-items: `total += a[j] * b[j]` ran 4-6x slower than the same OpenCL C, the tiled
    matmul 1.4x. A loop of integer atomics (compare-exchange loops included) is not vectorised
    anyway, and there the reduced indices are faster: the 256-bin histogram took 13.0 ms
    without, 5.0 ms with (2^22 values, quiet run). Native float atomics are the exception: with
    them the float-weight histogram took 106 ms with, 11.5 ms without.
    """
    integer_atomics = "cmpxchg " in llvm_ir or _INTEGER_ATOMIC.search(llvm_ir) is not None
    return integer_atomics and _FLOAT_ATOMIC.search(llvm_ir) is None


_PHI_WIDTH = re.compile(r"= phi i(\d+) ")


def _narrowed_counters(spirv: bytes, llvm_ir: str) -> bool:
    """Whether the back end's strength reduction made a loop counter narrower than 32 bits
    that the module does not have: it counts `(k * a) & 3` in i2 and widens that to an i8
    without the mask, so a loop ran `k * a` times instead (tests/fuzz_cases/
    strength_reduction_narrow_counter.json)."""
    narrow = {width for width in phi_integer_widths(spirv) if width < 32}
    return bool(narrow - {int(width) for width in _PHI_WIDTH.findall(llvm_ir)})


def emission_flags(reduce_strength: bool) -> list[str]:
    """The LLVM options of one SPIR-V emission (also given to a fresh emitting process)."""
    return [f"-disable-lsr={0 if reduce_strength else 1}"]


#: SPIR-V already emitted in this process, by (module text, options): the back end's output
#: for one module varies between emissions (the entry block's name and the ids after it,
#: in about 4 emissions in 10), and a kernel defined again must get the same bytes, or its
#: device build is not reused (device.py keys builds by the SPIR-V).
_emitted: OrderedDict[tuple, bytes] = OrderedDict()
_EMITTED_LIMIT = 256


def emit_spirv(
    module: ll.ModuleRef,
    text: str,
    opt_level: int,
    reduce_strength: bool,
    kernel_name: str,
) -> bytes:
    """SPIR-V bytes of `text`, the optimised and rewritten module (`module` is its parse, when
    nothing was rewritten, else None), the same bytes for the same module all through the
    process; loop strength reduction as `reduce_strength` says, unless it mixes widths."""
    key = (hashlib.sha256(text.encode()).digest(), opt_level, reduce_strength, _validating())
    with llvm.lock:
        spirv = _emitted.get(key)
        if spirv is not None:
            _emitted.move_to_end(key)
            return spirv
    spirv = _emit(module, text, opt_level, reduce_strength, kernel_name)
    with llvm.lock:
        _emitted[key] = spirv
        if len(_emitted) > _EMITTED_LIMIT:
            _emitted.popitem(last=False)
    return spirv


def _emit(module, text: str, opt_level: int, reduce_strength: bool, kernel_name: str) -> bytes:
    validating = _validating()
    for attempt in range(_EMIT_ATTEMPTS):
        # The first emission is from the module itself when there is one; any other from a
        # fresh parse (the back end keeps process-wide state: hence the lock).
        options = [(flag, "-disable-lsr=0") for flag in emission_flags(reduce_strength)]
        with patches.llvm_options(options), llvm.lock:
            if attempt == 0 and module is not None:
                source = module
            else:
                source = ll.parse_assembly(text)
                source.verify()  # a rewrite's mistake is an error here, not an abort below
            spirv = llvm.target_machine(opt_level).emit_object(source)
        try:
            spirv = repair_label_ids(spirv)
        except AmbiguousLabels:
            continue  # labels collided with each other: only a new emission helps
        if reduce_strength and (mixed_integer_widths(spirv) or _narrowed_counters(spirv, text)):
            reduce_strength = False  # the back end's strength reduction broke the integers
            continue
        if not validating or _valid(spirv):
            return spirv
    flags = [*patches.PROCESS_FLAGS, *emission_flags(reduce_strength)]
    spirv = emit_in_fresh_processes(text, llvm.TRIPLE, min(opt_level, 3), flags)
    if spirv is not None and (not validating or _valid(spirv)):
        return spirv
    raise KernelCompileError(
        f"kernel '{kernel_name}': LLVM's SPIR-V back end produced invalid SPIR-V "
        f"{_EMIT_ATTEMPTS} times in a row"
    )
