"""Run settings of the two modes: --quick (CI smoke, under 2 minutes) and full."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    """How much of everything to run."""

    mode: str
    launches: int  # numba-dpex worker: async launches per sample (then one wait)
    sync_launches: int  # numba-dpex worker: launch-and-wait pairs per sample
    launch_repeat: int  # numba-dpex worker's launch samples; rejection samples
    launch_backlogs: tuple[int, ...]  # pending launches while a launch case is timed
    launch_burst: int  # timed launches per sample (at most the backlog, when there is one)
    launch_samples: int  # samples per launch case (times burst / the smaller burst)
    gate_s: float  # the shortest gate in front of a backlog (lengthened as a case needs)
    reject_calls: int  # rejected calls per sample
    compile_repeat: int  # warm compiles per case
    first_compile_runs: int  # fresh processes for the first compile
    vector_exponents: tuple[int, ...]  # vecadd/triad sizes are 2**e elements
    stencil_sizes: tuple[int, ...]  # stencil grids are n x n
    dtypes: tuple[str, ...]
    warmup: int  # untimed runs of each bandwidth implementation before its check and timing
    rounds: int  # bandwidth implementations are timed in turn, this many rounds
    repeat: int  # at least this many timed runs of each bandwidth implementation
    min_time: float  # and at least this many seconds of them
    memory_launches: int  # async launches between the two RSS readings (target: 100 000)
    memory_runs: int  # fresh processes per implementation for the RSS case
    device_samples: int  # device-time samples per implementation (interleaved one by one)
    numba_dpex: str | None = None  # venv holding numba-dpex, opt-in


def make_config(quick: bool, numba_dpex: str | None = None) -> Config:
    """The settings of quick or full mode."""
    if quick:
        return Config(
            mode="quick",
            launches=10_000,
            sync_launches=1_000,
            launch_repeat=3,
            launch_backlogs=(0, 1000),
            launch_burst=200,
            launch_samples=5,
            gate_s=0.25,
            reject_calls=1_000,
            compile_repeat=3,
            first_compile_runs=1,
            vector_exponents=(16, 20, 24),
            stencil_sizes=(1024, 4096),
            dtypes=("float32", "float64"),
            warmup=1,
            rounds=2,
            repeat=4,
            min_time=0.1,
            memory_launches=20_000,
            memory_runs=1,
            device_samples=11,
            numba_dpex=numba_dpex,
        )
    return Config(
        mode="full",
        launches=10_000,
        sync_launches=5_000,
        launch_repeat=7,
        launch_backlogs=(0, 64, 1000),
        launch_burst=300,
        launch_samples=15,
        gate_s=0.25,
        reject_calls=5_000,
        compile_repeat=10,
        first_compile_runs=3,
        vector_exponents=tuple(range(16, 27)),
        stencil_sizes=(256, 512, 1024, 2048, 4096, 8192),
        dtypes=("float32", "float64"),
        warmup=3,
        rounds=5,
        repeat=15,
        min_time=0.6,
        memory_launches=100_000,
        memory_runs=3,
        device_samples=31,
        numba_dpex=numba_dpex,
    )
