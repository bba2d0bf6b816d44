"""Level-2 destage: the log's blocks to the data disks (seed 002, VC-RAID sec. 3.3.3).

He & Yang, *VC-RAID* (seed 002), sec. 3.3.3: **level-2 destage** moves the log's blocks to
the data disks through the next target (the RAID planner, rxw-matrix and CT, like every
destage) when the destage scheduler (``vraid.policies.destage``, ``idle`` by default: the
paper's idle-time rule) says so, one segment at a time so a new host request stops it
between segments. The log's space comes back by the tail: it moves past segments with no
held block, and a checkpoint (the data disks flushed, then the tail in the log
superblocks, :meth:`LogMedium.checkpoint`) makes that durable. Where vraid differs: the
oldest segment goes first (not the paper's last-write-first-destage by the LRU list), so
the space comes back in order and recovery needs only a tail. A mixin of
:class:`vraid.engine.log.cache.LogCache`, which holds the state.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import trio

from vraid.engine.events import Cause, LogDestageEvent
from vraid.engine.log.medium import LogFailed
from vraid.engine.members.request import Priority
from vraid.engine.raid.stripe import StripeBuffer

log = logging.getLogger(__name__)


class Level2Destage:
    """Level 2 of a :class:`~vraid.engine.log.cache.LogCache`: log -> data disks, and the tail."""

    async def _checkpoint(self) -> None:
        """Give the log's space up to the tail back durably: the data disks flushed first,
        then that tail (as it was before the flush: what level 2 wrote meanwhile is not
        covered by it) written to the log superblocks."""
        tail = self.tail
        await self.next.flush()  # the data disks hold what the reclaimed segments held
        await self.medium.checkpoint(tail)
        self.metrics.checkpoints += 1

    def _advance_tail(self) -> None:
        while self.tail < self.head and not self.held.get(self.tail) and self.tail not in self.inflight:
            self.held.pop(self.tail, None)
            self.tail += 1

    async def level2_one(self, reason: str = "idle") -> int:
        """Destage the oldest segment with held blocks; returns its blocks (0: the log is empty)."""
        async with self._l2:
            self._advance_tail()
            if self.tail >= self.head or self.failed is not None:
                return 0
            try:
                return await self._destage_segment(self.tail, reason)
            except LogFailed as exc:
                error = str(exc)
        await self._fail_log(error)
        return 0

    async def _destage_segment(self, seq: int, reason: str) -> int:
        """Level 2 of segment ``seq`` (the caller holds the level-2 lock)."""
        held = dict(self.held.get(seq, {}))
        if not held:  # being written: level 1 wakes level 2 when it is done
            return 0
        self.level2_running += 1
        try:
            lo, hi = min(held.values()), max(held.values())
            raw = await self.medium.read_data(seq, lo, hi - lo + 1)
            blocks = {lba: np.frombuffer(raw, dtype=np.uint8, count=self.bs, offset=(idx - lo) * self.bs)
                      for lba, idx in held.items()}
            await self._to_data_disks(blocks, Cause.DESTAGE_L2)
        finally:
            self.level2_running -= 1
        still = self.held.get(seq, {})
        for lba, idx in held.items():
            if self.table.destaged(lba, (seq, idx)):
                self.table.recycle(lba)  # the entry is not needed any more: back to the free list
            if self.copy.get(lba) == (seq, idx):
                del self.copy[lba]
            still.pop(lba, None)
        self._advance_tail()
        m = self.metrics
        m.level2_destages += 1
        m.level2_blocks += len(held)
        now = self.clock.now()
        self.events.publish(LogDestageEvent(time=now, level=2, blocks=len(held), seq=seq, reason=reason,
                                            cause=Cause.DESTAGE_L2))
        self._fill(now)
        return len(held)

    async def _to_data_disks(self, blocks: dict, cause: Cause) -> None:
        """Write (lba -> block) through the next target, one unit per stripe."""
        by_stripe: dict[int, list] = {}
        for lba, block in blocks.items():
            a = self.mapping.locate(lba)
            by_stripe.setdefault(a.stripe, []).append((a.strip, a.row, block))
        nd = self.geometry.data_disks
        for stripe, cells in sorted(by_stripe.items()):
            r0 = min(r for _, r, _ in cells)
            rows = max(r for _, r, _ in cells) - r0 + 1
            buf = StripeBuffer(self.mapping, stripe, row0=r0, rows=rows,
                               data=np.zeros((nd, rows, self.bs), dtype=np.uint8))
            z = [["E"] * nd for _ in range(rows)]
            for k, r, block in cells:
                buf.data[k, r - r0] = block
                z[r - r0][k] = "D"
            await self.next.write_unit(buf, tuple(tuple(row) for row in z), priority=Priority.DESTAGE, cause=cause)

    def cache_state(self) -> Any:
        from vraid.policies.destage.base import CacheState

        return CacheState(now=self.clock.now(), dirty=self.head - self.tail, capacity=self.medium.layout.capacity,
                          destaging=self.level2_running, host_idle=max(0.0, self.clock.now() - self.last_host),
                          waiters=0)

    async def _level2_loop(self) -> None:
        while True:
            self._advance_tail()
            recheck = None
            if self.tail < self.head and not self._paused and self.failed is None and self.scheduler is not None:
                d = self.scheduler.decide(self.cache_state())
                if d.concurrency > 0:
                    try:
                        if await self.level2_one("idle"):
                            continue
                    except Exception:
                        log.exception("level-2 destage failed")
                        await trio.sleep(0.1)
                        continue
                recheck = d.recheck
            elif (self.tail >= self.head and self.tail > self.medium.durable_tail and self.failed is None
                  and not self.replay_pending):
                try:
                    await self._checkpoint()  # the log is empty: give its space back durably
                except Exception:  # a member failed: the next host request meets it; try again later
                    log.exception("log checkpoint failed")
                    await trio.sleep(0.1)
                continue
            self._wake2 = trio.Event()
            if recheck is not None:
                with trio.move_on_after(max(1e-6, recheck - self.clock.now())):
                    await self._wake2.wait()
            else:
                await self._wake2.wait()

    async def drain(self) -> None:
        """Everything to the data disks, flushed; the log empty and its tail durable (shutdown)."""
        await self.level1("drain")
        while await self.level2_one("drain"):
            pass
        await self.next.flush()
        if self.failed is None:
            self._advance_tail()
            await self.medium.flush()
            await self.medium.checkpoint(self.tail)
