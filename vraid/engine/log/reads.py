"""The log cache's reads: every block from its newest copy (seed 002, VC-RAID sec. 3.3.2).

He & Yang, *VC-RAID* (seed 002), sec. 3.3.2: a read is served from the newest copy of each
block, which the slot table (sec. 3.1, :mod:`vraid.engine.log.slots`) locates: a RAM slot
(IN_RAM_BUFFER), the log (IN_CACHE_DISK; a run of blocks consecutive in one segment is one
log read), else the data disks through the next target. A log store that fails under a
read hands the block to the data disks (:mod:`vraid.engine.log.failure`). A mixin of
:class:`vraid.engine.log.cache.LogCache`, which holds the state it reads.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from vraid.engine.events import LogHitEvent
from vraid.engine.log.medium import LogFailed
from vraid.engine.log.slots import IN_CACHE_DISK, IN_RAM_BUFFER
from vraid.engine.members.request import Priority
from vraid.engine.raid.stripe import StripeBuffer


class LogReads:
    """Reads of a :class:`~vraid.engine.log.cache.LogCache`: RAM slot, log, then the data disks."""

    def read_now(self, offset: int, length: int, *, priority: Priority = Priority.HOST) -> bytes | None:
        """None: a read may need the log medium, so it is always awaited (:meth:`read`)."""
        return None

    async def read(self, offset: int, length: int, *, priority: Priority = Priority.HOST) -> bytes:
        if priority == Priority.HOST:
            self._host()
        bs = self.bs
        b0, b1 = offset // bs, (offset + length - 1) // bs
        data = await self._read_range(b0, b1 - b0 + 1, priority)
        head = offset - b0 * bs
        return data[head : head + length] if head or len(data) != length else data

    async def read_blocks(self, buf: StripeBuffer, cells: Iterable, *, priority: Priority = Priority.HOST) -> None:
        rest = []
        for k, r in cells:
            lba = self.mapping.block_of(buf.stripe, k, buf.row0 + r)
            e = self.table.lookup(lba)
            if e is not None and e.state in (IN_RAM_BUFFER, IN_CACHE_DISK):
                buf.data[k, r] = np.frombuffer(await self._read_range(lba, 1, priority), dtype=np.uint8)
            else:
                rest.append((k, r))
        if rest:
            await self.next.read_blocks(buf, rest, priority=priority)

    # -- reads --------------------------------------------------------------------------
    async def _read_range(self, b0: int, n: int, priority: Priority) -> bytes:
        """Blocks b0..b0+n-1, each from its newest copy."""
        bs, table = self.bs, self.table
        out = bytearray(n * bs)
        ram = logged = 0
        i = 0
        while i < n:
            e = table.lookup(b0 + i)
            if e is not None and e.state is IN_RAM_BUFFER:
                out[i * bs : (i + 1) * bs] = self.ram[e.slot_no].tobytes()
                ram += 1
                i += 1
            elif e is not None and e.state is IN_CACHE_DISK:
                seq, idx = e.location
                j = i + 1  # a run of blocks consecutive in one segment is one log read
                while j < n:
                    f = table.lookup(b0 + j)
                    if f is None or f.state is not IN_CACHE_DISK or f.location != (seq, idx + j - i):
                        break
                    j += 1
                try:
                    out[i * bs : j * bs] = await self.medium.read_data(seq, idx, j - i)
                except LogFailed as exc:
                    await self._fail_log(str(exc))
                    continue  # the block is the data disks' now
                logged += j - i
                i = j
            else:
                j = i + 1
                while j < n and table.state(b0 + j) not in (IN_RAM_BUFFER, IN_CACHE_DISK):
                    j += 1
                out[i * bs : j * bs] = await self.next.read((b0 + i) * bs, (j - i) * bs, priority=priority)
                i = j
        m = self.metrics
        m.read_blocks += n
        m.ram_hits += ram
        m.log_hits += logged
        if ram or logged:
            self.events.publish(LogHitEvent(time=self.clock.now(), ram=ram, log=logged))
        return bytes(out)
