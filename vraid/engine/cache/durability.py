"""Durability of the write-back cache: fsync, drain, and its use of the journal.

Without a journal the cache is volatile: fsync of the image drains every unit dirty at the
time of the call (:meth:`Durability.flush`). With one (:mod:`vraid.engine.cache.journal`;
``--nvram FILE`` is an NVRAM journal) every dirty block is also put into the journal when it
is written (:meth:`Durability._put_batch`, one ``put_many`` per host write), so fsync only
syncs it, and a new mount replays it (:mod:`vraid.engine.host.recovery`) before it serves
anything. A destaged block's record is cleared only once the target is flushed
(:meth:`Durability._settle`): until then a power loss could lose the member copy, and the
journal's copy must survive it. A shutdown (:meth:`Durability.shutdown`) empties the journal last.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any

from vraid.errors import LostData, MemberIOError

if TYPE_CHECKING:
    from .units import Unit

log = logging.getLogger(__name__)


class JournalBatch:
    """Journal records of the units one host write absorbed without an await, put together."""

    __slots__ = ("available", "items", "dests")

    def __init__(self, available: int) -> None:
        self.available = available  # journal room left once these records are put
        self.items: list[tuple[int, Any, Any]] = []  # (block, data, replaces)
        self.dests: list[tuple[dict, tuple[int, int]]] = []  # where each record's handle goes



class Durability:
    """Flush, drain and the journal records of a
    :class:`~vraid.engine.cache.writeback.WriteBackCache` (which holds the state these methods
    use: ``journal``, the records awaiting release, the journal's epoch)."""

    def _put_batch(self, batch: "JournalBatch") -> None:
        """Put the records collected in ``batch`` into the journal (one put_many), note their handles."""
        if not batch.items:
            return
        items, dests = batch.items, batch.dests
        batch.items, batch.dests = [], []
        journal = self.journal
        put_many = getattr(journal, "put_many", None)  # optional in the Journal protocol
        handles = put_many(items) if put_many is not None and len(items) > 1 else [journal.put(*it) for it in items]
        for (slots, key), handle in zip(dests, handles):
            slots[key] = handle


    def _release_later(self, unit: "Unit") -> None:
        """The records of ``unit``'s destaged blocks await the target's flush (:meth:`_settle`)."""
        stripe = unit.span.stripe
        self._pending_release.extend((handle, stripe) for handle in unit.slots.values())
        self._pending_stripes[stripe] = self._pending_stripes.get(stripe, 0) + len(unit.slots)
        unit.slots.clear()

    def _adopt_shadow_records(self, unit: "Unit") -> None:
        """The records of the blocks written while ``unit`` was destaged become its own; each
        replaces the record of the same block before (cleared)."""
        for cell, handle in unit.shadow_slots.items():
            old = unit.slots.pop(cell, None)
            if old is not None:
                self.journal.clear(old)
            unit.slots[cell] = handle
        unit.shadow_slots.clear()

    def _settle_due(self) -> bool:
        """Whether enough records await release to flush the target and clear them now."""
        return len(self._pending_release) >= max(1, self.journal.capacity // 8)

    async def _settle(self) -> None:
        """Flush the target, then clear the journal records of what was destaged before."""
        if self._settling or not self._pending_release:
            return
        self._settling = True
        try:
            batch, self._pending_release = self._pending_release, []
            epoch = self._journal_epoch
            try:
                await self.target.flush()
            except MemberIOError as exc:  # the records stay: the journal still holds those blocks
                if epoch == self._journal_epoch:
                    self._pending_release = batch + self._pending_release
                self.last_error = exc
                log.error("flush before clearing journal records failed: %s", exc)
                return
            if epoch != self._journal_epoch:
                return  # the journal was emptied meanwhile: these slots may hold new records now
            pending = self._pending_stripes
            for handle, stripe in batch:
                self.journal.clear(handle)
                n = pending[stripe] - 1
                if n:
                    pending[stripe] = n
                else:
                    del pending[stripe]
        finally:
            self._settling = False
        self._progressed()
        self._notify()

    async def shutdown(self) -> None:
        """Unmount: destage every unit (a destager paused by step mode must not hold it), shut
        the target down, and only then empty the journal: the members hold everything, durably."""
        self.resume()
        try:
            await self.drain()
        except LostData as exc:  # acknowledged before the second failure; cannot be written now
            log.error("dirty cache units that need lost members are dropped: %s", exc)
        await self.target.shutdown()
        if self.journal is not None:
            await self.reset_journal()

    async def reset_journal(self) -> None:
        """Empty the journal once the members hold everything durably (a shutdown). The
        records still awaiting release are forgotten with it: their slots are free again,
        and a later :meth:`_settle` clearing them would clear the new records put there."""
        self._pending_release = []
        self._pending_stripes = {}
        self._journal_epoch += 1  # a _settle in flight must not clear its (now stale) records
        await self.journal.reset()

    async def flush(self) -> None:
        """Return once every write acknowledged before the call is durable."""
        if self.journal is not None:
            await self.journal.sync()
            gen = self._bypass_gen
            if gen > self._bypass_flushed:  # stripes written around the cache: on the target only
                await self.target.flush()  # (each of two flushes at once waits for its own)
                self._bypass_flushed = max(self._bypass_flushed, gen)
            return
        await self.drain(self.write_seq)
        await self.target.flush()

    async def drain(self, upto: float = math.inf) -> None:
        """Destage until no unit holds a write with sequence number <= ``upto``."""
        self.draining += 1
        errors = self.metrics.destage_errors
        try:
            while any(min(u.oldest, u.shadow_oldest) <= upto for u in (self.units[k] for k in self.dirty_keys)):
                if self.metrics.destage_errors != errors and self.last_error is not None:
                    raise self.last_error
                self._notify()
                await self._progress_wait()
        finally:
            self.draining -= 1

    async def _progress_wait(self) -> None:
        progress = self._progress
        await progress.wait()

