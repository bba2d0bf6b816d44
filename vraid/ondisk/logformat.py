"""The log stores' format at create (seed 002, sec. 3.2): fresh log superblocks, and the
per-disk log region as a store of its own.

``vraid create --log`` formats the log here (:mod:`vraid.ondisk.logfiles`), and the engine
formats a simulation's in-memory log the same way (``vraid.engine.log.medium`` re-exports
these); the segments themselves are :mod:`vraid.ondisk.logsegment`'s.
"""

from __future__ import annotations

from typing import Sequence

from vraid.backends.base import Store, StoreWrapper
from .logsegment import LogLayout, LogSuperblock


class WindowStore(StoreWrapper):
    """``size`` bytes of ``inner`` from ``base`` on, as a store of their own (a per-disk log region)."""

    def __init__(self, inner: Store, base: int, size: int, name: str | None = None) -> None:
        super().__init__(inner)
        self.base, self._size = base, size
        self.name = name or f"{inner.name}+log"

    @property
    def size(self) -> int:
        return self._size

    def _check(self, offset: int, length: int) -> None:
        if offset < 0 or offset + length > self._size:
            raise ValueError(f"{self.name}: {length} bytes at {offset} past the log region of {self._size} bytes")

    async def read(self, offset: int, length: int) -> bytes:
        self._check(offset, length)
        return await self.inner.read(self.base + offset, length)

    async def write(self, offset: int, data) -> None:
        self._check(offset, len(data))
        await self.inner.write(self.base + offset, data)

    def close(self) -> None:
        """The member is not ours to close."""

    def read_sync(self, offset: int, length: int) -> bytes:
        self._check(offset, length)
        return self.inner.read_sync(self.base + offset, length)

    def write_sync(self, offset: int, data: bytes) -> None:
        self._check(offset, len(data))
        self.inner.write_sync(self.base + offset, data)


def format_stores(stores: Sequence[Store], layout: LogLayout, uuid: str) -> None:
    """Write a fresh log superblock on every store and wipe its first segment slots (create)."""
    for i, s in enumerate(stores):
        sb = LogSuperblock(uuid, layout.kind, i, layout.stores, layout.block_size, layout.segment_blocks, layout.slots)
        s.write_sync(0, sb.pack())
        s.write_sync(layout.block_size, bytes(layout.block_size))
