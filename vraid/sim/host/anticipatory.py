"""The host's anticipatory I/O scheduler (Linux 2.6 ``as-iosched``), as paper 001 ran it.

Paper 001 (Baek & Park, sec. 5.1): "the kernel also hosts the ext3 file system and the
anticipatory disk scheduler". The anticipatory scheduler (AS) holds the disk idle for a
moment after a process's read completes, betting that the same process will soon ask for
the next nearby block, instead of serving another process's read at once and seeking away.
How long it may wait is ``antic_expire``; Linux 2.6's ``block/as-iosched.c`` sets it to
``default_antic_expire = (HZ / 150) ? HZ / 150 : 1`` jiffies, commented "default around
6ms": 6 ms at HZ = 1000 (:data:`DEFAULT_ANTIC_EXPIRE`; at 2.6.18's default HZ = 250 it is
one jiffy, 4 ms, which ``antic=4ms`` runs).

The model here is that rule and nothing more (``--host-readahead seqp:...,antic=on``):

* read-ahead windows reach the array through one host queue, first come first served;
* when an array read of stream S completes, the scheduler *anticipates* S until the
  completion time plus the window: a queued read of S is dispatched at once (a *hit*, and
  the anticipation ends), reads of other streams wait;
* when the window passes without a read of S, the waiting reads are dispatched in order
  (a *timeout*); reads already dispatched (the drive's queue) are never held back.
* the anticipation follows the latest completion: when another stream's read completes
  meanwhile, that stream is anticipated from then on (AS anticipates the process whose
  request it served last).

Not modelled: AS's think-time and seek-distance heuristics that stop it anticipating a
process that rarely comes back soon (``as_can_break_anticipation``), its read and write
batches and expiry deadlines (the prefetch runs only read), and one scheduler per member
disk (the paper's driver sits under one host queue here). Reads that miss the read-ahead
(none for sequential readers) go to the array without the queue.

:class:`AnticipatoryQueue` holds the timing rule alone (no trio, the time passed in), so a
test can drive it step by step; :class:`vraid.sim.host.model.HostModel` runs it.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

#: Linux 2.6 ``default_antic_expire`` at HZ = 1000 ("default around 6ms"), seconds
DEFAULT_ANTIC_EXPIRE = 0.006

T = TypeVar("T")


@dataclass
class AnticipationStats:
    """What the scheduler did: anticipations started, hits, timeouts, reads held, time held."""

    anticipations: int = 0
    hits: int = 0
    timeouts: int = 0
    held_reads: int = 0
    held_seconds: float = 0.0

    def to_dict(self, window: float) -> dict[str, Any]:
        return {"antic_expire_ms": round(window * 1e3, 6), "anticipations": self.anticipations,
                "hits": self.hits, "timeouts": self.timeouts, "held_reads": self.held_reads,
                "held_seconds": round(self.held_seconds, 9)}


class AnticipatoryQueue(Generic[T]):
    """The host queue under the anticipation rule (module docstring); items are opaque.

    ``add(stream, item, now)`` queues a read; ``take(now)`` returns the next read to
    dispatch now, or None when the queue is empty or holds only other streams' reads while
    a stream is anticipated; ``wait(now)`` is how long until ``take`` may say otherwise
    without a new event (inf: only an arrival or a completion can change it);
    ``completed(stream, now)`` starts anticipating ``stream``.
    """

    def __init__(self, window: float = DEFAULT_ANTIC_EXPIRE) -> None:
        if not window > 0:
            raise ValueError(f"antic_expire {window} is not positive")
        self.window = window
        self.queue: deque[tuple[int, T]] = deque()
        self.stream: int | None = None  # the stream anticipated
        self.until = -math.inf  # when the anticipation ends
        self.stats = AnticipationStats()
        self._held_since: float | None = None
        self._held_counted: set[int] = set()

    def anticipating(self, now: float) -> bool:
        return self.stream is not None and now < self.until

    def add(self, stream: int, item: T, now: float) -> None:
        self.queue.append((stream, item))

    def completed(self, stream: int, now: float) -> None:
        """A read of ``stream`` completed at ``now``: anticipate it for the window."""
        self._expire(now)
        self.stream, self.until = stream, now + self.window
        self.stats.anticipations += 1

    def take(self, now: float) -> T | None:
        self._expire(now)
        if not self.queue:
            return None
        if self.anticipating(now):
            for i, (sid, item) in enumerate(self.queue):
                if sid == self.stream:
                    del self.queue[i]
                    self.stats.hits += 1
                    self.stream, self.until = None, -math.inf
                    self._release(now)
                    return item
            if self._held_since is None:
                self._held_since = now
            for i, (sid, item) in enumerate(self.queue):
                if id(item) not in self._held_counted:
                    self._held_counted.add(id(item))
                    self.stats.held_reads += 1
            return None
        self._release(now)
        return self.queue.popleft()[1]

    def wait(self, now: float) -> float:
        """Seconds until the anticipation times out while reads wait (inf otherwise)."""
        if self.queue and self.anticipating(now):
            return self.until - now
        return math.inf

    def _expire(self, now: float) -> None:
        if self.stream is not None and now >= self.until:
            if self._held_since is not None:
                self.stats.timeouts += 1
            self.stream, self.until = None, -math.inf

    def _release(self, now: float) -> None:
        if self._held_since is not None:
            self.stats.held_seconds += now - self._held_since
            self._held_since = None
            self._held_counted.clear()


__all__ = ["AnticipationStats", "AnticipatoryQueue", "DEFAULT_ANTIC_EXPIRE"]
