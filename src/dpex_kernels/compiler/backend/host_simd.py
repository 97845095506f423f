"""Host-SIMD kernels: one work-item runs a loop, vectorised here for the host's CPU
(docs/offload.md, "Streaming loops" and "Host-SIMD reductions").

The OpenCL CPU runtime vectorises across work-items and cannot store non-temporally: its
vectoriser refuses a `!nontemporal` store, and a kernel that is already vector code it
vectorises again. So for a CPU device a kernel whose work-item loops over consecutive elements
is optimised with the host's x86 cost model (LLVM's loop vectoriser then writes <16 x float>
code, <8 x float> with AVX2) and asks for sub-groups of one work-item, which the runtime
compiles as written. Of "stream" kernels every vector store to global memory aligned to a
whole host vector (`vector_bytes`) is marked non-temporal: a stream past the caches then skips
the read-for-ownership of every line it writes (a triad of 2^24 float32 took 4.6-5.0 ms,
against 6-7.7 ms as a plain kernel, on AVX-512). Their loops store one vector an iteration
(pipeline.py turns LLVM's interleaving off): with the four its cost model picks, up to 63
iterations of a chunk (the last of a 4095-column row) were left to <8 x float> stores of
unknown alignment, which read every line before writing it; a 2-D loop over 4095 columns then
took 6-14% longer than one over 4096, and one vector at a time made the two as fast and the
4096² stencil 4% faster. Of "reduce" kernels the reduction's
float update is marked `reassoc` first, so that it vectorises; they keep the interleaving
(independent accumulators). Of "rows" kernels, a row loop's chunk of rows in order, every
store to global memory is marked non-temporal, scalar or vector: the offload pass makes them
only where each work-item's stores write consecutive elements of its own (offloading/
streaming.py), so they fill whole lines in order.

The kernel assumes what `fits` says of its arrays (whoever launches it checks), and is refused
(a Refusal) where the vectorised code holds anything the SPIR-V back end or the runtime is not
known to take, or nothing was vectorised at all.
"""

from __future__ import annotations

import functools
import re

import llvmlite.binding as ll
import numpy as np

from ...artifacts.options import HOST_SIMD_KINDS
from ...errors import KernelCompileError
from ...types.params import SHAPE, kernel_slots

#: The alignment a host-SIMD kernel assumes of every array it is given.
ALIGNMENT = 64
#: The kinds of host-SIMD kernel (artifacts/options.py): element-wise loops with streaming
#: stores, reductions (each work-item's loop reduced in vector registers, reordered as the
#: reduction is), and row loops whose every store streams.
_, STREAM, REDUCE, ROWS = HOST_SIMD_KINDS

#: Vector lengths SPIR-V has (Vector16 for 8 and 16, which OpenCL devices support).
_VECTOR_LENGTHS = {2, 3, 4, 8, 16}
_VECTOR = re.compile(r"<(\d+) x ")
#: The LLVM intrinsics vectorised code may call on vectors: those the back end lowers to
#: OpenCL built-ins of vector arguments. Scalar calls are the same as in any kernel.
_VECTOR_INTRINSICS = (
    "llvm.fmuladd.",
    "llvm.fma.",
    "llvm.fabs.",
    "llvm.smin.",
    "llvm.smax.",
    "llvm.umin.",
    "llvm.umax.",
    "llvm.abs.",
    "llvm.vector.reduce.add.",
    "llvm.vector.reduce.mul.",
    "llvm.vector.reduce.fadd.",
    "llvm.vector.reduce.fmul.",
    "llvm.vector.reduce.smin.",
    "llvm.vector.reduce.smax.",
    "llvm.vector.reduce.umin.",
    "llvm.vector.reduce.umax.",
)
_INTRINSIC_CALL = re.compile(r"\bcall .*@(llvm\.[-\w.$]+)\(")
_VECTOR_PHI = re.compile(r"= phi <\d+ x ")
_ASSUME = re.compile(r"^\s*(?:tail )?call void @llvm\.assume\(.*\n", re.M)
_GLOBAL_POINTER_PARAM = re.compile(r"ptr addrspace\(1\)((?: noundef| noalias)*) %")
_VECTOR_STORE = re.compile(
    r"^(\s+store <\d+ x [^>]+> [^,]+, ptr addrspace\(1\) %[-\w.$\"]+, align (\d+))", re.M
)
_GLOBAL_STORE = re.compile(r"^(\s+store [^,]+, ptr addrspace\(1\) %[-\w.$\"]+, align \d+)", re.M)


@functools.cache
def host_target_machine():
    """The host's x86 target machine, whose cost model LLVM's vectorisers read.

    With AVX-512, at its full width: LLVM tunes Intel's AVX-512 CPUs (Skylake-X to Rocket
    Lake and the Xeons after them) to prefer 256-bit vectors, whose 32-byte stores cannot
    stream whole lines; AMD's Zen 4 already prefers 512 bits. (On a Xeon seen as
    "rocketlake", every streaming loop was refused for want of a 64-byte store.)"""
    target = ll.Target.from_triple(ll.get_process_triple())
    features = ll.get_host_cpu_features()
    flags = features.flatten()
    if features.get("avx512f"):
        flags += ",-prefer-256-bit"
    return target.create_target_machine(cpu=ll.get_host_cpu_name(), features=flags, opt=3)


@functools.cache
def vector_bytes() -> int:
    """The host's widest vector: what one store of a vectorised loop writes (AVX-512's 64
    bytes; AVX2's 32, two to a cache line, which a CPU's write-combining joins)."""
    features = ll.get_host_cpu_features()
    return 64 if features.get("avx512f") else 32 if features.get("avx") else 16


def vector_scatters() -> bool:
    """Whether the host stores a vector's lanes to scattered addresses in one instruction
    (AVX-512's scatters, under a mask); AVX2 stores them lane by lane."""
    return vector_bytes() == 64  # AVX-512 is what makes vectors 64 bytes wide


def fits(address: int, shape: tuple, itemsize: int) -> bool:
    """Whether an array is laid out as a host-SIMD kernel assumes: its first element 64-byte
    aligned, and for 2 dimensions or more its last extent a multiple of 64 bytes."""
    rows = len(shape) < 2 or shape[-1] * itemsize % ALIGNMENT == 0
    return address % ALIGNMENT == 0 and rows


def assume_aligned(text: str, symbol: str, params: tuple) -> str:
    """The linked module with the kernel assuming what `fits` checks of every array: global
    pointer parameters 64-byte aligned, and each array of 2 dimensions or more (`params`, as
    types/params.py flattens them) with a last extent of a multiple of 64 bytes."""
    head, brace, rest = _definition(text, symbol)
    aligned = _GLOBAL_POINTER_PARAM.sub(
        lambda m: f"ptr addrspace(1){m.group(1) or ''} align {ALIGNMENT} %", head
    )
    names = re.findall(r"(%[-\w.$\"]+)\s*[,)]", head[head.index("(") :])
    assumptions = []
    for slot, name in zip(kernel_slots(params), names):
        param = params[slot.param]
        if slot.field == SHAPE and slot.axis == param.ndim - 1 and param.ndim > 1:
            multiple = ALIGNMENT // np.dtype(param.dtype).itemsize
            k = len(assumptions)
            assumptions.append(
                f"  %dpex.rows.{k} = urem i64 {name}, {multiple}\n"
                f"  %dpex.aligned.{k} = icmp eq i64 %dpex.rows.{k}, 0\n"
                f"  call void @llvm.assume(i1 %dpex.aligned.{k})\n"
            )
    text = text.replace(head + brace, aligned + brace, 1)
    if not assumptions:
        return text
    at = text.index("\n", text.index(aligned + brace)) + 1
    label = re.match(r"[-\w.$\"]+:.*\n", text[at:])
    if label is not None:
        at += label.end()
    declare = "" if "declare void @llvm.assume(i1" in text else "declare void @llvm.assume(i1)\n"
    return text[:at] + "".join(assumptions) + text[at:] + declare


_FLOAT_PHI = re.compile(r"^\s*(%[-\w.$\"]+) = phi (?:[a-z]+ )*(?:float|double) (.*)$")
_INCOMING = re.compile(r"\[ (%[-\w.$\"]+), %[-\w.$\"]+ \]")
_FLOAT_UPDATE = re.compile(
    r"^(\s*(%[-\w.$\"]+) = f(?:add|mul))((?: [a-z]+)*) ((?:float|double) (%[-\w.$\"]+), "
    r"(%[-\w.$\"]+).*)$"
)


def reassociable_reductions(text: str) -> str:
    """The optimised module with each float reduction's update marked `reassoc`: an fadd or
    fmul of a loop phi that feeds the phi back. LLVM's loop vectoriser then reduces in vector
    registers, which reorders the reduction as the work-items and the final pass already do;
    every other float operation keeps its order. For a module optimised without unrolling, so
    that each update is one instruction."""
    phis_fed: dict[str, set] = {}  # value -> the phis it flows into
    for line in text.splitlines():
        phi = _FLOAT_PHI.match(line)
        if phi is not None:
            for value in _INCOMING.findall(phi.group(2)):
                phis_fed.setdefault(value, set()).add(phi.group(1))
    lines = []
    for line in text.splitlines():
        update = _FLOAT_UPDATE.match(line)
        feeds_back = update is not None and phis_fed.get(update.group(2), set()) & {
            update.group(5),
            update.group(6),
        }
        if feeds_back and "reassoc" not in update.group(3):
            line = f"{update.group(1)} reassoc{update.group(3)} {update.group(4)}"
        lines.append(line)
    return "\n".join(lines) + "\n"


class Refusal(KernelCompileError):
    """A kernel that cannot be host SIMD: its plain build takes its place."""


def finish(text: str, symbol: str, kernel_name: str, mode: str) -> str:
    """The optimised module as a host-SIMD kernel: with one-work-item sub-groups, and for
    `mode` "stream" and "rows" with streaming stores. A Refusal unless its vector code is made
    only of what SPIR-V takes, and it has aligned vector stores ("stream"), a vector
    accumulator ("reduce") or stores to global memory ("rows")."""
    _check(text, kernel_name)
    if mode == STREAM:
        text, count = _VECTOR_STORE.subn(_streaming, text)
        if count == 0 or "!nontemporal" not in text:
            raise Refusal(
                f"kernel '{kernel_name}': the loop was not vectorised with aligned stores"
            )
    elif mode == ROWS:
        text, count = _GLOBAL_STORE.subn(r"\1, !nontemporal !{i32 1}", text)
        if count == 0:
            raise Refusal(f"kernel '{kernel_name}': the rows store nothing to global memory")
    elif not _VECTOR_PHI.search(text):
        raise Refusal(f"kernel '{kernel_name}': the reduction was not vectorised")
    text = _ASSUME.sub("", text)  # consumed by the optimiser; not for the back end
    return required_sub_group_size(text, symbol, 1)


def required_sub_group_size(text: str, symbol: str, size: int) -> str:
    """The kernel `symbol` of an LLVM module asking for sub-groups of `size` work-items (the
    SPIR-V back end makes it the SubgroupSize execution mode)."""
    head, brace, _ = _definition(text, symbol)
    return text.replace(
        head + brace, f"{head}!intel_reqd_sub_group_size !{{i32 {size}}} {brace}", 1
    )


def _streaming(match: re.Match) -> str:
    if int(match.group(2)) < vector_bytes():
        return match.group(1)
    return f"{match.group(1)}, !nontemporal !{{i32 1}}"


def _definition(text: str, symbol: str) -> tuple[str, str, str]:
    """The kernel's `define` line up to its `{`, the `{`, and what follows."""
    start = text.index(f"define spir_kernel void @{symbol}(")
    brace = text.rindex("{", start, text.index("\n", start))
    return text[start:brace], "{", text[brace + 1 :]


def _check(text: str, kernel_name: str) -> None:
    lengths = {int(n) for n in _VECTOR.findall(text)}
    unsupported = sorted(lengths - _VECTOR_LENGTHS)
    if unsupported:
        raise Refusal(
            f"kernel '{kernel_name}': vectors of {unsupported} elements, which SPIR-V lacks"
        )
    for line in text.splitlines():
        call = _INTRINSIC_CALL.search(line)
        if call is None or "<" not in line:
            continue
        callee = call.group(1)
        if not callee.startswith(_VECTOR_INTRINSICS):
            raise Refusal(
                f"kernel '{kernel_name}': the vectorised loop calls {callee}, which the SPIR-V "
                f"back end is not known to take"
            )
