"""A failed log store (seed 002, VC-RAID sec. 3.4): rescue what survives, count what is lost.

He & Yang, *VC-RAID* (seed 002), sec. 3.4 (reliability; the log stores of sec. 3.2). When a
store fails and no copy is left (``scd``, ``per-disk``; ``mirrored`` and ``mcd`` with a
surviving copy go on), level 2 stops, the segments the surviving stores still hold are
destaged ("rescue"), what only the log held is counted lost (an event and a log line), and
level 1 goes straight to the data disks from then on. A mixin of
:class:`vraid.engine.log.cache.LogCache`, which holds the state.
"""

from __future__ import annotations

import logging

import trio

from vraid.engine.events import LogFailureEvent
from vraid.engine.log.medium import LogFailed
from vraid.engine.log.slots import IN_CACHE_DISK

log = logging.getLogger(__name__)


class LogFailure:
    """What a :class:`~vraid.engine.log.cache.LogCache` does when its log fails."""

    async def _fail_log(self, error: str) -> None:
        """A log store failed with no copy left: first destage what the surviving stores
        still hold (mcd, per-disk), then count the rest as lost (:meth:`_lost`)."""
        if self.medium.redundant or self.failed is not None:
            return
        self.failed = error  # level 2 stops; level 1 goes straight to the data disks from now
        self._failing = settled = trio.Event()
        try:
            async with self._l2:
                for seq in sorted(self.held):
                    if all(i in self.medium.failed for i in self.medium.layout.place(seq)[0]):
                        continue
                    try:
                        await self._destage_segment(seq, "rescue")
                    except LogFailed:
                        continue
            self._lost(error)
        finally:
            settled.set()

    async def failure_settled(self) -> None:
        """Return once a log failure in progress has rescued what it could and counted the
        rest lost (at once when none is): an fsync waits for that before it answers."""
        if self._failing is not None:
            await self._failing.wait()

    def _lost(self, error: str) -> None:
        """A log store failed with no copy left: what only the log held is lost."""
        if self.medium.redundant:
            return
        lost = 0
        for seq, held in self.held.items():
            for lba, idx in held.items():
                e = self.table.lookup(lba)
                if e is not None and e.state is IN_CACHE_DISK and e.location == (seq, idx):
                    self.table.drop(lba)
                    lost += 1
                    if seq >= self.flushed:  # no fsync had made it durable: the next fsync fails
                        self.unsynced_lost += 1
        self.held.clear()
        self.copy.clear()
        self.tail = self.head
        self.metrics.lost_blocks += lost
        self.failed = self.failed or error
        names = ",".join(self.medium.stores[i].name for i in sorted(self.medium.failed)) or "log"
        log.error("log disk failed (%s): %d blocks not yet destaged are lost", error, lost)
        self.events.publish(LogFailureEvent(time=self.clock.now(), store=names, lost=lost, error=error))
