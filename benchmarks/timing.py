"""Timing primitives: warm up, repeat, interleave implementations, summarise by median and IQR."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

#: Runs longer than this are not re-warmed between rounds: caches do not matter to them.
REWARM_BELOW_S = 0.02


@dataclass(frozen=True)
class Stats:
    """Summary of repeated timings, in seconds."""

    median: float
    q1: float
    q3: float
    min: float
    max: float
    samples: tuple[float, ...]

    @property
    def spread(self) -> float:
        """Interquartile range relative to the median."""
        return (self.q3 - self.q1) / self.median if self.median > 0 else 0.0


def summarise(samples: list[float]) -> Stats:
    """Stats of a list of timings."""
    if len(samples) >= 2:
        q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    else:
        q1 = q3 = samples[0]
    return Stats(statistics.median(samples), q1, q3, min(samples), max(samples), tuple(samples))


def measure(fn: Callable[[], object], warmup: int, repeat: int, per: int = 1) -> Stats:
    """Call `fn` `warmup` times untimed, then `repeat` timed times; each sample divided by `per`."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) / per)
    return summarise(samples)


def interleave(
    fns: dict[str, Callable[[], object]],
    rounds: int,
    min_samples: int,
    min_time: float = 0.0,
    per: int = 1,
    rewarm: bool = True,
) -> tuple[dict[str, Stats], dict[str, str]]:
    """Time every fn in `rounds` rounds, each fn in turn, so slow drift of a noisy machine hits all.

    Per round and fn: one untimed call when `rewarm` and its runs are short (its caches and
    threads are cold after the others ran), then timed calls until both min_samples/rounds
    calls and min_time/rounds seconds are done; slow fns stop after 2 * min_time/rounds seconds
    (at least one call).
    Returns (name -> Stats, name -> error) for the fns that raised.
    """
    samples: dict[str, list[float]] = {name: [] for name in fns}
    errors: dict[str, str] = {}
    per_round = math.ceil(min_samples / rounds)
    for _ in range(rounds):
        for name, fn in fns.items():
            if name in errors:
                continue
            try:
                last = samples[name][-1] * per if samples[name] else 0.0
                if rewarm and last < REWARM_BELOW_S:
                    fn()
                begun = time.perf_counter()
                deadline, cap = begun + min_time / rounds, begun + 2 * min_time / rounds
                count = 0
                while True:
                    started = time.perf_counter()
                    fn()
                    now = time.perf_counter()
                    samples[name].append((now - started) / per)
                    count += 1
                    if now >= deadline and (count >= per_round or now >= cap):
                        break
            except Exception as exc:  # one broken implementation must not stop the others
                errors[name] = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
    stats = {name: summarise(s) for name, s in samples.items() if s and name not in errors}
    return stats, errors


def wall_clock(fn: Callable[[], object]) -> Callable[[], float]:
    """`fn` made to return its own wall-clock seconds."""

    def run() -> float:
        started = time.perf_counter()
        fn()
        return time.perf_counter() - started

    return run


def alternate(fns: dict[str, Callable[[], float]], samples: int) -> dict[str, list[float]]:
    """Each fn once untimed, then `samples` timed runs of each, alternating their order."""
    for fn in fns.values():
        fn()
    out: dict[str, list[float]] = {name: [] for name in fns}
    order = list(fns)
    for s in range(samples):
        for name in order if s % 2 == 0 else order[::-1]:
            out[name].append(fns[name]())
    return out


#: Untimed runs of an implementation before each of its timed ones, in seconds: after an
#: OpenMP region (scikit-learn's, numba.njit(parallel=True)'s, oneMKL's) the threads spin for
#: 4-8 ms of CPU (libgomp's default wait policy), so a dk run of a few ms right after one ran on
#: about one core of the two.
SETTLE_S = 0.02


def own_turns(fns: dict[str, Callable[[], float]], samples: int) -> dict[str, list[float]]:
    """`alternate`, except that each timed run follows SETTLE_S of runs of the same fn: each
    is timed as in its own loop of iterations, not in the wake of the other's threads."""
    out: dict[str, list[float]] = {name: [] for name in fns}
    order = list(fns)
    for s in range(samples):
        for name in order if s % 2 == 0 else order[::-1]:
            settled = time.perf_counter() + SETTLE_S
            fns[name]()
            while time.perf_counter() < settled:
                fns[name]()
            out[name].append(fns[name]())
    return out
