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

The class is put together by idea: this module holds the state, the host's writes into
the RAM buffer, fsync and status; the reads are :mod:`vraid.engine.log.reads`, level 1
:mod:`vraid.engine.log.level1`, level 2 and the tail :mod:`vraid.engine.log.level2`, a
failed log store :mod:`vraid.engine.log.failure`, the replay :mod:`vraid.engine.log.replay`
(each a mixin of :class:`LogCache`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import trio

from vraid.engine.events import LogFillEvent
from vraid.engine.log.failure import LogFailure
from vraid.engine.log.level1 import DEFAULT_TIMER, Level1Destage
from vraid.engine.log.level2 import Level2Destage
from vraid.engine.log.medium import LogFailed, LogMedium
from vraid.engine.log.reads import LogReads
from vraid.engine.log.replay import LogReplay
from vraid.engine.members.request import Priority
from vraid.engine.metrics import LogMetrics
from vraid.engine.log.slots import IN_RAM_BUFFER, NoSlot, SlotTable
from vraid.engine.log.status import LogStatus
from vraid.engine.raid.stripe import StripeBuffer
from vraid.engine.status import frozen_map, read_only

if TYPE_CHECKING:
    from vraid.engine.layer import Layer as Target

#: the paper's RAM buffer
DEFAULT_RAM = 4 << 20


class LogCache(LogReads, Level1Destage, Level2Destage, LogFailure, LogReplay):
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
        #: set once a log failure has rescued and counted what it lost (None: none began)
        self._failing: trio.Event | None = None
        #: blocks a log failure lost that no fsync had made durable (their segments were at or
        #: above ``flushed``), and how many of them an fsync has reported (:meth:`flush`)
        self.unsynced_lost = 0
        self.reported_lost = 0
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

    async def flush(self) -> None:
        """fsync: every block in RAM to the log, the log stores flushed (not the data disks).

        When the log fails meanwhile (here or under another fsync), the flush waits until the
        failure has rescued what the surviving stores hold and counted what is lost
        (:meth:`LogFailure._fail_log`), flushes the data disks, and raises
        :class:`~vraid.engine.log.medium.LogFailed` if blocks that no fsync had made durable
        were lost since it began, or since the last fsync ended (as an fsync reports a
        writeback error): an fsync never succeeds while a block it covers is gone. Blocks
        lost although an fsync had made them durable (the log disk died) are counted and
        said (status, the log), not raised."""
        began = self.unsynced_lost
        await self.level1("flush")
        if self.failed is None:
            upto = self.head  # level 1 is done: every segment below head is written
            try:
                await self.medium.flush()
            except LogFailed as exc:
                await self._fail_log(str(exc))
            else:
                self.flushed = max(self.flushed, upto)
                return
        await self.failure_settled()
        await self.next.flush()
        base = min(began, self.reported_lost)
        self.reported_lost = max(self.reported_lost, self.unsynced_lost)
        if self.unsynced_lost > base:
            raise LogFailed(f"the log disk failed before an fsync completed ({self.failed}): "
                            f"{self.unsynced_lost - base} blocks written since the last fsync were lost",
                            "see vraid status; docs/log-disk.md")
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

    # -- background ------------------------------------------------------------------------
    def _fill(self, now: float) -> None:
        self.events.publish(LogFillEvent(time=now, ram_used=self.table.ram_used, ram_slots=self.table.ram_slots,
                                         log_used=self.head - self.tail, log_segments=self.medium.layout.capacity))

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as n:
            n.start_soon(self._level1_loop)
            n.start_soon(self._level2_loop)
            task_status.started()

    async def shutdown(self) -> None:
        """Unmount: both destage levels to the end and the log's tail made durable
        (:meth:`Level2Destage.drain`), then the target shut down."""
        self.resume()
        await self.drain()
        await self.next.shutdown()

    def pause(self) -> None:
        """Step mode (tests): the background destages start nothing on their own."""
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        self._wake1.set()
        self._wake2.set()

    # -- status ------------------------------------------------------------------------------
    def status(self) -> LogStatus:
        lay = self.medium.layout
        medium = self.medium.status()
        failed = tuple(medium["failed"])
        if self.failed is not None:
            message = (f"log disk failed ({self.failed}): {self.metrics.lost_blocks} blocks not yet destaged were lost; "
                       "writes go straight to the data disks")
        elif self.medium.failed:
            message = f"mirror copy failed ({', '.join(failed)}): running on the other copy"
        else:
            message = None
        return LogStatus(
            kind=lay.kind, stores=tuple(medium["stores"]), ram_bytes=self.table.ram_slots * self.bs,
            ram_used_blocks=self.table.ram_used, ram_blocks=self.table.ram_slots,
            log_segments=lay.capacity, log_used_segments=self.head - self.tail,
            log_bytes=lay.capacity * lay.segment_bytes, head=self.head, tail=self.tail,
            durable_tail=self.medium.durable_tail, slots=frozen_map(self.table.status()),
            scheduler=read_only(self.scheduler.describe()) if self.scheduler is not None and hasattr(self.scheduler, "describe") else None,
            failed=failed, segment_slots=medium["segment_slots"], segment_bytes=medium["segment_bytes"],
            segment_writes=medium["segment_writes"], bytes_written=medium["bytes_written"], reads=medium["reads"],
            counters=frozen_map(self.metrics.to_dict()), message=message)
