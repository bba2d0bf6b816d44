"""The RAID layer: the last layer of every chain, the only one that makes member requests.

A write that reaches it (a write-through host write, a destaged cache unit, a level-2 log
destage, a placement's stripe write) becomes, per stripe and under the stripe lock
(:mod:`vraid.engine.raid.locks`), the plan of seed 000 sec. III-B (Fig. 7): the state matrix Z of
the stripe's rows, the basic rxw-matrix M (RCW or RMW per row, :mod:`vraid.core.rxw`
through :mod:`vraid.engine.raid.plans`), the contiguity transform's rewrite (``ct``, a
policy behind the guard; seed 000 sec. III), or, with a member missing,
:mod:`vraid.engine.raid.degraded`'s plan; the plan event is published, the write-intent bit
made durable (``intent``, :mod:`vraid.ondisk.bitmap`), and the executor
(:mod:`vraid.engine.raid.stripe`) runs it. Two plan shapes the executor runs without a
stripe buffer (the small write and the full-stripe write, :mod:`vraid.engine.raid.shapes`)
are recognised here, on the same plan. A member that fails is failed
(:mod:`vraid.engine.raid.failures`) and the request retried degraded.

Reads (:mod:`vraid.engine.raid.reads`) turn a range into one member request per strip,
reconstructing a missing member's blocks.

Crash consistency: with a write-intent hook every plan, resync and repair that writes a
stripe first awaits ``intent.begin(stripe)`` and reports ``intent.end(stripe, ok)``
afterwards (:meth:`RaidLayer.intent_of`); ``intent.ready(stripe)`` says whether ``begin``
would return at once.

Seams: every logical-to-physical translation goes through ``mapping``
(:mod:`vraid.core.mapping`), every parity computation and "how many members may be missing"
through ``redundancy`` (:mod:`vraid.core.redundancy`).
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import AsyncIterator, Callable, Sequence

import numpy as np
import trio

from vraid.backends.base import Store
from vraid.core.geometry import Extent, Geometry
from vraid.core.mapping import Mapping
from vraid.core.rxw import Plan
from vraid.engine.clock import Clock
from vraid.engine.events import Cause, EventBus, PlanEvent, ResyncEvent
from vraid.engine.members.queues import Members
from vraid.engine.members.request import Priority
from vraid.engine.metrics import Metrics
from vraid.engine.raid import degraded, shapes
from vraid.engine.raid.failures import RaidFailures
from vraid.engine.raid.locks import StripeLock, StripeLocks
from vraid.engine.raid.plans import build_plan, cycle_totals, dirty_z
from vraid.engine.raid.reads import RaidReads
from vraid.engine.raid.status import RaidStatus, ct_spec
from vraid.engine.raid.stripe import BufferPool, StripeBuffer, execute, writes_of
from vraid.engine.status import frozen_map
from vraid.errors import LostData, MemberIOError

Transform = Callable[[Plan], Plan]
log = logging.getLogger(__name__)
_NONE: frozenset[int] = frozenset()
#: Priority(p).cause by value (an IntEnum hashes as its int)
CAUSE_OF_PRIORITY = {p: p.cause for p in Priority}


class RaidLayer(RaidReads, RaidFailures):
    """The RAID layer of one array (see the module docstring). Its ideas live in one module
    each: reads (:class:`RaidReads`), failures, spares and rebuild (:class:`RaidFailures`),
    the plan shapes (:mod:`shapes`), the stripe locks; this class drives the plans."""

    #: run the plan shapes (small write, full-stripe write) where they apply; False: every
    #: write takes the general path (the tests compare the two)
    shapes = True

    def __init__(self, geometry: Geometry, members: Members, *, mapping: Mapping, clock: Clock,
                 events: EventBus, metrics: Metrics, guard, ct: Transform | None = None, intent=None,
                 failed: Sequence[int] = (), spares: Sequence[Store] = ()) -> None:
        self.geometry = geometry
        self.mapping = mapping
        #: the parity scheme (vraid.core.redundancy), chosen by the RAID level
        self.redundancy = mapping.redundancy
        #: per check column the data columns it covers (a mirror's copy: its one), None for XOR
        #: (vraid.core.redundancy.Redundancy.coverage): the planner writes only touched groups
        self.covers = self.redundancy.coverage(geometry.data_disks)
        self.members = members
        self.clock = clock
        self.events = events
        self.metrics = metrics
        self.guard = guard
        self.ct = ct
        #: write-intent hook (vraid.ondisk.bitmap): ``await begin(stripe)`` before member writes
        #: to a stripe, ``end(stripe, ok)`` after them; it decides what to record
        self.intent = intent
        if intent is not None:
            intent.attach(members, clock)
        #: the clock's "an uncontended lock may skip its checkpoint" test (TrioClock.may_skip_checkpoint)
        self.alone = getattr(clock, "may_skip_checkpoint", None)
        self.locks = StripeLocks(self.alone)
        #: whole-stripe buffers the write-through writes reuse (vraid.engine.raid.stripe.BufferPool)
        self.buffers = BufferPool(mapping)
        #: stripe writes done as the small-write shape (without a stripe buffer)
        self.small_writes = 0
        #: whole stripes written as the full-stripe shape (from the host's bytes, no stripe buffer)
        self.full_stripe_writes = 0
        self.degraded_plans = 0
        self.init_reads()
        self.init_failures(failed, spares)

    @property
    def ct(self) -> Transform | None:
        """The contiguity transform every stripe write's plan goes through (guarded)."""
        return self._ct

    @ct.setter
    def ct(self, transform: Transform | None) -> None:
        self._ct = self.guard.wrap("ct", transform)

    def stripe_survives(self, stripe: int) -> bool:
        """Whether ``stripe`` can be read with the members missing now (which columns they
        are there: :meth:`vraid.core.redundancy.Redundancy.survives_columns`)."""
        missing = self.health.missing(stripe)
        if self.redundancy.by_count:
            return self.redundancy.survives(len(missing))
        return self.redundancy.survives_columns(degraded.missing_columns(self.mapping.columns(stripe), missing))

    def stripe_lock(self, stripe: int) -> StripeLock:
        """The per-stripe lock writes hold (rebuild, scrub and degraded reads hold it too)."""
        return self.locks.hold(stripe)

    # -- the layer protocol -------------------------------------------------------------
    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Write straight to the members (write-through; also NVRAM and log replay)."""
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

    async def write_unit(self, buf: StripeBuffer, z, *, priority: Priority = Priority.DESTAGE,
                         cause: Cause | None = None) -> frozenset[tuple[int, int]]:
        """Plan and write the rows of ``buf`` whose states ``z`` gives (a destaged unit).
        Returns the E cells the plan read into ``buf`` with ``r``: they hold the members'
        clean data now, and the layer above may keep them."""
        plan = await self.write_plan(buf, z, priority=priority, cause=cause)
        cols = len(z[0]) if z else 0
        return frozenset(
            (j, i) for i, row in enumerate(plan.transformed) for j in range(cols) if z[i][j] == "E" and "r" in row[j]
        )

    async def write_stripe(self, stripe: int, whole: np.ndarray) -> None:
        """Write all data of ``stripe`` (``stripe_data_bytes`` in host order, any shape) as a
        host write of exactly that stripe would be written through: a cache's write around
        itself."""
        g = self.geometry
        await self._write_stripe(Extent(stripe, 0, g.stripe_data_bytes, 0), whole.reshape(-1))

    async def write_plan(self, buf: StripeBuffer, z, *, priority: Priority = Priority.DESTAGE,
                         cause: Cause | None = None) -> Plan:
        """Plan and write the rows of ``buf`` whose states ``z`` gives, under the stripe lock;
        the plan event carries ``cause`` (None: the one of ``priority``, e.g. destage)."""
        async with self.locks.hold(buf.stripe):
            return await self._execute_plan(buf, z, priority, cause)

    async def flush(self) -> None:
        """Return once every member write made before the call is durable. A member whose
        sync fails is failed; with more members missing than the redundancy survives the
        error is raised (retried, the flush would skip them and "succeed")."""
        attempt = 0
        while True:
            try:
                await self.members.flush()
                return
            except MemberIOError as exc:
                attempt += 1
                self.member_error(exc, attempt)
                if not self.geometry.survives_members(self.health.missing_roles):
                    raise

    async def shutdown(self) -> None:
        """The members flushed, then the write-intent bitmap clean: no stripe is mid-write."""
        await self.members.flush()
        if self.intent is not None:
            await self.intent.clean()

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """The member queues, the bitmap's writer and the rebuilds, until cancelled."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.members.serve)
            if self.intent is not None:
                await nursery.start(self.intent.run)
            self.nursery = nursery
            self.maybe_start_rebuild()
            task_status.started()

    def status(self) -> RaidStatus:
        """The contiguity transform, the write-intent bitmap, the members and their failures."""
        intent = self.intent
        return RaidStatus(ct=ct_spec(self.ct), bitmap=frozen_map(intent.status()) if intent is not None else None,
                          failures=self.failure_status())

    # -- resync and intent ---------------------------------------------------------------
    async def resync(self, stripes) -> int:
        """Recompute and write the parity of (physical) ``stripes`` from their data: a crash
        can leave a stripe's data and parity disagreeing (the write hole). Returns the number
        of stripes (0 without parity: RAID-0)."""
        g = self.geometry
        if not self.redundancy.parity_columns:
            return 0
        done: list[int] = []
        for stripe in sorted(set(stripes)):
            if self.health.missing(stripe):
                continue  # degraded: parity is the only copy of the missing member's data
            async with self.locks.hold(stripe):
                buf = StripeBuffer(self.mapping, stripe)
                await self.members.run([buf.request(k, "read", 0, g.u, priority=Priority.REBUILD) for k in range(g.data_disks)])
                self.redundancy.generate(buf.data, out=buf.checks, slots=buf.slots)
                async with self.intent_of(stripe):
                    await self.members.run([buf.request(j, "write", 0, g.u, priority=Priority.REBUILD)
                                            for j in range(g.data_disks, len(buf.columns))])
            done.append(stripe)
        if self.intent is not None:
            self.intent.resynced(done)
        self.events.publish(ResyncEvent(time=self.clock.now(), stripes=len(done)))
        return len(done)

    @asynccontextmanager
    async def intent_of(self, stripe: int) -> AsyncIterator[None]:
        """Member writes to ``stripe`` happen inside this block: the intent hook (if any)
        records them before the first and is told when they are over."""
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

    # -- writes --------------------------------------------------------------------------
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

    async def _write_stripe(self, ext: Extent, src: np.ndarray) -> None:
        g = self.geometry
        block = g.block_size
        first_block = ext.start // block
        last_block = (ext.start + ext.length - 1) // block
        z = dirty_z(g.u, g.data_disks, first_block, last_block)
        partial = ext.start % block or (ext.start + ext.length) % block
        attempt = 0
        if not partial and self.shapes:  # the shapes that need no stripe buffer, when nothing can interleave
            if ext.length == g.stripe_data_bytes:
                attempt = await shapes.full_stripe_write(self, ext, src, z)
            else:
                attempt = await shapes.small_write(self, ext, src, z)
            if attempt < 0:
                return
        async with self.locks.hold(ext.stripe):
            if not partial and not attempt and ext.length < g.stripe_data_bytes and self.shapes:  # under the lock
                attempt = await shapes.small_write(self, ext, src, z, locked=True)
                if attempt < 0:
                    return
            buf = self.buffers.take(ext.stripe)
            if partial:
                await self._fill_partial_blocks(buf, ext, first_block, last_block)
            if not self.members.no_data:  # the metadata-only simulation keeps no bytes
                buf.flat[ext.start : ext.start + ext.length] = src[ext.host_offset : ext.host_offset + ext.length]
            await self._execute_plan(buf, z, Priority.HOST, attempt=attempt)
        self.buffers.give(buf)  # only now: every member request into it has finished

    def planned(self, plan: Plan, row0: int, missing: list[int], cause: Cause) -> None:
        """Count a plan about to run (its PBG cycles) and publish its plan event: every path
        that writes a stripe (the general one and both shapes)."""
        m = self.metrics
        m.plans += 1
        if type(plan) is Plan:
            m.count_cycle_totals(cycle_totals(plan.z, plan.checks, plan.covers))
        else:
            m.count_cycles(plan.cycles())
        self.events.publish(PlanEvent(time=self.clock.now(), plan=plan, row0=row0, missing=missing, cause=cause))

    async def _execute_plan(self, buf: StripeBuffer, z, priority: Priority, cause: Cause | None = None, *,
                            attempt: int = 0) -> Plan:
        while True:
            missing = self.health.missing(buf.stripe) if self.health.degraded else _NONE
            if missing:  # vraid.engine.raid.degraded: a plan that keeps parity right without the missing members
                try:
                    plan = degraded.degraded_plan(buf.stripe, z, buf.columns, missing, checks=self.redundancy.parity_columns,
                                                  covers=self.covers)
                except LostData:
                    if not self.redundancy.survives(len(missing)):
                        raise
                    try:  # two missing (RAID-6): rebuild the missing blocks the RCW needs first
                        z = await degraded.fill_from_survivors(self.members, buf, z, missing, priority=priority)
                    except MemberIOError as exc:
                        attempt += 1
                        self.member_error(exc, attempt)
                        continue
                    plan = degraded.degraded_plan(buf.stripe, z, buf.columns, missing, checks=self.redundancy.parity_columns,
                                                  covers=self.covers)
                self.degraded_plans += 1
            else:
                plan = build_plan(buf.stripe, z, buf.columns, self.redundancy.parity_columns, self.covers)
                if self.ct is not None:
                    plan = self.ct(plan)
            self.planned(plan, buf.row0, sorted(missing) if missing else [], cause or CAUSE_OF_PRIORITY[priority])
            intent = self.intent if self.intent is not None and writes_of(plan) else None
            if intent is not None:
                try:
                    await intent.begin(buf.stripe)  # the bit is durable before any data write
                except MemberIOError as exc:  # a member failed under the bitmap write: nothing of the plan ran
                    attempt += 1
                    self.member_error(exc, attempt)
                    continue
            ok = False
            try:
                await execute(plan, buf, self.members, priority=priority)
                ok = True
                return plan
            except MemberIOError as exc:
                attempt += 1
                self.member_error(exc, attempt)
                if exc.op == "write" and self.stripe_survives(buf.stripe):
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

    def check_writable(self, offset: int, length: int) -> None:
        """Raise LostData if writing these bytes needs a missing member (more are missing than
        the redundancy survives)."""
        g, mapping = self.geometry, self.mapping
        bs = g.block_size
        for ext in mapping.extents(offset, length):
            missing = self.health.missing(ext.stripe)
            if self.redundancy.survives(len(missing)):
                continue  # a plan exists (after rebuilding missing blocks first: RAID-6 with two gone)
            z = dirty_z(g.u, g.data_disks, ext.start // bs, (ext.start + ext.length - 1) // bs)
            degraded.degraded_plan(ext.stripe, z, mapping.columns(ext.stripe), missing,
                                   checks=self.redundancy.parity_columns, covers=self.covers)
