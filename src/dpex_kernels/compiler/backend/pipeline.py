"""The back end as named stages: a kernel's linked module -> (LLVM IR, SPIR-V, facts) for one
launch dimension count, specialised for the target device.

    specialise  link the index and float-atomic definitions for ndim and the target
    optimise    LLVM's pipeline (mandatory), with the target's LLVM options
    check       refuse what would fail later: host calls, odd integers, barrier flags
    finish      host-SIMD kernels vectorised for the host, required sub-group sizes
    rewrite     the target's workarounds on the optimised IR (workarounds.py)
    emit        SPIR-V, its labels repaired, validated with spirv-val on request
    facts       what the SPIR-V asks of the device (aspects, local memory)

`DPEX_KERNELS_DUMP=dir` writes each stage's output under dir/<kernel>/<ndim>d/.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import llvmlite.binding as ll

from ...artifacts.kernel import CodeFacts, KernelArtifact
from ...artifacts.spirv import code_facts
from ..kernel_api.atomics import float_atomic_definitions
from ..kernel_api.groups import group_definitions
from ..kernel_api.index_space import index_definitions
from . import checks, emit, host_simd, llvm, workarounds

#: DPEX_KERNELS_DUMP=dir: every stage's output of every variant built, as files under dir.
DUMP_VARIABLE = "DPEX_KERNELS_DUMP"


@dataclass
class Build:
    """One variant in the making: what the stages read and write."""

    artifact: KernelArtifact
    ndim: int
    #: The parsed linked module, if the compiler has it (specialise consumes it).
    linked: ll.ModuleRef | None = None
    module: ll.ModuleRef | None = None
    #: The optimised module's text: what inspect_llvm() shows.
    text: str = ""
    #: The text the back end translates (after the rewrites); `text` itself if none applied.
    emitted_text: str = ""
    spirv: bytes = b""
    facts: CodeFacts | None = None


def specialise(build: Build) -> None:
    artifact = build.artifact
    by_shuffles = workarounds.by_name("sub-group-multiplies-by-shuffles").applies(artifact.target)
    derived_ids = workarounds.by_name("sub-group-ids-derived").applies(artifact.target)
    definitions = [
        index_definitions(build.ndim),
        float_atomic_definitions(artifact.linked_ir, artifact.target.float_atomics),
        group_definitions(artifact.linked_ir, build.ndim, by_shuffles, derived_ids),
    ]
    definitions = [text for text in definitions if text]
    if artifact.host_simd:
        source = host_simd.assume_aligned(artifact.linked_ir, artifact.symbol, artifact.params)
        module = llvm.link_modules([source, *definitions])
    elif build.linked is None:
        module = llvm.link_modules([artifact.linked_ir, *definitions])
    else:
        module = llvm.link_into(build.linked, definitions)
    llvm.rename_libm_calls(module)
    build.module = module


def optimise(build: Build) -> None:
    artifact, module = build.artifact, build.module
    kernel, opt_level = [artifact.symbol], artifact.options.opt_level
    options = workarounds.optimisation_options(artifact.target)
    if not artifact.host_simd:
        llvm.optimise(module, kernel, opt_level, options)
    else:
        if artifact.host_simd == host_simd.REDUCE:
            # Each reduction update one instruction (no unrolling), marked reassociable.
            llvm.optimise(module, kernel, opt_level, options, unroll=False, inline_all=False)
            module = llvm.link_modules([host_simd.reassociable_reductions(str(module))])
        # A streaming loop's vectors one at a time (host_simd.py: the loop's remainder is then
        # under 16 iterations); a reduction's interleaved, as independent accumulators.
        machine = host_simd.host_target_machine()
        interleave = artifact.host_simd == host_simd.REDUCE
        llvm.optimise(
            module, kernel, opt_level, options, machine, interleave=interleave, inline_all=False
        )
    build.module, build.text = module, str(module)


def check(build: Build) -> None:
    artifact, text = build.artifact, build.text
    checks.constant_barrier_flags(text, artifact.name)
    if not artifact.host_simd and workarounds.by_name(
        "no-sub-group-operations-in-sub-groups-of-one"
    ).applies(artifact.target):
        checks.sub_groups_of_one(text, artifact.name, artifact.options.sub_group_size)
    checks.no_host_calls(build.module, artifact.name)
    checks.supported_integers(text, artifact.name)


def finish(build: Build) -> None:
    artifact = build.artifact
    if artifact.host_simd:
        build.text = host_simd.finish(
            build.text, artifact.symbol, artifact.name, artifact.host_simd
        )
    elif artifact.options.sub_group_size:
        size = artifact.options.sub_group_size
        build.text = host_simd.required_sub_group_size(build.text, artifact.symbol, size)
    else:
        return
    build.module = llvm.link_modules([build.text])


def rewrite(build: Build) -> None:
    text = build.text
    for rewrite_ in workarounds.rewrites_for(build.artifact.target):
        text = rewrite_(text)
    build.emitted_text = text


def emit_(build: Build) -> None:
    artifact, text = build.artifact, build.emitted_text
    reduce_strength = True  # LLVM's default
    if workarounds.by_name("strength-reduction-for-atomic-loops-only").applies(artifact.target):
        reduce_strength = emit.strength_reduction(text)
    module = build.module if text is build.text else None
    build.spirv = emit.emit_spirv(
        module, text, artifact.options.opt_level, reduce_strength, artifact.name
    )


def facts(build: Build) -> None:
    build.facts = code_facts(build.spirv)


@dataclass(frozen=True)
class Stage:
    name: str
    run: Callable[[Build], None]
    #: What the stage leaves to dump: (file suffix, its contents) or None.
    output: Callable[[Build], tuple[str, bytes] | None]


def _module_text(build: Build):
    return ".ll", str(build.module).encode()


def _text(build: Build):
    return ".ll", build.text.encode()


STAGES: tuple[Stage, ...] = (
    Stage("specialise", specialise, _module_text),
    Stage("optimise", optimise, _text),
    Stage("check", check, lambda build: None),
    Stage("finish", finish, _text),
    Stage("rewrite", rewrite, lambda build: (".ll", build.emitted_text.encode())),
    Stage("emit", emit_, lambda build: (".spv", build.spirv)),
    Stage("facts", facts, lambda build: (".json", json.dumps(build.facts._asdict()).encode())),
)


def build_variant(
    artifact: KernelArtifact, ndim: int, linked: ll.ModuleRef | None = None
) -> tuple[str, bytes, CodeFacts]:
    """(optimised LLVM IR, SPIR-V, facts) of `artifact` for `ndim`-dimensional launches."""
    started = time.perf_counter()
    build = Build(artifact, ndim, linked)
    dump = _dump_dir(artifact, ndim)
    for number, stage in enumerate(STAGES):
        stage.run(build)
        if dump is not None:
            _dump(dump, number, stage, build)
    artifact.timings[f"llvm+spirv[{ndim}d]"] = time.perf_counter() - started
    return build.text, build.spirv, build.facts


def _dump_dir(artifact: KernelArtifact, ndim: int) -> Path | None:
    root = os.environ.get(DUMP_VARIABLE)
    if not root:
        return None
    digest = hashlib.sha256((artifact.linked_ir or "").encode()).hexdigest()[:8]
    return Path(root) / f"{artifact.name}-{digest}" / f"{ndim}d"


def _dump(directory: Path, number: int, stage: Stage, build: Build) -> None:
    found = stage.output(build)
    if found is not None:
        suffix, data = found
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"{number}-{stage.name}{suffix}").write_bytes(data)
