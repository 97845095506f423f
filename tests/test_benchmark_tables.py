"""The benchmark report fits 100 columns (benchmarks/table.py): wide tables split into blocks,
long case names shortened, notes wrapped; and every figure is still in it."""

from __future__ import annotations

import re

from benchmarks import report
from benchmarks.results import EAGER, OCL, OK, RAW, Comparison, Row
from benchmarks.table import MAX_LABEL, WIDTH, notes, table

LONG = "a case whose name goes on and on, far past any sensible column width, " * 2


def test_a_wide_table_splits_into_blocks_that_fit():
    headers = [f"implementation number {i}" for i in range(9)]
    rows = [(f"{LONG} {r}", [f"{r}.{i}{i} ±{i}%" for i in range(9)]) for r in range(4)]
    lines = table("speeds, GB/s", headers, rows)
    assert max(len(line) for line in lines) <= WIDTH
    text = "\n".join(lines)
    assert all(h in text for h in headers)  # every column is shown, in some block
    assert all(cell in text for _, cells in rows for cell in cells)
    heads = [line for line in lines if line.startswith("speeds, GB/s")]
    assert len(heads) > 1 and "speeds, GB/s, continued" in heads[1]
    labels = [line[:MAX_LABEL] for line in lines if line.startswith("a case")]
    assert all(label.endswith("…") for label in labels)  # shortened, the JSON has them whole


def test_a_narrow_table_is_one_block_with_aligned_columns():
    lines = table("t", ["raw", "dk eager"], [("case one", ["1.0", "20.25"]), ("two", ["3", "4"])])
    assert lines == [
        "t         raw  dk eager",
        "-----------------------",
        "case one  1.0     20.25",
        "two         3         4",
    ]


def test_notes_wrap_with_a_hanging_indent():
    lines = notes(["word " * 60])
    assert len(lines) > 1 and max(len(line) for line in lines) <= WIDTH
    assert lines[0].startswith("  word") and all(line.startswith("    word") for line in lines[1:])


def test_the_report_fits_100_columns():
    cases = [f"vecadd float32 2^{n} {LONG}" for n in (16, 20, 24)]
    impls = (EAGER, RAW, OCL, "dpnp", "numba host", "numpy host")
    rows = [
        Row(
            "vecadd", case, impl, "GB/s", 100.0 + i, 0.05, note="SKIPPED: " + LONG if i == 5 else ""
        )
        for case in cases
        for i, impl in enumerate(impls)
    ]
    rows += [
        Row("compile", LONG, EAGER, "ms", 12.5, 0.1),
        Row("compile", LONG, OCL, "ms", 50.0, 0.2),
    ]
    comparisons = [Comparison("vecadd", case, EAGER, OCL, 0.98, ">= 0.95", OK) for case in cases]
    comparisons.append(Comparison("compile", LONG, EAGER, OCL, 0.25))
    machine = {"cpu": "AMD EPYC " + LONG, "cores": 2, "device": "opencl:cpu:0 " + LONG}
    text = report.render(rows, comparisons, machine, "quick", 32 * 2**20)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= WIDTH, max(lines, key=len)
    assert "vecadd, GB/s" in text and "compile time" in text
    assert len(re.findall(r"0\.980 ok", text)) == 3  # each ratio still there
    assert "0.25 x OpenCL C" in text
