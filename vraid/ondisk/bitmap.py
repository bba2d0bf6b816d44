"""The write-intent bitmap: which stripes may be mid-write, kept on the members.

Like Linux md's internal bitmap (drivers/md/md-bitmap.c): one bit per *chunk*
of ``chunk`` consecutive stripes, stored in the reserved area of every member
between the superblock and the data offset. A bit is set, and the bitmap
written to every member and flushed, BEFORE the first member write to a
stripe of its chunk; it is cleared lazily, once the chunk has had no write in
flight for a while and the members have been flushed since its last write.
After an unclean shutdown only the stripes of the set bits can disagree with
their parity, so resync recomputes just those (``vraid.engine.host.recovery``) instead of
the whole array.

The cost is one extra bitmap write and flush when a write touches a chunk
whose bit is clear; writes to a chunk whose bit is already set (the common
case: writes cluster) cost nothing. Setting is batched: writers that need
bits while a bitmap write is in progress wait for it and are all served by
the next one (a group commit). Clearing is batched too: a background task
(md's bitmap daemon) looks every ``interval`` seconds for chunks idle for at
least that long, flushes the members once, and clears them all in one write.
The trade-off (a larger chunk: fewer bitmap writes, more to resync after a
crash) is in docs/crash-and-scrub.md.

Where vraid differs from md: md counts writes per chunk in 16-bit counters
and keeps "needed"/"pending" states per bit for resync and recovery; vraid
keeps a plain counter per chunk in memory and only the bits on disk, and it
never clears a bit whose chunk saw a failed write (it stays set for the next
resync). The chunk is a number of stripes, not of bytes, so a bit always
covers whole parity groups. The stripes are physical ones, numbered by the
array's mapping (:mod:`vraid.core.mapping`): the stripe a member write goes
to, whatever logical blocks it holds.

On disk: the bits, least significant bit first (chunk 0 = bit 0 of byte 0),
in whole blocks from :data:`OFFSET` rounded up to the block size. The chunk
size is in the superblock's ``params["bitmap_chunk"]`` (stripes; 0 means the
array has no bitmap). At assembly the bitmaps of all members are ORed.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

import trio

from vraid.core.mapping import mapping_of
from vraid.errors import VraidError
from .superblock import SIZE as SUPERBLOCK_SIZE

if TYPE_CHECKING:
    from vraid.backends.base import Store
    from vraid.core.geometry import Geometry
    from vraid.core.mapping import Mapping
    from .member_io import Clock, MemberIO

log = logging.getLogger(__name__)

#: where the bitmap starts on a member (after the 4 KiB superblock; rounded up to a block)
OFFSET = SUPERBLOCK_SIZE
#: superblock params key holding the chunk size in stripes (0: no bitmap)
PARAM = "bitmap_chunk"
#: data bytes one bit covers by default (md picks its chunk from the array size; 4 MiB
#: keeps the resync after a crash to a few MiB per chunk that was being written)
DEFAULT_CHUNK_BYTES = 4 << 20
#: seconds between sweeps of the clearing task (md's daemon_sleep is 5 s)
DEFAULT_INTERVAL = 5.0


def area(geometry: "Geometry") -> tuple[int, int]:
    """(offset, bytes) of the bitmap area on every member."""
    bs = geometry.block_size
    start = -(-OFFSET // bs) * bs
    return start, max(0, geometry.data_offset - start)


def max_bits(geometry: "Geometry") -> int:
    return area(geometry)[1] * 8


def default_chunk(geometry: "Geometry", chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> int:
    """Stripes per bit for ``chunk_bytes`` of data per bit (at least one stripe, and
    large enough for the bits to fit the reserved area); 0 when no bitmap fits."""
    room = max_bits(geometry)
    if room == 0:
        return 0
    chunk = max(1, chunk_bytes // geometry.stripe_data_bytes)
    return max(chunk, -(-geometry.stripes // room))


def check_chunk(geometry: "Geometry", chunk: int) -> None:
    """Raises VraidError if ``chunk`` stripes per bit do not fit the reserved area."""
    if chunk < 1:
        raise VraidError(f"bitmap chunk of {chunk} stripes is not positive", "use at least one stripe per bit")
    need = -(-geometry.stripes // chunk)
    room = max_bits(geometry)
    if need > room:
        raise VraidError(
            f"a bitmap chunk of {chunk} stripes needs {need} bits; the reserved area holds {room}",
            f"use a chunk of at least {-(-geometry.stripes // room) if room else 'a whole array'} stripes"
            if room else "this array has no room for a bitmap (its data offset is too small): use --bitmap-chunk none",
        )


@dataclass
class BitmapStats:
    #: bitmap writes that set bits (each a durable write of the pages on every member, or,
    #: where a member cannot make one write durable alone, a write and a flush of every member)
    set_writes: int = 0
    #: bitmap writes that cleared bits
    clear_writes: int = 0
    bits_set: int = 0
    bits_cleared: int = 0
    #: member flushes the clearing task asked for
    flushes: int = 0
    #: begin() calls that found their bit already on disk (no wait)
    hits: int = 0
    begins: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


class WriteIntentBitmap:
    """The write-intent hook of :class:`vraid.engine.host.array.Array` (``Array(intent=...)``).

    ``await begin(stripe)`` before a member write to ``stripe``, ``end(stripe, ok)``
    after it. ``run`` is the clearing task (the array starts it), ``clean`` clears
    every idle bit once the caller has flushed the members (shutdown, after resync).
    ``mapping`` numbers the stripes (the geometry's static layout by default).
    """

    def __init__(self, geometry: "Geometry", chunk: int, *, interval: float = DEFAULT_INTERVAL,
                 mapping: "Mapping | None" = None) -> None:
        check_chunk(geometry, chunk)
        self.geometry = geometry
        self.mapping = mapping_of(mapping if mapping is not None else geometry)
        self.chunk = chunk
        self.interval = interval
        self.nbits = -(-self.mapping.stripes // chunk)
        self.offset, room = area(geometry)
        bs = geometry.block_size
        self.page = bs
        self.nbytes = -(-(-(-self.nbits // 8)) // bs) * bs  # whole blocks
        assert self.nbytes <= room
        self.bits = bytearray(self.nbytes)  # what is (or is about to be) on the members
        self.pending: Counter[int] = Counter()  # chunk -> member writes in flight
        self.durable: set[int] = set()  # chunks whose bit is set on every member, flushed
        self.want: set[int] = set()  # chunks waiting for the next set write
        self.idle: dict[int, float] = {}  # chunk -> when its last write ended
        self.sticky: set[int] = set()  # chunks with a failed write: never cleared lazily
        self.stats = BitmapStats()
        self.members: "MemberIO | None" = None
        self.clock: "Clock | None" = None
        self._committing: trio.Event | None = None
        self._io = trio.Lock()

    # -- loading -----------------------------------------------------------------
    def load_sync(self, stores: Sequence["Store"]) -> set[int]:
        """Read the bitmap of every member (ORed); the set chunks count as durable.
        Returns the set chunks."""
        merged = bytearray(self.nbytes)
        for store in stores:
            raw = store.read_sync(self.offset, self.nbytes)
            merged = bytearray(a | b for a, b in zip(merged, raw)) if any(raw) else merged
        self.bits = merged
        self.durable = set(self.set_chunks())
        return set(self.durable)

    def set_chunks(self) -> list[int]:
        out = []
        for i, byte in enumerate(self.bits):
            if byte:
                out += [i * 8 + b for b in range(8) if byte >> b & 1 and i * 8 + b < self.nbits]
        return out

    def stripes_of(self, chunks: Iterable[int]) -> list[int]:
        """Every stripe the given chunks cover, in order."""
        out: list[int] = []
        for c in sorted(set(chunks)):
            out += range(c * self.chunk, min(self.mapping.stripes, (c + 1) * self.chunk))
        return out

    def chunk_of(self, stripe: int) -> int:
        return stripe // self.chunk

    # -- the Array hook --------------------------------------------------------------
    def attach(self, members: "MemberIO", clock: "Clock") -> None:
        self.members = members
        self.clock = clock

    def ready(self, stripe: int) -> bool:
        """True when :meth:`begin` of ``stripe`` would return at once (its bit is durable)."""
        return stripe // self.chunk in self.durable

    async def begin(self, stripe: int) -> None:
        """Return once the bit of ``stripe``'s chunk is durable on every member."""
        c = stripe // self.chunk
        self.pending[c] += 1
        self.idle.pop(c, None)
        self.stats.begins += 1
        if c in self.durable:
            self.stats.hits += 1
            return
        self.want.add(c)
        try:
            while c not in self.durable:
                await self._commit()
        except BaseException:
            self.end(stripe, ok=False)
            raise

    def end(self, stripe: int, ok: bool = True) -> None:
        """The member writes to ``stripe`` are over (``ok``: all succeeded)."""
        c = stripe // self.chunk
        self.pending[c] -= 1
        if not ok:
            self.sticky.add(c)
        if self.pending[c] <= 0:
            del self.pending[c]
            if c not in self.sticky:
                self.idle[c] = self.clock.now() if self.clock is not None else 0.0

    async def _commit(self) -> None:
        """Write the wanted bits (one batch) to every member and flush; or wait for the
        batch in progress (the caller loops until its bit is durable)."""
        if self._committing is not None:
            await self._committing.wait()
            return
        done = self._committing = trio.Event()
        try:
            await trio.lowlevel.checkpoint()  # writers arriving now join this batch
            batch, self.want = self.want, set()
            if not batch:
                return
            for c in batch:
                self.bits[c >> 3] |= 1 << (c & 7)
            try:
                if self._durable_writes():  # only the bitmap pages are made durable
                    await self._write_pages(batch, durable=True)
                else:  # the pages, then a flush of every member (all it holds)
                    await self._write_pages(batch)
                    await self.members.flush()
            except BaseException:
                self.want |= batch
                raise
            self.durable |= batch
            self.stats.set_writes += 1
            self.stats.bits_set += len(batch)
        finally:
            self._committing = None
            done.set()

    def _durable_writes(self) -> bool:
        """Whether every member the bitmap is written to can make one write durable on its
        own (``Store.durable_writes``: member files, with ``RWF_DSYNC``). A set write then
        costs a durable write of its page per member, where a member flush would also wait
        for every data page the member holds dirty (with sequential writes: a synchronous
        write-out of the last chunk's data before each new chunk's first write)."""
        members = self.members
        assert members is not None
        return all(d.store.durable_writes for d in members.disks if d.index not in members.excluded)

    async def _write_pages(self, chunks: Iterable[int], durable: bool = False) -> None:
        pages = sorted({(c >> 3) // self.page for c in chunks})
        async with self._io:
            requests = []
            for p in pages:
                start = p * self.page
                data = memoryview(bytes(self.bits[start : start + self.page]))
                for disk in range(len(self.members)):
                    if disk in self.members.excluded:
                        continue  # a failed member gets nothing (vraid.ondisk.failures)
                    requests.append(self.members.request(disk, "write", self.offset + start, self.page, data, durable=durable))
            await self.members.run(requests, queued=durable)  # durable writes wait on all members at once

    # -- clearing ----------------------------------------------------------------
    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Clear idle bits every ``interval`` seconds until cancelled (md's bitmap daemon)."""
        task_status.started()
        while True:
            await self.clock.sleep(self.interval)
            try:
                await self.sweep(self.interval)
            except Exception as exc:  # noqa: BLE001 - a failing member: the bits stay set
                log.error("write-intent bitmap: clearing bits failed: %s", exc)

    async def sweep(self, idle_for: float) -> int:
        """Clear the chunks idle for at least ``idle_for`` seconds: flush the members,
        then clear those still idle since before the flush. Returns how many."""
        now = self.clock.now()
        candidates = {c: t for c, t in self.idle.items() if now - t >= idle_for}
        if not candidates:
            return 0
        await self.members.flush()
        self.stats.flushes += 1
        return await self._clear({c for c, t in candidates.items() if self.idle.get(c) == t and c not in self.pending})

    async def clean(self) -> int:
        """Clear every chunk with no write in flight and no failed write; the caller has
        just flushed the members (shutdown, end of a resync). Returns how many."""
        return await self._clear({c for c in self.set_chunks() if c not in self.pending and c not in self.sticky})

    def resynced(self, stripes: Iterable[int]) -> None:
        """A resync made these stripes consistent: their chunks may be cleared again
        (only whole chunks, when every stripe of the chunk was resynced)."""
        covered = Counter(s // self.chunk for s in set(stripes))
        for c, n in covered.items():
            if n >= len(range(c * self.chunk, min(self.mapping.stripes, (c + 1) * self.chunk))):
                self.sticky.discard(c)
                if c not in self.pending and c in self.durable:
                    self.idle.setdefault(c, self.clock.now() if self.clock is not None else 0.0)

    async def _clear(self, chunks: set[int]) -> int:
        if not chunks:
            return 0
        for c in chunks:
            self.bits[c >> 3] &= ~(1 << (c & 7)) & 0xFF
            self.durable.discard(c)
            self.idle.pop(c, None)
        await self._write_pages(chunks)  # no flush: a lost clear only means a longer resync
        self.stats.clear_writes += 1
        self.stats.bits_cleared += len(chunks)
        return len(chunks)

    def status(self) -> dict[str, object]:
        g = self.geometry
        return {
            "chunk_stripes": self.chunk,
            "chunk_bytes": self.chunk * g.stripe_data_bytes,
            "bits": self.nbits,
            "set": len(self.set_chunks()),
            "in_flight_chunks": len(self.pending),
        } | self.stats.to_dict()


def describe_chunk(geometry: "Geometry", chunk: int) -> str:
    from vraid.core.units import format_size

    if not chunk:
        return "no write-intent bitmap"
    return f"bitmap chunk {chunk} stripes ({format_size(chunk * geometry.stripe_data_bytes)} of data per bit)"


def parse_chunk(geometry: "Geometry", text: str) -> int:
    """``--bitmap-chunk SIZE|none``: stripes per bit for SIZE bytes of data per bit, 0 for none.

    Raises:
        VraidError: less than one stripe, or more bits than the reserved area holds.
    """
    from vraid.core.units import parse_size

    if text.strip().lower() in ("none", "off", "0"):
        return 0
    size = parse_size(text, "bitmap chunk")
    if size < geometry.stripe_data_bytes:
        raise VraidError(
            f"--bitmap-chunk {text} is less than one stripe ({geometry.stripe_data_bytes} bytes of data)",
            f"use at least {geometry.stripe_data_bytes // 1024}K, or none",
        )
    chunk = default_chunk(geometry, size)
    if chunk != size // geometry.stripe_data_bytes:
        raise VraidError(
            f"--bitmap-chunk {text} needs more bits than the reserved area holds",
            f"use {chunk * geometry.stripe_data_bytes // 1024}K or more",
        )
    return chunk
