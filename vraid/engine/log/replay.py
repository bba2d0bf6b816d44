"""The log's replay after a crash (seed 002, VC-RAID sec. 3.4).

He & Yang, *VC-RAID* (seed 002), sec. 3.4: what the log holds survives a crash. vraid's
recovery reads the log from its tail, in sequence order, up to the first torn or stale segment (:meth:`LogMedium.scan`), and the
newest copy of every block it held is written through to the data disks by the recovery
(:mod:`vraid.engine.host.recovery`, the journal's replay/reset); then the log is reset:
nothing before its head is needed. A mixin of :class:`vraid.engine.log.cache.LogCache`.
"""

from __future__ import annotations


class LogReplay:
    """The replay/reset of a :class:`~vraid.engine.log.cache.LogCache` (the journal interface)."""

    def replay(self) -> list[tuple[int, bytes]]:
        """(block, data) of the newest copy of every block the log held at the last crash,
        oldest segment first; empty after a clean shutdown."""
        if self.scan is None:
            return []
        newest: dict[int, bytes] = {}
        for _seq, header, data in self.scan.segments:
            for i, lba in enumerate(header.blocks):
                newest.pop(lba, None)  # re-insert: the order is that of the newest copies
                newest[lba] = data[i * self.bs : (i + 1) * self.bs]
        return list(newest.items())

    async def reset(self) -> None:
        """The replayed blocks are on the data disks, flushed: nothing before ``head`` is needed."""
        self.metrics.replayed_blocks += len(self.replay())
        self.scan = None
        self.replay_pending = False
        self.tail = self.head
        await self.medium.checkpoint(self.head)
        self._wake2.set()
