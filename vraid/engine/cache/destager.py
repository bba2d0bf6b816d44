"""The destager: which dirty units go to the target, when, and what a destage leaves.

What goes next comes from the destage order (``vraid.policies.order``: LRW, LRU, FIFO,
CSCAN), when and how many from the destage scheduler (``vraid.policies.destage``: HLWM,
adaptive HLWM, LT, PI, idle). :class:`Destager` carries those decisions out for a
:class:`~vraid.engine.cache.writeback.WriteBackCache`: one trio task (:meth:`Destager.run`)
asks the scheduler for a decision after every cache change and at the times it asks to be
called again, and keeps that many destages in flight. It always destages at least one unit
while host writes wait for space or an fsync drains the cache. Destage member requests use
the destage priority class, so host reads go first (seed 003, section 3.1).

A destage hands the unit's Z (seed 000 eq. (2)) and buffer to the target; when it ends
(:meth:`Destager._end_destage`) the destaged D blocks are C, and the DDIRTY entries written
meanwhile (the unit's shadow, seed 003 section 3.2) are merged in as its new dirty data. A
mount coalesces adjacent dirty units of one stripe into one destage
(:meth:`Destager._neighbours`). Run-time control (``vraid top``'s step mode, ``vraid ctl``):
pause, resume, destage one, and a new scheduler or order.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import numpy as np
import trio

from vraid.errors import MemberIOError
from vraid.engine.events import Cause, DestageEvent
from vraid.engine.members.request import Priority
from vraid.engine.raid.stripe import StripeBuffer
from .units import C, D, E, Unit

if TYPE_CHECKING:
    from vraid.policies.destage.base import DestageScheduler
    from vraid.policies.order import DestageOrder

log = logging.getLogger(__name__)


class Destager:
    """The destager of a :class:`~vraid.engine.cache.writeback.WriteBackCache` (which holds
    the state these methods use: ``order``, ``scheduler``, ``in_flight``, ``paused``...)."""

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Destage according to the scheduler until cancelled."""
        from vraid.policies.destage.base import CacheState

        self.last_host = self.clock.now()
        async with trio.open_nursery() as nursery:
            task_status.started()
            while True:
                now = self.clock.now()
                decision = self.scheduler.decide(
                    CacheState(now=now, dirty=len(self.dirty_keys), capacity=self.capacity, destaging=self.in_flight,
                               host_idle=now - self.last_host, waiters=self.waiters)
                )
                self._record(now, decision)
                want = 0 if self.paused else decision.concurrency
                if (self.waiters or self.draining) and not self.paused:
                    want = max(want, 1, decision.concurrency)
                    if self.draining:
                        want = max(want, 8)
                if self.waiters and self._pending_release and not self._settling:
                    nursery.start_soon(self._settle)  # writes wait for NVRAM slots
                while (self.groups_in_flight if self.merge_rows else self.in_flight) < want:
                    key = self.order.next()
                    if key is None:
                        break
                    self.order.removed(key)
                    self.in_flight += 1
                    group = self._neighbours(self.units[key]) if self.coalesce else [self.units[key]]
                    if self.coalesce:
                        # taken now, before the task starts: a later pass (it may run first) must
                        # not take these rows into a second group as neighbours of a row dirtied
                        # meanwhile (two destages of one unit at once). A lone unit left the
                        # order and is taken by nothing else, so it is marked when it starts.
                        for unit in group:
                            unit.destaging = True
                    # counted now too: the bound above must see this pass's groups, or one pass
                    # starts a group for every dirty run (``pbg:merge=true`` over its max_destages)
                    self.groups_in_flight += 1
                    nursery.start_soon(self._destage_group, group)
                self._changed = trio.Event()
                deadline = decision.recheck if decision.recheck is not None else math.inf
                with trio.move_on_at(deadline):
                    await self._changed.wait()

    # -- run-time control (vraid top's step mode, vraid ctl) -------------------------
    def pause(self) -> None:
        """Start no destages: host writes fill the cache, then wait (also fsync while volatile).
        :meth:`destage_one` still destages, and frees room for a waiting write."""
        self.paused = True
        self._notify()

    def resume(self) -> None:
        """Let the scheduler decide again (and writes waiting for room be served)."""
        self.paused = False
        self._notify()

    def set_scheduler(self, scheduler: "DestageScheduler") -> "DestageScheduler":
        """Let ``scheduler`` decide from the destager's next decision on; returns the old one.
        Destages in flight finish as they started."""
        old, self.scheduler = self.scheduler, self._guarded("destage", scheduler)
        self._notify()
        return old

    def set_order(self, order: "DestageOrder") -> "DestageOrder":
        """Take dirty units in ``order`` from now on; returns the old order.

        The new order is seeded with the dirty units waiting in the old one, in the old
        one's sequence; a unit being destaged joins it if still dirty when its destage ends.
        """
        order = self._guarded("destage_order", order)
        for key in self.order.keys():
            order.dirtied(key)
        old, self.order = self.order, order
        self._notify()
        return old

    async def destage_one(self) -> bool:
        """Destage the next unit now, whatever the scheduler says (step mode); False if none is dirty."""
        key = self.order.next()
        if key is None:
            return False
        self.order.removed(key)
        self.in_flight += 1
        await self._destage(self.units[key])
        return True

    def _neighbours(self, unit: Unit) -> list[Unit]:
        """``unit`` and the dirty units of its stripe whose rows continue it on either
        side (none being destaged), in row order; each added one leaves the destage
        order and counts as in flight. One destage then writes them all, as md batches
        the stripe_heads of a full-stripe write: a sequential write through ``pbg``
        otherwise costs one small plan per row (16 per strip of 64 KiB)."""
        span = unit.span
        if span.rows >= self.geometry.u:
            return [unit]
        spans = list(self.organisation.units(span.stripe, 0, self.geometry.u - 1))
        at = next((i for i, s in enumerate(spans) if s.key == span.key), None)
        if at is None:
            return [unit]

        def take(s) -> Unit | None:
            other = self.units.get(s.key)
            if other is None or other.destaging or other.oldest == math.inf or s.key not in self.dirty_keys:
                return None
            self.order.removed(s.key)
            self.in_flight += 1
            return other

        group = [unit]
        for s in reversed(spans[:at]):
            other = take(s)
            if other is None:
                break
            group.insert(0, other)
        for s in spans[at + 1 :]:
            other = take(s)
            if other is None:
                break
            group.append(other)
        return group

    async def _destage(self, unit: Unit) -> None:
        await self._destage_units([unit])

    async def _destage_group(self, units: list[Unit]) -> None:
        """:meth:`_destage_units`, counted as one destage of the scheduler's concurrency where
        adjacent rows merge (``pbg:merge=true``: md handles every ready stripe_head, so a
        merged group of rows is one destage, as one stripe of SC is; vraid's row-by-row PBGC
        counts each row). The destage loop counted the group in ``groups_in_flight`` when it
        made it; this ends the count."""
        try:
            await self._destage_units(units)
        finally:
            self.groups_in_flight -= 1

    async def _destage_units(self, units: list[Unit]) -> None:
        """Destage ``units`` (one, or adjacent rows of one stripe, see :meth:`_neighbours`)
        as one write to the target."""
        first = units[0].span
        for unit in units:
            unit.destaging = True
        self.metrics.destages_started += len(units)
        covered = [unit.oldest for unit in units]
        ok = False
        try:
            if len(units) == 1:  # the target reads into and writes from the unit's own buffer
                data = units[0].data
                z = units[0].z()
            else:
                data = np.concatenate([unit.data for unit in units], axis=1)
                z = tuple(row for unit in units for row in unit.z())
            buf = StripeBuffer(self.mapping, first.stripe, row0=first.row0, rows=data.shape[1], data=data)
            filled = await self.target.write_unit(buf, z, priority=Priority.DESTAGE, cause=Cause.DESTAGE)
            base = 0
            for unit in units:
                rows = unit.span.rows
                # destaged D blocks are clean now; E blocks the target filled (a plan's r) hold clean data too
                for j, i in filled:
                    if base <= i < base + rows and unit.state[j, i - base] == E:
                        if data is not unit.data:
                            unit.data[j, i - base] = data[j, i]
                        unit.state[j, i - base] = C
                unit.state[unit.state == D] = C
                if self.journal is not None and unit.slots:
                    self._release_later(unit)
                unit.oldest = math.inf
                base += rows
            ok = True
            self.metrics.destages_finished += len(units)
        except MemberIOError as exc:
            self.metrics.destage_errors += 1
            self.last_error = exc
            log.error("destage of unit %d (stripe %d) failed: %s", first.key, first.stripe, exc)
            await self.clock.sleep(1.0)  # do not spin on a failing member
        finally:
            for unit, oldest in zip(units, covered):
                self._end_destage(unit, oldest, ok)
        if self.journal is not None and self._settle_due():
            await self._settle()

    def _end_destage(self, unit: Unit, covered: float, ok: bool) -> None:
        key = unit.span.key
        unit.version += 1
        if unit.shadow is not None:
            sd = unit.shadow_state == D
            unit.data[sd] = unit.shadow[sd]
            unit.state[sd] = D
            sc = (unit.shadow_state == C) & (unit.state == E)
            unit.data[sc] = unit.shadow[sc]
            unit.state[sc] = C
            if self.journal is not None:
                self._adopt_shadow_records(unit)
            unit.oldest = min(unit.oldest, unit.shadow_oldest)
            self._pool.append(unit.shadow)
            unit.shadow = unit.shadow_state = None
            unit.shadow_oldest = math.inf
        unit.destaging = False
        self.in_flight -= 1
        if unit.dirty:
            self.order.dirtied(key)
        else:
            self.dirty_keys.discard(key)
            self.clean[key] = None
        self.target.events.publish(DestageEvent(time=self.clock.now(), unit=key, stripe=unit.span.stripe, ok=ok))
        self._progressed()
        self._notify()

