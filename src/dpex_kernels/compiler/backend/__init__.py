"""The back end: a kernel's linked LLVM module -> LLVM IR and SPIR-V per launch dimension count.

pipeline.py holds the stages in order; llvm.py runs LLVM, checks.py refuses what would fail
later, host_simd.py vectorises offloaded loops for the host CPU, rewrites.py and
spirv_repair.py hold the workarounds that workarounds.py indexes, emit.py writes SPIR-V.
"""

from .pipeline import STAGES, build_variant

__all__ = ["STAGES", "build_variant"]
