"""Ratios between implementations, and the targets they are checked against (issue 5; memory)."""

from __future__ import annotations

from .cases.offload import offload_comparisons
from .cases.sycl2020 import sycl2020_comparisons
from .cases.work_group import work_group_comparisons
from .results import (
    DPNP,
    EAGER,
    INFO,
    LAZY,
    MISSED,
    NDPEX,
    NDPEX_DPJIT,
    NDPEX_RAW,
    NJIT,
    OCL,
    OCL_DPCTL,
    PY_LOOP,
    RAW,
    SKIPPED,
    SOM,
    Comparison,
    Row,
    check,
)

#: Per-launch time over raw submit_async at the same backlog: async launches, then launch + wait.
LAUNCH_TARGETS = {EAGER: "<= 0.9", LAZY: "<= 1.0", NJIT: "<= 0.6"}
SYNC_TARGETS = {EAGER: "<= 1.0", LAZY: "<= 1.0"}
LAUNCH_INFO = (SOM, OCL)
#: numba-dpex's worker times free-running loops: its cases beside ours at backlog 0.
NDPEX_CASES = {"64 wi async  3 args": "3 arrays async", "64 wi sync   3 args": "3 arrays sync"}
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


def ndpex_peer_case(rows: list[Row], case: str) -> str | None:
    """Our backlog-0 case beside a numba-dpex worker case, if we measured one."""
    prefix = NDPEX_CASES.get(case)
    if prefix is None:
        return None
    for r in rows:
        same = " ".join(r.case.split()).startswith(prefix)
        if r.group == "launch" and r.params.get("backlog") == 0 and same:
            return r.case
    return None


def launch_comparisons(rows: list[Row]) -> list[Comparison]:
    """dk eager and lazy per-launch time over raw submit_async at the same backlog; the other
    implementations over raw as information; numba-dpex over its own venv's floor and dk's."""
    idx, out = _index(rows), []
    for group, case in _cases(rows, ("launch",)):
        raw = idx.get((group, case, RAW))
        if raw is not None:
            targets = SYNC_TARGETS if raw.params.get("mode") == "sync" else LAUNCH_TARGETS
            for impl, target in targets.items():
                subject = idx.get((group, case, impl))
                if subject is None and impl == NJIT:
                    continue  # the compiled loop runs the 3-array async case only
                out.append(_ratio(group, case, subject, raw, target, raw.params))
            for impl in LAUNCH_INFO:
                if (group, case, impl) in idx:
                    out.append(_ratio(group, case, idx[(group, case, impl)], raw, "", raw.params))
        py_loop = idx.get((group, case, PY_LOOP))
        if py_loop is not None:  # the Jacobi solver: its loop in @njit over the same in Python
            out.append(_ratio(group, case, idx.get((group, case, NJIT)), py_loop, "", {}))
        ndpex = idx.get((group, case, NDPEX))
        if ndpex is not None and not ndpex.skipped:  # its own venv: its floor, then dk's
            out.append(_ratio(group, case, ndpex, idx.get((group, case, NDPEX_RAW)), "", {}))
            peer = ndpex_peer_case(rows, case)
            eager = idx.get((group, peer, EAGER)) if peer else None
            out.append(_ratio(group, case, ndpex, eager, "", {"peer_case": peer}))
        dpjit = idx.get((group, case, NDPEX_DPJIT))
        if dpjit is not None and not dpjit.skipped:  # its compiled loop: its floor, then ours
            out.append(_ratio(group, case, dpjit, idx.get((group, case, NDPEX_RAW)), "", {}))
            peer = ndpex_peer_case(rows, case)
            njit = idx.get((group, peer, NJIT)) if peer else None
            out.append(_ratio(group, case, dpjit, njit, "", {"peer_case": peer}))
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
        + sycl2020_comparisons(rows)
        + offload_comparisons(rows)
    )
