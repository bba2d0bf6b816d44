"""Member stores for the tests: in memory, slowed down in virtual time, and read back."""

from __future__ import annotations

import trio

from vraid.backends.base import Store, StoreWrapper
from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry


class SlowStore(StoreWrapper):
    """Every request takes ``delay`` seconds of (virtual) time; a read only when ``slow_reads``.

    It records what it served: ``reads`` (a count), ``writes`` ((offset, length) each),
    ``flushes`` (a count) and, given a list ``log``, ``(tag, op, offset, time)`` of every
    read and write. ``fail_writes`` makes writes fail with EIO (after their delay)."""

    def __init__(self, inner: Store, delay: float = 0.01, *, slow_reads: bool = True, log: list | None = None,
                 tag: str = "") -> None:
        super().__init__(inner)
        self.delay = delay
        self.slow_reads = slow_reads
        self.log = log
        self.tag = tag
        self.reads = 0
        self.writes: list[tuple[int, int]] = []
        self.flushes = 0
        self.fail_writes = False

    async def read(self, offset: int, length: int) -> bytes:
        self.reads += 1
        if self.slow_reads:
            await trio.sleep(self.delay)
        if self.log is not None:
            self.log.append((self.tag, "read", offset, trio.current_time()))
        return await self.inner.read(offset, length)

    async def write(self, offset: int, data) -> None:
        await trio.sleep(self.delay)
        if self.fail_writes:
            raise OSError(5, "injected")
        self.writes.append((offset, len(data)))
        if self.log is not None:
            self.log.append((self.tag, "write", offset, trio.current_time()))
        await self.inner.write(offset, data)

    async def flush(self) -> None:
        self.flushes += 1
        await self.inner.flush()


def memory_stores(g: Geometry, *, extra: int = 0, name: str = "m{i}") -> list[MemoryStore]:
    """One in-memory member per disk of ``g`` (``extra`` bytes past the data area)."""
    return [MemoryStore(g.member_size + extra, name.format(i=i)) for i in range(g.ndisks)]


def slow_stores(g: Geometry, delay: float = 0.01, **slow) -> list[SlowStore]:
    """In-memory members behind :class:`SlowStore` (``slow``: its keyword options)."""
    return [SlowStore(s, delay, **slow) for s in memory_stores(g)]


def members_image(g: Geometry, stores) -> bytes:
    """The array's data read straight from the members (under any wrapper)."""
    out = bytearray()
    for s in range(g.stripes):
        for k in range(g.data_disks):
            inner = stores[g.data_disk(s, k)]
            inner = getattr(inner, "inner", inner)
            out += inner.read_sync(g.member_offset(s), g.strip_size)
    return bytes(out)
