"""The controller: an async RAID-0/RAID-5 array over member stores.

``Array`` takes host requests at any byte offset and length and turns them
into member requests through the planner (:mod:`vraid.rxw`) and the executor
(:mod:`vraid.stripe`). It holds no policy logic: without a cache it is the
write-through baseline; with one (:mod:`vraid.cache`, configured by
:class:`CacheConfig`) writes are absorbed and later destaged through the same
planner (:meth:`Array.write_plan`), and a CT policy rewrites each plan via
the ``ct`` hook.

Concurrency: writes to one stripe are serialised by a per-stripe lock, so
two read-modify-writes never race on a parity block; different stripes and
all reads proceed concurrently. A host write spanning several stripes writes
them concurrently.

Crash consistency: with a write-intent hook (``Array(intent=...)``, the
bitmap of :mod:`vraid.bitmap`), every plan, resync and repair that writes a
stripe first awaits ``intent.begin(stripe)`` and reports ``intent.end(stripe,
ok)`` afterwards (:meth:`Array.intent_of`); the hook decides what to record.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Callable, Sequence

import numpy as np
import trio

from .backends.base import Store
from .clock import Clock, TrioClock
from .errors import OutOfRange
from .events import EventBus
from .geometry import Extent, Geometry
from .members import DESTAGE, HOST, Members, Request
from .metrics import Metrics
from .rxw import Plan
from .stripe import StripeBuffer, execute

Transform = Callable[[Plan], Plan]


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
        intent=None,
    ) -> None:
        if len(stores) != geometry.ndisks:
            raise ValueError(f"{len(stores)} stores for {geometry.ndisks} disks")
        self.geometry = geometry
        self.clock = clock or TrioClock()
        self.members = Members(stores, self.clock)
        self.events = events or EventBus()
        self.metrics = Metrics()
        self.ct = ct
        #: write-intent hook (vraid.bitmap): ``await begin(stripe)`` before member writes
        #: to a stripe, ``end(stripe, ok)`` after them; it decides what to record
        self.intent = intent
        if intent is not None:
            intent.attach(self.members, self.clock)
        self._locks: dict[int, trio.Lock] = {}
        self.started_at = 0.0
        self.cache_config = cache or CacheConfig()
        self.cache = None
        if self.cache_config.enabled:
            from .cache import WriteBackCache
            from .policies.cache import organisation
            from .policies.destage import load_scheduler
            from .policies.order import destage_order

            cfg = self.cache_config
            self.cache = WriteBackCache(
                self, organisation(cfg.organisation, geometry), destage_order(cfg.order), load_scheduler(cfg.destage),
                cfg.size, nvram=nvram,
            )

    @property
    def capacity(self) -> int:
        return self.geometry.capacity

    # -- host interface -------------------------------------------------------
    async def read(self, offset: int, length: int) -> bytes:
        """Read ``length`` bytes at ``offset``; short at the end of the array."""
        start = self.clock.now()
        length = max(0, min(length, self.capacity - offset))
        if length == 0 or offset < 0:
            return b""
        if self.cache is not None:
            data = await self.cache.read(offset, length)
        else:
            data = await self.read_members(offset, length)
        m = self.metrics
        m.host_reads += 1
        m.host_read_bytes += length
        m.response.add(self.clock.now() - start)
        return data

    async def read_members(self, offset: int, length: int) -> bytes:
        """Read straight from the members (no cache), host priority."""
        g = self.geometry
        block = g.block_size
        first = offset // block * block
        end = -(-(offset + length) // block) * block
        requests: list[Request] = []
        for ext in g.extents(first, end - first):
            requests += self._read_requests(ext)
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
        if self.cache is not None:
            await self.cache.write(offset, data)
        else:
            await self.write_through(offset, data)
        m = self.metrics
        m.host_writes += 1
        m.host_write_bytes += len(data)
        m.response.add(self.clock.now() - start)

    async def write_through(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Write straight to the members, bypassing any cache (also NVRAM replay)."""
        src = np.frombuffer(data, dtype=np.uint8)
        extents = list(self.geometry.extents(offset, len(data)))
        if len(extents) == 1:
            await self._write_stripe(extents[0], src)
        else:
            async with trio.open_nursery() as nursery:
                for ext in extents:
                    nursery.start_soon(self._write_stripe, ext, src)

    async def flush(self) -> None:
        """Return once every acknowledged write is durable on the members."""
        self.metrics.host_flushes += 1
        if self.cache is not None:
            await self.cache.flush()
        else:
            await self.members.flush()
        self.events.publish("flush", self.clock.now())

    async def shutdown(self) -> None:
        """Destage everything (also what NVRAM holds) and flush the members: the array is clean."""
        if self.cache is not None:
            self.cache.resume()  # a destager paused by step mode must not hold the unmount
            await self.cache.drain()
        await self.members.flush()
        if self.cache is not None and self.cache.nvram is not None:
            self.cache.nvram.reset()  # only now: the members hold everything, durably
        if self.intent is not None:
            await self.intent.clean()  # the members are flushed: no stripe is mid-write

    async def resync(self, stripes) -> int:
        """Recompute and write the parity of ``stripes`` from their data (RAID-5).

        A crash can leave a stripe's data and parity disagreeing (the write
        hole); this makes them agree again. Returns the number of stripes.
        """
        g = self.geometry
        if g.level != 5:
            return 0
        stripes = sorted(set(stripes))
        done = 0
        for stripe in stripes:
            async with self._stripe_lock(stripe):
                buf = StripeBuffer(g, stripe)
                await self.members.run([buf.request(k, "read", 0, g.u) for k in range(g.data_disks)])
                buf.parity[:] = np.bitwise_xor.reduce(buf.data, axis=0)
                async with self.intent_of(stripe):
                    await self.members.run([buf.request(g.data_disks, "write", 0, g.u)])
            done += 1
        if self.intent is not None:
            self.intent.resynced(stripes)
        return done

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
            if self.intent is not None:
                await nursery.start(self.intent.run)
            task_status.started()

    # -- reads ------------------------------------------------------------
    def _read_requests(self, ext: Extent) -> list[Request]:
        """Member reads for a block-aligned extent, one per strip touched."""
        g = self.geometry
        reqs = []
        pos, end = ext.start, ext.start + ext.length
        while pos < end:
            k, within = divmod(pos, g.strip_size)
            n = min(g.strip_size - within, end - pos)
            disk = g.data_disk(ext.stripe, k)
            offset = g.data_offset + ext.stripe * g.strip_size + within
            reqs.append(Request(disk, "read", offset, n))
            pos += n
        return reqs

    # -- writes -----------------------------------------------------------
    async def _write_stripe(self, ext: Extent, src: np.ndarray) -> None:
        g = self.geometry
        block = g.block_size
        first_block = ext.start // block
        last_block = (ext.start + ext.length - 1) // block
        async with self._stripe_lock(ext.stripe):
            buf = StripeBuffer(g, ext.stripe)
            await self._fill_partial_blocks(buf, ext, first_block, last_block)
            buf.flat[ext.start : ext.start + ext.length] = src[ext.host_offset : ext.host_offset + ext.length]
            z = _dirty_z(g.u, g.data_disks, first_block, last_block)
            await self._execute_plan(buf, z, HOST)

    async def write_plan(self, buf: StripeBuffer, z, *, priority: int = DESTAGE) -> Plan:
        """Plan and write the rows of ``buf`` whose states ``z`` gives (a destage)."""
        async with self._stripe_lock(buf.stripe):
            return await self._execute_plan(buf, z, priority)

    async def _execute_plan(self, buf: StripeBuffer, z, priority: int) -> Plan:
        plan = Plan.build(buf.stripe, z, buf.columns, parity=self.geometry.level == 5)
        if self.ct is not None:
            plan = self.ct(plan)
        self.metrics.plans += 1
        self.metrics.count_cycles(plan.cycles())
        self.events.publish("plan", self.clock.now(), PlanEvent(plan, buf.row0, priority == DESTAGE))
        if self.intent is not None and any(r.op == "write" for r in plan.requests):
            async with self.intent_of(buf.stripe):
                await execute(plan, buf, self.members, priority=priority)
        else:
            await execute(plan, buf, self.members, priority=priority)
        return plan

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
        await self.members.run([buf.request(b // u, "read", b % u, 1) for b in sorted(partial)])

    @asynccontextmanager
    async def _stripe_lock(self, stripe: int) -> AsyncIterator[None]:
        lock = self._locks.get(stripe)
        if lock is None:
            lock = self._locks[stripe] = trio.Lock()
        try:
            async with lock:
                yield
        finally:
            if not lock.locked() and lock.statistics().tasks_waiting == 0:
                self._locks.pop(stripe, None)

    # -- state --------------------------------------------------------------
    def status(self) -> dict[str, object]:
        return {
            "geometry": self.geometry.describe(),
            "cache": self.cache.status() if self.cache is not None else {"organisation": "none"},
            "ct": _ct_spec(self.ct),
            "metrics": self.metrics.to_dict(),
            "bitmap": self.intent.status() if self.intent is not None else None,
            "members": [
                {"disk": d.index, "store": d.store.name} | d.stats.to_dict() | {"queue": d.queue_depth}
                for d in self.members.disks
            ],
        }


@dataclass(frozen=True)
class PlanEvent:
    """A ``plan`` event: the plan, the first PBG row it covers, and whether it is a destage."""

    plan: Plan
    row0: int = 0
    destage: bool = False


def _ct_spec(ct: Transform | None) -> str:
    """The CT policy's canonical spec for status (``none`` without one)."""
    return "none" if ct is None else str(getattr(ct, "spec", getattr(ct, "name", "custom")))


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
