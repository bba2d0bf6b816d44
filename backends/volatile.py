"""``volatile``: a member whose writes are durable only once it is flushed (a power-cut model).

The CrashMonkey idea (Mohan et al., "Finding Crash-Consistency Bugs with
Bounded Black-Box Crash Testing", OSDI 2018): after a power cut a disk holds
what it was told to make durable and nothing more. A real disk's write cache
and the host's page cache over a member file both keep writes that were never
flushed, and a power cut loses them; killing the daemon with ``kill -9`` does
not (the member files' page cache survives it), so a crash test of the daemon
alone is gentler than a power cut. This wrapper closes the gap:

* every write since the member's last flush stays in an in-memory layer (one
  entry per block, the newest contents); reads see it (read your writes);
* :meth:`flush` writes the layer through to the inner store, then flushes the
  inner store (for a member file: ``pwrite`` then ``fdatasync``), and only then
  forgets the blocks it wrote;
* :meth:`write_durable` (the write-intent bitmap's set writes) goes around the layer:
  its blocks are written to the inner store and made durable there at once, as
  ``RWF_DSYNC`` does on a member file, and the rest of the layer stays volatile;
* when the process dies (``kill -9``) the layer dies with it: exactly the
  writes not yet flushed are lost, as in a power cut. :meth:`drop` does the
  same inside a test.

A write that lands while a flush is in progress is not covered by that flush
(a flush promises what was written before it was issued) and stays volatile.
A partial-block write is merged into the block's current contents (the layer
or the inner store). ``write_sync`` (superblocks) is a write plus a flush: it
writes the whole layer through, as a cache flush of a disk would.

Memory: the layer holds what the array wrote to the member since its last
flush. The array flushes at every host fsync; with ext4 on a loop device on the image every journal commit arrives
as an fsync (5-10 a second under steady writes), so the layer holds a few
seconds of writes, bounded by the member's size. Without host fsyncs (a raw
image written with no sync) it grows until the next flush.

Where it differs from a real disk: a real disk may persist any subset of its
unflushed writes, in any order; this layer loses all of them (a flush cut
short by the crash leaves a prefix of its blocks, in ascending order). That is
the harsher case for the write-intent bitmap and the NVRAM journal, which must
not rely on unflushed writes; reordered partial persistence is left to the
torn-write faults (``torn-after``, :class:`backends.faulty.PowerCut`).
Selected with ``--fault DISK:volatile`` or ``--fault all:volatile``.
"""

from __future__ import annotations

import logging

import trio

from .base import Store, StoreWrapper, check_range

log = logging.getLogger(__name__)


class VolatileStore(StoreWrapper):
    """``inner`` behind a write cache that only a flush empties (see the module docstring)."""

    def __init__(self, inner: Store, *, block_size: int = 4096) -> None:
        super().__init__(inner)
        self.block_size = block_size
        self.instant = inner.instant  # the layer itself never waits
        self._dirty: dict[int, bytes] = {}  # block index -> its newest contents, not yet durable
        self._flushing = trio.Lock()  # one write-back at a time, so an older snapshot never lands last
        self.stats = {"flushes": 0, "written_back": 0, "dropped": 0, "max_dirty_blocks": 0}

    # -- the layer ----------------------------------------------------------------
    @property
    def dirty_blocks(self) -> int:
        """Blocks written since the last flush (lost if the power went now)."""
        return len(self._dirty)

    def _block_len(self, block: int) -> int:
        return min(self.block_size, self.size - block * self.block_size)

    def _overlay(self, offset: int, data: bytes) -> bytes:
        """``data`` read from the inner store at ``offset``, with the layer's newer blocks over it."""
        dirty = self._dirty
        if not dirty:
            return data
        bs = self.block_size
        first, last = offset // bs, (offset + len(data) - 1) // bs
        if last - first + 1 <= len(dirty):
            hits = [b for b in range(first, last + 1) if b in dirty]
        else:
            hits = sorted(b for b in dirty if first <= b <= last)
        if not hits:
            return data
        out = bytearray(data)
        end = offset + len(data)
        for b in hits:
            start = b * bs
            lo, hi = max(start, offset), min(start + len(dirty[b]), end)
            out[lo - offset : hi - offset] = dirty[b][lo - start : hi - start]
        return bytes(out)

    def _put(self, offset: int, data, base) -> None:
        """Put ``data`` at ``offset`` into the layer; ``base(block)`` gives the current
        contents of a block only partly covered."""
        view = memoryview(data)
        bs = self.block_size
        pos = offset
        end = offset + len(view)
        while pos < end:
            b = pos // bs
            start = b * bs
            blen = self._block_len(b)
            hi = min(start + blen, end)
            chunk = view[pos - offset : hi - offset]
            if pos == start and hi == start + blen:
                self._dirty[b] = bytes(chunk)
            else:  # a partial block: merge into what the block holds now
                cur = bytearray(self._dirty[b] if b in self._dirty else base(b))
                cur[pos - start : hi - start] = chunk
                self._dirty[b] = bytes(cur)
            pos = hi
        if len(self._dirty) > self.stats["max_dirty_blocks"]:
            self.stats["max_dirty_blocks"] = len(self._dirty)

    def _runs(self, blocks: dict[int, bytes]) -> list[tuple[int, bytes]]:
        """Consecutive blocks joined: (byte offset, contents) per run, ascending."""
        runs: list[tuple[int, list[bytes]]] = []
        prev = None
        for b in sorted(blocks):
            if prev is not None and b == prev + 1:
                runs[-1][1].append(blocks[b])
            else:
                runs.append((b * self.block_size, [blocks[b]]))
            prev = b
        return [(off, b"".join(parts)) for off, parts in runs]

    def _forget(self, written: dict[int, bytes]) -> None:
        """Forget the blocks now durable, unless a newer write replaced them meanwhile."""
        for b, data in written.items():
            if self._dirty.get(b) is data:
                del self._dirty[b]
        self.stats["written_back"] += len(written)

    def drop(self) -> int:
        """The power goes: every write not yet flushed is lost. Returns how many blocks."""
        n = len(self._dirty)
        self._dirty.clear()
        self.stats["dropped"] += n
        return n

    # -- the Store interface ------------------------------------------------------
    async def read(self, offset: int, length: int) -> bytes:
        return self._overlay(offset, await self.inner.read(offset, length))

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        check_range(self, offset, len(data))
        bs = self.block_size
        need = {}
        for b in {offset // bs, (offset + len(data) - 1) // bs} if len(data) else ():
            if b not in self._dirty and (b * bs < offset or offset + len(data) < b * bs + self._block_len(b)):
                need[b] = await self.inner.read(b * bs, self._block_len(b))  # partial: the rest of the block
        # (a block written back by a flush while we read is in the inner store by now)
        self._put(offset, data, lambda b: need[b] if b in need else self.inner.read_sync(b * bs, self._block_len(b)))

    async def flush(self) -> None:
        async with self._flushing:
            snapshot = dict(self._dirty)
            for off, data in self._runs(snapshot):
                await self.inner.write(off, data)
            await self.inner.flush()
            self._forget(snapshot)
            self.stats["flushes"] += 1

    #: a durable write goes around the layer (see write_durable)
    durable_writes = True

    async def write_durable(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Write ``data`` through to the inner store and make it durable there, leaving the
        rest of the layer volatile (as ``RWF_DSYNC`` does on a member file): the blocks it
        covers leave the layer first (only whole blocks: the write-intent bitmap's pages).
        Under the flush lock, so that a write-back in progress cannot land an older copy
        of these blocks over it afterwards."""
        check_range(self, offset, len(data))
        bs = self.block_size
        if offset % bs or len(data) % bs:
            raise ValueError(f"durable write of {len(data)} bytes at {offset} is not whole blocks of {bs}")
        async with self._flushing:
            for b in range(offset // bs, (offset + len(data)) // bs):
                self._dirty.pop(b, None)
            await self.inner.write_durable(offset, data)

    def prefetch(self, offset: int, length: int) -> None:
        self.inner.prefetch(offset, length)

    def read_sync(self, offset: int, length: int) -> bytes:
        return self._overlay(offset, self.inner.read_sync(offset, length))

    def write_sync(self, offset: int, data: bytes) -> None:
        check_range(self, offset, len(data))
        bs = self.block_size
        self._put(offset, data, lambda b: self.inner.read_sync(b * bs, self._block_len(b)))
        snapshot = dict(self._dirty)
        for off, run in self._runs(snapshot):
            self.inner.write_sync(off, run)
        self._forget(snapshot)

    def close(self) -> None:
        if self._dirty:  # a clean shutdown flushes first; anything left is what a power cut now would lose
            log.info("%s: %d blocks written since the last flush are dropped (power-cut model)", self.name, self.drop())
        self.inner.close()

    def status(self) -> dict[str, object]:
        return {"dirty_blocks": len(self._dirty)} | self.stats
