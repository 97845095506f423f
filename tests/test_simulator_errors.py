"""Errors in simulated kernels, as a Python programmer expects them (issue 35, item 3)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import numpy as np
import pytest

import dpex_kernels as dk

ROOT = Path(__file__).resolve().parent.parent


class Overflow(Exception):
    pass


@dk.kernel
def checked_sqrt(a, out):
    i = dk.get_global_id(0)
    if a[i] < 0:
        raise Overflow("negative input")
    out[i] = a[i] ** 0.5


def test_an_exception_stops_the_launch_with_its_traceback_and_work_item():
    a = np.array([4.0, 9.0, 16.0, -1.0, 25.0, 36.0, -4.0, 1.0])
    out = np.zeros_like(a)
    with pytest.raises(Overflow, match="negative input") as caught:
        checked_sqrt.simulate[dk.NdRange(8, 4)](a, out)
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "work-item global id (3,) (local id (3,) of work-group (0,))" in notes
    assert "checked_sqrt" in notes
    frames = traceback.extract_tb(caught.value.__traceback__)
    kernel_frames = [f for f in frames if f.name == "checked_sqrt"]
    assert kernel_frames and kernel_frames[-1].line == 'raise Overflow("negative input")'
    names = [f.name for f in frames]  # the launch call, then straight into the kernel
    assert "_run_item" not in names and "_body" not in names, names
    # the launch stopped: work-items after the failing one did not run
    np.testing.assert_array_equal(out[:3], [2.0, 3.0, 4.0])
    assert out[4] == 0


def test_an_exception_while_others_wait_at_a_barrier_unwinds_them():
    @dk.kernel
    def fails_mid_group(a):
        lid = dk.get_local_id(0)
        dk.barrier()
        if lid == 2:
            raise ValueError("item two gives up")
        dk.barrier()
        a[dk.get_global_id(0)] = 1

    a = np.zeros(8)
    with pytest.raises(ValueError, match="item two gives up"):
        fails_mid_group.simulate[dk.NdRange(8, 4)](a)
    # the simulator is left in a state to run more launches
    b = np.zeros(4)
    checked_sqrt.simulate[4](np.ones(4), b)
    np.testing.assert_array_equal(b, np.ones(4))


@dk.kernel
def off_by_one(a, out):
    i = dk.get_global_id(0)
    out[i] = a[i + 1] - a[i]


def test_out_of_bounds_names_array_index_size_line_and_work_item():
    a = np.arange(6.0)
    out = np.zeros(6)
    with pytest.raises(dk.KernelBoundsError) as caught:
        off_by_one.simulate[6](a, out)
    message = str(caught.value)
    assert "index 6 is out of bounds for axis 0 of 'a' with size 6" in message
    assert f"{Path(__file__).name}:" in message and "out[i] = a[i + 1] - a[i]" in message
    assert "work-item global id (5,)" in message
    assert isinstance(caught.value, IndexError)
    np.testing.assert_array_equal(out[:5], np.ones(5))


def test_negative_indices_wrap_and_too_negative_ones_are_out_of_bounds():
    @dk.kernel
    def last(a, out, k):
        out[dk.get_global_id(0)] = a[k]

    a = np.arange(5.0)
    out = np.zeros(1)
    last.simulate[1](a, out, -1)
    assert out[0] == 4.0
    with pytest.raises(dk.KernelBoundsError, match="index -6 is out of bounds"):
        last.simulate[1](a, out, -6)


def test_local_array_smaller_than_the_work_group():
    @dk.kernel
    def staged(a, out):
        lid = dk.get_local_id(0)
        tile = dk.local.array(8, dk.float64)
        tile[lid] = a[dk.get_global_id(0)]
        dk.barrier()
        out[dk.get_global_id(0)] = tile[lid]

    a = np.arange(16.0)
    with pytest.raises(dk.KernelBoundsError) as caught:
        staged.simulate[dk.NdRange(16, 16)](a, np.zeros(16))
    message = str(caught.value)
    assert "local array 'tile'" in message and "index 8" in message
    assert "work-group has 16 work-items, more than the local array's 8" in message


def test_two_dimensional_bounds_name_the_axis():
    @dk.kernel
    def transpose(m, out):
        i = dk.get_global_id(0)
        j = dk.get_global_id(1)
        out[j, i] = m[i, j]

    with pytest.raises(dk.KernelBoundsError) as caught:
        transpose.simulate[(2, 3)](np.zeros((2, 3)), np.zeros((2, 2)))
    message = str(caught.value)
    assert "index 2 is out of bounds for axis 0 of 'out' with size 2" in message
    assert "work-item global id (0, 2)" in message


def _run_script(tmp_path: Path, source: str, stdin: str) -> subprocess.CompletedProcess:
    script = tmp_path / "kernel_with_breakpoint.py"
    script.write_text(textwrap.dedent(source))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONBREAKPOINT": "pdb.set_trace"}
    return subprocess.run(
        [sys.executable, str(script)],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )


def test_breakpoint_stops_inside_the_kernel_with_locals_visible(tmp_path):
    source = """
        import numpy as np
        import dpex_kernels as dk

        @dk.kernel
        def scaled(a, out):
            i = dk.get_global_id(0)
            twice = a[i] * 2
            if i == 2:
                breakpoint()
            out[i] = twice

        out = np.zeros(4)
        scaled.simulate[4](np.arange(4.0) + 10, out)
        print("result", out.tolist())
    """
    done = _run_script(tmp_path, source, "p i\np twice\nwhere\nc\n")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "(Pdb) np.int64(2)" in lines, done.stdout
    assert "(Pdb) np.float64(24.0)" in lines, done.stdout
    assert "kernel_with_breakpoint.py(11)scaled()" in done.stdout
    assert "-> out[i] = twice" in done.stdout
    assert "result [20.0, 22.0, 24.0, 26.0]" in done.stdout


def test_breakpoint_in_a_work_group_with_barriers(tmp_path):
    source = """
        import numpy as np
        import dpex_kernels as dk

        @dk.kernel
        def shifted(a, out):
            lid = dk.get_local_id(0)
            tile = dk.local.array(4, dk.float64)
            tile[lid] = a[dk.get_global_id(0)]
            dk.barrier()
            neighbour = tile[(lid + 1) % 4]
            if dk.get_global_id(0) == 5:
                breakpoint()
            out[dk.get_global_id(0)] = neighbour

        out = np.zeros(8)
        shifted.simulate[dk.NdRange(8, 4)](np.arange(8.0), out)
        print("result", out.tolist())
    """
    done = _run_script(tmp_path, source, "p lid, neighbour\nc\n")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "(Pdb) (np.int64(1), np.float64(6.0))" in done.stdout, done.stdout
    assert "result [1.0, 2.0, 3.0, 0.0, 5.0, 6.0, 7.0, 4.0]" in done.stdout
