"""Presenting a run: terminal tables, the JSON file and the PNG plot of ratios."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from .cases.offload import GROUP as OFFLOAD_GROUP
from .cases.offload import offload_table
from .cases.sycl2020 import GROUP as SYCL2020_GROUP
from .cases.sycl2020 import sycl2020_table
from .cases.work_group import GROUP as WORK_GROUP
from .cases.work_group import work_group_table
from .compare import BANDWIDTH_GROUPS, CACHE_FACTOR, DEVICE_GROUP, ndpex_peer_case
from .results import (
    DPNP,
    EAGER,
    LAZY,
    MISSED,
    NDPEX,
    NDPEX_DPJIT,
    NDPEX_RAW,
    NJIT,
    NUMBA,
    NUMPY,
    OCL,
    OCL_DPCTL,
    OK,
    PY_LOOP,
    RAW,
    SKIPPED,
    SOM,
    Comparison,
    Row,
)
from .table import notes, prose, table

LAUNCH_COLUMNS = (RAW, EAGER, LAZY, NJIT, SOM, OCL)
NDPEX_LAUNCH_COLUMNS = (NDPEX_RAW, NDPEX, NDPEX_DPJIT, RAW, EAGER, NJIT)
BANDWIDTH_COLUMNS = (EAGER, RAW, OCL, DPNP, NUMBA, NUMPY, NDPEX)
SHORT = {
    RAW: "raw",
    SOM: "SOM/launch",
    NDPEX_RAW: "ndx raw",
    NDPEX_DPJIT: "ndx dpjit",
    OCL_DPCTL: "OCL dpctl",
}
LEGEND = "raw: SyclQueue.submit_async of the same SyclKernel, arguments packed beforehand"
LAUNCH_LEGEND = (
    "backlog B: launches pending behind a gate (one work-item busy on one core) while a burst"
    " is timed; raw behind a backlog chains on its previous event; B = 0: no gate",
    f"{SOM}: the old ordering, every launch depends on all of SequentialOrderManager's"
    " events and registers its own (information)",
    f"{OCL}: pyopencl enqueue on its own in-order queue (information); sync: nothing pending"
    " on that queue",
)


def _cell(row: Row | None) -> str:
    if row is None:
        return "-"
    if row.skipped:
        return "SKIPPED"
    digits = 1 if row.value >= 10 else 2
    text = f"{row.value:.{digits}f}"
    if row.spread is not None:
        text += f" ±{100 * row.spread:.0f}%"
    return text + ("!" if row.note.startswith("WRONG") else "")


def _mark(c: Comparison | None) -> str:
    if c is None:
        return "-"
    if c.ratio is None:
        return "SKIPPED" if c.target else "-"
    mark = {OK: " ok", MISSED: " MISSED"}.get(c.status, "")
    return f"{c.ratio:.3f}{mark}"


def _notes(rows: list[Row]) -> list[str]:
    seen: dict[str, list[str]] = {}
    for r in rows:
        if r.note:
            impls = seen.setdefault(r.note, [])
            if r.impl not in impls:
                impls.append(r.impl)
    return notes([f"{', '.join(impls)}: {note}" for note, impls in seen.items()])


def _matrix(
    title: str,
    rows: list[Row],
    columns: tuple[str, ...],
    ratios: list[tuple[str, dict[str, Comparison]]],
    marks: dict[str, str],
) -> list[str]:
    """One line per case: each implementation's median ± spread, then the ratio columns."""
    present = [c for c in columns if any(r.impl == c for r in rows)]
    cases = list(dict.fromkeys(r.case for r in rows))
    by_key = {(r.case, r.impl): r for r in rows}
    headers = [SHORT.get(c, c) for c in present] + [name for name, _ in ratios]
    body = [
        (
            case + marks.get(case, ""),
            [_cell(by_key.get((case, c))) for c in present]
            + [_mark(by_case.get(case)) for _, by_case in ratios],
        )
        for case in cases
    ]
    return table(title, headers, body) + _notes(rows)


def _select(
    comparisons: list[Comparison], group: str, subject: str | None, reference: str
) -> dict[str, Comparison]:
    return {
        c.case: c
        for c in comparisons
        if c.group == group
        and c.reference == reference
        and (subject is None or c.subject == subject)
    }


RATIO_NAMES = {
    EAGER: "eager/raw",
    LAZY: "lazy/raw",
    NJIT: "njit/raw",
    SOM: "SOM/raw",
    OCL: "OCL/raw",
}


def launch_table(rows: list[Row], comparisons: list[Comparison]) -> list[str]:
    """Per-launch µs by implementation and backlog, each over raw at the same backlog."""
    launch = [
        r
        for r in rows
        if r.group == "launch" and r.impl in LAUNCH_COLUMNS and "sweeps" not in r.params
    ]
    ratios = [
        (RATIO_NAMES[impl], _select(comparisons, "launch", impl, RAW))
        for impl in (EAGER, LAZY, NJIT, SOM, OCL)
    ]
    title = "launch overhead, us/launch"
    jacobi = [
        r
        for r in rows
        if r.group == "launch" and r.impl in (NJIT, PY_LOOP) and "sweeps" in r.params
    ]
    jacobi_ratio = [("njit/python", _select(comparisons, "launch", NJIT, PY_LOOP))]
    return (
        _matrix(title, launch, LAUNCH_COLUMNS, ratios, {})
        + _notes([r for r in rows if r.group == "launch" and r.case == "numba-dpex"])
        + (
            _matrix("Jacobi solver, ms per run", jacobi, (PY_LOOP, NJIT), jacobi_ratio, {})
            if jacobi
            else []
        )
    )


def _pending(row: Row | None) -> str:
    if row is None or row.skipped:
        return "-"
    return f"{row.params['pending_start']:.0f}-{row.params['pending_end']:.0f}"


def pending_table(rows: list[Row]) -> list[str]:
    """The backlog each implementation was measured at: pending launches before-after a burst."""
    launch = [r for r in rows if r.group == "launch" and "pending_start" in r.params]
    if not launch:
        return []
    present = [c for c in LAUNCH_COLUMNS if any(r.impl == c for r in launch)]
    cases = list(dict.fromkeys(r.case for r in launch))
    by_key = {(r.case, r.impl): r for r in launch}
    body = []
    for case in cases:
        burst = next(r.params["burst"] for r in launch if r.case == case and r.impl == RAW)
        cells = [_pending(by_key.get((case, c))) for c in present]
        body.append((case, cells + [str(burst)]))
    headers = [SHORT.get(c, c) for c in present] + ["burst"]
    return table("measured backlog (pending)", headers, body) + notes(
        ["launches pending before-after the burst of each one's first (untimed) sample"]
    )


def backlog_table(rows: list[Row], comparisons: list[Comparison]) -> list[str]:
    """How each ratio moves with the backlog, and how each implementation's own cost grows."""
    launch = [r for r in rows if r.group == "launch" and "backlog" in r.params and not r.skipped]
    backlogs = sorted({r.params["backlog"] for r in launch})
    if len(backlogs) < 2:
        return []
    value = {
        (r.params["label"], r.params["mode"], r.impl, r.params["backlog"]): r.value for r in launch
    }
    ratio = {}
    for c in comparisons:
        if c.group == "launch" and c.reference == RAW and c.ratio is not None:
            ratio[(c.params["label"], c.params["mode"], c.subject, c.params["backlog"])] = c.ratio
    kinds = [
        (label, mode)
        for label, mode in dict.fromkeys((r.params["label"], r.params["mode"]) for r in launch)
        if len({r.params["backlog"] for r in launch if r.params["label"] == label}) > 1
        and mode == "async"
    ]
    lo, hi = backlogs[0], backlogs[-1]
    title = "ratio to raw by backlog"
    body = []
    for label, mode in kinds:
        for impl in LAUNCH_COLUMNS:
            if not any(key[:3] == (label, mode, impl) for key in value):
                continue
            name = f"{label} {mode}  {RATIO_NAMES.get(impl, 'raw (own cost)')}"
            cells = []
            for b in backlogs:
                r = ratio.get((label, mode, impl, b))
                cells.append("-" if r is None else f"{r:.3f}")
            first, last = value.get((label, mode, impl, lo)), value.get((label, mode, impl, hi))
            cells.append("-" if first is None or last is None else f"{last / first:.2f} x")
            body.append((name, cells))
    headers = [f"B={b}" for b in backlogs] + [f"us at B={hi} / B={lo}"]
    return table(title, headers, body)


def ndpex_launch_table(rows: list[Row], comparisons: list[Comparison]) -> list[str]:
    """numba-dpex per-launch µs next to its own venv's raw floor and to dk (3 arguments)."""
    ndpex = [r for r in rows if r.group == "launch" and r.impl == NDPEX and not r.skipped]
    if not ndpex:
        return []
    cases = {r.case for r in ndpex}
    mine = [r for r in rows if r.group == "launch" and r.case in cases]
    for case in cases:  # our free-running peers: the same case at backlog 0
        peer = ndpex_peer_case(rows, case)
        mine += [
            dataclasses.replace(r, case=case)
            for r in rows
            if r.group == "launch" and r.case == peer and r.impl in (RAW, EAGER, NJIT)
        ]
    ratios = [
        ("ndpex/ndxraw", _select(comparisons, "launch", NDPEX, NDPEX_RAW)),
        ("ndpex/eager", _select(comparisons, "launch", NDPEX, EAGER)),
        ("dpjit/ndxraw", _select(comparisons, "launch", NDPEX_DPJIT, NDPEX_RAW)),
        ("dpjit/njit", _select(comparisons, "launch", NDPEX_DPJIT, NJIT)),
    ]
    title = "numba-dpex launch, us/launch"
    note = "raw, dk eager: this suite's 64 work-item case of 3 arrays at backlog 0, same mode"
    return _matrix(title, mine, NDPEX_LAUNCH_COLUMNS, ratios, {}) + notes([note])


def bandwidth_table(group: str, rows: list[Row], comparisons: list[Comparison]) -> list[str]:
    """GB/s by implementation and size, with dk/OpenCL C and dk/dpnp."""
    mine = [r for r in rows if r.group == group]
    ratios = [
        ("dk/OpenCL C", _select(comparisons, group, None, OCL)),
        ("dk/dpnp", _select(comparisons, group, None, DPNP)),
    ]
    if any(r.impl == NDPEX and not r.skipped for r in mine):
        ratios.append(("dk/ndpex", _select(comparisons, group, None, NDPEX)))
    marks = {c.case: " *" for c in comparisons if c.group == group and c.params.get("past_caches")}
    lines = _matrix(f"{group}, GB/s", mine, BANDWIDTH_COLUMNS, ratios, marks)
    subjects = {c.subject for c in comparisons if c.group == group}
    if subjects == {RAW}:
        lines += notes([f"ratios use '{RAW}' (the same SPIR-V kernel): the dispatcher is absent"])
    return lines


def device_time_table(rows: list[Row], comparisons: list[Comparison]) -> list[str]:
    """Device-time GB/s (± IQR) and median µs of dk and OpenCL C, and dk/OpenCL C, per case."""
    mine = [r for r in rows if r.group == DEVICE_GROUP]
    if not mine:
        return []
    present = [c for c in (EAGER, RAW, OCL, OCL_DPCTL) if any(r.impl == c for r in mine)]
    cases = list(dict.fromkeys(r.case for r in mine if r.impl in present))
    by_key = {(r.case, r.impl): r for r in mine}
    ratio = _select(comparisons, DEVICE_GROUP, None, OCL)
    control = _select(comparisons, DEVICE_GROUP, None, OCL_DPCTL)
    body = []
    for case in cases:
        past = any(by_key[key].params.get("past_caches") for key in by_key if key[0] == case)
        cells = [_cell(by_key.get((case, c))) for c in present]
        for c in present:
            r = by_key.get((case, c))
            us = r.params.get("device_us") if r is not None and not r.skipped else None
            cells.append("-" if us is None else f"{us:.0f}" if us >= 100 else f"{us:.1f}")
        cells.append(_mark(ratio.get(case)))
        cells += [_mark(control.get(case))] if control else []
        body.append((case + (" *" if past else ""), cells))
    headers = [SHORT.get(c, c) for c in present] + [f"{SHORT.get(c, c)} us" for c in present]
    headers += ["dk/OpenCL C"] + (["dk/OCL dpctl"] if control else [])
    texts = [
        "device time: profiling event start to end of each launch (no launch or queue cost);"
        " median of samples interleaved one by one",
        f"{SHORT[OCL_DPCTL]}: the same OpenCL C built by dpctl, run on dk's queue and dk's own"
        " arrays (information: same memory, only the code differs)",
    ]
    if {c.subject for c in ratio.values()} == {RAW}:
        texts.append(f"ratios use '{RAW}' (the same SPIR-V kernel): the dispatcher is absent")
    lines = table("kernel time on the device, GB/s", headers, body)
    return lines + notes(texts) + _notes(mine)


def simple_table(
    group: str, title: str, rows: list[Row], comparisons: list[Comparison] = ()
) -> list[str]:
    """case | implementation | median ± spread | ratio to a reference, one line each, by case."""
    mine = [r for r in rows if r.group == group]
    if not mine:
        return []
    cases = list(dict.fromkeys(r.case for r in mine))
    mine.sort(key=lambda r: cases.index(r.case))  # stable: each case's rows stay in run order
    ratio_of = {(c.case, c.subject): c for c in comparisons if c.group == group and c.reference}
    body = []
    for r in mine:
        value = "SKIPPED" if r.skipped else f"{r.value:.2f} {r.unit} ±{100 * r.spread:.0f}%"
        c = ratio_of.get((r.case, r.impl))
        cells = [r.impl, value]
        if ratio_of:
            cells.append(f"{c.ratio:.2f} x {c.reference}" if c and c.ratio is not None else "")
        body.append((r.case, cells))
    headers = ["implementation", "median"] + (["ratio"] if ratio_of else [])
    return table(title, headers, body, left=(0, 2)) + _notes(mine)


def memory_table(rows: list[Row], comparisons: list[Comparison]) -> list[str]:
    """RSS before, growth (worst and median run), launch time and target, per implementation."""
    mine = [r for r in rows if r.group == "memory"]
    if not mine:
        return []
    status = {(c.case, c.subject): c for c in comparisons if c.group == "memory"}
    headers = ("implementation", "runs", "RSS MiB", "growth max", "median", "us/launch", "target")
    body = []
    for r in mine:
        if r.skipped:
            body.append((r.case, [r.impl, "SKIPPED"] + [""] * (len(headers) - 2)))
            continue
        p = r.params
        c = status.get((r.case, r.impl))
        mark = f"{c.target} MiB {c.status}" if c is not None and c.target else "info"
        cells = [
            r.impl,
            str(p["runs"]),
            f"{p['before_mib']:.0f}",
            f"{r.value:.2f}",
            f"{p['growth_mib_median']:.2f}",
            f"{p['us_per_launch']:.1f}",
            mark,
        ]
        body.append((r.case, cells))
    return table("resident memory (fresh processes)", headers, body, left=(0,)) + _notes(mine)


def summary(comparisons: list[Comparison]) -> list[str]:
    """Counts of targets met, missed and skipped, and every MISSED one spelled out."""
    targeted = [c for c in comparisons if c.target]
    count = {s: sum(c.status == s for c in targeted) for s in (OK, MISSED, SKIPPED)}
    lines = [f"targets: {count[OK]} ok, {count[MISSED]} MISSED, {count[SKIPPED]} SKIPPED"]
    texts = []
    for c in targeted:
        if c.status == MISSED:
            extra = f" [{c.note}]" if c.note else ""
            if c.reference:
                what = f"{c.subject} / {c.reference} = {c.ratio:.3f} (target {c.target})"
            else:
                unit = c.params.get("unit", "")
                what = f"{c.subject} = {c.ratio:.2f} {unit} (target {c.target} {unit})"
            where = c.case.strip() + (" (device time)" if c.group == DEVICE_GROUP else "")
            texts.append(f"MISSED  {where}: {what}{extra}")
    skipped = {c.note for c in targeted if c.status == SKIPPED}
    texts += [f"SKIPPED {note.removeprefix('SKIPPED: ')}" for note in sorted(skipped)]
    return lines + notes(texts)


def render(
    rows: list[Row], comparisons: list[Comparison], machine: dict, mode: str, cache_bytes: int
) -> str:
    """The whole terminal report."""
    head = [
        f"dpex_kernels benchmarks ({mode} mode) on {machine['cpu']}, {machine['cores']} cores",
        f"device: {machine['device']}",
        f"load average (1 min) at start {machine.get('load_average_start')}, at end "
        f"{machine.get('load_average_end')}: other processes on these cores add noise",
        "each cell: median ± interquartile range / median",
        LEGEND,
    ]
    if machine.get("numba_dpex"):
        v = machine["numba_dpex"]
        head.append(
            f"numba-dpex rows: its own venv and process (not interleaved with the others): "
            f"numba-dpex {v.get('numba-dpex')}, numba {v.get('numba')}, dpctl {v.get('dpctl')}, "
            f"dpnp {v.get('dpnp')}, intel-opencl-rt {v.get('intel-opencl-rt')} "
            f"(driver {v.get('driver')})"
        )
    parts = prose(head)
    if any(r.group == "launch" for r in rows):
        parts += ["", *launch_table(rows, comparisons), *notes(LAUNCH_LEGEND)]
        parts += ["", *pending_table(rows)]
        moves = backlog_table(rows, comparisons)
        parts += ["", *moves] if moves else []
        ndpex = ndpex_launch_table(rows, comparisons)
        parts += ["", *ndpex] if ndpex else []
    for group, title in (("reject", "argument-mismatch rejection"), ("compile", "compile time")):
        if any(r.group == group for r in rows):
            parts += ["", *simple_table(group, title, rows, comparisons)]
    if any(r.group == "memory" for r in rows):
        parts += ["", *memory_table(rows, comparisons)]
    for group in BANDWIDTH_GROUPS:
        if any(r.group == group for r in rows):
            parts += ["", *bandwidth_table(group, rows, comparisons)]
    if any(r.group == DEVICE_GROUP for r in rows):
        parts += ["", *device_time_table(rows, comparisons)]
    if any(r.group == WORK_GROUP for r in rows):
        parts += ["", *work_group_table(rows, comparisons)]
    if any(r.group == SYCL2020_GROUP for r in rows):
        parts += ["", *sycl2020_table(rows, comparisons)]
    if any(r.group == OFFLOAD_GROUP for r in rows):
        parts += ["", *offload_table(rows, comparisons)]
    parts += notes(
        [
            f"* working set >= {CACHE_FACTOR} x last-level cache ({cache_bytes / 2**20:.0f} MiB):"
            " targets apply (dk/dpnp on wall clock; dk/OpenCL C on device time)"
        ]
    )
    parts += ["", *summary(comparisons)]
    return "\n".join(parts)


def write_json(
    path: Path, rows: list[Row], comparisons: list[Comparison], machine: dict, config: dict
) -> None:
    """Everything measured, with every sample, as JSON."""
    data = {
        "config": config,
        "machine": machine,
        "rows": [r.to_json() for r in rows],
        "comparisons": [c.to_json() for c in comparisons],
    }
    path.write_text(json.dumps(data, indent=1))
