"""The race checker: which accesses of two work-items conflict, and how that is reported.

Two accesses to one element conflict when they come from different work-items, at least one is
a plain write (or one a plain write and the other an atomic), and nothing orders them: accesses
of one work-group are ordered by a work-group barrier or group algorithm between them, those of
one sub-group also by a sub-group barrier or collective. Work-groups are ordered with each other
only by atomics: an acquire that reads what a release wrote (SYCL 2020's synchronizes-with;
fences count, as SYCL's atomic_fence does). A release publishes everything its work-group did
before it, which sees fewer races than a per-work-item clock would, never a race that is not
one (docs/debugging.md says what the checker cannot see). A plain read of an element others
update atomically is not a conflict (compare-and-swap loops start with one), nor are two plain
writes of the same value.

Per element the Memory keeps the last plain write, and the reads and atomic updates since it;
of those, only the latest of each work-item in the current epoch of the current work-group
(older ones are ordered before anything to come in their group, and one of them stands for all
in later groups). A record is (work-item, group epoch, sub-group epoch, code, line, tick):
the tick counts the launch's accesses, and a work-item's `seen` maps each other work-group to
the tick up to which that work-group's accesses are ordered before it (acquired).
"""

from __future__ import annotations

import itertools
import linecache
import warnings
from typing import NamedTuple

from ..errors import KernelBoundsError, KernelRaceError
from ..types.kernel_objects import MemoryOrder
from .scheduler import merged_ticks, running

ACQUIRES = frozenset({MemoryOrder.ACQUIRE, MemoryOrder.ACQ_REL, MemoryOrder.SEQ_CST})
RELEASES = frozenset({MemoryOrder.RELEASE, MemoryOrder.ACQ_REL, MemoryOrder.SEQ_CST})


class Sync(NamedTuple):
    """What one atomic operation does: to memory, and to ordering between work-groups."""

    uses_old: bool = True  # the old value matters: an unwritten element is reported
    loads: bool = True
    stores: bool = True
    acquire: bool = False
    release: bool = False

    @classmethod
    def of(cls, order, *, loads: bool = True, stores: bool = True, uses_old: bool = True) -> Sync:
        """An operation's ordering from its memory order: a load only acquires, a store only
        releases, a read-modify-write may do both."""
        order = MemoryOrder(int(order))
        acquire, release = loads and order in ACQUIRES, stores and order in RELEASES
        return cls(uses_old, loads, stores, acquire, release)


RELAXED = Sync()


class KernelRaceWarning(UserWarning):
    """A race the simulator saw, reported as a warning (races="warn") instead of an error."""


def ordered(record: tuple, item) -> bool:
    """Whether the access `record` is ordered before anything `item` does now."""
    other = record[0]
    if other is item:
        return True
    if other.group is not item.group:
        return record[5] <= item.seen.get(other.group, -1)
    if record[1] < item.group.epoch:
        return True
    return other.sub_group is item.sub_group and record[2] < item.sub_group.epoch


class _Seen:
    """Reads (or atomic updates) of one element since its last plain write."""

    __slots__ = ("older", "group", "epoch", "latest")

    def __init__(self):
        self.older = None  # one access of an earlier epoch or work-group
        self.group = None
        self.epoch = -1
        self.latest: dict = {}  # work-item -> its latest access in (group, epoch)

    def add(self, item, record: tuple) -> None:
        group = item.group
        if group is not self.group or group.epoch != self.epoch:
            if self.latest and self.older is None:
                self.older = next(iter(self.latest.values()))
            self.group, self.epoch, self.latest = group, group.epoch, {}
        self.latest[item] = record

    def conflict(self, item) -> tuple | None:
        older = self.older
        if older is not None and not ordered(older, item):
            return older
        for record in self.latest.values():
            if not ordered(record, item):
                return record
        return None


class _Cell:
    __slots__ = ("write", "reads", "atomics", "released")

    def __init__(self):
        self.write = None
        self.reads: _Seen | None = None
        self.atomics: _Seen | None = None
        self.released: dict = {}  # what releases on this element published (acquirers take it)


def _record(memory, item, frame) -> tuple:
    tick = next(memory.checker.ticks)
    return (item, item.group.epoch, item.sub_group.epoch, frame.f_code, frame.f_lineno, tick)


def fence(memory_order, checker) -> None:
    """dk.atomic_fence: a release fence makes the work-item's next atomic writes publish what
    came before it; an acquire fence takes what its earlier atomic reads saw published."""
    item = running.item
    if memory_order in RELEASES:
        item.fenced = merged_ticks(item.seen, {item.group: next(checker.ticks)})
    if memory_order in ACQUIRES:
        item.seen = merged_ticks(item.seen, item.observed)


def _cell(memory, flat: int) -> _Cell:
    cell = memory.cells.get(flat)
    if cell is None:
        cell = memory.cells[flat] = _Cell()
    return cell


def read(memory, array, flat: int, index, frame) -> None:
    item = running.item
    cell = _cell(memory, flat)
    write = cell.write
    if write is not None and not ordered(write, item):
        memory.checker.race(array, index, write, "wrote", frame, "read")
    if cell.reads is None:
        cell.reads = _Seen()
    cell.reads.add(item, _record(memory, item, frame))


def write(memory, array, flat: int, index, frame, same_value) -> None:
    item = running.item
    cell = _cell(memory, flat)
    earlier = cell.write
    if earlier is not None and not ordered(earlier, item) and not same_value():
        memory.checker.race(array, index, earlier, "wrote", frame, "wrote")
    for seen, did in ((cell.reads, "read"), (cell.atomics, "updated (atomically)")):
        found = seen.conflict(item) if seen is not None else None
        if found is not None:
            memory.checker.race(array, index, found, did, frame, "wrote")
    cell.write = _record(memory, item, frame)
    cell.reads = cell.atomics = None


def atomic(memory, array, flat: int, index, frame, sync: Sync) -> None:
    item = running.item
    cell = _cell(memory, flat)
    if sync.loads and cell.released:
        item.observed = merged_ticks(item.observed, cell.released)
        if sync.acquire:
            item.seen = merged_ticks(item.seen, cell.released)
    earlier = cell.write
    if earlier is not None and not ordered(earlier, item):
        memory.checker.race(array, index, earlier, "wrote", frame, "updated (atomically)")
    if cell.atomics is None:
        cell.atomics = _Seen()
    record = _record(memory, item, frame)
    cell.atomics.add(item, record)
    if sync.stores:
        if sync.release:
            cell.released = merged_ticks(cell.released, item.seen, {item.group: record[5]})
        elif item.fenced:
            cell.released = merged_ticks(cell.released, item.fenced)


def location(frame) -> str:
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _line(code, lineno: int) -> str:
    source = linecache.getline(code.co_filename, lineno).strip()
    return f"{code.co_filename}:{lineno}" + (f"\n        {source}" if source else "")


def _element(array, index, frame) -> str:
    shown = index[0] if len(index) == 1 else index
    return f"{array.display_name(frame)}[{shown}]"


class Checker:
    """A launch's reporting: races as errors or warnings, bounds errors, names for messages."""

    __slots__ = ("mode", "kernel_name", "ndim", "group_size", "ticks")

    def __init__(self, mode: str, kernel_name: str, ndim: int, group_size: int):
        self.mode = mode  # "error", "warn" or "off"
        self.kernel_name = kernel_name
        self.ndim = ndim
        self.group_size = group_size
        self.ticks = itertools.count()  # the launch's accesses, in the order they ran

    def _report(self, message: str, frame) -> None:
        if self.mode == "error":
            raise KernelRaceError(message)
        warnings.warn_explicit(message, KernelRaceWarning, frame.f_code.co_filename, frame.f_lineno)

    def race(self, array, index, earlier: tuple, did: str, frame, does: str) -> None:
        item = running.item
        other, _, _, code, lineno, _ = earlier
        scope = "different work-groups" if other.group is not item.group else "one work-group"
        self._report(
            f"data race on {_element(array, index, frame)} in kernel '{self.kernel_name}' "
            f"({array.memory.space} memory):\n"
            f"    {other.describe(self.ndim)} {did} it at {_line(code, lineno)}\n"
            f"    {item.describe(self.ndim)} {does} it at {_line(frame.f_code, frame.f_lineno)}\n"
            f"with no atomic and no barrier between them ({scope}). Update shared elements "
            f"with dk.atomic.*, or put a dk.barrier() between the accesses within a work-group; "
            f"work-groups are ordered with each other only by an acquire that reads what a "
            f"release wrote (dk.AtomicRef with memory_order=)",
            frame,
        )

    def unwritten(self, array, index, frame) -> None:
        item = running.item
        space = array.memory.space
        whose = "no work-item of its work-group" if space == "local" else "this work-item"
        self._report(
            f"read of {_element(array, index, frame)} in kernel '{self.kernel_name}', which "
            f"{whose} wrote before: {space} memory starts undefined on a device\n"
            f"    {item.describe(self.ndim)} read it at {_line(frame.f_code, frame.f_lineno)}",
            frame,
        )

    def out_of_bounds(self, array, index, axis: int, size: int, frame) -> KernelBoundsError:
        hint = ""
        if array.memory.space == "local" and self.group_size > size:
            hint = (
                f"\nThe work-group has {self.group_size} work-items, more than the local "
                f"array's {size} elements along axis {axis}: size it for the NdRange's local "
                f"range"
            )
        return KernelBoundsError(
            f"kernel '{self.kernel_name}' ({location(frame)}): index {index} is out of bounds "
            f"for axis {axis} of {array.display_name(frame)} with size {size}\n"
            f"    {linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()}\n"
            f"in {running.item.describe(self.ndim)}{hint}"
        )

    def out_of_bounds_text(self, array, problem: str, frame) -> KernelBoundsError:
        return KernelBoundsError(
            f"kernel '{self.kernel_name}' ({location(frame)}): {problem} "
            f"({array.display_name(frame)} has shape {array.shape})\n"
            f"in {running.item.describe(self.ndim)}"
        )
