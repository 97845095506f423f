"""How far a suite run is, per group and case: a bar on a terminal, plain lines elsewhere.

run.py starts it; the row constructors of results.py report each case as it is measured, so
the cases need no progress code of their own. Rows made in worker processes report nothing.
"""

from __future__ import annotations

from dpex_kernels.cli.progress import Progress

_current: Progress | None = None


def start(groups: int) -> Progress:
    """The progress of a run of `groups` groups, which `measured` reports to until closed."""
    global _current
    _current = Progress("benchmarks", groups, " groups")
    return _current


def measured(group: str, case: str, impl: str) -> None:
    """One case of one implementation is measured (or skipped)."""
    if _current is not None:
        _current.show(f"{group}: {' '.join(case.split())}, {impl}")  # no column padding


def stop() -> None:
    """The run is over: close the bar; later rows (the report's) report nothing."""
    global _current
    if _current is not None:
        _current.close()
        _current = None
