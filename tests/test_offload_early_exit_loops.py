"""Count-down loops that stop early (offloading/early_exit_loops.py): the nest's kernel has them
written out under a mask where that keeps the results, and as written where it does not.
Either way an offloaded call leaves its arrays as the Python interpreter leaves NumPy copies
of them, running the same function (prange as range): the same sums in the same order, and
every element no live iteration updates left bit for bit as it was (-0.0, NaN, inf)."""

from __future__ import annotations

from collections.abc import Callable

import dpnp
import numpy as np
import pytest
from conftest import CPU, param_id
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import prange
from numba.core import ir

import dpex_kernels as dk
from dpex_kernels.offloading import early_exit_loops
from dpex_kernels.offloading.regions import control_flow

#: The counter's decrement and exit, as gpairs writes them.
COUNTDOWN = "k -= 1\nif k < 0:\n    break"


def count_down(
    body: list[str], start="rbins.shape[0] - 1", condition="d <= rbins[k]", after=""
) -> Callable:
    """A function like pair_bins with the loop body, start, condition and statement after
    the loop given, compiled from source without a file (offload reads its bytecode)."""
    lines = "\n".join(body).replace("\n", "\n" + " " * 16)
    source = f"""
def program(x, w, m, rbins, counts):
    for i in prange(x.shape[0]):
        for j in range(x.shape[0]):
            d = (x[i] - x[j]) * (x[i] - x[j])
            k = {start}
            while {condition}:
                {lines}
            {after}
"""
    namespace = {"prange": prange}
    exec(source, namespace)
    return namespace["program"]


#: gpairs' loop over its bins, in one dimension.
pair_bins = count_down(["counts[i, k] += w[i] * w[j]", COUNTDOWN])
#: The same with `*=` and `-=`, a second exit on data in the middle of the iteration, and a
#: constant start.
pair_bins_scaled = count_down(
    [
        "v = w[j]",
        "counts[i, k] *= v",
        "if d > w[i] - 0.5:\n    break",
        "counts[i, k] -= v * 0.5",
        COUNTDOWN,
    ],
    start="3",
)

#: Loops the rewrite must leave as written.
LEFT_AS_WRITTEN = {
    "the counter read after the loop": count_down(
        ["counts[i, k] += w[j]", COUNTDOWN], after="counts[i, 0] += k"
    ),
    "a store, not an update in place": count_down(["counts[i, k] = w[j]", COUNTDOWN]),
    "a division": count_down(["counts[i, k] += w[j] / (k + 1)", COUNTDOWN]),
}


def written_out(monkeypatch) -> list:
    """The bodies early_exit_loops.unrolled returns from now on (None where it leaves one)."""
    found = []
    unrolled = early_exit_loops.unrolled

    def recording(region):
        body = unrolled(region)
        found.append(body)
        return body

    monkeypatch.setattr(early_exit_loops, "unrolled", recording)
    return found


def run(function, *arrays) -> np.ndarray:
    """`counts` after the offloaded call on device copies of the arguments."""
    on_device = [dpnp.asarray(a, device=CPU) for a in arrays]
    dk.offload(function)(*on_device)
    return dpnp.asnumpy(on_device[-1])


def interpreted(function, *arrays) -> np.ndarray:
    """`counts` after the Python interpreter ran the function on NumPy copies."""
    copies = [a.copy() for a in arrays]
    function(*copies)
    return copies[-1]


def assert_same(got: np.ndarray, expected: np.ndarray, before: np.ndarray, rtol: float) -> None:
    """The same values (NaN where NaN), and bit for bit where no iteration updated them."""
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=0, equal_nan=True)
    kept = expected.view(np.uint8).reshape(*expected.shape, -1) == before.view(np.uint8).reshape(
        *before.shape, -1
    )
    kept = kept.all(axis=-1)
    np.testing.assert_array_equal(got[kept].view(np.uint8), before[kept].view(np.uint8))


def inputs(rng, points: int, bins: int, dtype) -> tuple:
    """(x, w, m, rbins, counts): points in [0, 1), weights of points and of pairs, bins not
    sorted (the loop stops at the first that fails), counts starting from values a dead
    iteration must keep: -0.0, NaN, inf and ordinary numbers."""
    x = rng.random(points).astype(dtype)
    w = rng.uniform(0.5, 2.0, points).astype(dtype)
    m = rng.uniform(-1.0, 1.0, (points, points)).astype(dtype)
    rbins = rng.uniform(-0.3, 1.0, bins).astype(dtype)  # negative bins stop every pair
    specials = np.array([-0.0, np.nan, np.inf, -np.inf, 1.5, -2.25], dtype)
    counts = rng.choice(specials, (points, bins))
    return x, w, m, rbins, counts


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    points=st.integers(1, 40),
    bins=st.integers(1, 16),
    dtype=st.sampled_from(["float32", "float64"]),
)
def test_written_out_loops_keep_the_results(seed, points, bins, dtype):
    rng = np.random.default_rng(seed)
    arguments = inputs(rng, points, bins, dtype)
    expected = interpreted(pair_bins, *arguments)
    got = run(pair_bins, *arguments)
    assert_same(got, expected, arguments[-1], rtol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"], ids=param_id)
def test_a_second_exit_and_other_updates(monkeypatch, dtype):
    bodies = written_out(monkeypatch)
    rng = np.random.default_rng(3)
    x, w, m, rbins, counts = inputs(rng, 33, 4, dtype)
    w = rng.uniform(-1.0, 1.0, 33).astype(dtype)
    expected = interpreted(pair_bins_scaled, x, w, m, rbins, counts)
    got = run(pair_bins_scaled, x, w, m, rbins, counts)
    assert_same(got, expected, counts, rtol=1e-5 if dtype == "float32" else 1e-12)
    assert any(body is not None for body in bodies)


def test_the_benchmark_loop_is_written_out(monkeypatch):
    bodies = written_out(monkeypatch)
    rng = np.random.default_rng(5)
    arguments = inputs(rng, 24, 16, "float64")
    assert_same(
        run(pair_bins, *arguments), interpreted(pair_bins, *arguments), arguments[-1], 1e-12
    )
    (body,) = [body for body in bodies if body is not None]
    # the body checks the extents first, and runs the loop as written where they are short
    check = body[0].terminator
    assert isinstance(check, ir.Branch)
    names = {var.name for stmt in body[0].body for var in stmt.list_vars()}
    assert {"counts", "rbins"} <= names
    loops = control_flow(body).loops().values()
    assert [loop.header for loop in loops if loop.header >= check.falsebr]
    assert len([loop for loop in loops if loop.header < check.falsebr]) == 1  # the j loop only


@pytest.mark.parametrize("name", LEFT_AS_WRITTEN)
def test_loops_left_as_written(monkeypatch, name):
    bodies = written_out(monkeypatch)
    function = LEFT_AS_WRITTEN[name]
    rng = np.random.default_rng(11)
    arguments = inputs(rng, 20, 5, "float64")
    expected = interpreted(function, *arguments)
    assert_same(run(function, *arguments), expected, arguments[-1], rtol=1e-12)
    assert bodies and all(body is None for body in bodies)


def test_integer_counts_left_as_written(monkeypatch):
    bodies = written_out(monkeypatch)
    rng = np.random.default_rng(13)
    x, w, m, rbins, _ = inputs(rng, 20, 5, "float64")
    counts = rng.integers(-5, 5, (20, 5))
    w = rng.integers(1, 4, 20)
    expected = interpreted(pair_bins, x, w, m, rbins, counts)
    np.testing.assert_array_equal(run(pair_bins, x, w, m, rbins, counts), expected)
    assert bodies and all(body is None for body in bodies)


def test_more_bins_than_written_out(monkeypatch):
    """20 bins: the extent is no constant (extents.SMALL), so the loop's trip count is not
    known when the kernel compiles."""
    bodies = written_out(monkeypatch)
    rng = np.random.default_rng(17)
    arguments = inputs(rng, 20, 20, "float64")
    assert_same(
        run(pair_bins, *arguments), interpreted(pair_bins, *arguments), arguments[-1], 1e-12
    )
    assert bodies and all(body is None for body in bodies)


def test_narrow_counts_run_the_loop_as_written():
    """Counts narrower than the bins, where no pair reaches the bins past its columns: the
    loop as written never reaches them, and the written-out loop's check of the extents
    sends every work-item to it."""
    rng = np.random.default_rng(19)
    x, w, m, rbins, _ = inputs(rng, 20, 8, "float64")
    rbins[3:] = -1.0  # no distance is negative: the loop stops at its first bin
    counts = rng.random((20, 3))
    got = run(pair_bins, x, w, m, rbins, counts)
    np.testing.assert_array_equal(got, counts)


@st.composite
def count_down_programs(draw) -> tuple[Callable, int]:
    """(a function like pair_bins, its smallest number of bins): a count-down loop from the
    last bin or a constant, on one of several conditions, with updates of three operators,
    temporaries, loads of pairs' weights and a second exit drawn in order, the counter's
    decrement and exit before or after them."""
    start = draw(st.sampled_from(["rbins.shape[0] - 1", "0", "2", "5"]))
    condition = draw(
        st.sampled_from(["d <= rbins[k]", "rbins[k] >= d", "not (d > rbins[k])", "d < rbins[k]"])
    )
    pieces = [
        "counts[i, k] += w[i] * w[j]",
        "counts[i, k] -= d",
        "counts[i, k] *= w[j]",
        "t = w[j] + d\ncounts[i, k] += t",
        "counts[i, k] += m[i, j]",
        "counts[i, k] -= m[j, i] * d",
        "if d > w[i] - 0.5:\n    break",
    ]
    body = draw(st.lists(st.sampled_from(pieces), min_size=1, max_size=4))
    body.insert(draw(st.integers(0, len(body))), COUNTDOWN)
    smallest = 1 if start.startswith("rbins") else int(start) + 1
    return count_down(body, start, condition), smallest


@settings(max_examples=15, deadline=None)
@given(program=count_down_programs(), seed=st.integers(0, 2**32 - 1), more=st.integers(0, 10))
def test_generated_count_down_loops(program, seed, more):
    function, smallest = program
    rng = np.random.default_rng(seed)
    arguments = inputs(rng, 17, min(smallest + more, 16), "float64")
    expected = interpreted(function, *arguments)
    assert_same(run(function, *arguments), expected, arguments[-1], rtol=1e-12)
