"""benchmarks/profile_compile.py (docs/compiler.md): every stage reported, none counted twice."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_profile_compile_reports_each_stage_once():
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.profile_compile", "--kernels", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()[1:]
    stages = {line.rsplit(maxsplit=1)[0].strip(): float(line.split()[-1]) for line in lines}
    for stage in ("typing", "lowering", "optimise", "emit", "build: program"):
        assert stages[stage] > 0, stages
    parts = sum(ms for name, ms in stages.items() if name != "total")
    assert min(stages.values()) >= 0
    # medians of parts need not add up to the median total exactly, but nothing is counted twice
    assert parts <= stages["total"] * 1.25, stages
