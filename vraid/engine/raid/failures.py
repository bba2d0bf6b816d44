"""Member failure, spares and the rebuild hand-off of the RAID layer.

A member whose request fails is failed (RAID-5; RAID-0 has no redundancy and re-raises): no
request goes to it any more, its blocks are reconstructed (:mod:`vraid.engine.raid.degraded`),
the daemon's hook records it in the superblocks (:mod:`vraid.ondisk.failures`), and a spare,
if there is one, starts a rebuild (:mod:`vraid.engine.raid.rebuild`). A member file deleted or
truncated under the mount is noticed by :meth:`RaidFailures.watch_members`.
"""

from __future__ import annotations

import logging
from typing import Awaitable, Callable, Sequence

from vraid.backends.base import Store
from vraid.engine.events import FailureEvent, RebuildEvent, SpareEvent
from vraid.engine.raid.health import MemberHealth
from vraid.engine.raid.rebuild import Rebuild
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
            raise VraidError("RAID-0 has no redundancy: a member cannot be failed", "RAID-1, 4, 5 and 10 run degraded")
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
        """Start rebuilding the first failed role onto the first spare, if both exist and the
        redundancy has something to rebuild from."""
        h = self.health
        if self.rebuild is not None or not self.spares or self.nursery is None or h.rebuild_role is not None:
            return
        if not h.failed or not self.geometry.survives_members(h.failed):
            return  # nothing failed, or more than the redundancy survives: nothing to rebuild from
        role = h.failed[0]
        spare = self.spares.pop(0)
        member = self.members[role]
        member.retire()  # nothing queued for the failed member may run on the spare
        member.store = spare
        member.reset_stats()
        member.busy_until = -float("inf")
        h.start_rebuild(role)
        self.members.excluded.discard(role)
        self.rebuild = Rebuild(self, role, spare)
        log.info("rebuilding member %d onto %s", role, spare.name)
        self.events.publish(RebuildEvent(time=self.clock.now(), role=role, spare=spare.name, state="started"))
        self.nursery.start_soon(self.rebuild.run)

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
            if self.nursery is not None:
                for task in self.after_rebuild:
                    self.nursery.start_soon(task)
            if self.on_rebuilt is not None:
                self.on_rebuilt(rebuild.role, rebuild.spare.name)
        self.events.publish(RebuildEvent(time=self.clock.now(), role=rebuild.role, spare=rebuild.spare.name,
                                         state=rebuild.state))
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

    def failure_status(self) -> dict[str, object]:
        """The members, failures, spares and rebuild, as ``Array.status`` shows them."""
        h = self.health
        return {
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
            "data_lost": not self.geometry.survives_members(h.missing_roles),
            "spares": [{"store": s.name, "state": "spare"} for s in self.spares],
            "rebuild": self.rebuild.status() if self.rebuild is not None else self.last_rebuild,
            "degraded_plans": self.degraded_plans,
        }
