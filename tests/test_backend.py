"""The back end (compiler/backend/): its stages, its workaround records, the target it is told,
DPEX_KERNELS_DUMP, and the artifact contract (artifacts/)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import dpnp
import numpy as np
import pytest

import dpex_kernels as dk
from dpex_kernels.artifacts.files import CorruptArtifacts
from dpex_kernels.artifacts.options import CompileOptions
from dpex_kernels.artifacts.spirv import code_facts
from dpex_kernels.artifacts.target import Target
from dpex_kernels.compiler.backend import STAGES, workarounds
from dpex_kernels.compiler.compile import compile_kernel
from tests.conftest import CPU

ROOT = Path(__file__).resolve().parent.parent


def _loop_sum_source():
    def sums(n, out):
        i = dk.get_global_id(0)
        total = 0
        for j in range(n + i):
            total += j * j
        out[i] = total

    return sums


def test_a_loop_sum_compiles_without_wide_integers():
    """LLVM's exit-value replacement would make the sum a closed form over i65."""
    kernel = dk.kernel(_loop_sum_source())
    out = dpnp.zeros(4, dtype="i8")
    kernel[4](100, out).wait()
    expected = [sum(j * j for j in range(100 + i)) for i in range(4)]
    np.testing.assert_array_equal(dpnp.asnumpy(out), expected)
    assert not re.search(r"\bi65\b", kernel.inspect_llvm(kernel.signatures[0]))


def test_an_odd_integer_width_is_refused_not_aborted(monkeypatch):
    """Without the exit-value workaround the same kernel needs 65-bit integers: the check
    stage refuses it by name (the back end itself would abort the process)."""
    kept = tuple(w for w in workarounds.WORKAROUNDS if w.name != "no-exit-value-replacement")
    monkeypatch.setattr(workarounds, "WORKAROUNDS", kept)
    with pytest.raises(dk.KernelCompileError, match=r"integers of \[65\] bits"):
        dk.kernel(_loop_sum_source()).compile(dk.void(dk.int64, dk.usm_array(dk.int64, 1)))


def _evidence_exists(item: str) -> bool:
    path, _, test = item.partition("::")
    file = ROOT / path
    if not file.exists():
        return False
    return not test or f"def {test}(" in file.read_text()


def test_every_workaround_names_what_it_works_around_and_evidence_that_exists():
    names = [w.name for w in workarounds.WORKAROUNDS]
    assert len(names) == len(set(names))
    for record in workarounds.WORKAROUNDS:
        assert record.what and record.retire_when and record.where and record.fault_of
        assert record.evidence, record.name
        missing = [item for item in record.evidence if not _evidence_exists(item)]
        assert not missing, f"{record.name}: no such test or file {missing}"


def test_docs_list_every_workaround():
    text = (ROOT / "docs" / "compiler.md").read_text()
    for record in workarounds.WORKAROUNDS:
        assert f"`{record.name}`" in text, record.name


def _other_runtime() -> Target:
    return replace(Target.of(CPU), platform="Another OpenCL")


def test_the_intel_cpu_workarounds_apply_to_that_runtime_only():
    intel, other = Target.of(CPU), _other_runtime()
    assert intel.is_intel_opencl_cpu and not other.is_intel_opencl_cpu
    intel_only = {w.rewrite for w in workarounds.WORKAROUNDS if w.fault_of == workarounds.INTEL_CPU}
    intel_only.discard(None)
    assert intel_only <= set(workarounds.rewrites_for(intel))
    assert not intel_only & set(workarounds.rewrites_for(other))
    assert workarounds.optimisation_options(other) == workarounds.optimisation_options(intel)


def _negation_across_barrier(a, out):
    i = dk.get_global_id(0)
    x = -a[i]
    dk.barrier(dk.LOCAL_MEM_FENCE)
    out[i] = x


F32 = dk.usm_array(dk.float32, 1)


def _dumped(tmp_path, monkeypatch, target=None) -> dict[str, bytes]:
    monkeypatch.setenv("DPEX_KERNELS_DUMP", str(tmp_path))
    artifact = compile_kernel(_negation_across_barrier, (F32, F32), CompileOptions(), target)
    (directory,) = tmp_path.glob("_negation_across_barrier-*/1d")
    return artifact, {p.name: p.read_bytes() for p in directory.iterdir()}


def test_dump_writes_each_stage_of_the_pipeline(tmp_path, monkeypatch):
    artifact, files = _dumped(tmp_path, monkeypatch)
    expected = {
        f"{n}-{s.name}{suffix}"
        for n, s in enumerate(STAGES)
        for suffix in [{"check": None, "emit": ".spv", "facts": ".json"}.get(s.name, ".ll")]
        if suffix
    }
    assert set(files) == expected
    assert files["5-emit.spv"] == artifact.spirv
    assert files["1-optimise.ll"].decode() == artifact.llvm_ir
    facts = json.loads(files["6-facts.json"])
    expected = artifact.facts(1)._asdict()
    assert facts == {k: list(v) if isinstance(v, tuple) else v for k, v in expected.items()}


def test_the_rewrite_stage_follows_the_target(tmp_path, monkeypatch):
    """Intel's CPU runtime gets negations as fma (workaround negations-as-fma); another
    runtime keeps LLVM's fneg."""
    _, intel = _dumped(tmp_path / "intel", monkeypatch)
    _, other = _dumped(tmp_path / "other", monkeypatch, _other_runtime())
    assert b"llvm.fma" in intel["4-rewrite.ll"] and b" fneg " not in intel["4-rewrite.ll"]
    assert b" fneg " in other["4-rewrite.ll"] and b"llvm.fma" not in other["4-rewrite.ll"]


def _locals_and_doubles(a, out):
    tile = dk.local.array((16, 8), dk.float32)
    i = dk.get_global_id(0)
    tile[i % 16, i % 8] = a[i]
    dk.barrier(dk.LOCAL_MEM_FENCE)
    out[i] = tile[i % 16, i % 8] * np.float64(0.5)


def test_code_facts_are_read_from_the_spirv():
    artifact = compile_kernel(_locals_and_doubles, (F32, dk.usm_array(dk.float64, 1)))
    facts = artifact.facts(1)
    assert facts.local_memory == 16 * 8 * 4
    assert "fp64" in facts.aspects
    plain = compile_kernel(_negation_across_barrier, (F32, F32)).facts(1)
    assert (plain.aspects, plain.local_memory, plain.written_arguments) == ((), 0, (2,))
    assert code_facts(artifact.spirv) == facts


def test_options_and_target_round_trip_through_json():
    options = CompileOptions(fastmath=True, opt_level=2, debug=True, sub_group_size=16)
    assert CompileOptions.from_json(json.loads(json.dumps(options.to_json()))) == options
    target = Target.of(CPU)
    assert Target.from_json(json.loads(json.dumps(target.to_json()))) == target
    assert options.key() != CompileOptions().key()
    for bad in ({}, {**options.to_json(), "opt_level": 7}, {**options.to_json(), "x": 1}):
        with pytest.raises(ValueError):
            CompileOptions.from_json(bad)
    with pytest.raises(ValueError):
        Target.from_json({**target.to_json(), "float_atomics": "all"})


def test_a_bundled_artifact_has_only_its_variants():
    from dpex_kernels.artifacts import files

    artifact = compile_kernel(_negation_across_barrier, (F32, F32))
    stored: dict[str, bytes] = {}
    description = files.describe(artifact, stored.__setitem__, "k", (1,))
    read = files.read(json.loads(json.dumps(description)), stored.__getitem__)
    assert read.variant(1) == artifact.variant(1) and read.facts(1) == artifact.facts(1)
    assert (read.options, read.target, read.params) == (
        artifact.options,
        artifact.target,
        artifact.params,
    )
    with pytest.raises(KeyError, match="no 2-d variant"):
        read.variant(2)
    description["variants"]["1"]["local_memory"] = -1
    with pytest.raises(CorruptArtifacts):
        files.read(description, stored.__getitem__)


def test_a_bug_in_the_direct_front_end_is_an_internal_error_not_a_fallback(monkeypatch):
    from dpex_kernels.compiler.frontend.direct import typer

    def broken(self, node, env):
        raise KeyError("a bug in the direct front end")

    monkeypatch.setattr(typer.Typer, "expr_Name", broken)
    with pytest.raises(dk.KernelCompileError, match="internal error") as info:
        compile_kernel(_negation_across_barrier, (F32, F32))
    assert isinstance(info.value.__cause__, KeyError)


def test_a_user_error_still_reads_as_numbas_front_end_reports_it():
    def wrong(a, out):
        out[dk.get_global_id(0)] = a.no_such_attribute

    with pytest.raises(dk.KernelCompileError) as info:
        compile_kernel(wrong, (F32, F32))
    text = str(info.value)
    assert "no_such_attribute" in text and "internal error" not in text
