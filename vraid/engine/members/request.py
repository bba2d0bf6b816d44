"""A member request and its priority class: what the controller hands the members.

A request (:class:`Request`) is one read or write on one member. It carries a priority
class (:class:`Priority`): host, prefetch, destage, rebuild, served strictly in that order
(seed 003, section 3.1: a disk serves its destage queue only while its host queue is
empty; vraid adds prefetch above destage and puts rebuild, resync and scrub below it).
The requests of one submission wait together (:class:`Batch`); each member counts what it
served (:class:`MemberStats`).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import trio

from vraid.engine.events import Cause


class Priority(enum.IntEnum):
    """A member request's priority class; a lower value is served first, always."""

    HOST = 0
    PREFETCH = 1
    DESTAGE = 2
    #: rebuild, resync and scrub: background work that never holds up a destage
    REBUILD = 3

    @classmethod
    def of(cls, cause: Cause) -> "Priority":
        """The class the requests of ``cause`` go in."""
        return _PRIORITY_OF[cause]

    @property
    def cause(self) -> Cause:
        """The cause of a plan or request issued in this class when nobody says more."""
        return _CAUSE_OF[self]


_PRIORITY_OF = {
    Cause.HOST: Priority.HOST,
    Cause.PREFETCH: Priority.PREFETCH,
    Cause.DESTAGE: Priority.DESTAGE,
    Cause.DESTAGE_L1: Priority.DESTAGE,
    Cause.DESTAGE_L2: Priority.DESTAGE,
    Cause.REBUILD: Priority.REBUILD,
    Cause.RESYNC: Priority.REBUILD,
    Cause.SCRUB: Priority.REBUILD,
}
_CAUSE_OF = {Priority.HOST: Cause.HOST, Priority.PREFETCH: Cause.PREFETCH,
             Priority.DESTAGE: Cause.DESTAGE, Priority.REBUILD: Cause.REBUILD}

#: the names of the two classes before Priority (kept for callers not yet moved over)
HOST, DESTAGE = Priority.HOST, Priority.DESTAGE


@dataclass(slots=True)
class Request:
    """One member request. ``buffer`` receives a read (a writable view of
    ``length`` bytes) or holds the data of a write; a read without a buffer
    leaves its bytes in ``result``."""

    disk: int
    op: str  # "read" | "write"
    offset: int
    length: int
    buffer: memoryview | None = None
    priority: Priority = Priority.HOST
    error: BaseException | None = None
    result: bytes | None = None
    _batch: "Batch | None" = None
    #: the member's epoch when the request was queued (see :meth:`Member.retire`)
    _epoch: int = 0
    #: a write that must be durable when it completes (``Store.write_durable``)
    durable: bool = False


class Batch:
    """The requests of one :meth:`Members.run <vraid.engine.members.queues.Members.run>` call:
    ``done`` is set when the last of them has finished."""

    __slots__ = ("pending", "done")

    def __init__(self, n: int) -> None:
        self.pending = n
        self.done = trio.Event()

    def finish_one(self) -> None:
        self.pending -= 1
        if self.pending == 0:
            self.done.set()


@dataclass
class MemberStats:
    reads: int = 0
    writes: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    errors: int = 0
    busy_seconds: float = 0.0
    max_queue: int = 0
    #: a request that starts where the previous one on this member ended
    contiguous: int = 0

    def to_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


def busy_fraction(stats: MemberStats, elapsed: float) -> float:
    return stats.busy_seconds / elapsed if elapsed > 0 and math.isfinite(elapsed) else 0.0
