"""The log medium: segments appended over one or more log stores (seed 002, sec. 2 and 3.2).

:class:`LogMedium` writes, reads and finds the segments of :mod:`vraid.ondisk.logsegment`
on its stores, whatever the configuration:

* ``scd``: one cache disk;
* ``mcd:N``: N cache disks, segments round robin (the paper's mcd);
* ``mirrored``: every segment on both stores in parallel (sec. 3.4's backup cache disk);
  a store that fails is dropped and the other carries on;
* ``per-disk``: a log region at the end of every data member (:class:`WindowStore` over
  the member beyond the geometry's data area), segments round robin, "partitions of disks
  in the RAID".

The stores are the engine's: behind the same timing model as the members (built by
``vraid.engine.build``), so a simulation pays for log I/O. A per-disk region shares its
member's timing model but not its member queue (the log I/O is not ordered with the
member's other requests: a simplification of ours).

Recovery (:meth:`LogMedium.scan_sync`): read the superblocks' tail, then segments ``tail,
tail+1, ...`` from the slots they must be in, up to the first that is missing, stale
(another sequence number or array) or torn (a CRC fails). That is a torn tail, the normal
end of a log after a crash, unless the walk finds a valid segment *beyond* it (its own
sequence number, both CRCs good) whose header says the bad one had been flushed before it
was written (:attr:`SegmentHeader.flushed`; unflushed segments may land in any order when
the power fails, and a hole among them is still a torn tail): then the log is damaged in
the middle, and replaying up to the first bad segment would silently drop every later
(acknowledged, often fsynced) one. The scan refuses (:class:`LogDamaged`, naming the damaged
range, the sequence numbers and the blocks at stake) unless forced; forced, it keeps every
intact segment and records the damaged ones as lost (:attr:`Scan.lost`). A mirrored log
reads each segment from whichever copy is intact, so damage to one copy loses nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Sequence

import trio

from vraid.backends.base import Store
from vraid.errors import VraidError
from vraid.ondisk.logformat import WindowStore, format_stores  # noqa: F401 - re-exported for the engine
from vraid.ondisk.logsegment import LogLayout, LogSuperblock, SegmentHeader, data_crc

log = logging.getLogger(__name__)


class LogFailed(VraidError):
    """No log store is left to write a segment to."""


@dataclass
class Scan:
    """What recovery found: the intact segments from the tail on, in sequence order."""

    tail: int = 0
    #: (seq, header, data) of every intact segment, tail first
    segments: list[tuple[int, SegmentHeader, bytes]] = field(default_factory=list)
    #: why the walk stopped ("" when it stopped at a never-written slot)
    stopped: str = ""
    #: the highest sequence number any intact header on the stores carries (new segments
    #: must be numbered above it, or an old one could pass for a new one at the next scan)
    highest: int = -1
    #: (seq, why, blocks at stake) of damaged segments before intact ones (kept: ``--force``)
    lost: list[tuple[int, str, int]] = field(default_factory=list)
    #: the log's stores, by name
    stores: str = ""

    @property
    def lost_blocks(self) -> int:
        return sum(n for _, _, n in self.lost)

    def describe(self) -> str:
        """Where a replay comes from, e.g. ``the log disk (log0.img, segments 12-40)``."""
        if not self.segments:
            return f"the log disk ({self.stores}; nothing after tail {self.tail})"
        first, last = self.segments[0][0], self.segments[-1][0]
        return f"the log disk ({self.stores}, segments {first}-{last})"

    def loss_message(self) -> str:
        """What ``--force`` gave up (empty when nothing)."""
        if not self.lost:
            return ""
        return (f"log segments {_ranges([q for q, _, _ in self.lost])} were damaged ({self.lost[0][1]}): "
                f"up to {self.lost_blocks} acknowledged blocks they held are lost")


class LogDamaged(VraidError):
    """The log is damaged in the middle: intact segments follow bad ones."""


def _ranges(seqs: Sequence[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``3-5, 9``."""
    out: list[str] = []
    for q in sorted(seqs):
        if out and int(out[-1].split("-")[-1]) == q - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{q}"
        else:
            out.append(str(q))
    return ", ".join(out)


class LogMedium:
    """Segments on ``stores`` by ``layout`` (see the module docstring)."""

    def __init__(self, stores: Sequence[Store], layout: LogLayout, uuid: str) -> None:
        if len(stores) != layout.stores:
            raise ValueError(f"{len(stores)} log stores for a layout of {layout.stores}")
        self.stores = list(stores)
        self.layout = layout
        self.uuid = uuid
        self.failed: set[int] = set()
        self.bs = layout.block_size
        #: the tail the superblocks hold (segments before it may be overwritten)
        self.durable_tail = 0
        self._checkpointing = trio.Lock()
        self.busy = 0  # requests in flight on the log stores
        #: per store: segment writes completed, and how many of them the last completed flush
        #: covered (a store whose count is ahead holds segments not yet known durable)
        self.written = [0] * len(self.stores)
        self.synced = [0] * len(self.stores)
        self.segment_writes = 0
        self.bytes_written = 0
        self.reads = 0

    # -- setup and recovery (synchronous: before the trio loop serves) ---------------------
    def check_sync(self) -> int:
        """Read every store's superblock; returns the tail. Raises LogFormatError/VraidError."""
        tails = [0]
        for i, s in enumerate(self.stores):
            if i in self.failed:
                continue  # a per-disk region on a missing member
            sb = LogSuperblock.unpack(s.read_sync(0, self.bs), self.bs, where=s.name)
            if sb.array_uuid != self.uuid:
                raise VraidError(f"log store {s.name} belongs to array {sb.array_uuid}, not {self.uuid}",
                                 "give the log files made with this array")
            if (sb.kind, sb.count, sb.segment_blocks, sb.slots) != (self.layout.kind, self.layout.stores,
                                                                    self.layout.segment_blocks, self.layout.slots):
                raise VraidError(f"log store {s.name} is a {sb.kind} log of {sb.count} stores, {sb.slots} segments",
                                 "the array's configuration and its log files disagree; see docs/log-disk.md")
            tails.append(sb.tail)
        self.durable_tail = max(tails)
        return self.durable_tail

    def _intact(self, store: int, seq: int) -> tuple[SegmentHeader, bytes] | str:
        if store in self.failed:
            return "its log store has failed"
        _, off = self.layout.place(seq)
        s = self.stores[store]
        raw = s.read_sync(off, self.layout.segment_bytes)
        h = SegmentHeader.unpack(raw, self.bs)
        if h is None:
            return "torn or never written"
        if h.array_uuid != self.uuid or h.seq != seq:
            return f"stale (holds segment {h.seq})" if h.array_uuid == self.uuid else "stale (another array)"
        data = raw[self.bs : self.bs * (1 + len(h.blocks))]
        if data_crc(data) != h.data_crc:
            return "torn (data CRC)"
        return h, data

    def _find(self, seq: int) -> tuple[tuple[SegmentHeader, bytes] | None, str]:
        """Segment ``seq`` from the first store holding an intact copy, or (None, why)."""
        why = ""
        for store in self.layout.place(seq)[0]:
            got = self._intact(store, seq)
            if isinstance(got, str):
                why = why or got
            else:
                return got, ""
        return None, why

    def _at_stake(self, seq: int) -> int:
        """Blocks a bad segment ``seq`` held: its header's count if the header is intact,
        else a whole segment's (at most)."""
        for store in self.layout.place(seq)[0]:
            if store in self.failed:
                continue
            _, off = self.layout.place(seq)
            h = SegmentHeader.unpack(self.stores[store].read_sync(off, self.bs), self.bs)
            if h is not None and h.array_uuid == self.uuid and h.seq == seq:
                return len(h.blocks)
        return self.layout.segment_blocks

    def _header_is(self, seq: int) -> bool:
        """Whether a store holds a valid header of segment ``seq`` (one block read)."""
        stores, off = self.layout.place(seq)
        for store in stores:
            if store in self.failed:
                continue
            h = SegmentHeader.unpack(self.stores[store].read_sync(off, self.bs), self.bs)
            if h is not None and h.array_uuid == self.uuid and h.seq == seq:
                return True
        return False

    def scan_sync(self, *, force: bool = False) -> Scan:
        """Walk the segments from the tail (see the module docstring).

        Raises:
            LogDamaged: intact segments follow a bad one (not a torn tail), unless ``force``.
        """
        scan = Scan(tail=self.check_sync(), stores=", ".join(s.name for s in self.stores))
        tail = scan.tail
        end = tail + self.layout.capacity
        seq = tail
        while seq < end:
            found, why = self._find(seq)
            if found is None:
                scan.stopped = f"segment {seq}: {why}"
                break
            scan.segments.append((seq, found[0], found[1]))
            seq += 1
        bad = seq
        # past the first bad segment: a valid one written after the bad one was flushed
        # means damage in the middle, not a torn tail
        later: list[tuple[int, SegmentHeader, bytes]] = []
        broken: list[tuple[int, str]] = []
        for q in range(bad + 1, end):
            if not self._header_is(q):
                broken.append((q, "torn or never written"))
                continue
            found, why = self._find(q)
            if found is None:
                broken.append((q, why))
            else:
                later.append((q, found[0], found[1]))
        beyond = [x for x in later if x[1].flushed > bad]  # the bad one was durable once
        if bad < end and beyond:
            last = beyond[-1][0]
            why = scan.stopped.split(": ", 1)[-1]
            scan.lost = [(bad, why, self._at_stake(bad))] + [(q, w, self._at_stake(q)) for q, w in broken if q < last]
            if not force:
                raise LogDamaged(
                    f"the log disk ({scan.stores}) is damaged in the middle: segments "
                    f"{_ranges([q for q, _, _ in scan.lost])} of {tail}-{last} are unreadable ({why}), but "
                    f"{len([x for x in later if x[0] <= last])} later segments up to sequence number {last} are intact; "
                    f"replaying only up to segment {bad - 1} would drop them, and up to {scan.lost_blocks} "
                    "acknowledged (possibly fsynced) blocks the damaged segments held are at stake",
                    "put back an intact copy of the log file(s); or mount with --force to replay every intact "
                    "segment and report the rest as lost (docs/log-disk.md)")
            scan.segments += [x for x in later if x[0] <= last]
            log.warning("%s; --force: the intact segments are replayed", scan.loss_message())
        scan.highest = max(max((q for q, _, _ in scan.segments), default=-1), self._highest_header())
        return scan

    def _highest_header(self) -> int:
        top = -1
        lay = self.layout
        for i, s in enumerate(self.stores):
            if i in self.failed:
                continue
            for slot in range(lay.slots):
                off = self.bs * (1 + slot * (1 + lay.segment_blocks))
                h = SegmentHeader.unpack(s.read_sync(off, self.bs), self.bs)
                if h is not None and h.array_uuid == self.uuid:
                    top = max(top, h.seq)
        return top

    # -- the data path ----------------------------------------------------------------------
    def _live(self, stores: Sequence[int]) -> list[int]:
        return [i for i in stores if i not in self.failed]

    async def write_segment(self, seq: int, header: SegmentHeader, data: bytes) -> None:
        """Append segment ``seq`` (one request per store of at most 64 KiB)."""
        stores, off = self.layout.place(seq)
        payload = header.pack(self.bs) + data
        live = self._live(stores)
        if not live:
            raise LogFailed(f"log segment {seq}: its cache disk has failed", "see vraid status; docs/log-disk.md")
        errors: list[tuple[int, BaseException]] = []

        async def one(i: int) -> None:
            try:
                await self.stores[i].write(off, payload)
            except (OSError, VraidError) as exc:
                errors.append((i, exc))
            else:
                self.written[i] += 1

        self.busy += 1
        try:
            if len(live) == 1:
                await one(live[0])
            else:
                async with trio.open_nursery() as n:
                    for i in live:
                        n.start_soon(one, i)
        finally:
            self.busy -= 1
        for i, exc in errors:
            self.fail(i, f"write of segment {seq}: {exc}")
        if len(errors) == len(live):
            raise LogFailed(f"log segment {seq} could not be written: {errors[0][1]}", "see vraid status")
        self.segment_writes += 1
        self.bytes_written += len(payload) * (len(live) - len(errors))

    async def read_data(self, seq: int, index: int, count: int) -> bytes:
        """``count`` data blocks of segment ``seq`` from block ``index`` on (a log hit, or level 2)."""
        stores, off = self.layout.place(seq)
        last: BaseException | None = None
        for i in self._live(stores):
            self.busy += 1
            try:
                self.reads += 1
                return await self.stores[i].read(off + self.bs * (1 + index), self.bs * count)
            except (OSError, VraidError) as exc:
                last = exc
                self.fail(i, f"read of segment {seq}: {exc}")
            finally:
                self.busy -= 1
        raise LogFailed(f"log segment {seq} cannot be read: {last or 'its cache disk has failed'}",
                        "the blocks it held that were not destaged are lost; see vraid status")

    async def flush(self) -> None:
        """Make every segment written so far durable (an fsync's promise).

        Raises:
            LogFailed: a store failed while it held segments not yet known durable, and no
                other store holds them (anything but a mirror with one copy left): those
                segments may be gone, so the fsync must not succeed. Each segment of
                ``mcd`` and ``per-disk`` lives on one store only: a store that fails at its
                flush after another store's flush returned does not leave the rest durable.
        """
        for i in self._live(range(len(self.stores))):
            await self._flush_one(i)
        if len(self.failed) == len(self.stores):
            raise LogFailed("every log store has failed", "see vraid status")
        unsynced = [i for i in sorted(self.failed) if self.written[i] > self.synced[i]]
        if unsynced and not self.redundant:
            names = ", ".join(self.stores[i].name for i in unsynced)
            raise LogFailed(f"log store {names} failed before the segments written to it were durable",
                            "see vraid status; the blocks only those segments held are lost")

    async def _flush_one(self, i: int) -> None:
        """Flush store ``i``; on success it covers every segment written to it before."""
        covers = self.written[i]
        try:
            await self.stores[i].flush()
        except (OSError, VraidError) as exc:
            self.fail(i, f"flush: {exc}")
        else:
            self.synced[i] = max(self.synced[i], covers)

    async def checkpoint(self, tail: int) -> None:
        """Make ``tail`` durable in every live superblock (segments before it may be reused)."""
        lock = self._checkpointing  # one at a time: an older tail never lands after a newer one
        try:
            lock.acquire_nowait()  # uncontended: no schedule point (a simulation's order stays)
        except trio.WouldBlock:
            await lock.acquire()
        try:
            await self._checkpoint(tail)
        finally:
            lock.release()

    async def _checkpoint(self, tail: int) -> None:
        if tail <= self.durable_tail:
            return
        live = self._live(range(len(self.stores)))
        if not self.redundant and len(live) > 1 and any(self.written[i] > self.synced[i] for i in live):
            # the new tail skips old copies of blocks whose newer copies may sit in segments
            # not yet flushed on *another* store (mcd, per-disk): those first, or a cut after
            # one superblock's flush leaves a tail past both copies (raises LogFailed as
            # flush does: then no superblock moves)
            await self.flush()
        for i in self._live(range(len(self.stores))):
            s = self.stores[i]
            sb = LogSuperblock(self.uuid, self.layout.kind, i, self.layout.stores, self.bs, self.layout.segment_blocks,
                               self.layout.slots, tail)
            covers = self.written[i]
            try:
                await s.write(0, sb.pack())
                await s.flush()
            except (OSError, VraidError) as exc:
                self.fail(i, f"superblock: {exc}")
            else:
                self.synced[i] = max(self.synced[i], covers)
        self.durable_tail = tail

    def fail(self, index: int, why: str) -> None:
        if index not in self.failed:
            log.error("log store %s failed: %s", self.stores[index].name, why)
            self.failed.add(index)

    @property
    def redundant(self) -> bool:
        """Whether a failed store still leaves every segment readable (mirrored with one left)."""
        return self.layout.kind == "mirrored" and len(self.failed) < len(self.stores)

    def status(self) -> dict[str, object]:
        return {"stores": [s.name for s in self.stores], "failed": sorted(self.stores[i].name for i in self.failed),
                "segment_slots": self.layout.capacity, "segment_bytes": self.layout.segment_bytes,
                "segment_writes": self.segment_writes, "bytes_written": self.bytes_written, "reads": self.reads}
