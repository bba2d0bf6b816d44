"""The log cache: seed 002's large virtual NVRAM cache as a chained destage target.

He & Yang, *VC-RAID* (seed 002), sec. 2 and 3: a small **RAM buffer** of block slots and
one or more **cache disks** (a log: :mod:`vraid.engine.log.medium`) in front of the RAID
form one large non-volatile write cache. A host write is copied into a RAM slot and
acknowledged; **level-1 destage** appends the RAM buffer to the log in large sequential
writes (a segment of at most 64 KiB per request) when the buffer fills, when its oldest
block has waited ``timer`` seconds, or when the log disk is idle and a full segment is
waiting; **level-2 destage** moves the log's blocks to the data disks through the next
target (the RAID planner, rxw-matrix and CT, like every destage) when the destage
scheduler (``vraid.policies.destage``, ``idle`` by default: the paper's idle-time rule)
says so, one segment at a time so a new host request stops it between segments. Reads
come from the newest copy: RAM slot, log, then the data disks. Where each block is, is
the slot table's (:mod:`vraid.engine.log.slots`: IN_RAM_BUFFER, IN_CACHE_DISK, IN_DATA_DISK,
SLOT_FREE).

How it combines with the write-back cache (``--cache``). With ``--log`` alone this *is*
the array's write cache (the paper's design: one RAM buffer, block slots): the Array
hands host writes to :meth:`LogCache.write` and fsync to :meth:`LogCache.flush`. With
``--cache pbg|stripe`` as well, the WriteBackCache sits above it and destages into it
(:meth:`LogCache.write_unit`): the seam of :mod:`vraid.engine.layer`. Either way the
Array only routes (write, flush, drain); every decision (when level 1, when level 2,
which segment) is here or in the scheduler. ``--nvram`` with ``--log`` is refused (two
journals for one cache; vraid.engine.build says what to do).

Durability. :meth:`flush` (fsync) runs level 1 for every block in RAM and flushes the log
stores: everything acknowledged before it is then durable in the log, not necessarily on
the data disks. A log copy stays *held* until it reached the data disks (level 2) or a
newer copy of its block is on the log; a segment's slot is reused only after the tail
moved past it, the data disks were flushed and the new tail is in the log superblocks
(:meth:`LogMedium.checkpoint`). After a crash, recovery (:mod:`vraid.engine.host.recovery`)
replays :meth:`replay` (the log from its tail, in sequence order, up to the first torn
or stale segment) through to the data disks, then :meth:`reset`\\ s the log.

Where vraid differs: level 2 destages the log in sequence order (oldest segment first)
rather than the paper's "last-write-first-destage" by the LRU list, so the log's space
comes back in order and recovery needs only a tail; one level-2 segment at a time (no two
copies of a block race to the data disks).
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np
import trio

from vraid.ondisk.logsegment import SegmentHeader, data_crc
from vraid.engine.events import Cause, LogDestageEvent, LogFailureEvent, LogFillEvent, LogHitEvent
from vraid.engine.log.medium import LogFailed, LogMedium
from vraid.engine.members.request import Priority
from vraid.engine.metrics import LogMetrics
from vraid.engine.log.slots import IN_CACHE_DISK, IN_RAM_BUFFER, NoSlot, SlotTable
from vraid.engine.raid.stripe import StripeBuffer

if TYPE_CHECKING:
    from vraid.engine.layer import Layer as Target

log = logging.getLogger(__name__)

#: the paper's RAM buffer
DEFAULT_RAM = 4 << 20
#: level 1 runs when the oldest block in RAM has waited this long ("several hundreds of milliseconds")
DEFAULT_TIMER = 0.2
#: ... or when the RAM buffer is this full
L1_HIGH = 0.5


class LogCache:
    """A RAM buffer and a log in front of ``next`` (see the module docstring)."""

    name = "logdisk"

    def __init__(self, next: "Target", medium: LogMedium, *, ram_bytes: int = DEFAULT_RAM, scheduler: Any = None,
                 timer: float = DEFAULT_TIMER, scan: Any = None, spec: str = "") -> None:
        self.next = next
        #: the log configuration's spec (the registry's log family: ``scd``, ``mcd:2``...), for status
        self.spec = spec or medium.layout.kind
        self.raid = getattr(next, "raid", None)  # the read path asks for the members through it
        self.geometry, self.mapping, self.clock, self.events = next.geometry, next.mapping, next.clock, next.events
        self.medium = medium
        self.bs = bs = self.geometry.block_size
        self.seg_blocks = medium.layout.segment_blocks
        slots = max(self.seg_blocks, ram_bytes // bs)
        self.ram = np.zeros((slots, bs), dtype=np.uint8)
        self.table = SlotTable(slots + medium.layout.capacity * self.seg_blocks, slots)
        self.scheduler = scheduler
        self.timer = timer
        self.metrics = LogMetrics()
        self.scan = scan
        start = max(medium.durable_tail, (scan.highest + 1) if scan is not None else 0)
        #: next sequence number to append; oldest segment that may hold a needed block
        self.head = self.tail = start
        #: the recovery has not yet written what the scan found through to the data disks
        #: (:meth:`reset` ends it): until then the durable tail must stay where it is, or a
        #: power cut in the middle of the replay leaves nothing to replay the next time
        self.replay_pending = scan is not None and bool(scan.segments)
        #: every segment below this one is on the log stores, flushed (each new header records
        #: it: a later scan tells damage from a torn tail by it, vraid.engine.log.medium)
        self.flushed = start
        #: seq -> {lba: index} of the blocks a log segment holds that the data disks lack
        self.held: dict[int, dict[int, int]] = {}
        #: lba -> (seq, index) of its newest held log copy
        self.copy: dict[int, tuple[int, int]] = {}
        #: segments being written: the tail never passes one (its blocks are not held yet)
        self.inflight: set[int] = set()
        self.failed: str | None = None
        self.last_host = -math.inf
        self._ram_since: float | None = None  # when the RAM buffer last went from empty to not
        self._l1 = trio.Lock()
        self._l2 = trio.Lock()
        self._wake1 = trio.Event()
        self._wake2 = trio.Event()
        self.waiters = 0
        self.level2_running = 0
        self._paused = False

    # -- the Target interface ------------------------------------------------------------
    async def write(self, offset: int, data) -> None:
        """A host write (any alignment): into RAM slots; partial blocks merged with the newest copy."""
        self._host()
        bs = self.bs
        mv = memoryview(data).cast("B")
        b0, b1 = offset // bs, (offset + len(mv) - 1) // bs
        head_part = offset % bs
        tail_part = (offset + len(mv)) % bs
        first = last = None
        if head_part or (b0 == b1 and tail_part):
            first = bytearray(await self._read_range(b0, 1, Priority.HOST))
        if tail_part and b1 != b0:
            last = bytearray(await self._read_range(b1, 1, Priority.HOST))
        pos = 0
        for b in range(b0, b1 + 1):
            lo = head_part if b == b0 else 0
            n = min(bs - lo, len(mv) - pos)
            if n == bs:
                await self._put(b, mv[pos : pos + n])
            else:
                buf = first if b == b0 else last
                buf[lo : lo + n] = mv[pos : pos + n]
                await self._put(b, buf)
            pos += n
        self.metrics.host_write_blocks += b1 - b0 + 1

    async def write_unit(self, buf: StripeBuffer, z, *, priority: Priority = Priority.DESTAGE, cause: Any = None) -> frozenset:
        """The write-back cache's destage (``--cache`` with ``--log``): its D blocks into RAM slots."""
        self._host()
        for i, row in enumerate(z):
            for k, letter in enumerate(row):
                if letter == "D":
                    await self._put(self.mapping.block_of(buf.stripe, k, buf.row0 + i), buf.data[k, i])
        return frozenset()

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

    async def flush(self) -> None:
        """fsync: every block in RAM to the log, the log stores flushed (not the data disks)."""
        await self.level1("flush")
        if self.failed is None:
            upto = self.head  # level 1 is done: every segment below head is written
            await self.medium.flush()
            self.flushed = max(self.flushed, upto)
        else:
            await self.next.flush()

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

    # -- writes into RAM ------------------------------------------------------------------
    def _host(self) -> None:
        self.last_host = self.clock.now()
        self._wake2.set()

    async def _put(self, lba: int, block) -> None:
        if self.table.state(lba) is IN_RAM_BUFFER:
            self.metrics.overwrites += 1
        while True:
            try:
                e = self.table.write(lba)
                break
            except NoSlot:
                self.metrics.ram_full_waits += 1
                self.waiters += 1
                try:
                    await self.level1("full")
                finally:
                    self.waiters -= 1
        self.ram[e.slot_no] = np.frombuffer(block, dtype=np.uint8) if not isinstance(block, np.ndarray) else block
        if self._ram_since is None:
            self._ram_since = self.clock.now()
        self._wake1.set()

    # -- level 1: RAM buffer -> log ---------------------------------------------------------
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

    async def _checkpoint(self) -> None:
        """Give the log's space up to the tail back durably: the data disks flushed first,
        then that tail (as it was before the flush: what level 2 wrote meanwhile is not
        covered by it) written to the log superblocks."""
        tail = self.tail
        await self.next.flush()  # the data disks hold what the reclaimed segments held
        await self.medium.checkpoint(tail)
        self.metrics.checkpoints += 1

    # -- level 2: log -> data disks ----------------------------------------------------------
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

    # -- failure ---------------------------------------------------------------------------
    async def _fail_log(self, error: str) -> None:
        """A log store failed with no copy left: first destage what the surviving stores
        still hold (mcd, per-disk), then count the rest as lost (:meth:`_lost`)."""
        if self.medium.redundant or self.failed is not None:
            return
        self.failed = error  # level 2 stops; level 1 goes straight to the data disks from now
        async with self._l2:
            for seq in sorted(self.held):
                if all(i in self.medium.failed for i in self.medium.layout.place(seq)[0]):
                    continue
                try:
                    await self._destage_segment(seq, "rescue")
                except LogFailed:
                    continue
        self._lost(error)

    def _lost(self, error: str) -> None:
        """A log store failed with no copy left: what only the log held is lost."""
        if self.medium.redundant:
            return
        lost = 0
        for seq, held in self.held.items():
            for lba, idx in held.items():
                e = self.table.lookup(lba)
                if e is not None and e.state is IN_CACHE_DISK and e.location == (seq, idx):
                    self.table.drop(lba)
                    lost += 1
        self.held.clear()
        self.copy.clear()
        self.tail = self.head
        self.metrics.lost_blocks += lost
        self.failed = self.failed or error
        names = ",".join(self.medium.stores[i].name for i in sorted(self.medium.failed)) or "log"
        log.error("log disk failed (%s): %d blocks not yet destaged are lost", error, lost)
        self.events.publish(LogFailureEvent(time=self.clock.now(), store=names, lost=lost, error=error))

    # -- background ------------------------------------------------------------------------
    def _fill(self, now: float) -> None:
        self.events.publish(LogFillEvent(time=now, ram_used=self.table.ram_used, ram_slots=self.table.ram_slots,
                                         log_used=self.head - self.tail, log_segments=self.medium.layout.capacity))

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as n:
            n.start_soon(self._level1_loop)
            n.start_soon(self._level2_loop)
            task_status.started()

    def pause(self) -> None:
        """Step mode (tests): the background destages start nothing on their own."""
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        self._wake1.set()
        self._wake2.set()

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

    # -- recovery: the journal's replay/reset (vraid.engine.host.recovery) -----------------------------
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

    # -- status ------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        lay = self.medium.layout
        out: dict[str, Any] = {
            "kind": lay.kind, "stores": len(self.medium.stores), "ram_bytes": self.table.ram_slots * self.bs,
            "ram_used_blocks": self.table.ram_used, "ram_blocks": self.table.ram_slots,
            "log_segments": lay.capacity, "log_used_segments": self.head - self.tail,
            "log_bytes": lay.capacity * lay.segment_bytes, "head": self.head, "tail": self.tail,
            "durable_tail": self.medium.durable_tail, "slots": self.table.status(),
            "scheduler": self.scheduler.describe() if self.scheduler is not None and hasattr(self.scheduler, "describe") else None,
            "failed": self.failed, **self.medium.status(), **self.metrics.to_dict(),
        }
        if self.failed is not None:
            out["message"] = (f"log disk failed ({self.failed}): {self.metrics.lost_blocks} blocks not yet destaged were lost; "
                              "writes go straight to the data disks")
        elif self.medium.failed:
            out["message"] = f"mirror copy failed ({', '.join(out['failed'])}): running on the other copy"
        return out
