"""What a benchmark run produces: measured rows and the ratios compared against targets."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

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
