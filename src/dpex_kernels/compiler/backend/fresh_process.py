"""SPIR-V emitted in a process of its own, for the modules this process's back end cannot emit.

After some kernels LLVM's SPIR-V back end keeps process-wide state that makes one module's
labels collide in every emission here (workarounds.py: "label-ids-repaired"); a fresh process
emits the same module without collisions.
"""

from __future__ import annotations

import sys

from ..._spawn import run_tool
from .spirv_repair import AmbiguousLabels, repair_label_ids

# Emits one LLVM IR module (stdin) as SPIR-V (stdout) in a process of its own.
_EMIT_CHILD = """
import sys
import llvmlite.binding as ll
ll.initialize_all_targets()
ll.initialize_all_asmprinters()
from dpex_kernels.compiler.patches import set_llvm_flags
set_llvm_flags(sys.argv[3:])
machine = ll.Target.from_triple(sys.argv[1]).create_target_machine(opt=int(sys.argv[2]))
sys.stdout.buffer.write(machine.emit_object(ll.parse_assembly(sys.stdin.read())))
"""
FRESH_PROCESS_ATTEMPTS = 3


def emit_in_fresh_processes(
    llvm_ir: str, triple: str, opt_level: int, flags: list[str]
) -> bytes | None:
    """Repaired SPIR-V of `llvm_ir` emitted in fresh processes with LLVM options `flags`, or
    None if none would do.

    After some kernels the back end's process-wide state makes a module's labels collide in
    every emission (the fuzzer's bounded campaign met one colliding 50 times in 50), while a
    fresh process emits the same module without collisions (0 in 50). About 0.3 s a process:
    only for what in-process emissions could not give. A child that dies gives None too.
    """
    for _ in range(FRESH_PROCESS_ATTEMPTS):
        child = run_tool(
            [sys.executable, "-c", _EMIT_CHILD, triple, str(opt_level), *flags],
            input=llvm_ir.encode(),
            timeout=300,
        )
        if child.returncode != 0:
            return None
        try:
            return repair_label_ids(child.stdout)
        except AmbiguousLabels:
            continue
    return None
