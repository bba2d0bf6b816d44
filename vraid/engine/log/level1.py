"""Level-1 destage: the RAM buffer appended to the log (seed 002, VC-RAID sec. 3.3.3).

He & Yang, *VC-RAID* (seed 002), sec. 3.3.3: **level-1 destage** appends the RAM buffer to
the log in large sequential writes (a segment of at most 64 KiB per request; with several
cache disks, one segment per disk at once, round robin) when the buffer is ``L1_HIGH``
full, when its oldest block has waited ``timer`` seconds, or when the log disk is idle and
a full segment is waiting. A new segment's slot is taken only when the log has room
(:meth:`Level1Destage._make_room`: the tail moved on, checkpointed, or one level-2 destage
first). When the log has failed, the RAM buffer goes straight to the data disks
(write-through). A mixin of :class:`vraid.engine.log.cache.LogCache`, which holds the state.
"""

from __future__ import annotations

import logging

import trio

from vraid.ondisk.logsegment import SegmentHeader, data_crc
from vraid.engine.events import Cause, LogDestageEvent
from vraid.engine.log.medium import LogFailed
from vraid.engine.log.slots import IN_RAM_BUFFER

log = logging.getLogger(__name__)

#: level 1 runs when the oldest block in RAM has waited this long ("several hundreds of milliseconds")
DEFAULT_TIMER = 0.2
#: ... or when the RAM buffer is this full
L1_HIGH = 0.5


class Level1Destage:
    """Level 1 of a :class:`~vraid.engine.log.cache.LogCache`: RAM buffer -> log."""

    async def level1(self, reason: str) -> int:
        """Append every block in the RAM buffer to the log; returns the blocks written."""
        async with self._l1:
            entries = sorted(self.table.in_ram(), key=lambda e: e.lba)
            if not entries:
                return 0
            if self.failed is not None:
                return await self._write_through(entries, reason)
            snap = [(e.lba, e.version, self.ram[e.slot_no].copy()) for e in entries]
            self._ram_since = None
            segs = 0
            ways = self.medium.layout.ways
            chunks = [snap[i : i + self.seg_blocks] for i in range(0, len(snap), self.seg_blocks)]
            try:
                for g in range(0, len(chunks), ways):  # round robin: one segment per cache disk at once
                    batch = []
                    for chunk in chunks[g : g + ways]:
                        await self._make_room()
                        seq, self.head = self.head, self.head + 1
                        self.inflight.add(seq)
                        batch.append((seq, chunk))
                    async with trio.open_nursery() as n:
                        for seq, chunk in batch:
                            n.start_soon(self._append, seq, chunk)
                    segs += len(batch)
            except* LogFailed as eg:
                error = str(eg.exceptions[0])
            else:
                error = ""
            if error:
                await self._fail_log(error)
            if self.failed is not None:
                return await self._write_through(self.table.in_ram(), reason)
            m = self.metrics
            m.level1_destages += 1
            m.level1_segments += segs
            m.level1_blocks += len(snap)
            now = self.clock.now()
            self.events.publish(LogDestageEvent(time=now, level=1, blocks=len(snap), segments=segs, reason=reason,
                                                cause=Cause.DESTAGE_L1))
            self._fill(now)
            self._wake2.set()
            return len(snap)

    async def _append(self, seq: int, chunk: list) -> None:
        data = b"".join(block.tobytes() for _, _, block in chunk)
        header = SegmentHeader(self.medium.uuid, seq, self.tail, tuple(lba for lba, _, _ in chunk), data_crc(data),
                               self.flushed)
        try:
            await self.medium.write_segment(seq, header, data)
        finally:
            self.inflight.discard(seq)
        held = self.held.setdefault(seq, {})
        for idx, (lba, version, _) in enumerate(chunk):
            old = self.copy.get(lba)
            if old is not None and old[0] < seq:  # the older log copy is superseded now
                self.held.get(old[0], {}).pop(lba, None)
            if old is None or old[0] < seq:
                self.copy[lba] = (seq, idx)
                held[lba] = idx
            if self.table.state(lba) is IN_RAM_BUFFER:
                self.table.logged(lba, version, (seq, idx))

    async def _make_room(self) -> None:
        """Wait until the slot of segment ``head`` may be overwritten (level 2 if it must)."""
        while self.head - self.medium.durable_tail >= self.medium.layout.capacity:
            if self.failed is not None:  # the log failed meanwhile: level 1 goes to the data disks
                raise LogFailed(self.failed, "see vraid status")
            self._advance_tail()
            if self.tail > self.medium.durable_tail and not self.replay_pending:
                await self._checkpoint()
            else:
                self.metrics.log_full_waits += 1
                await self.level2_one("full")

    async def _write_through(self, entries: list, reason: str) -> int:
        """The log has failed: the RAM buffer goes straight to the data disks."""
        blocks = {e.lba: (e.version, self.ram[e.slot_no].copy()) for e in entries}
        await self._to_data_disks({lba: d for lba, (_, d) in blocks.items()}, Cause.DESTAGE_L2)
        for lba, (version, _) in blocks.items():
            e = self.table.lookup(lba)
            if e is not None and e.state is IN_RAM_BUFFER and e.version == version:
                self.table.bypassed(lba, version)
                self.table.recycle(lba)
        self._ram_since = None
        return len(blocks)

    async def _level1_loop(self) -> None:
        while True:
            used, now = self.table.ram_used, self.clock.now()
            reason = None
            if used and not self._paused:
                if used >= L1_HIGH * self.table.ram_slots:
                    reason = "full"
                elif self._ram_since is not None and now - self._ram_since >= self.timer:
                    reason = "timer"
                elif self.medium.busy == 0 and used >= self.seg_blocks:
                    reason = "idle"
            if reason:
                try:
                    await self.level1(reason)
                except Exception:  # a data disk failed under write-through: the host write sees it
                    log.exception("level-1 destage failed")
                    await trio.sleep(0.1)
                continue
            self._wake1 = trio.Event()
            if used and self._ram_since is not None and not self._paused:
                with trio.move_on_after(max(1e-6, self._ram_since + self.timer - now)):
                    await self._wake1.wait()
            else:
                await self._wake1.wait()
