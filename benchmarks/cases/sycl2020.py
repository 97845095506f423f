"""The sycl2020 group: SYCL 2020's kernel forms against what they replace (issue 38).

- work-group sum: each work-group's sum by dk.reduce_over_group against the hand-written tree
  in local memory of examples/reduction.py (the same reads, the same launch), device time;
- single-launch sum (examples/single_launch_reduction.py: the last work-group sums the
  partials) against the two-stage sum of examples/reduction.py (device time, first kernel's
  start to last kernel's end) and against dpnp.sum (wall clock, the result on the host);
- scan: examples/scan_group_algorithms.py against examples/scan.py (wall clock, three
  launches each);
- item kernels against the same free-function kernels: the SPIR-V compared, and device time.

Each case times its implementations in turn, sample by sample, in alternating order, on one
in-order profiling queue, and takes medians; every ratio comes from one run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader

# isort: split
import dpctl
import dpnp
import numpy as np

from .. import device
from ..config import Config
from ..results import (
    OK,
    Comparison,
    Row,
    check,
    peer_comparison,
    peer_table,
    skipped_row,
    time_row,
)
from ..table import notes
from ..timing import alternate, summarise, wall_clock
from .work_group import _device_s

GROUP = "sycl2020"
DK = "dk"
TREE = "local-memory tree"
TWO_STAGE = "two-stage sum"
DPNP = "dpnp"
LOCAL_SCAN = "local-memory scan"
FREE = "free functions"
ITEM = "item object"

#: case -> (subject, reference, target); ratios are reference time / subject time (higher is
#: better) except "<=" targets, which are subject / reference (lower is better).
TARGETS = {
    "work-group sum": (DK, TREE, ">= 1.0"),
    "single-launch sum": (DK, TWO_STAGE, "> 1.0"),
    "single-launch sum dpnp": (DK, DPNP, ">= 1.5"),
    "scan int32": (DK, LOCAL_SCAN, ">= 1.0"),
    "scan float32": (DK, LOCAL_SCAN, ">= 1.0"),
}
ITEM_TARGET = "<= 1.02"


def sizes(cfg: Config) -> dict:
    """Problem sizes: the issue's 2^24 float32 in full mode, small ones in quick mode."""
    if cfg.mode == "quick":
        return {"vector": 2**20, "samples": 5}
    return {"vector": 2**24, "samples": 31}


@functools.cache
def group_sum_kernel(dtype):
    """examples/reduction.py's first stage with reduce_over_group for its tree."""
    from examples.reduction import BLOCK, PER_ITEM, WORK_GROUP

    @dk.kernel
    def group_sum(it, x, partial):
        g = it.get_group()
        sg = it.get_sub_group()
        lid = it.get_local_id(0)
        lane, width = sg.get_local_id(), sg.get_local_range()
        run = (lid - lane) * PER_ITEM + lane
        group, groups = g.get_group_id(0), g.get_group_range(0)
        blocks = x.size // BLOCK
        total = dtype(0)
        for block in range(group, blocks, groups):
            start = block * BLOCK + run
            for k in range(PER_ITEM):
                total += x[dk.uint64(start + k * width)]
        if group == groups - 1:
            rest = blocks * BLOCK + lid
            for k in range(PER_ITEM):
                if rest + k * WORK_GROUP < x.size:
                    total += x[dk.uint64(rest + k * WORK_GROUP)]
        partial_sum = dk.reduce_over_group(g, total, dk.plus)
        if g.leader():
            partial[group] = partial_sum

    return group_sum


def _rows(case: str, times: dict[str, list[float]], **params) -> list[Row]:
    return [time_row(GROUP, case, impl, summarise(t), "ms", **params) for impl, t in times.items()]


class Queue:
    """dk's in-order profiling queue: a kernel that depends on the one before starts when it
    ends, with no host round trip between them."""

    def __init__(self) -> None:
        self.q = dpctl.SyclQueue(device.DEVICE, property=["enable_profiling", "in_order"])

    def array(self, host: np.ndarray) -> dpnp.ndarray:
        return dpnp.asarray(host, sycl_queue=self.q)


def _work_group_sum(q: Queue, n: int, samples: int) -> list[Row]:
    from examples import reduction

    host = np.random.default_rng(1).random(n, dtype=np.float32)
    x = q.array(host)
    groups = reduction.groups_for(n)
    launch = dk.NdRange(groups * reduction.WORK_GROUP, reduction.WORK_GROUP)
    tree = reduction.tree_kernel(dk.float32)[launch]
    group = group_sum_kernel(dk.float32)[launch]
    partials = {name: dpnp.empty(groups, dtype="f4", sycl_queue=q.q) for name in (DK, TREE)}

    def timed(launcher, out) -> Callable[[], float]:
        def run() -> float:
            ev = launcher(x, out)
            return _device_s(ev, ev)

        return run

    times = alternate({DK: timed(group, partials[DK]), TREE: timed(tree, partials[TREE])}, samples)
    for out in partials.values():
        np.testing.assert_allclose(dpnp.asnumpy(out).sum(), host.sum(dtype=np.float64), rtol=1e-4)
    return _rows("work-group sum", times, n=n, dtype="float32")


def _single_launch_sum(q: Queue, n: int, samples: int) -> list[Row]:
    from examples import reduction, single_launch_reduction

    host = np.random.default_rng(2).random(n, dtype=np.float32)
    x = q.array(host)
    summer = single_launch_reduction.Summer(q.q)
    out = dpnp.empty(1, dtype="f4", sycl_queue=q.q)
    partial = dpnp.empty(reduction.groups_for(n), dtype="f4", sycl_queue=q.q)
    two_out = dpnp.empty(1, dtype="f4", sycl_queue=q.q)

    def single() -> float:
        ev = summer.launch(x, out)
        return _device_s(ev, ev)

    def two_stage() -> float:
        return _device_s(*reduction.launch_sum(x, partial, two_out, False))

    device_times = alternate({DK: single, TWO_STAGE: two_stage}, samples)
    expected = host.sum(dtype=np.float64)
    for result in (out, two_out):
        np.testing.assert_allclose(dpnp.asnumpy(result)[0], expected, rtol=1e-4)

    def single_on_host() -> None:
        got = single_launch_reduction.read_result(out, summer.launch(x, out))
        if abs(got - expected) > 1e-4 * abs(expected):
            raise AssertionError(f"single-launch sum {got}, expected {expected}")

    wall = alternate(
        {DK: wall_clock(single_on_host), DPNP: wall_clock(lambda: float(dpnp.sum(x)))}, samples
    )
    params = {"n": n, "dtype": "float32"}
    return _rows("single-launch sum", device_times, **params) + _rows(
        "single-launch sum dpnp", wall, **params
    )


def _scan(q: Queue, n: int, samples: int, dtype: str) -> list[Row]:
    """Both scans launch three kernels: wall clock, the last one waited for."""
    from examples import scan, scan_group_algorithms

    host = np.random.default_rng(3).integers(-100, 100, n).astype(dtype)
    x = q.array(host)
    outs = {DK: dpnp.empty_like(x), LOCAL_SCAN: dpnp.empty_like(x)}
    scratch = {name: scan.scratch_for(x) for name in outs}
    launchers = {DK: scan_group_algorithms.launch_scan, LOCAL_SCAN: scan.launch_scan}

    def timed(name: str) -> Callable[[], float]:
        return wall_clock(lambda: launchers[name](x, outs[name], scratch[name]).wait())

    times = alternate({name: timed(name) for name in outs}, samples)
    expected = np.cumsum(host, dtype=dtype)
    for out in outs.values():
        np.testing.assert_allclose(dpnp.asnumpy(out)[1:], expected[:-1], rtol=1e-4)
    return _rows(f"scan {dtype}", times, n=n, dtype=dtype)


def _item_kernels(q: Queue, n: int, samples: int) -> list[Row]:
    """A 2-d stencil written with the item and with the free functions: the same SPIR-V
    instructions, and their device times."""

    def item_form(item, a, b):
        i, j = item.get_id(0), item.get_id(1)
        rows, cols = item.get_range(0), item.get_range(1)
        if 0 < i < rows - 1 and 0 < j < cols - 1:
            b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    def free_form(a, b):
        i, j = dk.get_global_id(0), dk.get_global_id(1)
        rows, cols = dk.get_global_size(0), dk.get_global_size(1)
        if 0 < i < rows - 1 and 0 < j < cols - 1:
            b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    side = int(np.sqrt(n))
    host = np.random.default_rng(4).random((side, side), dtype=np.float32)
    a = q.array(host)
    kernels, outs = {}, {}
    for name, function in ((ITEM, item_form), (FREE, free_form)):
        function.__name__ = function.__qualname__ = "stencil"  # one symbol for both
        kernels[name] = dk.kernel(function)
        outs[name] = dpnp.zeros_like(a)
    launch = dk.Range(side, side)

    def timed(name: str) -> Callable[[], float]:
        def run() -> float:
            ev = kernels[name][launch](a, outs[name])
            return _device_s(ev, ev)

        return run

    times = alternate({name: timed(name) for name in kernels}, samples)
    np.testing.assert_array_equal(dpnp.asnumpy(outs[ITEM]), dpnp.asnumpy(outs[FREE]))
    spirv = [next(iter(kernel.definitions.values())).spirv for kernel in kernels.values()]
    identical = _instructions(spirv[0]) == _instructions(spirv[1])
    return _rows("item kernel", times, n=side * side, dtype="float32", identical_spirv=identical)


def _instructions(spirv: bytes) -> list[tuple[int, int]]:
    """(opcode, word count) of each instruction but debug names: the code without its ids."""
    words = np.frombuffer(spirv, dtype="<u4")
    found, at = [], 5
    while at < len(words):
        count, opcode = int(words[at]) >> 16, int(words[at]) & 0xFFFF
        if opcode not in (3, 5, 6, 7, 8, 317):  # OpSource, OpName, ..., OpNoLine
            found.append((opcode, count))
        at += max(count, 1)
    return found


def run_sycl2020(cfg: Config) -> list[Row]:
    """Every case of the group; a case that fails is reported as a skipped row."""
    s = sizes(cfg)
    q = Queue()
    cases: list[tuple[str, Callable[[], list[Row]]]] = [
        ("work-group sum", lambda: _work_group_sum(q, s["vector"], s["samples"])),
        ("single-launch sum", lambda: _single_launch_sum(q, s["vector"], s["samples"])),
        ("scan int32", lambda: _scan(q, s["vector"], s["samples"], "int32")),
        ("scan float32", lambda: _scan(q, s["vector"], s["samples"], "float32")),
        ("item kernel", lambda: _item_kernels(q, s["vector"], s["samples"])),
    ]
    rows: list[Row] = []
    for case, run in cases:
        try:
            rows += run()
        except Exception as exc:  # one broken case must not hide the rest
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
            rows.append(skipped_row(GROUP, case, DK, "ms", f"failed: {reason}"))
        q.q.wait()
    return rows


def sycl2020_comparisons(rows: list[Row]) -> list[Comparison]:
    """Each case's ratio against what it replaces; item kernels: their SPIR-V and times."""
    mine = {(r.case, r.impl): r for r in rows if r.group == GROUP}
    out = [
        peer_comparison(GROUP, case, mine, *target)
        for case, target in TARGETS.items()
        if any(c == case for c, _ in mine)
    ]
    item, free = mine.get(("item kernel", ITEM)), mine.get(("item kernel", FREE))
    if item is not None and free is not None and not item.skipped and not free.skipped:
        ratio = item.value / free.value
        identical = bool(item.params.get("identical_spirv"))
        status = OK if identical else check(ratio, ITEM_TARGET)
        note = "identical SPIR-V" if identical else "the SPIR-V differs"
        out.append(
            Comparison(GROUP, "item kernel", ITEM, FREE, ratio, ITEM_TARGET, status, {}, note)
        )
    return out


def sycl2020_table(rows: list[Row], comparisons: list[Comparison]) -> list[str]:
    """case | dk median | peer median | ratio | target, one line per comparison."""
    lines = peer_table(GROUP, "SYCL 2020 forms (ms, median ± IQR)", "dk", rows, comparisons)
    if not lines:
        return []
    return lines + notes(
        [
            "ratios: peer time / dk time (higher is better); item kernel: item time / "
            "free-function time (met when the SPIR-V is the same); device time, but wall "
            "clock for 'single-launch sum dpnp' (the result on the host) and the scans"
        ]
    )
