"""The controller: an async RAID-0/RAID-5 array over member stores.

``Array`` takes host requests at any byte offset and length and turns them
into member requests through the planner (:mod:`vraid.core.rxw`) and the executor
(:mod:`vraid.engine.stripe`). It holds no policy logic: without a cache it is the
write-through baseline; with one (:mod:`vraid.engine.cache`, configured by
:class:`CacheConfig`) writes are absorbed and later destaged through the same
planner (:meth:`Array.write_plan`, wrapped as the cache's destage target
:class:`~vraid.engine.target.RaidTarget`), and a CT policy rewrites each plan via
the ``ct`` hook. Host reads go through the read path (:mod:`vraid.engine.readpath`:
write cache, read cache, members; a prefetch policy reads ahead), and dirty
blocks are kept durable by a journal (:mod:`vraid.engine.journal`) if one is given.

Concurrency: writes to one stripe are serialised by a per-stripe lock, so
two read-modify-writes never race on a parity block; different stripes and
all reads proceed concurrently. A host write spanning several stripes writes
them concurrently.

Crash consistency: with a write-intent hook (``Array(intent=...)``, the
bitmap of :mod:`vraid.ondisk.bitmap`), every plan, resync and repair that writes a
stripe first awaits ``intent.begin(stripe)`` and reports ``intent.end(stripe,
ok)`` afterwards (:meth:`Array.intent_of`); the hook decides what to record.
``intent.ready(stripe)`` says whether ``begin`` would return at once (the inline small
write, :meth:`Array._small_write`, runs only then).

Seams: every logical-to-physical translation goes through ``Array.mapping``
(:mod:`vraid.core.mapping`; the geometry's static layout unless another is
handed in), and every parity computation and "how many members may be
missing" through ``Array.redundancy`` (:mod:`vraid.core.redundancy`).
"""

from __future__ import annotations

import functools
import logging
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Callable, Sequence

import numpy as np
import trio

from vraid.backends.base import Store
from .clock import Clock, TrioClock
from . import degraded
from vraid.errors import LostData, MemberIOError, OutOfRange, VraidError
from .events import (Cause, EventBus, FailureEvent, FlushEvent, PlanEvent, RebuildEvent, ResyncEvent,
                     SpareEvent)
from vraid.engine.health import MemberHealth
from vraid.core.geometry import Extent, Geometry
from vraid.core.mapping import Mapping, StaticMapping
from .members import MemberStats, Members, Priority, Request
from .guard import PolicyGuard
from .journal import as_journal
from .metrics import Metrics
from .readpath import ReadCache, ReadPath
from .target import RaidTarget
from vraid.core.rxw import Plan
from vraid.policies.prefetch import NoPrefetch
from .stripe import BufferPool, StripeBuffer, execute, full_stripe_writes, one_column_rmw, writes_of

Transform = Callable[[Plan], Plan]
log = logging.getLogger(__name__)
_NONE: frozenset[int] = frozenset()
#: Priority(p).cause by value (an IntEnum hashes as its int)
_CAUSE_OF_PRIORITY = {p: p.cause for p in Priority}


@dataclass(frozen=True)
class CacheConfig:
    """Which write-back cache to run (``organisation="none"``: write-through)."""

    organisation: str = "none"
    size: int = 64 << 20
    order: str = "lrw"
    destage: str = "hlwm"
    nvram: Path | None = None

    @property
    def enabled(self) -> bool:
        return self.organisation != "none"


class Array:
    """A RAID array. Create with :func:`open_array`, which runs its members."""

    def __init__(
        self,
        geometry: Geometry,
        stores: Sequence[Store],
        *,
        clock: Clock | None = None,
        events: EventBus | None = None,
        ct: Transform | None = None,
        cache: CacheConfig | None = None,
        nvram=None,
        journal=None,
        intent=None,
        failed: Sequence[int] = (),
        spares: Sequence[Store] = (),
        mapping: Mapping | None = None,
        read_cache_bytes: int = 0,
        prefetch=None,
        queue_order=None,
        guard: PolicyGuard | None = None,
        log=None,
        placement=None,
    ) -> None:
        """``nvram``: a :class:`vraid.backends.nvram.Nvram`, shorthand for
        ``journal=NvramJournal(nvram)``. ``read_cache_bytes``: size of the clean-block
        read cache (0: none); ``prefetch``: a :class:`vraid.policies.prefetch.PrefetchPolicy`
        (default none), which needs the read cache. ``guard``: the :class:`PolicyGuard` every
        policy runs behind (default: one that falls back to the family's default on a fault).
        ``log``: ``log(raid_target, guard)`` makes a log cache (seed 002,
        :mod:`vraid.engine.log.cache`) that becomes the target of everything above it and,
        without a write-back cache, the array's write cache; the array only routes to it.
        ``placement``: ``placement(array)`` makes the layer that runs a placement policy
        over a stripe directory (seed 004, :mod:`vraid.engine.placement.writes`); ``mapping`` is then
        that directory. It takes every host write and serves reads of what it buffers."""
        if len(stores) != geometry.ndisks:
            raise ValueError(f"{len(stores)} stores for {geometry.ndisks} disks")
        self.geometry = geometry
        #: every logical-to-physical translation (vraid.core.mapping)
        self.mapping: Mapping = mapping if mapping is not None else StaticMapping(geometry)
        #: the parity scheme (vraid.core.redundancy), chosen by the RAID level
        self.redundancy = self.mapping.redundancy
        self.clock = clock or TrioClock()
        self.events = events or EventBus()
        #: every call into a policy goes through it (vraid.engine.guard)
        self.guard = guard or PolicyGuard()
        self.guard.attach(self.events, self.clock, geometry)
        self.members = Members(stores, self.clock,  # vraid.policies.queue: name or factory
                               queue_order=self.guard.wrap("queue_order", queue_order))
        self.metrics = Metrics()
        self.ct = ct
        #: write-intent hook (vraid.ondisk.bitmap): ``await begin(stripe)`` before member writes
        #: to a stripe, ``end(stripe, ok)`` after them; it decides what to record
        self.intent = intent
        if intent is not None:
            intent.attach(self.members, self.clock)
        self._locks: dict[int, _StripeMutex] = {}
        #: whole-stripe buffers the write-through writes reuse (vraid.engine.stripe.BufferPool)
        self._buffers = BufferPool(self.mapping)
        #: the clock's "an uncontended lock may skip its checkpoint" test (None: always checkpoint;
        #: TrioClock.may_skip_checkpoint)
        self._alone = getattr(self.clock, "may_skip_checkpoint", None)
        #: the static layout (reads inside one strip compute their member request directly)
        self._static = type(self.mapping) is StaticMapping
        #: stripe writes done by :meth:`_small_write` (without a stripe buffer)
        self.small_writes = 0
        #: whole stripes written by :meth:`_full_stripe_write` (from the host's bytes, no stripe buffer)
        self.full_stripe_writes = 0
        self.started_at = 0.0
        # -- failures (vraid.ondisk.failures, vraid.engine.degraded, vraid.engine.rebuild) --
        self.health = MemberHealth(geometry.ndisks, failed)
        self.members.excluded.update(self.health.failed)
        self.spares: list[Store] = list(spares)
        self.rebuild = None  # the running vraid.engine.rebuild.Rebuild
        self.last_rebuild: dict | None = None
        self.rebuild_rate: float | None = None  # bytes of the new member per second; None: no limit
        self.rebuild_paused = False
        self.degraded_plans = 0
        #: hooks of the daemon (superblock updates): on_failure(role, reason, dead spare's name or None),
        #: on_rebuilt(role, spare's name)
        self.on_failure: Callable[[int, str, str | None], None] | None = None
        self.on_rebuilt: Callable[[int, str], None] | None = None
        self._nursery: trio.Nursery | None = None
        self.cache_config = cache or CacheConfig()
        self.cache = None
        #: the destage target of the cache and the source of every read below it
        self.target = RaidTarget(self)
        #: the log cache (seed 002) between the write cache and the RAID planner, if any
        self.log = None
        if log is not None:
            self.log = log(self.target, self.guard)
            self.target = self.log
        #: the placement layer (seed 004) in front of the RAID planner, if any
        self.placed = None
        if placement is not None:
            self.placed = placement(self)
            self.target = self.placed
        journal = as_journal(journal, nvram, self.clock)
        if self.cache_config.enabled:
            from .cache import WriteBackCache
            from vraid.policies.registry import Context, create

            cfg = self.cache_config
            ctx = Context(geometry=geometry)
            self.cache = WriteBackCache(
                self.target, create("cache", cfg.organisation, ctx), create("destage_order", cfg.order, ctx),
                create("destage", cfg.destage, ctx), cfg.size, journal=journal, guard=self.guard,
            )
        self.reads = ReadPath(
            self.target,
            cache=self.cache,
            read_cache=ReadCache(read_cache_bytes, geometry.block_size) if read_cache_bytes else None,
            prefetch=prefetch if isinstance(prefetch, NoPrefetch) else self.guard.wrap("prefetch", prefetch),
        )

    @property
    def ct(self) -> Transform | None:
        """The contiguity transform every stripe write's plan goes through (guarded)."""
        return self._ct

    @ct.setter
    def ct(self, transform: Transform | None) -> None:
        self._ct = self.guard.wrap("ct", transform)

    @property
    def capacity(self) -> int:
        return self.mapping.capacity

    @property
    def placement(self):
        """The placement policy in force (seed 004); AttributeError for the static layout
        (the registry then reports its default)."""
        if self.placed is None:
            raise AttributeError("placement")
        return self.placed.placement

    # -- host interface -------------------------------------------------------
    async def read(self, offset: int, length: int) -> bytes:
        """Read ``length`` bytes at ``offset``; short at the end of the array."""
        start = self.clock.now()
        length = max(0, min(length, self.capacity - offset))
        if length == 0 or offset < 0:
            return b""
        data = None
        if self._plain_reads:
            try:
                data = self._read_now(offset, length, start)
            except MemberIOError as exc:  # its member failed: fail it, answer from the others
                self._member_error(exc, 1)
                with self.reads.stats.waiting():
                    data = await self.read_members(offset, length, attempt=1)
        if data is None:
            data = await self.reads.read(offset, length)
        m = self.metrics
        m.host_reads += 1
        m.host_read_bytes += length
        m.response.add(self.clock.now() - start)
        return data

    def _read_now(self, offset: int, length: int, start: float) -> bytes | None:
        """A host read inside one strip of a healthy array on the static layout, with no read
        cache, prefetching, log disk or placement in front (:attr:`_plain_reads`) and no
        write-back cache either, or one that holds nothing of the stripe and fills nothing in
        (``WriteBackCache.passes_by``, which counts the read as its own ``read`` does), whose
        member is idle and reads synchronously (``Store.sync_reads``): the one member
        request, made on this thread with no await, and the accounting the read path makes
        for it (``ReadPath.read``, ``_members``, the target, :meth:`read_members`,
        ``Member._execute``) without their calls. ``start``: the clock's reading when the
        host read began. None, with nothing done or counted, when it does not apply.

        Nothing else runs while it does, so the parallelism loss of its wait
        (``ReadStats.wait_end``) is known without the members' busy lists: every other
        member was idle for the whole wait, its own member busy for all of it.

        Raises:
            MemberIOError: its member failed the read (counted as the member's error); the
                caller fails the member and reads degraded, as the long path does.
        """
        if self.health.degraded:
            return None
        g = self.geometry
        block = g.block_size
        first = offset // block * block
        end = -(-(offset + length) // block) * block
        strip = g.strip_size
        if first // strip != (end - 1) // strip:
            return None
        stripe, k = divmod(first // strip, g.data_disks)
        mapping = self.mapping
        disks = self.members.disks
        disk = disks[mapping.data_disk(stripe, k)]
        if not (disk.store.sync_reads and disk.can_inline):
            return None
        rp = self.reads
        cache = rp.cache
        if cache is not None and not cache.passes_by(first, end, start):
            return None
        stats = rp.stats
        stats.host_reads += 1
        stats.host_reads_to_members += 1  # count_host of one strip
        stats.member_requests += 1
        at = mapping.member_offset(stripe) + first % strip
        n = end - first
        ms = disk.stats
        try:
            data = disk.store.read_sync(at, n)
        except (OSError, ValueError, MemberIOError) as exc:
            ms.errors += 1
            raise Members.error_of([Request(disk.index, "read", at, n, priority=Priority.HOST, error=exc)]) from exc
        finally:
            span = self.clock.now() - start
            ms.busy_seconds += span
            if span > 0 and not stats._waiting:  # wait_begin/wait_end of a wait no other read shares
                stats.wait_seconds += span
                stats.idle_member_seconds += span * (len(disks) - 1)
        disk.counted(True, at, n)
        head = offset - first
        if head == 0 and len(data) == length:
            return data
        return data[head : head + length]

    @property
    def _plain_reads(self) -> bool:
        """Whether host reads may go straight to this array's members (:meth:`_read_now`): the
        static layout, and no read cache, prefetching, log disk or placement in front of
        them; a write-back cache only if it says so per read (``WriteBackCache.passes_by``)."""
        rp = self.reads
        return self._static and rp.read_cache is None and isinstance(rp.target, RaidTarget)

    async def read_members(self, offset: int, length: int, *, priority: Priority = Priority.HOST, attempt: int = 0) -> bytes:
        """Read straight from the members (no cache); blocks of a missing member are
        reconstructed, a member that fails is failed and the read retried degraded
        (``attempt``: the failures handled before the call)."""
        while True:
            try:
                return await self._read_members(offset, length, priority)
            except MemberIOError as exc:
                attempt += 1
                self._member_error(exc, attempt)

    async def _read_members(self, offset: int, length: int, priority: Priority = Priority.HOST) -> bytes:
        g = self.geometry
        if self.health.degraded:
            return await self._read_members_degraded(offset, length, priority)
        block = g.block_size
        first = offset // block * block
        end = -(-(offset + length) // block) * block
        strip = g.strip_size
        if first // strip == (end - 1) // strip and self._static:  # inside one strip: one member request
            stripe, k = divmod(first // strip, g.data_disks)
            mapping = self.mapping
            req = Request(mapping.data_disk(stripe, k), "read", mapping.member_offset(stripe) + first % strip, end - first,
                          priority=priority)
            await self.members.run((req,))
            data = req.result
        else:
            requests: list[Request] = []
            for ext in self.mapping.extents(first, end - first):
                requests += self._read_requests(ext, priority)
            await self.members.run(requests)
            data = requests[0].result if len(requests) == 1 else b"".join(r.result for r in requests)  # type: ignore[misc]
        head = offset - first
        if head == 0 and len(data) == length:
            return data  # aligned: the member's bytes, no copy
        return data[head : head + length]

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Write ``data`` at ``offset`` (any alignment): into the write cache when
        there is one, else through to the members.

        Raises:
            OutOfRange: if the write would reach past the end of the array.
        """
        start = self.clock.now()
        if offset < 0 or offset + len(data) > self.capacity:
            raise OutOfRange(
                f"write of {len(data)} bytes at {offset} reaches past the end of the array ({self.capacity} bytes)",
                "the image has a fixed size; it never grows",
            )
        if not data:
            return
        if (self.health.degraded and (self.cache is not None or self.log is not None or self.placed is not None)
                and not self.redundancy.survives(len(self.health.missing_roles))):
            self._check_writable(offset, len(data))  # refuse now what no destage could ever write
        reads = self.reads
        if reads.read_cache is not None:
            reads.invalidate(offset, len(data))  # the read cache must not serve the old bytes
        try:
            if self.cache is not None:
                await self.cache.write(offset, data)
            elif self.placed is not None:
                await self.placed.write(offset, data)
            elif self.log is not None:
                await self.log.write(offset, data)
            else:
                await self.write_through(offset, data)
        finally:
            if reads.read_cache is not None:
                reads.invalidate(offset, len(data))  # nor bytes a fetch read during the write
        m = self.metrics
        m.host_writes += 1
        m.host_write_bytes += len(data)
        m.response.add(self.clock.now() - start)

    async def _read_members_degraded(self, offset: int, length: int, priority: Priority = Priority.HOST) -> bytes:
        """Like the normal read, but extents touching a missing member are reconstructed."""
        g = self.geometry
        block = g.block_size
        first = offset // block * block
        end = -(-(offset + length) // block) * block
        parts: list[list[Request] | Extent] = []
        plain: list[Request] = []
        for ext in self.mapping.extents(first, end - first):
            reqs = self._read_requests(ext, priority)
            missing = self.health.missing(ext.stripe)
            if any(r.disk in missing for r in reqs):
                parts.append(ext)
            else:
                parts.append(reqs)
                plain += reqs
        await self.members.run(plain)
        chunks: list[bytes] = []
        for part in parts:
            if isinstance(part, list):
                chunks += [r.result for r in part]  # type: ignore[misc]
            else:
                chunks.append(await self._read_extent_degraded(part, priority))
        data = b"".join(chunks)
        head = offset - first
        return data[head : head + length]

    async def _read_extent_degraded(self, ext: Extent, priority: Priority = Priority.HOST) -> bytes:
        """A block-aligned extent of a stripe with a member missing, under the stripe lock."""
        g = self.geometry
        u, bs = g.u, g.block_size
        fb, lb = ext.start // bs, (ext.start + ext.length - 1) // bs
        k0, k1 = fb // u, lb // u
        row0, rows = (fb % u, lb - fb + 1) if k0 == k1 else (0, u)
        async with self._stripe_lock(ext.stripe):
            buf = StripeBuffer(self.mapping, ext.stripe, row0=row0, rows=rows)
            await degraded.read_rows(self.members, buf, self.health.missing(ext.stripe), range(k0, k1 + 1), priority=priority)
        if k0 == k1:
            return buf.data[k0].tobytes()
        return buf.flat[ext.start : ext.start + ext.length].tobytes()

    async def read_blocks(self, buf: StripeBuffer, cells, *, priority: Priority = Priority.HOST, locked: bool = False) -> None:
        """Read data blocks ``cells`` ((column, row) of ``buf``) from the members into
        ``buf``, reconstructing those of a missing member (under the stripe lock,
        unless the caller holds it: ``locked``)."""
        attempt = 0
        while True:
            try:
                missing = self.health.missing(buf.stripe) if self.health.degraded else _NONE
                if not any(buf.columns[k] in missing for k, _ in cells):
                    await self.members.run([buf.request(k, "read", r, 1, priority=priority) for k, r in cells])
                elif locked:
                    await self._read_blocks_degraded(buf, cells, priority)
                else:
                    async with self._stripe_lock(buf.stripe):
                        await self._read_blocks_degraded(buf, cells, priority)
                return
            except MemberIOError as exc:
                attempt += 1
                self._member_error(exc, attempt)

    async def _read_blocks_degraded(self, buf: StripeBuffer, cells, priority: Priority) -> None:
        lo = min(r for _, r in cells)
        hi = max(r for _, r in cells)
        tmp = StripeBuffer(self.mapping, buf.stripe, row0=buf.row0 + lo, rows=hi - lo + 1)
        await degraded.read_rows(self.members, tmp, self.health.missing(buf.stripe), {k for k, _ in cells}, priority=priority)
        for k, r in cells:
            buf.data[k, r] = tmp.data[k, r - lo]

    async def write_through(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Write straight to the members, bypassing any cache (also NVRAM replay)."""
        src = np.frombuffer(data, dtype=np.uint8)
        extents = list(self.mapping.extents(offset, len(data)))
        if len(extents) == 1:
            await self._write_stripe(extents[0], src)
        elif self._one_task():  # a mount's instant members: one stripe after another, no task each
            for ext in extents:
                await self._write_stripe(ext, src)
        else:
            async with trio.open_nursery() as nursery:
                for ext in extents:
                    nursery.start_soon(self._write_stripe, ext, src)

    async def write_whole_stripe(self, stripe: int, data: np.ndarray) -> None:
        """Write all data of ``stripe`` (``stripe_data_bytes`` in host order, any shape) through
        to the members as a host write of exactly that stripe would be: a cache's write around
        itself (vraid.engine.cache, ``bypass_whole_stripes``)."""
        g = self.geometry
        await self._write_stripe(Extent(stripe, 0, g.stripe_data_bytes, 0), data.reshape(-1))

    def _one_task(self) -> bool:
        """Whether the stripes of a host write may be written one after another by the writing
        task rather than as concurrent tasks: on a mount (trio's real clock) whose members all
        run inline (instant, idle), where a stripe's write never waits, so tasks would only add
        trio's cost of starting them (1 MiB: four stripes, four tasks). Never in a simulation
        or a test clock, whose order of tasks is recorded, nor with members that take time
        (a mount's ``--disk-model``), whose stripes must overlap."""
        real = getattr(self.clock, "real", None)
        if real is None or not real():
            return False
        for disk in self.members.disks:
            if not disk.can_inline:
                return False
        return True

    async def flush(self) -> None:
        """Return once every acknowledged write is durable on the members."""
        self.metrics.host_flushes += 1
        attempt = 0
        while True:
            try:
                if self.cache is not None:
                    await self.cache.flush()
                elif self.placed is not None:
                    await self.placed.flush()  # buffers written out, directory committed
                elif self.log is not None:
                    await self.log.flush()  # durable in the log, not necessarily on the members
                else:
                    await self.members.flush()
                break
            except MemberIOError as exc:
                attempt += 1
                self._member_error(exc, attempt)
                if (self.cache is None and self.log is None
                        and not self.redundancy.survives(len(self.health.missing_roles))):
                    # retried, the flush would skip every failed member and "succeed": nothing
                    # the lost members held is durable any more (on the members alone), so EIO
                    raise
        self.events.publish(FlushEvent(time=self.clock.now()))

    async def shutdown(self) -> None:
        """Destage everything (also what NVRAM holds) and flush the members: the array is clean."""
        if self.cache is not None:
            self.cache.resume()  # a destager paused by step mode must not hold the unmount
            try:
                await self.cache.drain()
            except LostData as exc:  # acknowledged before the second failure; cannot be written now
                log.error("dirty cache units that need lost members are dropped: %s", exc)
        if self.log is not None:
            self.log.resume()
            await self.log.drain()  # both destage levels to the end; the log's tail made durable
        if self.placed is not None:
            await self.placed.shutdown()  # buffers written out, a checkpoint of the directory
        await self.members.flush()
        if self.cache is not None and self.cache.journal is not None:
            await self.cache.reset_journal()  # only now: the members hold everything, durably
        if self.intent is not None:
            await self.intent.clean()  # the members are flushed: no stripe is mid-write

    async def resync(self, stripes) -> int:
        """Recompute and write the parity of (physical) ``stripes`` from their data.

        A crash can leave a stripe's data and parity disagreeing (the write
        hole); this makes them agree again. Returns the number of stripes
        (0 without parity: RAID-0).
        """
        g = self.geometry
        if not self.redundancy.parity_columns:
            return 0
        done: list[int] = []
        for stripe in sorted(set(stripes)):
            if self.health.missing(stripe):
                continue  # degraded: parity is the only copy of the missing member's data
            async with self._stripe_lock(stripe):
                buf = StripeBuffer(self.mapping, stripe)
                await self.members.run([buf.request(k, "read", 0, g.u, priority=Priority.REBUILD) for k in range(g.data_disks)])
                self.redundancy.generate(buf.data, out=buf.checks)
                async with self.intent_of(stripe):
                    await self.members.run([buf.request(j, "write", 0, g.u, priority=Priority.REBUILD) for j in range(g.data_disks, len(buf.columns))])
            done.append(stripe)
        if self.intent is not None:
            self.intent.resynced(done)
        self.events.publish(ResyncEvent(time=self.clock.now(), stripes=len(done)))
        return len(done)

    @asynccontextmanager
    async def intent_of(self, stripe: int) -> AsyncIterator[None]:
        """Member writes to ``stripe`` happen inside this block: the intent hook
        (if any) records them before the first and is told when they are over."""
        intent = self.intent
        if intent is None:
            yield
            return
        await intent.begin(stripe)
        ok = False
        try:
            yield
            ok = True
        finally:
            intent.end(stripe, ok)

    def stripe_lock(self, stripe: int):
        """The per-stripe lock writes hold (scrub holds it to read a stripe whole)."""
        return self._stripe_lock(stripe)

    async def serve(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Run the member queues and the destager until cancelled."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.members.serve)
            if self.cache is not None:
                await nursery.start(self.cache.run)
            if self.log is not None:
                await nursery.start(self.log.run)
            if self.placed is not None:
                await nursery.start(self.placed.run)  # the background free-stripe generator
            if self.reads.prefetching:
                await nursery.start(self.reads.run)
            if self.intent is not None:
                await nursery.start(self.intent.run)
            self._nursery = nursery
            self._maybe_start_rebuild()
            task_status.started()

    # -- reads ------------------------------------------------------------
    def _read_requests(self, ext: Extent, priority: Priority = Priority.HOST) -> list[Request]:
        """Member reads for a block-aligned extent, one per strip touched."""
        strip, mapping = self.geometry.strip_size, self.mapping
        reqs = []
        pos, end = ext.start, ext.start + ext.length
        base = mapping.member_offset(ext.stripe)
        while pos < end:
            k, within = divmod(pos, strip)
            n = min(strip - within, end - pos)
            reqs.append(Request(mapping.data_disk(ext.stripe, k), "read", base + within, n, priority=priority))
            pos += n
        return reqs

    # -- writes -----------------------------------------------------------
    async def _write_stripe(self, ext: Extent, src: np.ndarray) -> None:
        g = self.geometry
        block = g.block_size
        first_block = ext.start // block
        last_block = (ext.start + ext.length - 1) // block
        z = _dirty_z(g.u, g.data_disks, first_block, last_block)
        partial = ext.start % block or (ext.start + ext.length) % block
        attempt = 0
        if not partial:
            if ext.length == g.stripe_data_bytes:
                attempt = await self._full_stripe_write(ext, src, z)
            else:
                attempt = await self._small_write(ext, src, z)
            if attempt < 0:
                return
        async with self._stripe_lock(ext.stripe):
            if not partial and not attempt and ext.length < g.stripe_data_bytes:  # under the lock, whatever the members
                attempt = await self._small_write(ext, src, z, locked=True)
                if attempt < 0:
                    return
            buf = self._buffers.take(ext.stripe)
            if partial:
                await self._fill_partial_blocks(buf, ext, first_block, last_block)
            if not self.members.no_data:  # the metadata-only simulation keeps no bytes
                buf.flat[ext.start : ext.start + ext.length] = src[ext.host_offset : ext.host_offset + ext.length]
            await self._execute_plan(buf, z, Priority.HOST, attempt=attempt)
        self._buffers.give(buf)  # only now: every member request into it has finished

    async def _small_write(self, ext: Extent, src: np.ndarray, z, *, locked: bool = False) -> int:
        """A write of whole blocks of one data strip, done without a stripe buffer: the
        small write of seed 000 II-A (read the old data and the old parity, XOR the change
        into the parity, write both).

        The same plan, plan event, metrics, write-intent bit and member requests as
        :meth:`_execute_plan` on a stripe buffer, with the host's bytes written as they
        are and the parity computed in a block-sized array, and the same awaits in the same
        order, so the order of tasks, and a simulation's results, stay those of the general
        path. Taken only when the intent bit is already durable, and

        * unlocked (a mount's file members): when nothing can interleave with it (no stripe
          lock held or waited for, a stripe lock would take no checkpoint, both members
          inline), so it runs without a stripe lock object;
        * ``locked``: the caller holds the stripe lock (members that take time, such as a
          simulation's disk models, or a stripe another write holds).

        Returns -1 when the write is done, otherwise the attempts it made (0: not taken;
        1: a member failed, and the general path goes on degraded from there).
        """
        stripe = ext.stripe
        if self.ct is not None or self.health.degraded or self.redundancy.parity_columns != 1:
            return 0
        if not locked and stripe in self._locks:
            return 0
        intent = self.intent
        if intent is not None and not intent.ready(stripe):
            return 0
        columns = self.mapping.columns(stripe)
        members = self.members
        disks = members.disks
        if not locked and not (disks[columns[ext.start // self.geometry.strip_size]].can_inline
                               and disks[columns[-1]].can_inline):
            return 0  # (the data strip's member and the parity member: the only two the plan below can use)
        plan = _build_plan(stripe, z, columns, True)
        shape = one_column_rmw(plan)
        if shape is None:
            return 0
        k, first, rows, parity_read_first, parity_written_first = shape
        data_disk, parity_disk = columns[k], columns[-1]
        if not locked:
            alone = self._alone
            if alone is None or not alone():
                return 0
        self._planned(plan, 0, [], _CAUSE_OF_PRIORITY[Priority.HOST])
        if intent is not None:
            await intent.begin(stripe)  # durable already: returns at once
        g = self.geometry
        n = rows * g.block_size
        at = self.mapping.member_offset(stripe, first)
        parity = np.empty((1, n), dtype=np.uint8)
        old = Request(data_disk, "read", at, n, priority=Priority.HOST)
        checks = Request(parity_disk, "read", at, n, memoryview(parity).cast("B"), Priority.HOST)
        ok = False
        try:
            await members.run([checks, old] if parity_read_first else [old, checks])
            new = src[ext.host_offset : ext.host_offset + ext.length]
            if not members.no_data:  # the metadata-only simulation: no bytes to XOR
                self.redundancy.update(parity, np.frombuffer(old.result, dtype=np.uint8).reshape(1, n),  # type: ignore[arg-type]
                                       new.reshape(1, n), (k,))
            data = Request(data_disk, "write", at, n, memoryview(new), Priority.HOST)
            written = Request(parity_disk, "write", at, n, memoryview(parity).cast("B"), Priority.HOST)
            await members.run([written, data] if parity_written_first else [data, written])
            ok = True
            self.small_writes += 1
            return -1
        except MemberIOError as exc:
            self._member_error(exc, 1)
            if exc.op == "write" and self.redundancy.survives(len(self.health.missing(stripe))):
                return -1  # every other member holds its new blocks: the failed one's are rebuilt from them
            return 1  # failed while reading: nothing was written; the general path plans again without it
        finally:
            if intent is not None:
                intent.end(stripe, ok)

    async def _full_stripe_write(self, ext: Extent, src: np.ndarray, z) -> int:
        """A write of a whole stripe, done without a stripe buffer when nothing can interleave
        with it (as the unlocked :meth:`_small_write`): the parity generated from the host's
        bytes where they are, and every member written from them (seed 000 II-A's full-stripe
        write: no reads). The same plan, plan event, metrics, write-intent bit and member
        requests, in the same order, as the general path; the host's bytes are not copied
        into a stripe buffer first. Returns as :meth:`_small_write` does."""
        stripe = ext.stripe
        pc = self.redundancy.parity_columns
        if self.ct is not None or self.health.degraded or stripe in self._locks or pc > 1:
            return 0
        intent = self.intent
        if intent is not None and not intent.ready(stripe):
            return 0
        columns = self.mapping.columns(stripe)
        members = self.members
        disks = members.disks
        for disk in columns:
            if not disks[disk].can_inline:
                return 0
        plan = _build_plan(stripe, z, columns, pc > 0)
        writes = full_stripe_writes(plan)
        if writes is None:
            return 0
        alone = self._alone
        if alone is None or not alone():
            return 0
        self._planned(plan, 0, [], _CAUSE_OF_PRIORITY[Priority.HOST])
        if intent is not None:
            await intent.begin(stripe)  # durable already: returns at once
        g = self.geometry
        nd = g.data_disks
        n = g.u * g.block_size
        at = self.mapping.member_offset(stripe)
        flat = src[ext.host_offset : ext.host_offset + ext.length]
        data = flat.reshape(nd, g.u, g.block_size)  # the host's bytes, strip by strip
        if members.no_data:  # the metadata-only simulation: no bytes to XOR (the members keep none)
            checks = np.empty((pc, g.u, g.block_size), dtype=np.uint8)
        else:
            checks = self.redundancy.generate(data)  # (RAID-0: no columns)
        requests = [Request(columns[j], "write", at, n,
                            memoryview(flat[j * n : (j + 1) * n]) if j < nd else memoryview(checks[j - nd]).cast("B"),
                            Priority.HOST)
                    for j in writes]
        ok = False
        try:
            await members.run(requests)
            ok = True
            self.full_stripe_writes += 1
            return -1
        except MemberIOError as exc:
            self._member_error(exc, 1)
            if self.redundancy.survives(len(self.health.missing(stripe))):
                return -1  # every other member holds its new blocks: the failed one's are rebuilt from them
            return 1
        finally:
            if intent is not None:
                intent.end(stripe, ok)

    def _planned(self, plan: Plan, row0: int, missing: list[int], cause: Cause) -> None:
        """Count a plan about to run (its PBG cycles) and publish its plan event: every path
        that writes a stripe (:meth:`_execute_plan`, :meth:`_small_write`, :meth:`_full_stripe_write`)."""
        m = self.metrics
        m.plans += 1
        if type(plan) is Plan:
            m.count_cycle_totals(_cycle_totals(plan.z, plan.parity))
        else:
            m.count_cycles(plan.cycles())
        self.events.publish(PlanEvent(time=self.clock.now(), plan=plan, row0=row0, missing=missing, cause=cause))

    async def write_plan(self, buf: StripeBuffer, z, *, priority: Priority = Priority.DESTAGE,
                         cause: Cause | None = None) -> Plan:
        """Plan and write the rows of ``buf`` whose states ``z`` gives (a destage); the plan
        event carries ``cause`` (None: the one of ``priority``, e.g. destage)."""
        async with self._stripe_lock(buf.stripe):
            return await self._execute_plan(buf, z, priority, cause)

    async def _execute_plan(self, buf: StripeBuffer, z, priority: Priority, cause: Cause | None = None, *,
                            attempt: int = 0) -> Plan:
        while True:
            missing = self.health.missing(buf.stripe) if self.health.degraded else _NONE
            if missing:  # vraid.engine.degraded: a plan that keeps parity right without the missing members
                plan = degraded.degraded_plan(buf.stripe, z, buf.columns, missing)
                self.degraded_plans += 1
            else:
                plan = _build_plan(buf.stripe, z, buf.columns, self.redundancy.parity_columns > 0)
                if self.ct is not None:
                    plan = self.ct(plan)
            self._planned(plan, buf.row0, sorted(missing) if missing else [], cause or _CAUSE_OF_PRIORITY[priority])
            intent = self.intent if self.intent is not None and writes_of(plan) else None
            if intent is not None:
                try:
                    await intent.begin(buf.stripe)  # the bit is durable before any data write
                except MemberIOError as exc:  # a member failed under the bitmap write: nothing of the plan ran
                    attempt += 1
                    self._member_error(exc, attempt)
                    continue
            ok = False
            try:
                await execute(plan, buf, self.members, priority=priority)
                ok = True
                return plan
            except MemberIOError as exc:
                attempt += 1
                self._member_error(exc, attempt)
                if exc.op == "write" and self.redundancy.survives(len(self.health.missing(buf.stripe))):
                    # every other member holds its new blocks: the failed one's are rebuilt from them
                    return plan
                # failed while reading: nothing was written; plan again without the failed member
            finally:
                if intent is not None:
                    intent.end(buf.stripe, ok)  # a failed write keeps the bit until a resync


    async def _fill_partial_blocks(self, buf: StripeBuffer, ext: Extent, first: int, last: int) -> None:
        """A sub-block write reads the rest of its block first."""
        block = self.geometry.block_size
        partial = set()
        if ext.start % block:
            partial.add(first)
        if (ext.start + ext.length) % block:
            partial.add(last)
        if not partial:
            return
        self.metrics.partial_block_writes += len(partial)
        u = self.geometry.u
        await self.read_blocks(buf, [(b // u, b % u) for b in sorted(partial)], locked=True)

    def _stripe_lock(self, stripe: int) -> "_StripeLock":
        return _StripeLock(self, stripe)

    # -- failures, spares, rebuild (the mechanisms are vraid.ondisk.failures / degraded / rebuild) ----
    def _member_error(self, exc: MemberIOError, attempt: int) -> None:
        """Fail the members ``exc`` names so that the request can be retried degraded;
        re-raise it when that cannot help (RAID-0, lost data, no progress)."""
        if isinstance(exc, LostData) or not self.redundancy.tolerates or attempt > self.geometry.ndisks + 1:
            raise exc
        for disk in exc.disks:
            self.fail_member(disk, str(exc))

    def _check_writable(self, offset: int, length: int) -> None:
        """Raise LostData if writing these bytes needs a missing member (more are
        missing than the redundancy survives)."""
        g, mapping = self.geometry, self.mapping
        bs = g.block_size
        for ext in mapping.extents(offset, length):
            z = _dirty_z(g.u, g.data_disks, ext.start // bs, (ext.start + ext.length - 1) // bs)
            degraded.degraded_plan(ext.stripe, z, mapping.columns(ext.stripe), self.health.missing(ext.stripe))

    def fail_member(self, disk: int, reason: str) -> bool:
        """Mark member ``disk`` failed (RAID-5; not RAID-0): no request goes to it any more, its
        blocks are reconstructed, the daemon's hook records it in the superblocks,
        and a spare, if there is one, starts a rebuild. False if it already was.

        Raises:
            VraidError: on RAID-0, which has no redundancy.
        """
        if not self.redundancy.tolerates:
            raise VraidError("RAID-0 has no redundancy: a member cannot be failed", "only RAID-5 runs degraded")
        spare = None
        if self.health.rebuild_role == disk and self.rebuild is not None:
            spare = self.rebuild.spare.name
            self.rebuild.stop(f"the new member {spare} failed: {reason}")
            self.rebuild_ended(self.rebuild)  # at once: its task may be asleep (paused, rate limit)
        if not self.health.fail(disk, reason):
            return False
        self.members.excluded.add(disk)
        self.members[disk].retire()  # its queued requests fail and are retried degraded
        missing = self.health.missing_roles
        if not self.redundancy.survives(len(missing)):
            log.error("member %d failed (%s): members %s are missing; their blocks are lost (EIO)", disk, reason, missing)
        else:
            log.error("member %d failed (%s); running degraded", disk, reason)
        self.events.publish(FailureEvent(time=self.clock.now(), disk=disk, reason=reason, missing=missing))
        if self.on_failure is not None:
            self.on_failure(disk, reason, spare)
        self._maybe_start_rebuild()
        return True

    def add_spare(self, store: Store) -> None:
        """A new spare; it starts a rebuild at once when a member is failed."""
        self.spares.append(store)
        self.events.publish(SpareEvent(time=self.clock.now(), store=store.name))
        self._maybe_start_rebuild()

    def _maybe_start_rebuild(self) -> None:
        from .rebuild import Rebuild

        h = self.health
        if self.rebuild is not None or not self.spares or self._nursery is None or h.rebuild_role is not None:
            return
        if not h.failed or not self.redundancy.survives(len(h.failed)):
            return  # nothing failed, or more than the redundancy survives: nothing to rebuild from
        role = h.failed[0]
        spare = self.spares.pop(0)
        member = self.members[role]
        member.retire()  # nothing queued for the failed member may run on the spare
        member.store = spare
        member.stats = MemberStats()
        member.busy_until = -float("inf")
        h.start_rebuild(role)
        self.members.excluded.discard(role)
        self.rebuild = Rebuild(self, role, spare)
        log.info("rebuilding member %d onto %s", role, spare.name)
        self.events.publish(RebuildEvent(time=self.clock.now(), role=role, spare=spare.name, state="started"))
        self._nursery.start_soon(self.rebuild.run)

    def rebuild_ended(self, rebuild) -> None:
        """Called by the rebuild task when it is done or stopped (once)."""
        if rebuild.ended:
            return
        rebuild.ended = True
        if self.rebuild is rebuild:
            self.rebuild = None
        self.last_rebuild = rebuild.status()
        if rebuild.state == "done":
            self.health.finish_rebuild(rebuild.role)
            if self.placed is not None and self._nursery is not None:
                self._nursery.start_soon(self.placed.checkpoint)  # the new member gets the directory
            if self.on_rebuilt is not None:
                self.on_rebuilt(rebuild.role, rebuild.spare.name)
        self.events.publish(RebuildEvent(time=self.clock.now(), role=rebuild.role, spare=rebuild.spare.name,
                                         state=rebuild.state))
        self._maybe_start_rebuild()

    def set_rebuild_rate(self, rate: float | None) -> None:
        """Bytes per second of the new member (None or 0: no limit)."""
        self.rebuild_rate = rate or None
        if self.rebuild is not None:
            self.rebuild.set_rate()

    async def watch_members(self, interval: float = 1.0) -> None:
        """Fail a member whose file was deleted or truncated under the mount (an open
        file keeps working after unlink, so no request would notice); until cancelled.
        RAID-0 cannot fail a member: there it only logs."""
        warned: set[int] = set()
        while True:
            await self.clock.sleep(interval)
            for d in self.members.disks:
                if d.index in self.health.failed:
                    continue
                store = d.store
                while not hasattr(store, "check") and hasattr(store, "inner"):
                    store = store.inner
                problem = store.check() if hasattr(store, "check") else None
                if problem and self.redundancy.tolerates:
                    self.fail_member(d.index, problem)
                elif problem and d.index not in warned:
                    warned.add(d.index)
                    log.error("member %d: %s (RAID-0 cannot run without it; unmount and restore it)", d.index, problem)

    # -- state --------------------------------------------------------------
    def status(self) -> dict[str, object]:
        h = self.health
        return {
            "geometry": self.geometry.describe(),
            "cache": self.cache.status() if self.cache is not None else {"organisation": "none"},
            **({"log": self.log.status()} if self.log is not None else {}),
            **({"placement": self.placed.status()} if self.placed is not None else {}),
            **({"reads": self.reads.status()} if self.reads.read_cache is not None else {}),
            "ct": _ct_spec(self.ct),
            "policies": _policies(self),
            "metrics": self.metrics.to_dict(),
            "bitmap": self.intent.status() if self.intent is not None else None,
            "members": [
                {"disk": d.index, "store": d.store.name, "state": h.states[d.index]}
                | d.stats.to_dict()
                | {"queue": d.queue_depth}
                | ({"reason": h.reasons[d.index]} if d.index in h.reasons else {})
                for d in self.members.disks
            ],
            "degraded": h.degraded,
            "failed": h.failed,
            "missing": h.missing_roles,
            "data_lost": not self.redundancy.survives(len(h.missing_roles)),
            "spares": [{"store": s.name, "state": "spare"} for s in self.spares],
            "rebuild": self.rebuild.status() if self.rebuild is not None else self.last_rebuild,
            "degraded_plans": self.degraded_plans,
            "policy_faults": self.guard.status(),
        }


class _StripeMutex:
    """One stripe's lock: whether it is held, and the tasks waiting for it (made on first
    contention). Exactly trio.Lock's behaviour as the stripe locks use it: first come,
    first served, and a release hands the lock to the first waiter; without trio.Lock's
    per-object costs (a parking lot and a statistics object each time), which a
    simulation paid for every request. No owner is recorded: every holder releases it
    through ``async with``."""

    __slots__ = ("held", "lot")

    def __init__(self) -> None:
        self.held = False
        self.lot: trio.lowlevel.ParkingLot | None = None


class _StripeLock:
    """``async with array._stripe_lock(stripe)``: the stripe's lock (:class:`_StripeMutex`),
    made on first use and dropped when nobody holds or waits for it. An uncontended acquire
    skips trio's checkpoint when the clock allows it (:meth:`vraid.engine.clock.TrioClock.may_skip_checkpoint`:
    in virtual time when it would resume the caller alone, so the order of tasks stays the
    same; on a mount's real clock always): no scheduler pass. Otherwise it takes the same
    checkpoints as ``trio.Lock.acquire``, so a simulation's order of tasks is the one
    trio.Lock gave."""

    __slots__ = ("array", "stripe", "lock")

    def __init__(self, array: "Array", stripe: int) -> None:
        self.array = array
        self.stripe = stripe

    async def __aenter__(self) -> None:
        locks = self.array._locks
        lock = locks.get(self.stripe)
        if lock is None:
            lock = locks[self.stripe] = _StripeMutex()
        self.lock = lock
        if not lock.held:
            alone = self.array._alone
            if alone is not None and alone():
                lock.held = True
                return
        try:
            await trio.lowlevel.checkpoint_if_cancelled()
            if not lock.held and not lock.lot:
                lock.held = True
                await trio.lowlevel.cancel_shielded_checkpoint()
            else:
                lot = lock.lot
                if lot is None:
                    lot = lock.lot = trio.lowlevel.ParkingLot()
                await lot.park()  # the holder's release hands the lock over (held stays True)
        except BaseException:
            self._drop()
            raise

    async def __aexit__(self, *exc) -> None:
        lock = self.lock
        if lock.lot:
            lock.lot.unpark(count=1)  # the first waiter holds it now
        else:
            lock.held = False
            self.array._locks.pop(self.stripe, None)

    def _drop(self) -> None:
        lock = self.lock
        if not lock.held and not lock.lot:
            self.array._locks.pop(self.stripe, None)


def _policies(array: "Array") -> dict[str, str]:
    """key -> spec of every policy family in force (vraid.policies.registry.current)."""
    from vraid.policies.registry import current

    return current(array)


def _ct_spec(ct: Transform | None) -> str:
    """The CT policy's canonical spec for status (``none`` without one)."""
    return "none" if ct is None else str(getattr(ct, "spec", getattr(ct, "name", "custom")))


@functools.lru_cache(maxsize=1024)
def _plan_parts(z, parity: bool) -> tuple:
    """M and the member requests of ``Plan.build`` for Z: they depend on Z alone (the
    stripe and the columns only label them), so each distinct Z is planned once."""
    plan = Plan.build(0, z, (), parity=parity)
    return plan.basic, plan.requests


def _build_plan(stripe: int, z, columns, parity: bool) -> Plan:
    """``Plan.build(stripe, z, columns, parity=parity)``, with M and the requests from the cache."""
    m, requests = _plan_parts(z, parity)
    return Plan(stripe, z, m, m, tuple(columns), requests, parity=parity)


@functools.lru_cache(maxsize=1024)
def _cycle_totals(z, parity: bool) -> tuple[int, int, int]:
    """(rcw, rmw, full) PBG counts of ``Plan.cycles()`` for Z (what Metrics counts)."""
    cycles = Plan(0, z, (), (), (), parity=parity).cycles()
    return cycles.count("rcw"), cycles.count("rmw"), cycles.count("full")


@functools.lru_cache(maxsize=4096)
def _dirty_z(u: int, cols: int, first: int, last: int) -> tuple[tuple[str, ...], ...]:
    """Z of a write-through write: blocks first..last (stripe data order) are D, the rest E."""
    rows = [["E"] * cols for _ in range(u)]
    for b in range(first, last + 1):
        k, row = divmod(b, u)
        rows[row][k] = "D"
    return tuple(tuple(r) for r in rows)


@asynccontextmanager
async def open_array(
    geometry: Geometry,
    stores: Sequence[Store],
    **kwargs,
) -> AsyncIterator[Array]:
    """Run an :class:`Array`: its member workers live inside this block."""
    array = Array(geometry, stores, **kwargs)
    array.started_at = array.clock.now()
    async with trio.open_nursery() as nursery:
        await nursery.start(array.serve)
        try:
            yield array
        finally:
            nursery.cancel_scope.cancel()
