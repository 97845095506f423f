"""benchmarks/offload_programs.py at a small size: each program runs under @dk.offload, as its
explicit @dk.kernel twin and under numba.njit(parallel=True) (on NumPy and USM memory), and
`measure` checks they agree (the real assertions) and raises where one does not."""

from __future__ import annotations

import pytest

import dpex_kernels as dk
from benchmarks import offload_programs

SCALE = 1 / 256  # the smallest inputs: 16 rows where the full run has 4096


def test_each_program_runs_every_way_checked_and_timed(cpu_device):
    rows = offload_programs.measure(scale=SCALE, samples=1)
    assert [row["program"] for row in rows] == list(offload_programs.PROGRAMS)
    assert set(offload_programs.KERNELS) == set(offload_programs.PROGRAMS)
    for row in rows:
        for kind in ("first", "median"):
            times = row[kind]
            assert set(times) == set(offload_programs.IMPLEMENTATIONS), (row["program"], kind)
            assert all(seconds > 0 for seconds in times.values()), (row["program"], kind, times)


@dk.kernel
def l2_norm_first_column(a, d):
    i = dk.get_global_id(0)
    d[i] = a[i, 0]


def test_measure_raises_when_the_kernel_disagrees(cpu_device, monkeypatch):
    every_input = offload_programs.inputs
    monkeypatch.setattr(
        offload_programs,
        "inputs",
        lambda scale, rng: {"l2-norm": every_input(scale, rng)["l2-norm"]},
    )
    monkeypatch.setitem(
        offload_programs.KERNELS, "l2-norm", (l2_norm_first_column, lambda a, d: a.shape[0])
    )
    with pytest.raises(AssertionError, match="l2-norm: kernel differs from numba in output 0"):
        offload_programs.measure(scale=SCALE, samples=1)
