"""Fuzzing the files dpex_kernels reads: bundles and cache directories, damaged and forged.

A campaign builds a small bundle (three kernels: arrays, scalars, a 2-d kernel, a debug one
with a strided array) and a cache directory of the same kernels with their device binaries,
then runs mutations (tests/file_mutations.py) one at a time: each damages a fresh copy, and a
worker process loads it (bundle: aot.runtime.load and launches; cache: the kernels defined
again with cache=True and launched) and checks the results against NumPy. A worker runs many
mutations; the parent starts a new one after a crash or a hang.

Each mutation ends as one of:
  ok        loaded, ran, right results
  refused   as documented: a BundleError naming the file; a cache entry rebuilt (and the
            rebuilt entry loaded by the next definition)
  differs   a forged bundle or entry (checksums recomputed) loaded and ran other code, or
            refused its arguments as its forged signature says: what a forger may do
  and the failures: crash, hang, escape (a file made or changed outside the cache directory
  and the mutation's own files), wrong-error (any other exception), wrong-result (damage that
  was not forged changed the results), not-replaced (a rebuilt entry was not loaded next).

Long campaign, by hand:  python -m tests.file_fuzzer --seed 1 --minutes 30
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.file_mutations import Area, mutate

ROOT = Path(__file__).resolve().parent.parent
FAILURES = ("crash", "hang", "escape", "wrong-error", "wrong-result", "not-replaced")

KERNELS = """
import dpex_kernels as dk

f32 = dk.usm_array(dk.float32, 1)


@dk.kernel(dk.void(f32, f32, dk.float32), cache=True)
def axpy(a, out, s):
    i = dk.get_global_id(0)
    out[i] = s * a[i]


@dk.kernel(dk.void(dk.usm_array(dk.int64, 2), dk.int64, dk.boolean), cache=True)
def fill2(a, v, flag):
    i = dk.get_global_id(0)
    j = dk.get_global_id(1)
    if flag:
        a[i, j] = v + i * 10 + j


@dk.kernel(dk.void(dk.usm_array(dk.float64, 1, layout="A"), dk.int32), cache=True, debug=True)
def bump(a, n):
    i = dk.get_global_id(0)
    a[i] = a[i] + n
"""
NAMES = ("axpy", "fill2", "bump")


# --- the worker -----------------------------------------------------------------------------


def _define() -> dict:
    namespace: dict = {}
    exec(compile(KERNELS, "<file fuzzer kernels>", "exec"), namespace)
    return {name: namespace[name] for name in NAMES}


def _launches(kernels: dict, two_d_axpy: bool) -> list[tuple[str, BaseException | None, bool]]:
    """(launch, its exception or None, whether its results were right) of each launch."""
    import dpnp
    import numpy as np

    import dpex_kernels as dk

    def axpy(launch_range):
        out = dpnp.empty(8, dtype="f4")
        kernels["axpy"][launch_range](dpnp.arange(8, dtype="f4"), out, 2.0)
        return np.array_equal(dpnp.asnumpy(out), 2 * np.arange(8, dtype="f4"))

    def fill2():
        x = dpnp.zeros((3, 4), dtype="i8")
        kernels["fill2"][dk.Range(3, 4)](x, 7, True)
        i, j = np.indices((3, 4))
        return np.array_equal(dpnp.asnumpy(x), 7 + i * 10 + j)

    def bump():
        y = dpnp.arange(16, dtype="f8")[::2]
        kernels["bump"][8](y, 3)
        return np.array_equal(dpnp.asnumpy(y), np.arange(16.0)[::2] + 3)

    def bump_out_of_bounds():
        try:
            kernels["bump"][16](dpnp.arange(16, dtype="f8")[::2], 1)
        except dk.KernelBoundsError:
            return True
        return False

    checks = {"axpy": lambda: axpy(8), "fill2": fill2, "bump": bump, "bounds": bump_out_of_bounds}
    if two_d_axpy:  # a cache entry holds axpy's 1-d variant: this one comes from its linked IR
        checks["axpy-2d"] = lambda: axpy(dk.Range(8, 1))
    found = []
    for name, check in checks.items():
        try:
            found.append((name, None, bool(check())))
        except Exception as exc:  # judged by _judge
            found.append((name, exc, False))
    return found


def _described(exc: BaseException) -> str:
    return f"{type(exc).__module__}.{type(exc).__name__}: {str(exc)[:600]}"


#: What a forged description may make a launch raise: its signature refuses the arguments,
#: the bundle lacks the kernel, its debug table names another exception.
_FORGED_LAUNCH_ERRORS = ("KernelSignatureError", "AttributeError", "KeyError", "RuntimeError")


def _judge(launches: list, forged: str | None) -> tuple[str, str]:
    """The outcome of the launches of a loaded bundle or cache entry."""
    wrong = [(name, exc) for name, exc, right in launches if not right]
    if not wrong:
        return "ok", ""
    detail = "; ".join(f"{n}: {_described(e) if e else 'wrong results'}" for n, e in wrong)
    if forged is None:
        errors = [e for _, e in wrong if e is not None]
        return ("wrong-error" if errors else "wrong-result"), detail
    for _, exc in wrong:
        allowed = type(exc).__name__ in _FORGED_LAUNCH_ERRORS or "raised inside kernel" in str(exc)
        if exc is not None and not allowed and forged != "code":
            return "wrong-error", detail
    return "differs", detail


def _forget_builds() -> None:
    """Drop this process's device builds, so that each trial builds or loads its own."""
    from dpex_kernels import device

    with device._lock:
        device._kernels.clear()
        device._unowned.clear()


def _run_bundle(spec: dict) -> dict:
    from dpex_kernels.aot import runtime

    try:
        bundle = runtime.load(spec["bundle"], cache=spec["keep_binaries"])
    except runtime.BundleError as exc:
        named = spec["bundle"] in str(exc) and "aot build" in str(exc)
        return {"outcome": "refused" if named else "wrong-error", "detail": _described(exc)}
    except OSError as exc:  # a path that cannot be opened at all (a link to itself)
        documented = spec["kind"] in ("file-loop", "file-dangling")
        return {"outcome": "refused" if documented else "wrong-error", "detail": _described(exc)}
    except Exception as exc:
        return {"outcome": "wrong-error", "detail": _described(exc)}
    kernels = {name: bundle.kernels.get(name) for name in NAMES}
    if None in kernels.values():
        missing = [name for name, kernel in kernels.items() if kernel is None]
        forged = spec["forged"] is not None
        return {"outcome": "differs" if forged else "wrong-result", "detail": f"lacks {missing}"}
    outcome, detail = _judge(_launches(kernels, False), spec["forged"])
    return {"outcome": outcome, "detail": detail}


def _deleted(exc: BaseException | None) -> bool:
    """Whether a launch failed as documented for an entry whose linked IR makes no variant."""
    return exc is not None and "cache entry" in str(exc) and "is deleted" in str(exc)


def _run_cache(spec: dict) -> dict:
    try:
        kernels = _define()
    except Exception as exc:  # a bad entry must be rebuilt, never fail a definition
        return {"outcome": "wrong-error", "detail": _described(exc)}
    launches = _launches(kernels, True)
    deleted = any(_deleted(exc) for _, exc, _ in launches)
    outcome, detail = _judge([item for item in launches if not _deleted(item[1])], spec["forged"])
    rebuilt = deleted or any(kernel.stats.compiles for kernel in kernels.values())
    if outcome != "ok" or not rebuilt:
        return {"outcome": outcome, "detail": detail}
    _forget_builds()
    again = _define()  # what was written in place of the bad entry loads now
    misses = [name for name, kernel in again.items() if kernel.stats.compiles]
    if misses and not deleted:
        return {"outcome": "not-replaced", "detail": f"compiled again: {misses}"}
    outcome, detail = _judge(_launches(again, True), None)
    return {"outcome": "refused" if outcome == "ok" else outcome, "detail": detail}


def run_trial(spec: dict) -> dict:
    """Load what one mutation left and launch it; the outcome record."""
    import warnings

    os.environ["DPEX_KERNELS_CACHE_DIR"] = spec["cache"]
    _forget_builds()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warning about binaries in a writable directory
        if spec["target"] == "bundle":
            return _run_bundle(spec)
        return _run_cache(spec)


def _sabotage() -> None:
    """Take the SPIR-V checks out of the reader, to show that a campaign then fails."""
    from dpex_kernels.artifacts import files, spirv_tools
    from dpex_kernels.artifacts.spirv import code_facts

    files.check_kernel = lambda spirv, *rest: code_facts(spirv)
    spirv_tools.validate = lambda spirv: None


def worker_main(unchecked: bool) -> None:
    """Read trials (JSON lines) from stdin; announce each, run it, write its outcome."""
    import dpex_kernels  # noqa: F401  (first: it sets up the OpenCL runtime)

    if unchecked:
        _sabotage()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        spec = json.loads(line)
        print(json.dumps({"start": spec["index"]}), flush=True)
        result = run_trial(spec)
        print(json.dumps({**result, "index": spec["index"]}), flush=True)


def make_base(work: str) -> None:
    """The bundle and the cache directory (entries and device binaries) trials start from."""
    import dpex_kernels as dk
    from dpex_kernels.aot import runtime

    base = Path(work) / "base"
    os.environ["DPEX_KERNELS_CACHE_DIR"] = str(base / "cache")
    kernels = _define()
    dk.aot.build(list(kernels.values()), base / "bundle.dpkb")
    problems = [item for item in _launches(kernels, False) if not item[2]]
    bundle = runtime.load(base / "bundle.dpkb", cache=True)
    problems += [item for item in _launches(bundle.kernels, False) if not item[2]]
    if problems:
        raise SystemExit(f"the unmutated kernels fail: {problems}")


# --- the parent -----------------------------------------------------------------------------


class Worker:
    """One worker process; its stdout lines arrive through a queue so reads can time out."""

    def __init__(self, unchecked: bool):
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop())
        command = [sys.executable, "-m", "tests.file_fuzzer", "--worker"]
        self.process = subprocess.Popen(
            command + (["--unchecked"] if unchecked else []),
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def read(self, timeout: float) -> dict | None:
        """The next record, or None when the worker died or said nothing for `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if line is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=30)
                return None
            with contextlib.suppress(json.JSONDecodeError):
                return json.loads(line)

    def send(self, spec: dict) -> bool:
        try:
            self.process.stdin.write(json.dumps(spec) + "\n")
            self.process.stdin.flush()
            return True
        except OSError:
            return False

    def stop(self) -> tuple[int | None, str]:
        """Its exit status and the tail of what it wrote to stderr."""
        if self.process.poll() is None:
            self.process.kill()
        code = self.process.wait()
        self.stderr.seek(0)
        tail = self.stderr.read().decode(errors="replace")[-3000:]
        self.stderr.close()
        return code, tail


def _snapshot(root: Path, allowed: Path) -> dict[str, tuple]:
    """Every path under `root` but `allowed`'s, with what would show a change to it."""
    found = {}
    for directory, dirs, names in os.walk(root):
        here = Path(directory)
        if here == allowed or allowed in here.parents:
            dirs.clear()
            continue
        for name in dirs + names:
            path = here / name
            if path == allowed:
                continue
            info = path.lstat()
            found[str(path)] = (stat.S_IFMT(info.st_mode), info.st_size, info.st_mtime_ns)
    return found


def _clear(path: Path) -> None:
    """Remove a trial area, whatever a mutation left in it (modes, links, pipes)."""
    for directory, dirs, _ in os.walk(path):
        for name in dirs:
            if not (Path(directory) / name).is_symlink():
                (Path(directory) / name).chmod(0o700)
    shutil.rmtree(path, ignore_errors=True)


@dataclass
class Report:
    """What a campaign ran and found."""

    outcomes: Counter = field(default_factory=Counter)
    kinds: Counter = field(default_factory=Counter)
    failures: list = field(default_factory=list)  # (index, outcome, kind, detail)
    restarts: int = 0
    seconds: float = 0.0

    @property
    def ran(self) -> int:
        return sum(self.outcomes.values())

    def add(self, spec: dict, result: dict) -> None:
        self.outcomes[result["outcome"]] += 1
        self.kinds[f"{spec['target']}:{spec['kind']}"] += 1
        if result["outcome"] in FAILURES:
            detail = result.get("detail", "")
            self.failures.append((spec["index"], result["outcome"], spec["kind"], detail))

    def summary(self) -> str:
        lines = [
            f"mutations {self.ran} in {self.seconds:.0f} s ({self.restarts} worker restarts)",
            "outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items())),
            f"kinds: {len(self.kinds)} different",
        ]
        for index, outcome, kind, detail in self.failures[:40]:
            lines.append(f"  #{index} {outcome} after {kind}: {detail[:1500]}")
        return "\n".join(lines)


class Campaign:
    """Runs mutations against fresh copies of the base files, in a worker process."""

    def __init__(self, work: Path, unchecked: bool = False, mutation=mutate, timeout=90.0):
        self.work, self.unchecked, self.timeout = work, unchecked, timeout
        self.mutation = mutation  # (rng, target, area) -> what it did
        self.area = Area(work / "t" / "a" / "b" / "c" / "d" / "trial", work / "canary")
        self.worker: Worker | None = None
        self.report = Report()

    def prepare(self, rng: random.Random, index: int, target: str) -> dict:
        """A fresh trial area, damaged by one mutation: the worker's trial record."""
        _clear(self.area.root)
        _clear(self.area.canary)
        self.area.canary.mkdir(parents=True)
        self.area.root.mkdir(parents=True)
        shutil.copyfile(self.work / "base" / "bundle.dpkb", self.area.bundle)
        shutil.copytree(self.work / "base" / "cache", self.area.cache, symlinks=True)
        self.area.cache.chmod(0o700)
        done = self.mutation(rng, target, self.area)
        return {
            **done,
            "index": index,
            "target": target,
            "bundle": str(self.area.bundle),
            "cache": str(self.area.cache),
            "keep_binaries": rng.random() < 0.5,
        }

    def run(self, spec: dict) -> dict:
        """The worker's outcome for a prepared trial, or a crash, hang or escape found here."""
        before = _snapshot(self.work, self.area.cache)
        if self.worker is None:
            self.worker = Worker(self.unchecked)
            if self.worker.read(self.timeout) is None:
                raise RuntimeError(f"the fuzz worker did not start:\n{self.worker.stop()[1]}")
        worker, result = self.worker, None
        if worker.send(spec) and worker.read(self.timeout) is not None:  # its "start" line
            result = worker.read(self.timeout)
        if result is None:
            alive = worker.process.poll() is None
            code, tail = worker.stop()
            self.worker, self.report.restarts = None, self.report.restarts + 1
            if alive:
                return {"outcome": "hang", "detail": f"no outcome in {self.timeout:.0f} s"}
            return {"outcome": "crash", "detail": f"exit status {code}\n{tail}"}
        changed = sorted(set(before.items()) ^ set(_snapshot(self.work, self.area.cache).items()))
        if changed:
            return {"outcome": "escape", "detail": f"changed outside the cache: {changed[:5]}"}
        return result

    def close(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            self.worker = None


def campaign(
    seed: int,
    count: int | None = None,
    minutes: float | None = None,
    unchecked: bool = False,
    targets: tuple[str, ...] = ("bundle", "cache"),
    mutation=mutate,
    log=None,
) -> Report:
    """Run mutations until `count` are done or `minutes` have passed; the report."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dpex-file-fuzz-") as work:
        made = subprocess.run(
            [sys.executable, "-m", "tests.file_fuzzer", "--make-base", work],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if made.returncode != 0:
            raise RuntimeError(f"the base files could not be made:\n{made.stderr[-3000:]}")
        runner = Campaign(Path(work), unchecked, mutation)
        rng = random.Random(seed)
        index = 0
        try:
            while (count is None or index < count) and (
                minutes is None or time.monotonic() - started < 60 * minutes
            ):
                target = targets[index % len(targets)]
                spec = runner.prepare(random.Random(rng.getrandbits(64)), index, target)
                result = runner.run(spec)
                runner.report.add(spec, result)
                if log is not None:
                    shown = result["outcome"] not in ("ok", "refused")
                    detail = f" ({result.get('detail', '')[:300]})" if shown else ""
                    log(f"#{index} {target} {spec['kind']}: {result['outcome']}{detail}")
                index += 1
        finally:
            runner.close()
            _clear(runner.area.root)
    runner.report.seconds = time.monotonic() - started
    return runner.report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--minutes", type=float, default=None)
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--unchecked", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--make-base", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker_main(args.unchecked)
        return 0
    if args.make_base:
        make_base(args.make_base)
        return 0
    if args.count is None and args.minutes is None:
        args.minutes = 10
    report = campaign(args.seed, args.count, args.minutes, log=print if args.verbose else None)
    print(report.summary())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
