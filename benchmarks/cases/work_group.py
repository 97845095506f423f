"""The work-group group: the examples' kernels against OpenCL C, dpnp and scikit-learn (issue 9).

Each case times its implementations in turn, sample by sample, in alternating order, and
takes medians. Against OpenCL C of the same algorithm (pyopencl, OpenCL's own index order:
dimension 0 fastest) the time is device time, from profiling events, first kernel's start to
last kernel's end; against dpnp and scikit-learn it is wall clock, result on the host or
waited for, since their kernels' events are not exposed. k-means times each implementation
as in its own loop of iterations (`timing.own_turns`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path

import dpex_kernels as dk  # first: it sets up the OpenCL ICD loader

# isort: split
import dpctl
import dpnp
import numpy as np

from .. import device
from ..config import Config
from ..opencl_peer import OpenCL
from ..results import (
    MISSED,
    OCL,
    Comparison,
    Row,
    check,
    peer_comparison,
    peer_table,
    skipped_row,
    time_row,
)
from ..table import notes
from ..timing import alternate, own_turns, summarise, wall_clock

GROUP = "work-group"
DK = "dk"
DPNP = "dpnp"
BLOCKED = "dk register-blocked"
CAS = "dk CAS loops"
SKLEARN = "scikit-learn"
OCL_BUILD = "pyopencl build"
OCL_SAME = "OpenCL C, dk's memory"
BARE = "bare program build"
REPO_ROOT = Path(__file__).resolve().parents[2]

#: (case, subject, reference, target): speed ratios are reference time / subject time, so
#: higher is better; compile ratios ("<=") are subject / reference, lower is better.
TARGETS = {
    "matmul": (DK, OCL, ">= 1.0"),
    "matmul dpnp": (DK, DPNP, ""),
    "matmul register-blocked": (DK, DPNP, ">= 0.5"),  # the stretch goal
    "sum": (DK, OCL, ">= 0.95"),
    "sum, same memory": (DK, OCL_SAME, ""),  # information: the code alone
    "sum dpnp": (DK, DPNP, ">= 1.2"),
    "sum sub-group dpnp": (DK, DPNP, ">= 1.2"),
    "histogram": (DK, OCL, ">= 0.95"),
    "histogram float weights": (DK, CAS, ">= 2.0"),  # native float atomics vs CAS loops
    "scan": (DK, DPNP, ">= 1.0"),
    "kmeans": (DK, SKLEARN, ">= 1.0"),
    "warm compile": (DK, OCL_BUILD, "<= 1.2"),
    "cached first launch": (DK, BARE, "<= 1.1"),
}
FIRST_USE_TARGET = "<= 1.5"  # seconds, absolute

OPENCL = """
#define TILE 16
#define WG 256
#define BLOCK (WG * PER_ITEM)
#define BINS 256

__kernel void matmul(__global const float *a, __global const float *b, __global float *c,
                     long rows, long inner, long cols) {
    long j = get_global_id(0), i = get_global_id(1);
    int lj = get_local_id(0), li = get_local_id(1);
    __local float a_tile[TILE][TILE], b_tile[TILE][TILE];
    float total = 0.0f;
    for (long t = 0; t < (inner + TILE - 1) / TILE; t++) {
        long ka = t * TILE + lj, kb = t * TILE + li;
        a_tile[li][lj] = (i < rows && ka < inner) ? a[i * inner + ka] : 0.0f;
        b_tile[li][lj] = (kb < inner && j < cols) ? b[kb * cols + j] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; k++) total += a_tile[li][k] * b_tile[k][lj];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < rows && j < cols) c[i * cols + j] = total;
}

__kernel void tree_sum(__global const float *x, long n, __global float *partial) {
    __local float scratch[WG];
    long lid = get_local_id(0), lane = get_sub_group_local_id(), width = get_sub_group_size();
    long run = (lid - lane) * PER_ITEM + lane, group = get_group_id(0);
    long groups = get_num_groups(0), blocks = n / BLOCK;
    float total = 0.0f;
    for (long b = group; b < blocks; b += groups)
        for (int k = 0; k < PER_ITEM; k++) total += x[b * BLOCK + run + k * width];
    if (group == groups - 1)
        for (int k = 0; k < PER_ITEM; k++)
            if (blocks * BLOCK + lid + k * WG < n) total += x[blocks * BLOCK + lid + k * WG];
    scratch[lid] = total;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = WG / 2; h > 0; h /= 2) {
        if (lid < h) scratch[lid] += scratch[lid + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partial[get_group_id(0)] = scratch[0];
}

__kernel void histogram_counts(__global const int *values, long n, __global int *bins) {
    __local int local_bins[BINS];
    int lid = get_local_id(0);
    for (int b = lid; b < BINS; b += WG) local_bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    long i = get_global_id(0), step = get_global_size(0);
    for (long k = 0; k < n / step + 1; k++) {
        long j = i + k * step;
        if (j < n) {
            int v = values[j];
            if (v >= 0 && v < BINS) atomic_add(&local_bins[v], 1);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < BINS; b += WG)
        if (local_bins[b] != 0) atomic_add(&bins[b], local_bins[b]);
}
"""


def sizes(cfg: Config) -> dict:
    """Problem sizes: the issue's in full mode, small ones in quick mode."""
    if cfg.mode == "quick":
        return {"matmul": 256, "vector": 2**20, "kmeans": 20_000, "samples": 5, "runs": 1}
    return {"matmul": 1024, "vector": 2**24, "kmeans": 200_000, "samples": 31, "runs": 3}


# --- timing ---------------------------------------------------------------------------------


def _device_s(first, last) -> float:
    last.wait()
    return (last.profiling_info_end - first.profiling_info_start) * 1e-9


def _ocl_s(first, last) -> float:
    last.wait()
    return (last.profile.end - first.profile.start) * 1e-9


def _rows(case: str, times: dict[str, list[float]], **params) -> list[Row]:
    return [time_row(GROUP, case, impl, summarise(t), "ms", **params) for impl, t in times.items()]


# --- cases ----------------------------------------------------------------------------------


class Peers:
    """The profiling queues of dk and pyopencl, and the OpenCL C program."""

    def __init__(self, ocl: OpenCL | None, notes: dict) -> None:
        # In order, like the pyopencl queue: a kernel that depends on the one before starts
        # when it ends, with no host round trip between them.
        self.q = dpctl.SyclQueue(device.DEVICE, property=["enable_profiling", "in_order"])
        self.ocl, self.why = ocl, notes.get("opencl", "")
        if ocl is not None:
            props = ocl.cl.command_queue_properties.PROFILING_ENABLE
            self.cq = ocl.cl.CommandQueue(ocl.context, properties=props)
            from examples import reduction

            options = [f"-DPER_ITEM={reduction.PER_ITEM}"]  # the sum's block, as dk's
            program = ocl.cl.Program(ocl.context, OPENCL).build(options=options)
            self.cl = {name: ocl.cl.Kernel(program, name) for name in ("matmul", "tree_sum")}
            self.cl["histogram"] = ocl.cl.Kernel(program, "histogram_counts")

    def array(self, host: np.ndarray) -> dpnp.ndarray:
        """`host` copied to dk's profiling queue."""
        return dpnp.asarray(host, sycl_queue=self.q)


def _matmul(p: Peers, n: int, samples: int) -> list[Row]:
    from examples import matmul_tiled

    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    da, db, dc = p.array(a), p.array(b), dpnp.empty((n, n), dtype="f4", sycl_queue=p.q)
    launch = matmul_tiled.matmul_kernel[matmul_tiled.launch_range(n, n)]

    def mine() -> float:
        ev = launch(da, db, dc)
        return _device_s(ev, ev)

    blocked = matmul_tiled.matmul_blocked_kernel[matmul_tiled.blocked_launch_range(n, n)]
    dc_blocked = dpnp.empty_like(dc)

    def mine_blocked() -> float:
        ev = blocked(da, db, dc_blocked)
        return _device_s(ev, ev)

    fns = {
        DK: mine,
        BLOCKED: mine_blocked,
        DPNP: wall_clock(lambda: dpnp.matmul(da, db).sycl_queue.wait()),
    }
    if p.ocl is not None:
        ba, bb = p.ocl.buffer(a), p.ocl.buffer(b)
        bc = p.ocl.buffer(np.empty_like(a))
        size = tuple(matmul_tiled.launch_range(n, n).global_range)
        knl, dims = p.cl["matmul"], (np.int64(n),) * 3

        def theirs() -> float:
            ev = knl(p.cq, size[::-1], (16, 16), ba, bb, bc, *dims)
            return _ocl_s(ev, ev)

        fns[OCL] = theirs
    times = alternate(fns, samples)
    expected = a @ b
    np.testing.assert_allclose(dpnp.asnumpy(dc), expected, rtol=1e-3)
    np.testing.assert_allclose(dpnp.asnumpy(dc_blocked), expected, rtol=1e-3)
    if p.ocl is not None:
        np.testing.assert_allclose(p.ocl.read(bc, a), expected, rtol=1e-3)
    blocked_times = {DK: times.pop(BLOCKED), DPNP: times[DPNP]}
    rows = _rows("matmul", times, n=n, dtype="float32")
    rows += [_copy_row(r, "matmul dpnp") for r in rows if r.impl in (DK, DPNP)]
    return rows + _rows("matmul register-blocked", blocked_times, n=n, dtype="float32")


def _copy_row(row: Row, case: str) -> Row:
    return dataclasses.replace(row, case=case)


def _sum(p: Peers, n: int, samples: int) -> list[Row]:
    from examples import reduction

    host = np.random.default_rng(1).random(n, dtype=np.float32)
    x = p.array(host)
    groups = reduction.groups_for(n)
    partial = dpnp.empty(groups, dtype="f4", sycl_queue=p.q)
    out = dpnp.empty(1, dtype="f4", sycl_queue=p.q)

    def mine() -> float:
        return _device_s(*reduction.launch_sum(x, partial, out, False))

    fns = {DK: mine}
    if p.ocl is not None:
        bx, bp = p.ocl.buffer(host), p.ocl.buffer(np.empty(groups, np.float32))
        bo = p.ocl.buffer(np.empty(1, np.float32))
        knl, wg = p.cl["tree_sum"], reduction.WORK_GROUP

        def theirs() -> float:
            first = knl(p.cq, (groups * wg,), (wg,), bx, np.int64(n), bp)
            last = knl(p.cq, (wg,), (wg,), bp, np.int64(groups), bo)
            return _ocl_s(first, last)

        # The same kernels reading dk's own input (a buffer over its pages): on the AMD VM of
        # session 20 page placement alone moved each side by 30-100 % (docs/benchmarks.md).
        bx_same = p.ocl.buffer_over(x)

        def theirs_same_memory() -> float:
            first = knl(p.cq, (groups * wg,), (wg,), bx_same, np.int64(n), bp)
            last = knl(p.cq, (wg,), (wg,), bp, np.int64(groups), bo)
            return _ocl_s(first, last)

        fns[OCL] = theirs
        fns[OCL_SAME] = theirs_same_memory
    device_times = alternate(fns, samples)
    expected = host.sum(dtype=np.float64)
    np.testing.assert_allclose(dpnp.asnumpy(out)[0], expected, rtol=1e-4)
    if p.ocl is not None:
        np.testing.assert_allclose(p.ocl.read(bo, np.empty(1, np.float32))[0], expected, rtol=1e-4)

    # Against dpnp.sum: the whole call as device_sum makes it, in both variants.
    def mine_wall(sub_groups: bool) -> Callable[[], float]:
        def run() -> None:
            _, last = reduction.launch_sum(x, partial, out, sub_groups)
            reduction.read_result(out, last)

        return wall_clock(run)

    fns = {"tree": mine_wall(False), "sub-group": mine_wall(True)}
    fns[DPNP] = wall_clock(lambda: float(dpnp.sum(x)))
    wall = alternate(fns, samples)
    for sub_groups in (False, True):
        got = reduction.read_result(out, reduction.launch_sum(x, partial, out, sub_groups)[1])
        np.testing.assert_allclose(got, expected, rtol=1e-4)
    params = {"n": n, "dtype": "float32"}
    same_memory = device_times.pop(OCL_SAME, None)
    rows = _rows("sum", device_times, **params)
    if same_memory is not None:
        rows += _rows("sum, same memory", {DK: device_times[DK], OCL_SAME: same_memory}, **params)
    for variant, case in (("tree", "sum dpnp"), ("sub-group", "sum sub-group dpnp")):
        rows += _rows(case, {DK: wall[variant], DPNP: wall[DPNP]}, **params)
    return rows


def _histogram(p: Peers, n: int, samples: int) -> list[Row]:
    from examples import histogram

    host = np.random.default_rng(2).integers(0, histogram.BINS, n).astype(np.int32)
    values = p.array(host)
    bins = dpnp.zeros(histogram.BINS, dtype="i4", sycl_queue=p.q)
    rng = histogram.launch_range(n)
    kernel = histogram.count_kernel(dk.int32, p.q.sycl_device.is_cpu)

    def mine() -> float:
        ev = kernel[rng](values, bins)
        return _device_s(ev, ev)

    fns = {DK: mine}
    if p.ocl is not None:
        bv, bb = p.ocl.buffer(host), p.ocl.buffer(np.zeros(histogram.BINS, np.int32))
        knl, gsize, wg = p.cl["histogram"], rng.global_range, histogram.WORK_GROUP

        def theirs() -> float:
            ev = knl(p.cq, tuple(gsize), (wg,), bv, np.int64(n), bb)
            return _ocl_s(ev, ev)

        fns[OCL] = theirs
    times = alternate(fns, samples)
    runs = 1 + samples  # the untimed run and the timed ones all add into the same bins
    expected = np.bincount(host, minlength=histogram.BINS) * runs
    np.testing.assert_array_equal(dpnp.asnumpy(bins), expected)
    if p.ocl is not None:
        np.testing.assert_array_equal(p.ocl.read(bb, expected.astype(np.int32)), expected)
    return _rows("histogram", times, n=n, dtype="int32")


def _histogram_weights(p: Peers, n: int, samples: int) -> list[Row]:
    """Float weights: the device's native float atomics against compare-and-swap loops."""
    from dpex_kernels import float_atomics
    from examples import histogram

    rng = np.random.default_rng(3)
    host = rng.integers(0, histogram.BINS, n).astype(np.int32)
    weights = rng.random(n, dtype=np.float32)
    values, w = p.array(host), p.array(weights)
    launch = histogram.launch_range(n)
    py_func = histogram.weighted_kernel(dk.float32).py_func
    kernels = {DK: dk.kernel(py_func), CAS: dk.kernel(py_func)}
    bins = {name: dpnp.zeros(histogram.BINS, dtype="f4", sycl_queue=p.q) for name in kernels}
    previous = os.environ.get(float_atomics.FORCE_VARIABLE)
    try:
        for name, mode in ((DK, "native"), (CAS, "cas")):
            os.environ[float_atomics.FORCE_VARIABLE] = mode
            kernels[name][launch](values, w, bins[name]).wait()  # compiled in that mode
    finally:
        if previous is None:
            del os.environ[float_atomics.FORCE_VARIABLE]
        else:
            os.environ[float_atomics.FORCE_VARIABLE] = previous

    def timed(name: str) -> Callable[[], float]:
        def run() -> float:
            ev = kernels[name][launch](values, w, bins[name])
            return _device_s(ev, ev)

        return run

    times = alternate({name: timed(name) for name in kernels}, samples)
    (native,) = kernels[DK].definitions.values()
    (loops,) = kernels[CAS].definitions.values()
    if set(loops.float_atomics.values()) != {"cas"}:
        raise RuntimeError(f"the CAS kernel was compiled {loops.float_atomics}")
    expected = np.bincount(host, weights, minlength=histogram.BINS)
    runs = 2 + samples  # the compiling run, the untimed one and the timed ones add up
    for name in kernels:
        np.testing.assert_allclose(dpnp.asnumpy(bins[name]), expected * runs, rtol=1e-3)
    paths = ",".join(sorted(set(native.float_atomics.values())))
    return _rows("histogram float weights", times, n=n, dtype="float32", atomics=paths)


def _scan(p: Peers, n: int, samples: int, dtype: str) -> list[Row]:
    from examples import scan

    host = np.random.default_rng(3).integers(-100, 100, n).astype(dtype)
    x = p.array(host)
    out = dpnp.empty_like(x)
    scratch = scan.scratch_for(x)
    fns = {
        DK: wall_clock(lambda: scan.launch_scan(x, out, scratch).wait()),
        DPNP: wall_clock(lambda: dpnp.cumsum(x, dtype=x.dtype).sycl_queue.wait()),
    }
    times = alternate(fns, samples)
    expected = np.cumsum(host, dtype=dtype)
    np.testing.assert_allclose(dpnp.asnumpy(out)[1:], expected[:-1], rtol=1e-4)
    return _rows(f"scan {dtype}", times, n=n, dtype=dtype)


def _kmeans(n: int, clusters: int, samples: int) -> list[Row]:
    import threadpoolctl
    from sklearn.cluster._k_means_lloyd import lloyd_iter_chunked_dense
    from sklearn.utils._openmp_helpers import _openmp_effective_n_threads

    from examples import kmeans

    rng = np.random.default_rng(clusters)
    x = rng.random((n, 14), dtype=np.float32)
    x -= x.mean(axis=0)
    init = x[rng.choice(n, clusters, replace=False)].copy()
    state = kmeans.KMeansState.start(x, init.copy())

    def mine() -> None:  # one Lloyd iteration from the same centres each time
        state.centres = init
        state.assign()
        state.update()
        state.labels_changed()

    new, weights = np.zeros_like(init), np.zeros(clusters, np.float32)
    labels, shift = np.full(n, -1, np.int32), np.zeros(clusters, np.float32)
    ones, threads = np.ones(n, np.float32), _openmp_effective_n_threads()

    def theirs() -> None:
        lloyd_iter_chunked_dense(x, ones, init, new, weights, labels, shift, threads)

    # KMeans.fit runs its iterations with BLAS on one thread (OpenMP uses all): as it does.
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        times = own_turns({DK: wall_clock(mine), SKLEARN: wall_clock(theirs)}, samples)
    differ = np.mean(dpnp.asnumpy(state.labels) != labels)
    if differ > 1e-3:  # float32 near-ties may go either way; more is a wrong result
        raise AssertionError(f"{differ:.2%} of the labels differ from scikit-learn's")
    return _rows(
        f"kmeans {clusters} clusters", times, n=n, features=14, clusters=clusters, threads=threads
    )


# --- compile --------------------------------------------------------------------------------

_fresh = iter(range(1, 1 << 30))


def fresh_matmul() -> types.FunctionType:
    """The tiled matmul's code under a new name: nothing compiled or built before matches."""
    from examples import matmul_tiled

    f = matmul_tiled.matmul_kernel.py_func
    name = f"matmul_{next(_fresh)}"
    code = f.__code__.replace(co_name=name)
    return types.FunctionType(code, f.__globals__, name, f.__defaults__, f.__closure__)


def _warm_compile(p: Peers, repeat: int) -> list[Row]:
    """As many samples as the other cases: a single build varies by 20-40 % with the load."""
    f32_2d = dk.usm_array(dk.float32, 2, device=device.DEVICE)
    sig = dk.void(f32_2d, f32_2d, f32_2d)
    dk.kernel(sig)(fresh_matmul())  # the compiler is warm from here on
    fns = {DK: wall_clock(lambda: dk.kernel(sig)(fresh_matmul()))}
    if p.ocl is not None:
        cl = p.ocl.cl
        source = OPENCL.split("__kernel void tree_sum")[0]

        def build() -> None:
            unique = f"{source}\n// build {next(_fresh)}\n"
            cl.Kernel(cl.Program(p.ocl.context, unique).build(), "matmul")

        fns[OCL_BUILD] = wall_clock(build)
    return _rows("warm compile", alternate(fns, repeat), kernel="tiled matmul")


def _worker(*args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.work_group_worker", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"worker {args[0]} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _fresh_processes(runs: int) -> list[Row]:
    """The ten-kernel module's first use; with cache=True, the second process's first
    launches against the bare program builds of the same SPIR-V (each in a fresh process)."""
    hits, bare = [], []
    with tempfile.TemporaryDirectory(prefix="dpex-wg-cache-") as folder:
        filled = _worker("cached", folder)  # a first use as well, one that also fills the cache
        if runs == 1:  # quick mode: that one is the first-use sample
            first = [filled["seconds"]]
        else:
            first = [_worker("first-use")["seconds"] for _ in range(runs)]
        for _ in range(runs):
            hit = _worker("cached", folder)
            if hit["compiles"] or hit["cache_hits"] != hit["kernels"]:
                raise RuntimeError(f"the second process compiled: {hit}")
            hits.append(hit["prepare_s"])
            bare.append(_worker("bare", folder)["seconds"])
    params = {"kernels": filled["kernels"]}
    rows = [time_row(GROUP, "ten-kernel module, first use", DK, summarise(first), "ms")]
    rows.append(time_row(GROUP, "cached first launch", DK, summarise(hits), "ms", **params))
    rows.append(time_row(GROUP, "cached first launch", BARE, summarise(bare), "ms", **params))
    return rows


# --- the group ------------------------------------------------------------------------------


def run_work_group(cfg: Config, ocl: OpenCL | None, notes: dict) -> list[Row]:
    """Every case of the group; a case that fails is reported as a skipped row."""
    s = sizes(cfg)
    peers = Peers(ocl, notes)
    cases: list[tuple[str, Callable[[], list[Row]]]] = [
        ("ten-kernel module, first use", lambda: _fresh_processes(s["runs"])),
        ("warm compile", lambda: _warm_compile(peers, s["samples"])),
        ("matmul", lambda: _matmul(peers, s["matmul"], s["samples"])),
        ("sum", lambda: _sum(peers, s["vector"], s["samples"])),
        ("histogram", lambda: _histogram(peers, s["vector"], s["samples"])),
        ("histogram float weights", lambda: _histogram_weights(peers, s["vector"], s["samples"])),
        ("scan int32", lambda: _scan(peers, s["vector"], s["samples"], "int32")),
        ("scan float32", lambda: _scan(peers, s["vector"], s["samples"], "float32")),
    ]
    for k in (8, 32, 127):
        cases.append((f"kmeans {k} clusters", lambda k=k: _kmeans(s["kmeans"], k, s["samples"])))
    rows: list[Row] = []
    for case, run in cases:
        try:
            rows += run()
        except Exception as exc:  # one broken case must not hide the rest
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
            rows.append(skipped_row(GROUP, case, DK, "ms", f"failed: {reason}"))
        peers.q.wait()
    if ocl is None:
        rows.append(skipped_row(GROUP, "matmul", OCL, "ms", notes.get("opencl", "")))
    return rows


def _target_of(case: str) -> tuple[str, str, str] | None:
    """The case's entry in TARGETS ("scan int32" and "kmeans 8 clusters" share theirs)."""
    return TARGETS.get(case) or TARGETS.get(case.split()[0])


def work_group_comparisons(rows: list[Row]) -> list[Comparison]:
    """Each case's ratio against its peer, and the module's first use against 1.5 s."""
    mine = {(r.case, r.impl): r for r in rows if r.group == GROUP}
    out = []
    for case in dict.fromkeys(r.case for r in rows if r.group == GROUP):
        if case == "ten-kernel module, first use":
            r = mine[(case, DK)]
            seconds = None if r.skipped else r.value / 1e3
            status = check(seconds, FIRST_USE_TARGET)
            params = {"unit": "s"}
            out.append(
                Comparison(GROUP, case, DK, "", seconds, FIRST_USE_TARGET, status, params, r.note)
            )
            continue
        found = _target_of(case)
        if found is not None:
            out.append(peer_comparison(GROUP, case, mine, *found))
    return out


def work_group_table(rows: list[Row], comparisons: list[Comparison]) -> list[str]:
    """case | dk median | peer median | ratio | target, one line per comparison."""
    title = "work-group (ms, median ± IQR)"
    lines = peer_table(GROUP, title, "dk", rows, comparisons)
    if not lines:
        return []
    return lines + notes(
        [
            "ratios: peer time / dk time (higher is better), compile: dk / peer (lower is "
            "better); device time against OpenCL C, wall clock against dpnp and scikit-learn;"
            " 'same memory': the OpenCL C reads dk's input array, not a buffer of its own"
        ]
    )


def plot_panel(ax, comparisons: list[Comparison]) -> None:
    """Horizontal bars: each work-group ratio, normalised so that 1 is its target."""
    shown = [c for c in comparisons if c.group == GROUP and c.ratio is not None and c.target]
    labels, values, colours = [], [], []
    for c in shown:
        bound = float(c.target.split()[1])
        lower = c.target.startswith("<")
        values.append(bound / c.ratio if lower else c.ratio / bound)
        labels.append(f"{c.case} vs {c.reference or 'target'}: {c.ratio:.2f} ({c.target})")
        colours.append("tab:red" if c.status == MISSED else "tab:blue")
    ax.barh(range(len(shown)), values, color=colours)
    ax.set_yticks(range(len(shown)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.axvline(1.0, color="k", linestyle="--", linewidth=0.8)
    ax.set_xlabel("ratio / target (right of the dashed line: target met)")
    ax.set_title("work-group kernels (red: target missed)")
    if not shown:
        ax.text(0.5, 0.5, "no work-group ratios measured", ha="center", transform=ax.transAxes)
