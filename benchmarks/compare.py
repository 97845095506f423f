"""Ratios between implementations, and the targets they are checked against (issue 5; memory)."""

from __future__ import annotations

from .cases.work_group import work_group_comparisons
from .results import (
    DPNP,
    EAGER,
    INFO,
    LAZY,
    MISSED,
    NDPEX,
    NDPEX_RAW,
    OCL,
    OCL_DPCTL,
    RAW,
    RAW_KA,
    SKIPPED,
    Comparison,
    Row,
    check,
)

LAUNCH_TARGETS = {EAGER: "<= 1.25", LAZY: "<= 1.4"}
LAUNCH_INFO = (RAW_KA, OCL, NDPEX)
BANDWIDTH_TARGET = ">= 0.95"
BANDWIDTH_GROUPS = ("vecadd", "triad", "stencil")
#: Kernel time on the device (profiling events): the code-generation target is judged here.
DEVICE_GROUP = "device-time"
#: RSS growth in MiB over this many launches; shorter (quick) runs are information only.
MEMORY_TARGET, MEMORY_TARGET_LAUNCHES = "< 5", 100_000
#: A working set at least this many times the last-level cache counts as "past the caches".
CACHE_FACTOR = 4


def _index(rows: list[Row]) -> dict[tuple[str, str, str], Row]:
    return {(r.group, r.case, r.impl): r for r in rows}


def _cases(rows: list[Row], groups: tuple[str, ...]) -> list[tuple[str, str]]:
    seen: dict[tuple[str, str], None] = {}
    for r in rows:
        if r.group in groups:
            seen[(r.group, r.case)] = None
    return list(seen)


def _ratio(
    group, case, subject: Row | None, reference: Row | None, target: str, params: dict
) -> Comparison:
    sname = subject.impl if subject else "?"
    rname = reference.impl if reference else "?"
    missing = [r for r in (subject, reference) if r is None or r.skipped]
    if missing:
        note = missing[0].note if missing[0] is not None else "not measured"
        status = SKIPPED if target else INFO
        return Comparison(group, case, sname, rname, None, target, status, params, note)
    ratio = subject.value / reference.value
    wrong = [r.impl for r in (subject, reference) if r.note.startswith("WRONG")]
    status = check(ratio, target)
    note = f"WRONG result from {', '.join(wrong)}" if wrong else ""
    if wrong and target:
        status = MISSED
    return Comparison(group, case, sname, rname, ratio, target, status, params, note)


def launch_comparisons(rows: list[Row]) -> list[Comparison]:
    """dk eager and lazy per-launch time over raw submit_async, plus the other peers (info)."""
    idx, out = _index(rows), []
    for group, case in _cases(rows, ("launch",)):
        raw = idx.get((group, case, RAW))
        if raw is None:
            continue
        for impl, target in LAUNCH_TARGETS.items():
            out.append(_ratio(group, case, idx.get((group, case, impl)), raw, target, raw.params))
        for impl in LAUNCH_INFO:
            if (group, case, impl) in idx:
                out.append(_ratio(group, case, idx[(group, case, impl)], raw, "", raw.params))
        ndpex = idx.get((group, case, NDPEX))
        if ndpex is not None:  # measured in its own venv: against that venv's floor, and dk's
            for ref in (NDPEX_RAW, EAGER):
                out.append(_ratio(group, case, ndpex, idx.get((group, case, ref)), "", raw.params))
    return out


def bandwidth_comparisons(rows: list[Row], cache_bytes: int) -> list[Comparison]:
    """dk GB/s over OpenCL C (information) and over dpnp (targeted past the caches), wall clock.

    Without the dispatcher, the subject is the same SPIR-V kernel launched raw (its code quality).
    """
    idx, out = _index(rows), []
    for group, case in _cases(rows, BANDWIDTH_GROUPS):
        subject = idx.get((group, case, EAGER))
        if subject is None or subject.skipped:
            subject = idx.get((group, case, RAW))
        if subject is None:
            continue
        params = dict(subject.params)
        past = params.get("bytes", 0) >= CACHE_FACTOR * cache_bytes
        params["past_caches"] = past
        for ref in (OCL, DPNP):
            # dk against OpenCL C is code generation, judged on device time (device-time group);
            # here, wall clock with each runtime's launch cost in it, it is information.
            target = BANDWIDTH_TARGET if past and ref == DPNP else ""
            out.append(_ratio(group, case, subject, idx.get((group, case, ref)), target, params))
        if (group, case, NDPEX) in idx:
            out.append(_ratio(group, case, subject, idx[(group, case, NDPEX)], "", params))
    return out


def device_time_comparisons(rows: list[Row]) -> list[Comparison]:
    """dk GB/s over OpenCL C's, both from device (profiling-event) time; targeted past the caches.

    The target is against the pyopencl kernel; the ratio to the same OpenCL C built by dpctl on
    dk's arrays is information. The rows carry `past_caches` themselves (the case chose its sizes
    by it). Without the dispatcher, the subject is the compiler's SyclKernel launched raw.
    """
    idx, out = _index(rows), []
    for group, case in _cases(rows, (DEVICE_GROUP,)):
        subject = idx.get((group, case, EAGER))
        if subject is None or subject.skipped:
            subject = idx.get((group, case, RAW)) or subject
        if subject is None:
            continue
        params = {k: v for k, v in subject.params.items() if not k.endswith("_samples_s")}
        target = BANDWIDTH_TARGET if params.get("past_caches") else ""
        out.append(_ratio(group, case, subject, idx.get((group, case, OCL)), target, params))
        if (group, case, OCL_DPCTL) in idx:  # the control on dk's own arrays: information
            out.append(_ratio(group, case, subject, idx[(group, case, OCL_DPCTL)], "", params))
    return out


def compile_comparisons(rows: list[Row]) -> list[Comparison]:
    """Warm compile time of dk eager (or the compiler pipeline) over OpenCL C's build, and
    numba-dpex's first call over dk's (lazy first call warm; eager compile in a fresh process).
    All information only."""
    idx, out = _index(rows), []
    for group, case in _cases(rows, ("compile",)):
        subject = idx.get((group, case, EAGER))
        if subject is None or subject.skipped:
            subject = idx.get((group, case, "compile_kernel + build"))
        reference = idx.get((group, case, OCL))
        if subject is not None and reference is not None:
            out.append(_ratio(group, case, subject, reference, "", {}))
        ndpex = idx.get((group, case, NDPEX + " (first call)"))
        mine = idx.get((group, case, LAZY + " (first call)")) or idx.get((group, case, EAGER))
        if ndpex is not None and mine is not None:
            out.append(_ratio(group, case, ndpex, mine, "", {}))
    return out


def memory_comparisons(rows: list[Row]) -> list[Comparison]:
    """RSS growth of every implementation; dk eager's is targeted on full-length runs only."""
    out = []
    for r in rows:
        if r.group != "memory":
            continue
        full = r.params.get("launches", 0) >= MEMORY_TARGET_LAUNCHES
        target = MEMORY_TARGET if r.impl == EAGER and full else ""
        params = dict(r.params, unit=r.unit)
        if r.skipped:
            status = SKIPPED if target else INFO
            out.append(
                Comparison(r.group, r.case, r.impl, "", None, target, status, params, r.note)
            )
            continue
        status = MISSED if target and r.note.startswith("WRONG") else check(r.value, target)
        note = "WRONG result" if r.note.startswith("WRONG") else ""
        out.append(Comparison(r.group, r.case, r.impl, "", r.value, target, status, params, note))
    return out


def all_comparisons(rows: list[Row], cache_bytes: int) -> list[Comparison]:
    """Every comparison of a run."""
    return (
        launch_comparisons(rows)
        + bandwidth_comparisons(rows, cache_bytes)
        + device_time_comparisons(rows)
        + compile_comparisons(rows)
        + memory_comparisons(rows)
        + work_group_comparisons(rows)
    )
