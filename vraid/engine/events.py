"""The event bus: typed events flow up from the engine to whoever listens.

Every event is a small frozen record of its kind (:class:`PlanEvent`, :class:`FlushEvent`,
...) with the clock ``time`` it happened and, where an I/O stream caused it, its
:class:`Cause` (host, destage, destage level 1 or 2, prefetch, rebuild, resync, scrub);
the ``kind`` string of each class names it in :attr:`EventBus.latest` and in the docs.
A subscriber tells events apart by class or by ``kind`` and reads their fields.

Publishing is synchronous and cheap when nobody listens. The TUI, the control
socket, labs and tests subscribe with a callback, or with a bounded trio
channel (:meth:`EventBus.channel`) that drops events rather than block the
data path when its reader falls behind (the drop is counted).
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Sequence

import trio

if TYPE_CHECKING:
    from vraid.core.rxw import Plan


class Cause(str, enum.Enum):
    """What made the engine do something: which stream of work an event (or a plan) belongs to.

    ``destage-l1``/``destage-l2`` are the two destage levels of a cache in front of a log
    disk (RAM to log, log to the array); a single-level write-back cache destages with
    ``destage``. The value is the name JSON and the TUI show.
    """

    HOST = "host"
    DESTAGE = "destage"
    DESTAGE_L1 = "destage-l1"
    DESTAGE_L2 = "destage-l2"
    PREFETCH = "prefetch"
    REBUILD = "rebuild"
    RESYNC = "resync"
    SCRUB = "scrub"

    @property
    def is_destage(self) -> bool:
        """A destage of any level."""
        return self in (Cause.DESTAGE, Cause.DESTAGE_L1, Cause.DESTAGE_L2)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """What every event has: the clock time and the cause (None: an operator's action or
    the engine's own detection, not an I/O stream)."""

    kind: ClassVar[str] = "event"
    time: float
    cause: Cause | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanEvent(Event):
    """``plan``: a stripe write was planned (vraid.core.rxw) and is about to run."""

    kind: ClassVar[str] = "plan"
    plan: "Plan"
    #: the first PBG row of the stripe the plan covers
    row0: int = 0
    #: members missing from this stripe: non-empty means a degraded write (vraid.engine.raid.degraded)
    missing: Sequence[int] = ()
    cause: Cause = Cause.HOST

    @property
    def degraded(self) -> bool:
        return bool(self.missing)


@dataclass(frozen=True, slots=True, kw_only=True)
class FlushEvent(Event):
    """``flush``: a host flush returned; every acknowledged write is durable."""

    kind: ClassVar[str] = "flush"
    cause: Cause = Cause.HOST


@dataclass(frozen=True, slots=True, kw_only=True)
class WatermarksEvent(Event):
    """``watermarks``: the destage scheduler moved its HWM/LWM (fractions; None: it has none)."""

    kind: ClassVar[str] = "watermarks"
    hwm: float | None
    lwm: float | None
    cause: Cause = Cause.DESTAGE


@dataclass(frozen=True, slots=True, kw_only=True)
class DestageEvent(Event):
    """``destage``: the destage of one cache unit ended (``ok``: its blocks are on the members)."""

    kind: ClassVar[str] = "destage"
    unit: int
    stripe: int
    ok: bool
    cause: Cause = Cause.DESTAGE


@dataclass(frozen=True, slots=True, kw_only=True)
class FailureEvent(Event):
    """``failure``: member ``disk`` was failed; ``missing`` lists every role now missing."""

    kind: ClassVar[str] = "failure"
    disk: int
    reason: str
    missing: Sequence[int] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SpareEvent(Event):
    """``spare``: a spare store was added."""

    kind: ClassVar[str] = "spare"
    store: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RebuildEvent(Event):
    """``rebuild``: a rebuild of ``role`` onto ``spare`` started, progressed or ended
    (``state``: started, running, done, stopped); ``stripe``/``stripes`` while running."""

    kind: ClassVar[str] = "rebuild"
    role: int
    spare: str
    state: str
    stripe: int | None = None
    stripes: int | None = None
    cause: Cause = Cause.REBUILD


@dataclass(frozen=True, slots=True, kw_only=True)
class ResyncEvent(Event):
    """``resync``: the parity of ``stripes`` stripes was recomputed from their data."""

    kind: ClassVar[str] = "resync"
    stripes: int
    cause: Cause = Cause.RESYNC


@dataclass(frozen=True, slots=True, kw_only=True)
class ScrubEvent(Event):
    """``scrub``: a check (or repair) progressed: ``done`` of ``total`` stripes read."""

    kind: ClassVar[str] = "scrub"
    done: int
    total: int
    mismatches: int
    repaired: int
    cause: Cause = Cause.SCRUB


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefetchEvent(Event):
    """``prefetch``: the prefetch policy's detector changed after a host read (MSP, seed 001
    Fig. 7: ``state`` holds the strip number ``sn_p`` just seen, the one before ``sn_pp``, the
    sequential counter ``sc``, the stripe prefetch size ``sps`` and whether MSP is ``active``);
    ``ranges``: the (first block, count) ranges it asked to read ahead; ``stream``: which
    stream's window it is, for a policy that keeps one per stream (None: one for the array)."""

    kind: ClassVar[str] = "prefetch"
    policy: str
    state: Mapping[str, Any]
    ranges: Sequence[tuple[int, int]] = ()
    stream: str | None = None
    cause: Cause = Cause.PREFETCH


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyEvent(Event):
    """``policy``: a policy was swapped at run time (``vraid ctl``)."""

    kind: ClassVar[str] = "policy"
    key: str
    old: str
    new: str

    def change(self) -> dict[str, str]:
        return {"key": self.key, "old": self.old, "new": self.new}


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyFaultEvent(Event):
    """``policy-fault``: a policy raised, answered out of its family's rules or stalled; the
    guard (:mod:`vraid.engine.guard`) disabled it and runs ``fallback`` instead."""

    kind: ClassVar[str] = "policy-fault"
    family: str
    policy: str
    call: str
    error: str
    fallback: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LogDestageEvent(Event):
    """``log-destage``: a log cache (seed 002, :mod:`vraid.engine.log.cache`) finished a
    destage. ``level`` 1: RAM buffer to the log disk, ``segments`` appended holding
    ``blocks`` blocks, because of ``reason`` (``full``, ``timer``, ``idle``, ``flush``,
    ``drain``); level 2: segment ``seq`` of the log to the data disks (``blocks`` still
    live in it), ``reason`` ``idle`` or ``full`` (the log needed room)."""

    kind: ClassVar[str] = "log-destage"
    level: int
    blocks: int
    segments: int = 1
    seq: int = -1
    reason: str = ""
    cause: Cause = Cause.DESTAGE_L1


@dataclass(frozen=True, slots=True, kw_only=True)
class LogFillEvent(Event):
    """``log-fill``: how full the RAM buffer (blocks in ``ram_used`` of ``ram_slots``) and
    the log (``log_used`` of ``log_segments`` segments) are, after every destage."""

    kind: ClassVar[str] = "log-fill"
    ram_used: int
    ram_slots: int
    log_used: int
    log_segments: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LogHitEvent(Event):
    """``log-hit``: a read found ``ram`` blocks in the RAM buffer and ``log`` on the log disk."""

    kind: ClassVar[str] = "log-hit"
    ram: int
    log: int
    cause: Cause = Cause.HOST


@dataclass(frozen=True, slots=True, kw_only=True)
class LogFailureEvent(Event):
    """``log-failure``: a log store failed; ``lost`` blocks held only by the log are gone
    (0 while a mirror copy carries on)."""

    kind: ClassVar[str] = "log-failure"
    store: str
    lost: int
    error: str


@dataclass
class EventBus:
    #: the most recent event of each kind, for ``vraid status`` and the TUI
    latest: dict[str, Event] = field(default_factory=dict)
    dropped: int = 0
    _subscribers: list[Callable[[Event], None]] = field(default_factory=list)
    history: deque[Event] = field(default_factory=lambda: deque(maxlen=256))

    def publish(self, event: Event) -> None:
        if not isinstance(event, Event):
            raise TypeError(f"publish takes an Event record, not {type(event).__name__}")
        self.latest[event.kind] = event
        self.history.append(event)
        for subscriber in tuple(self._subscribers):
            subscriber(event)

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event; returns an unsubscribe function."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def channel(self, size: int = 1024) -> tuple[trio.MemoryReceiveChannel[Event], Callable[[], None]]:
        """A receive channel of events; full means dropped, never blocked."""
        send, recv = trio.open_memory_channel[Event](size)

        def forward(event: Event) -> None:
            try:
                send.send_nowait(event)
            except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                self.dropped += 1

        return recv, self.subscribe(forward)
