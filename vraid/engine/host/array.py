"""The host API: the top of the data path, as a mount (``vraid.fuse.image``), a simulation
(``vraid.sim.driver``) and the tests see the array.

:class:`Array` validates a host request (range, a degraded array's refusals), counts it, and
hands it to the top of the chain of layers that :mod:`vraid.engine.build` assembled:

* reads to the read path (:mod:`vraid.engine.read.readpath`), which serves them from the
  write-back cache, the read cache and the layers below;
* writes to the first write layer: the write-back cache (:mod:`vraid.engine.cache`), else
  the placement (:mod:`vraid.engine.placement`, seed 004), else the log
  (:mod:`vraid.engine.log`, seed 002), else the RAID layer (:mod:`vraid.engine.raid`:
  write-through); the read cache forgets the written blocks before and after;
* flush, shutdown and the layers' background tasks down the chain.

It holds no policy logic and no fast path: what makes a request cheap belongs to the layer
that does the work (the RAID layer's plan shapes, the members' inline execution).
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable

import trio

from vraid.engine.events import FlushEvent
from vraid.engine.metrics import Metrics
from vraid.engine.raid.layer import RaidLayer
from vraid.engine.read.readpath import ReadPath
from vraid.errors import OutOfRange

log = logging.getLogger(__name__)


class Array:
    """A RAID array's host API over its chain of layers (built by :mod:`vraid.engine.build`;
    run with :func:`vraid.engine.build.open_engine` or :meth:`serve`)."""

    def __init__(self, raid: RaidLayer, reads: ReadPath, *, metrics: Metrics, guard: Any,
                 cache: Any = None, log: Any = None, placed: Any = None) -> None:
        """``raid``: the RAID layer (the end of the chain); ``reads``: the read path (the top of
        the chain for reads); ``cache``, ``log``, ``placed``: the write-back cache, the log
        cache (seed 002) and the placement layer (seed 004) between them, where configured."""
        self.raid = raid
        self.reads = reads
        self.cache = cache
        self.log = log
        self.placed = placed
        #: the first layer a host write enters
        self.writer = cache or placed or log or raid
        self.metrics = metrics
        #: every call into a policy goes through it (vraid.engine.guard)
        self.guard = guard
        self.geometry = raid.geometry
        self.mapping = raid.mapping
        self.redundancy = raid.redundancy
        self.clock = raid.clock
        self.events = raid.events
        self.members = raid.members
        self.health = raid.health
        self.started_at = 0.0

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

    @property
    def ct(self):
        """The contiguity transform of the RAID layer's plans (guarded)."""
        return self.raid.ct

    @ct.setter
    def ct(self, transform) -> None:
        self.raid.ct = transform

    # -- host requests ------------------------------------------------------------------
    def read(self, offset: int, length: int) -> Awaitable[bytes]:
        """Read ``length`` bytes at ``offset``; short at the end of the array. Returns the
        read path's coroutine to await (the read path counts and times the read): the host
        API only checks the range, with no coroutine of its own."""
        length = max(0, min(length, self.capacity - offset))
        if length == 0 or offset < 0:
            return _nothing()
        return self.reads.read(offset, length)

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Write ``data`` at ``offset`` (any alignment): into the first write layer.

        Raises:
            OutOfRange: if the write would reach past the end of the array.
            LostData: a buffering layer would accept bytes no destage could ever write
                (more members missing than the redundancy survives).
        """
        start = self.clock.now()
        if offset < 0 or offset + len(data) > self.capacity:
            raise OutOfRange(
                f"write of {len(data)} bytes at {offset} reaches past the end of the array ({self.capacity} bytes)",
                "the image has a fixed size; it never grows",
            )
        if not data:
            return
        writer = self.writer
        raid = self.raid
        if writer is not raid and raid.health.degraded and not raid.geometry.survives_members(raid.health.missing_roles):
            raid.check_writable(offset, len(data))  # refuse now what no destage could ever write
        reads = self.reads
        if reads.read_cache is not None:
            reads.invalidate(offset, len(data))  # the read cache must not serve the old bytes
        try:
            await writer.write(offset, data)
        finally:
            if reads.read_cache is not None:
                reads.invalidate(offset, len(data))  # nor bytes a fetch read during the write
        m = self.metrics
        m.host_writes += 1
        m.host_write_bytes += len(data)
        m.response.add(self.clock.now() - start)

    async def flush(self) -> None:
        """Return once every acknowledged write is durable (in NVRAM, the log or on the members,
        as the first write layer keeps it)."""
        self.metrics.host_flushes += 1
        await self.writer.flush()
        self.events.publish(FlushEvent(time=self.clock.now()))

    async def shutdown(self) -> None:
        """Destage everything (also what NVRAM and the log hold) and flush the members: the
        array is clean. Each layer empties itself into the one below and then shuts it down."""
        await self.writer.shutdown()

    async def serve(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Run every layer's background work (member queues, destagers, the cleaner, the
        prefetches, rebuilds) until cancelled."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.raid.run)
            for layer in (self.cache, self.log, self.placed):
                if layer is not None:
                    await nursery.start(layer.run)
            if self.reads.prefetching:
                await nursery.start(self.reads.run)
            task_status.started()

    # -- state --------------------------------------------------------------------------
    def status(self) -> dict[str, object]:
        """The array as ``vraid status`` shows it: each layer's record (:mod:`vraid.engine.status`)
        as a dict under its name, the RAID layer's failure part at the top level, and what the
        host API holds itself (geometry, policies, metrics, policy faults)."""
        from vraid.policies.running import current

        raid = self.raid.status()
        return {
            "geometry": self.geometry.describe(),
            "cache": self.cache.status().as_dict() if self.cache is not None else {"organisation": "none"},
            **({"log": self.log.status().as_dict()} if self.log is not None else {}),
            **({"placement": self.placed.status().as_dict()} if self.placed is not None else {}),
            **({"reads": self.reads.status().as_dict()} if self.reads.read_cache is not None else {}),
            "ct": raid.ct,
            "policies": current(self),
            "metrics": self.metrics.to_dict(),
            "bitmap": dict(raid.bitmap) if raid.bitmap is not None else None,
            **raid.failures.as_dict(),
            "policy_faults": self.guard.status(),
        }


async def _nothing() -> bytes:
    """The empty read (past the end of the array)."""
    return b""
