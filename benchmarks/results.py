"""What a benchmark run produces: measured rows and the ratios compared against targets."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import progress
from .table import notes, table
from .timing import Stats

OK, MISSED, INFO, SKIPPED = "ok", "MISSED", "info", "SKIPPED"


@dataclass
class Row:
    """One measured (or skipped) implementation of one case."""

    group: str  # launch, reject, compile, memory, vecadd, triad, stencil
    case: str  # human-readable case name, unique within its group
    impl: str  # which implementation ran it
    unit: str  # "us", "ms" or "GB/s"
    value: float | None = None  # median in `unit`; None when skipped
    spread: float | None = None  # interquartile range / median; None for a single reading
    samples_s: list[float] = field(default_factory=list)
    params: dict = field(default_factory=dict)
    note: str = ""  # SKIPPED reason, WRONG result, ...

    @property
    def skipped(self) -> bool:
        """Whether this row holds no measurement."""
        return self.value is None

    def to_json(self) -> dict:
        """A plain dict for the JSON report."""
        return asdict(self)


@dataclass
class Comparison:
    """subject / reference for one case, with the target it must meet (if any).

    Without a reference (reference == ""), `ratio` is the subject's own value in
    params["unit"] (memory growth in MiB), checked against an absolute target such as "< 5".
    """

    group: str
    case: str
    subject: str
    reference: str
    ratio: float | None
    target: str = ""  # "<= 1.25", ">= 0.95" or "" for information only
    status: str = INFO
    params: dict = field(default_factory=dict)
    note: str = ""

    def to_json(self) -> dict:
        """A plain dict for the JSON report."""
        return asdict(self)


def time_row(group: str, case: str, impl: str, stats: Stats, unit: str, **params) -> Row:
    """A row whose value is a median time, converted to `unit` (us or ms)."""
    scale = {"us": 1e6, "ms": 1e3, "s": 1.0}[unit]
    progress.measured(group, case, impl)
    return Row(
        group,
        case,
        impl,
        unit,
        stats.median * scale,
        stats.spread,
        list(stats.samples),
        dict(params),
    )


def bandwidth_row(group: str, case: str, impl: str, stats: Stats, nbytes: int, **params) -> Row:
    """A row whose value is GB/s moved at the median time."""
    progress.measured(group, case, impl)
    return Row(
        group,
        case,
        impl,
        "GB/s",
        nbytes / stats.median / 1e9,
        stats.spread,
        list(stats.samples),
        dict(params, bytes=nbytes),
    )


def skipped_row(group: str, case: str, impl: str, unit: str, reason: str, **params) -> Row:
    """A row for an implementation that could not run here, and why."""
    progress.measured(group, case, impl)
    return Row(group, case, impl, unit, None, None, [], dict(params), f"SKIPPED: {reason}")


def check(ratio: float | None, target: str) -> str:
    """ok / MISSED for a ratio against a target such as '<= 1.25' or '< 5'; info without one."""
    if not target:
        return INFO
    if ratio is None:
        return SKIPPED
    op, text = target.split()
    bound = float(text)
    met = {"<": ratio < bound, "<=": ratio <= bound, ">": ratio > bound, ">=": ratio >= bound}[op]
    return OK if met else MISSED


def peer_comparison(
    group: str, case: str, mine: dict, subject: str, reference: str, target: str
) -> Comparison:
    """`subject` against `reference` in one case of a group whose cases each have one peer:
    peer time / subject time, or subject / peer where the target is an upper bound."""
    s, ref = mine.get((case, subject)), mine.get((case, reference))
    if s is None or ref is None or s.skipped or ref.skipped:
        note = next((r.note for r in (s, ref) if r is not None and r.skipped), "not measured")
        status = SKIPPED if target else INFO
        return Comparison(group, case, subject, reference, None, target, status, {}, note)
    ratio = s.value / ref.value if target.startswith("<") else ref.value / s.value
    return Comparison(
        group, case, subject, reference, ratio, target, check(ratio, target), s.params
    )


def peer_table(group: str, title: str, subject: str, rows: list, comparisons: list) -> list[str]:
    """case | subject median | peer median | ratio | target, a line per comparison of `group`
    (a comparison without a peer is in seconds), then the comparisons' notes."""
    mine = {(r.case, r.impl): r for r in rows if r.group == group}
    if not mine:
        return []
    body, texts = [], []

    def cell(row: Row | None) -> str:
        if row is None or row.skipped:
            return "SKIPPED" if row is not None else "-"
        return f"{row.value:.2f} ±{100 * (row.spread or 0):.0f}%"

    for c in (c for c in comparisons if c.group == group):
        s, r = mine.get((c.case, c.subject)), mine.get((c.case, c.reference))
        peer = f"{c.reference}: {cell(r)}" if c.reference else ""
        ratio = "-" if c.ratio is None else f"{c.ratio:.3f}"
        if not c.reference and c.ratio is not None:
            ratio = f"{c.ratio:.2f} s"
        mark = {OK: "ok", MISSED: "MISSED"}.get(c.status, c.status)
        target = f"{c.target} {mark}" if c.target else "info"
        body.append((c.case, [cell(s), peer, ratio, target]))
        if c.note:
            texts.append(f"{c.case}: {c.note}")
    lines = table(title, [subject, "peer", "ratio", "target"], body, left=(3,))
    return lines + notes(texts)


# Implementation names, used as table columns and JSON values.
RAW = "raw submit_async"
SOM = "SOM per launch"  # the old ordering: all of dpctl's pending events, every launch
EAGER = "dk eager"
LAZY = "dk lazy"
NJIT = "dk @njit loop"  # the same launch, from a loop in Numba-compiled host code
PY_LOOP = "dk Python loop"
OCL = "OpenCL C"
OCL_DPCTL = "OpenCL C (dpctl)"  # the OpenCL C source built by dpctl, on dk's queue and arrays
DPNP = "dpnp"
NUMBA = "numba host"
NUMPY = "numpy host"
NDPEX = "numba-dpex"
NDPEX_RAW = "raw (numba-dpex venv)"  # must match numba_dpex_worker.RAW_IMPL
NDPEX_DPJIT = "numba-dpex dpjit loop"  # must match numba_dpex_worker.DPJIT_IMPL
