"""Work-groups run cooperatively: work-items take turns, switching only at barriers.

Each work-item runs on a thread (a Runner) and keeps it while it waits at a barrier or a group
algorithm; only the thread holding the baton runs, so a run is deterministic and needs no locks
around the simulator's own state. A work-item that never waits runs on the thread that was free
when it started: a kernel without barriers runs every work-item on the launching thread, with no
thread switch at all. Work-groups run one after another.

Where work-items of one group (or sub-group) cannot all meet at the same barrier (some finished,
others wait at another barrier) the run stops with a KernelRaceError; nothing ever deadlocks.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator

import numpy as np

from ..compiler.kernel_api import registry
from ..errors import KernelRaceError

#: The work-item this thread is running (thread-local: every runner thread has its own).
running = threading.local()


class Runner:
    """A thread work-items run on; it runs only while it holds the baton."""

    __slots__ = ("baton", "job")

    def __init__(self):
        self.baton = threading.Lock()
        self.baton.acquire()
        self.job: Callable[[Runner], None] | None = None

    def wait(self) -> None:
        self.baton.acquire()

    def wake(self) -> None:
        self.baton.release()


_idle: list[Runner] = []
_idle_lock = threading.Lock()


def _work(runner: Runner) -> None:
    while True:
        runner.wait()
        job, runner.job = runner.job, None
        job(runner)
        with _idle_lock:
            _idle.append(runner)


def idle_runner() -> Runner:
    """A runner thread with nothing to do, started if none is idle (they are reused)."""
    with _idle_lock:
        if _idle:
            return _idle.pop()
    runner = Runner()
    threading.Thread(target=_work, args=(runner,), name="dpex-simulator", daemon=True).start()
    return runner


#: The empty tick map every work-item starts with (shared: tick maps are never changed in place).
NOTHING_ACQUIRED: dict = {}


def merged_ticks(*known: dict) -> dict:
    """The later tick of each work-group among `known`: a new dict, as `seen` maps are shared
    between work-items after a barrier and never changed in place."""
    out = dict(known[0])
    for more in known[1:]:
        for group, tick in more.items():
            if out.get(group, -1) < tick:
                out[group] = tick
    return out


class WorkGroup:
    """One work-group of a launch: its work-items, barrier epoch and work-group memory."""

    __slots__ = (
        "id",
        "index",
        "linear",
        "items",
        "sub_groups",
        "epoch",
        "meeting",
        "memory",
        "args",
        "done",
    )

    def __init__(self, group_id: tuple[int, ...], linear: int):
        self.id, self.linear = group_id, linear
        self.index: tuple = ()  # the id padded to three dimensions
        self.items: list[WorkItem] = []
        self.sub_groups: list[SubGroup] = []
        self.epoch = 0  # work-group barriers passed: accesses in different epochs are ordered
        self.meeting: Meeting | None = None
        self.memory: dict = {}  # local arrays by call site
        self.args: tuple = ()
        self.done = 0  # work-items finished


class SubGroup:
    """One sub-group: consecutive work-items along the last dimension of a work-group."""

    __slots__ = ("group", "index", "items", "epoch", "meeting", "done")

    def __init__(self, group: WorkGroup, index: int):
        self.group, self.index = group, index
        self.items: list[WorkItem] = []
        self.epoch = 0  # sub-group syncs and work-group barriers passed
        self.meeting: Meeting | None = None
        self.done = 0  # work-items finished


class WorkItem:
    """One work-item: its ids (padded to three dimensions) and scheduling state."""

    __slots__ = (
        "global_id",
        "local_id",
        "global_linear",
        "local_linear",
        "group",
        "sub_group",
        "lane",
        "runner",
        "meeting",
        "result",
        "cancelled",
        "finished",
        "private",
        "seen",
        "observed",
        "fenced",
    )

    def __init__(self, global_id, local_id, global_linear, local_linear, group):
        self.global_id, self.local_id = global_id, local_id
        self.global_linear, self.local_linear = global_linear, local_linear
        self.group = group
        self.sub_group: SubGroup | None = None
        self.lane = np.int64(0)
        self.runner: Runner | None = None
        self.meeting: Meeting | None = None
        self.result = None
        self.cancelled = False
        self.finished = False
        self.private: dict = {}  # private arrays by call site
        # Ordering between work-groups (races.py): work-group -> tick up to which its accesses
        # are ordered before this work-item's; what its atomic reads saw published (for an
        # acquire fence); what its last release fence publishes with its next atomic write.
        self.seen = self.observed = self.fenced = NOTHING_ACQUIRED

    def describe(self, ndim: int) -> str:
        """How messages name a work-item: its global and local ids and its group's id."""
        glob = tuple(int(i) for i in self.global_id[:ndim])
        loc = tuple(int(i) for i in self.local_id[:ndim])
        return f"work-item global id {glob} (local id {loc} of work-group {self.group.id})"


class Meeting:
    """Work-items of one scope (work-group or sub-group) meeting at one barrier or collective."""

    __slots__ = ("key", "what", "where", "scope", "arrived", "values", "combine")

    def __init__(self, key, what: str, where: str, scope, combine):
        self.key, self.what, self.where, self.scope = key, what, where, scope
        self.arrived: list[WorkItem] = []
        self.values: list = []
        self.combine = combine


def _retire(group: WorkGroup) -> None:
    """Drop a finished group's references to its work-items and memory: the access records
    keep its work-items, and without these cycles they are freed without the collector."""
    group.items = []
    group.memory = {}
    group.args = ()
    for sub_group in group.sub_groups:
        sub_group.items = []
    group.sub_groups = []


class _Cancelled(BaseException):
    """Unwinds a waiting work-item's stack when the launch stops on an error."""


#: Frames of these modules are the simulator's and the stubs': a call site is the user's frames.
_INTERNAL = "dpex_kernels."


def user_frame(depth: int = 1):
    """The innermost frame of kernel or device-function code calling into the simulator."""
    frame = sys._getframe(depth)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_INTERNAL):
        frame = frame.f_back
    return frame


def call_site(kernel_code) -> tuple[tuple, str]:
    """(key, "file:line") of the barrier being called: the user frames up to the kernel's."""
    frame = user_frame(2)
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "?"
    key = []
    while frame is not None:
        key.append((frame.f_code, frame.f_lasti))
        if frame.f_code is kernel_code:
            break
        frame = frame.f_back
    return tuple(key), where


class Scheduler:
    """Runs the work-groups `groups` yields, calling `body(item)` for each work-item."""

    def __init__(self, groups: Iterator[WorkGroup], body, table, describe, ndim: int):
        self.groups = groups
        self.body = body
        self.table = table
        self.describe_error = describe
        self.ndim = ndim
        self.pending: deque[WorkItem] = deque()
        self.ready: deque[WorkItem] = deque()
        self.blocked: dict[WorkItem, None] = {}
        self.error: BaseException | None = None
        self.main = Runner()
        self.group: WorkGroup | None = None

    def run(self) -> None:
        """Run every work-group on this thread and the runners; raise the first error."""
        previous = getattr(registry.simulation, "table", None)
        registry.simulation.table = self.table
        # The access records are many small long-lived objects: the cyclic collector would
        # spend most of a launch walking them (2.6x slower with it on), for no garbage.
        collecting = gc.isenabled()
        gc.disable()
        try:
            with np.errstate(all="ignore"):
                self._serve(self.main)
        finally:
            registry.simulation.table = previous
            if collecting:
                gc.enable()
        if self.error is not None:
            raise self.error

    # --- the baton holder -----------------------------------------------------------------

    def _serve(self, runner: Runner) -> None:
        """What a runner with no work-item on its stack does while it holds the baton."""
        while True:
            if self.ready:
                self._wake_next()
                if runner is not self.main:
                    return
                runner.wait()
                continue
            if self.error is not None and self.blocked:
                victim = next(iter(self.blocked))
                del self.blocked[victim]
                self.ready.append(victim)
                continue
            item = self._next_item()
            if item is not None:
                self._run_item(item, runner)
                continue
            if self.blocked:  # pragma: no cover - meet() reports every divergence first
                self.error = RuntimeError("internal error in the simulator: work-items stuck")
                continue
            if runner is not self.main:
                self.main.wake()
            return

    def _serve_on_worker(self, runner: Runner) -> None:
        registry.simulation.table = self.table
        try:
            with np.errstate(all="ignore"):
                self._serve(runner)
        except BaseException as exc:  # pragma: no cover - a bug here must not hang the launch
            self.error = RuntimeError(f"internal error in the simulator's scheduler: {exc!r}")
            self.error.__cause__ = exc
            self.main.wake()
        finally:
            registry.simulation.table = None

    def _next_item(self) -> WorkItem | None:
        if self.error is not None:
            return None
        if self.pending:
            return self.pending.popleft()
        if self.group is not None:
            _retire(self.group)
        group = self.group = next(self.groups, None)
        if group is None:
            return None
        self.pending.extend(group.items[1:])
        return group.items[0]

    def _run_item(self, item: WorkItem, runner: Runner) -> None:
        item.runner = runner
        running.item = item
        try:
            self.body(item)
            item.finished = True
            self._check_finish(item)
        except _Cancelled:
            pass
        except BaseException as exc:  # the kernel's own exception, KeyboardInterrupt included
            if self.error is None:
                self.error = self.describe_error(exc, item)
        finally:
            item.finished = True
            item.group.done += 1
            item.sub_group.done += 1
            running.item = None

    def _wake_next(self) -> None:
        item = self.ready.popleft()
        item.cancelled = self.error is not None
        item.runner.wake()

    def _hand_off(self) -> None:
        """The baton to whoever runs next, from a work-item that now waits."""
        if self.ready:
            self._wake_next()
            return
        runner = idle_runner()
        runner.job = self._serve_on_worker
        runner.wake()

    # --- meeting at barriers and group algorithms ----------------------------------------

    def meet(self, item: WorkItem, scope, key, what: str, where: str, value=None, combine=None):
        """Wait until every work-item of `scope` (the item's work-group or sub-group) reaches
        this same barrier or collective; returns this item's share of `combine(values)`."""
        meeting = scope.meeting
        self._check_meet(item, scope, key, what, where)
        if meeting is None:
            meeting = scope.meeting = Meeting(key, what, where, scope, combine)
        item.meeting = meeting
        meeting.arrived.append(item)
        meeting.values.append(value)
        self.blocked[item] = None
        if len(meeting.arrived) == len(scope.items):
            self._complete(meeting)
        if self.ready and self.ready[0] is item:
            self.ready.popleft()
        else:
            self._hand_off()
            item.runner.wait()
            if item.cancelled:
                raise _Cancelled
        result, item.result = item.result, None
        return result

    def _complete(self, meeting: Meeting) -> None:
        scope = meeting.scope
        scope.meeting = None
        members = meeting.arrived
        order = sorted(range(len(members)), key=lambda k: members[k].local_linear)
        members = [members[k] for k in order]
        values = [meeting.values[k] for k in order]
        results = meeting.combine(members, values) if meeting.combine else [None] * len(members)
        scope.epoch += 1
        seen = members[0].seen
        for member in members[1:]:  # a barrier passes on what each work-item acquired
            if member.seen is not seen:
                seen = merged_ticks(seen, member.seen)
        for member in members:
            member.seen = seen
        if isinstance(scope, WorkGroup):
            for sub_group in scope.sub_groups:
                sub_group.epoch += 1
        for member, result in zip(members, results):
            member.result = result
            member.meeting = None
            self.blocked.pop(member, None)
        self.ready.extend(members)

    def _check_meet(self, item: WorkItem, scope, key, what: str, where: str) -> None:
        """A barrier that not every work-item of the scope can reach is a KernelRaceError."""
        if scope.done:
            other = next(other for other in scope.items if other.finished)
            raise self._diverged(what, where, [item], other, "finished without reaching it")
        mates = item.sub_group.items if item.sub_group is not None else [item]
        for other in mates:
            meeting = other.meeting
            if meeting is not None and meeting.key != key:
                raise self._diverged(
                    what, where, [item], other, f"waits at {meeting.what} ({meeting.where})"
                )
        meeting = scope.meeting
        if meeting is not None and meeting.key != key:
            raise self._diverged(
                what,
                where,
                [item],
                meeting.arrived[0],
                f"waits at {meeting.what} ({meeting.where})",
            )

    def _check_finish(self, item: WorkItem) -> None:
        for scope in (item.group, item.sub_group):
            meeting = scope.meeting if scope is not None else None
            if meeting is not None:
                raise self._diverged(
                    meeting.what,
                    meeting.where,
                    meeting.arrived,
                    item,
                    "finished without reaching it",
                )

    def _diverged(self, what, where, waiting, other: WorkItem, doing: str) -> KernelRaceError:
        first = waiting[0].describe(self.ndim)
        more = f" and {len(waiting) - 1} more" if len(waiting) > 1 else ""
        return KernelRaceError(
            f"divergent {what}: {first}{more} reached {what} at {where}, but "
            f"{other.describe(self.ndim)} {doing}. Every work-item of a work-group (or "
            f"sub-group, for sub-group calls) must reach the same barriers and group "
            f"algorithms in the same order; on a device this hangs or gives wrong results"
        )
