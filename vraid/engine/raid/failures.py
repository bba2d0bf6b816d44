"""Member failure, spares and the rebuild hand-off of the RAID layer.

A member whose request fails is failed (RAID-5, RAID-6; RAID-0 has no redundancy and re-raises): no
request goes to it any more, its blocks are reconstructed (:mod:`vraid.engine.raid.degraded`),
the daemon's hook records it in the superblocks (:mod:`vraid.ondisk.failures`), and a spare,
if there is one, starts a rebuild (:mod:`vraid.engine.raid.rebuild`): one pass for every failed
member that has a spare, as md does (RAID-6: two at once when two spares are there). A member file deleted or
truncated under the mount is noticed by :meth:`RaidFailures.watch_members`.
"""

from __future__ import annotations

import logging
from typing import Awaitable, Callable, Sequence

from vraid.backends.base import Store
from vraid.engine.events import FailureEvent, RebuildEvent, SpareEvent
from vraid.engine.raid.health import MemberHealth
from vraid.engine.raid.rebuild import Rebuild
from vraid.engine.raid.status import FailureStatus, MemberStatus, SpareStatus
from vraid.engine.status import frozen_map
from vraid.errors import LostData, MemberIOError, VraidError

log = logging.getLogger(__name__)


class RaidFailures:
    """The failure half of :class:`vraid.engine.raid.layer.RaidLayer` (a mixin: it shares the
    layer's members, redundancy, clock and events)."""

    def init_failures(self, failed: Sequence[int], spares: Sequence[Store]) -> None:
        self.health = MemberHealth(self.geometry.ndisks, failed)
        self.members.excluded.update(self.health.failed)
        self.spares: list[Store] = list(spares)
        self.rebuild = None  # the running vraid.engine.raid.rebuild.Rebuild
        self.last_rebuild: dict | None = None
        self.rebuild_rate: float | None = None  # bytes of the new member per second; None: no limit
        self.rebuild_paused = False
        #: hooks of the daemon (superblock updates): on_failure(role, reason, dead spare's name or None),
        #: on_rebuilt(role, spare's name)
        self.on_failure: Callable[[int, str, str | None], None] | None = None
        self.on_rebuilt: Callable[[int, str], None] | None = None
        #: tasks started when a rebuild is done (a placement's stripe directory checkpoint:
        #: the new member gets the directory), given by the builder
        self.after_rebuild: list[Callable[[], Awaitable[None]]] = []
        self.nursery = None  # the nursery of run(): rebuilds run in it

    def member_error(self, exc: MemberIOError, attempt: int) -> None:
        """Fail the members ``exc`` names so that the request can be retried degraded;
        re-raise it when that cannot help (RAID-0, lost data, no progress)."""
        if isinstance(exc, LostData) or not self.redundancy.tolerates or attempt > self.geometry.ndisks + 1:
            raise exc
        for disk in exc.disks:
            self.fail_member(disk, str(exc))

    def fail_member(self, disk: int, reason: str) -> bool:
        """Mark member ``disk`` failed (see the module docstring). False if it already was.

        Raises:
            VraidError: on RAID-0, which has no redundancy.
        """
        if not self.redundancy.tolerates:
            raise VraidError("RAID-0 has no redundancy: a member cannot be failed", "RAID-1, 4, 5, 6 and 10 run degraded")
        spare = None
        if disk in self.health.rebuild_roles and self.rebuild is not None:
            spare = self.rebuild.spare_of(disk).name
            self.rebuild.dead.add(disk)
            self.rebuild.stop(f"the new member {spare} failed: {reason}")
            self.rebuild_ended(self.rebuild)  # at once: its task may be asleep (paused, rate limit)
        if not self.health.fail(disk, reason):
            return False
        self.members.excluded.add(disk)
        self.members[disk].retire()  # its queued requests fail and are retried degraded
        missing = self.health.missing_roles
        if not self.geometry.survives_members(missing):
            log.error("member %d failed (%s): members %s are missing; their blocks are lost (EIO)", disk, reason, missing)
        else:
            log.error("member %d failed (%s); running degraded", disk, reason)
        self.events.publish(FailureEvent(time=self.clock.now(), disk=disk, reason=reason, missing=missing))
        if self.on_failure is not None:
            self.on_failure(disk, reason, spare)
        self.maybe_start_rebuild()
        return True

    def add_spare(self, store: Store) -> None:
        """A new spare; it starts a rebuild at once when a member is failed."""
        self.spares.append(store)
        self.events.publish(SpareEvent(time=self.clock.now(), store=store.name))
        self.maybe_start_rebuild()

    def maybe_start_rebuild(self) -> None:
        """Start one rebuild pass of the failed roles onto the spares (as many roles as there
        are spares, the lowest first), if both exist and the redundancy has something to
        rebuild from."""
        h = self.health
        if self.rebuild is not None or not self.spares or self.nursery is None or h.rebuild_roles:
            return
        if not h.failed or not self.geometry.survives_members(h.failed):
            return  # nothing failed, or more than the redundancy survives: nothing to rebuild from
        roles = h.failed[:len(self.spares)]
        spares = [self.spares.pop(0) for _ in roles]
        for role, spare in zip(roles, spares):
            member = self.members[role]
            member.retire()  # nothing queued for the failed member may run on the spare
            member.store = spare
            member.reset_stats()
            member.busy_until = -float("inf")
        h.start_rebuild(roles)
        self.members.excluded.difference_update(roles)
        self.rebuild = Rebuild(self, roles, spares)
        for role, spare in zip(roles, spares):
            log.info("rebuilding member %d onto %s", role, spare.name)
            self.events.publish(RebuildEvent(time=self.clock.now(), role=role, spare=spare.name, state="started"))
        self.nursery.start_soon(self.rebuild.run)

    def rebuild_ended(self, rebuild) -> None:
        """Called by the rebuild task when it is done or stopped (once). A stopped pass gives
        its roles back as failed, and the spares that still work back to the spare list."""
        if rebuild.ended:
            return
        rebuild.ended = True
        if self.rebuild is rebuild:
            self.rebuild = None
        self.last_rebuild = rebuild.status()
        pairs = list(zip(rebuild.roles, rebuild.spares))
        if rebuild.state == "done":
            self.health.finish_rebuild(rebuild.roles)
            if self.nursery is not None:
                for task in self.after_rebuild:
                    self.nursery.start_soon(task)
            if self.on_rebuilt is not None:
                for role, spare in pairs:
                    self.on_rebuilt(role, spare.name)
        else:
            back = [(role, spare) for role, spare in pairs
                    if role not in rebuild.dead and role in self.health.rebuild_roles]
            for role, _ in back:
                self.health.abandon_rebuild(role)
                self.members.excluded.add(role)
                self.members[role].retire()
            self.spares[:0] = [spare for _, spare in back]
        for role, spare in pairs:
            self.events.publish(RebuildEvent(time=self.clock.now(), role=role, spare=spare.name, state=rebuild.state))
        self.maybe_start_rebuild()

    def set_rebuild_rate(self, rate: float | None) -> None:
        """Bytes per second of the new member (None or 0: no limit)."""
        self.rebuild_rate = rate or None
        if self.rebuild is not None:
            self.rebuild.set_rate()

    async def watch_members(self, interval: float = 1.0) -> None:
        """Fail a member whose file was deleted or truncated under the mount (an open file
        keeps working after unlink, so no request would notice); until cancelled. RAID-0
        cannot fail a member: there it only logs."""
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

    def failure_status(self) -> FailureStatus:
        """The members, failures, spares and rebuild, as ``Array.status`` shows them."""
        h = self.health
        rebuild = self.rebuild.status() if self.rebuild is not None else self.last_rebuild
        return FailureStatus(
            members=tuple(
                MemberStatus(disk=d.index, store=d.store.name, state=h.states[d.index], io=frozen_map(d.stats.to_dict()),
                             queue=d.queue_depth, reason=h.reasons.get(d.index))
                for d in self.members.disks
            ),
            degraded=h.degraded,
            failed=tuple(h.failed),
            missing=tuple(h.missing_roles),
            data_lost=not self.geometry.survives_members(h.missing_roles),
            spares=tuple(SpareStatus(store=s.name) for s in self.spares),
            rebuild=frozen_map(rebuild) if rebuild is not None else None,
            degraded_plans=self.degraded_plans,
        )
