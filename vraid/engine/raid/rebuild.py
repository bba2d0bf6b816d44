"""Rebuild: spares take over failed members' roles, stripe by stripe.

For each physical stripe (``range(mapping.stripes)``, :mod:`vraid.core.mapping`),
under the stripe lock (so no write of that stripe runs meanwhile), the
surviving strips are read, the failed members' strips are rebuilt from them
by the redundancy scheme (:func:`vraid.engine.raid.degraded.reconstruct`; for
RAID-4/5 their XOR; for RAID-6 both missing columns of a stripe at once, from P
and Q; a mirror reads one surviving copy only,
:meth:`vraid.core.redundancy.Redundancy.rebuild_sources`) and each is written to its spare. One pass takes every failed role
that has a spare, as md's recovery does (RAID-6 with two failed members and
two spares rebuilds both while reading the survivors once; with one spare
at a time, one after the other). Stripes below the rebuild position are then served by the new members
like any other; stripes above it are still degraded (``MemberHealth.missing``).
Host I/O goes on throughout; the rebuild's member requests use the rebuild
priority class, so host and destage requests go first (seed 003, section 3.1), and an
optional rate limit (bytes of the new member per second, md's
``speed_limit_max``) paces it on the array's clock.

When the last stripe is written each spare is an active member in its
role; the daemon's hook updates the superblocks (the old member is no longer
part of the array). A failure the redundancy cannot survive stops the pass
(the data of stripes not yet rebuilt is gone); a failure of a spare itself
fails its role again; a stopped pass gives its other roles back as failed
and their spares back to the spare list, and the next pass starts over. vraid, unlike md, keeps no checkpoint across mounts: an interrupted
rebuild starts again from stripe 0 at the next mount.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any, Sequence

import trio

from vraid.engine.raid.degraded import reconstruct
from vraid.errors import LostData, MemberIOError
from vraid.engine.events import RebuildEvent
from vraid.engine.members.request import Priority
from vraid.engine.raid.stripe import StripeBuffer

if TYPE_CHECKING:
    from vraid.backends.base import Store

log = logging.getLogger(__name__)


class Rebuild:
    """One rebuild pass of ``roles`` onto ``spares`` (one spare a role); :meth:`run` is its task."""

    def __init__(self, raid: Any, roles: Sequence[int], spares: Sequence["Store"]) -> None:
        """``raid``: the :class:`vraid.engine.raid.layer.RaidLayer` whose members it rebuilds
        (not imported: the layer starts rebuilds)."""
        if not roles or len(roles) != len(spares):
            raise ValueError(f"a rebuild takes one spare a role, not {len(spares)} for roles {list(roles)}")
        self.raid = raid
        self.roles = tuple(roles)
        self.spares = tuple(spares)
        #: roles whose spare failed during the pass (they are failed again, their spares gone)
        self.dead: set[int] = set()
        self.stripes = raid.mapping.stripes
        self.pos = 0
        self.state = "running"  # running | done | stopped
        self.error = ""
        self.started = raid.clock.now()
        self.finished: float | None = None
        self.ended = False  # rebuild_ended has run
        self._anchor = (self.started, 0)  # (time, stripe) the rate limit counts from
        self._wakeup = trio.Event()

    @property
    def role(self) -> int:
        """The first role of the pass (the only one when one spare was there)."""
        return self.roles[0]

    @property
    def spare(self) -> "Store":
        return self.spares[0]

    def spare_of(self, role: int) -> "Store":
        return self.spares[self.roles.index(role)]

    @property
    def stripe_bytes(self) -> int:
        """Bytes of a new member per stripe: its strips of the stripe."""
        g = self.raid.geometry
        return g.depth * g.strip_size

    @property
    def bytes_done(self) -> int:
        return self.pos * self.stripe_bytes

    # -- control ------------------------------------------------------------------
    def set_rate(self) -> None:
        """The array's rate changed: count the limit from now."""
        self._anchor = (self.raid.clock.now(), self.pos)

    def stop(self, reason: str) -> None:
        if self.state == "running":
            self.state = "stopped"
            self.error = reason
            self.finished = self.raid.clock.now()
            self._wakeup.set()

    # -- the task -------------------------------------------------------------------
    async def run(self) -> None:
        a = self.raid
        try:
            while self.state == "running" and self.pos < self.stripes:
                if a.rebuild_paused:
                    self._wakeup = trio.Event()
                    await self._wakeup.wait()
                    continue
                await self.step()
                await self._pace()
        except LostData as exc:
            self.stop(f"more members are missing than the redundancy survives: {exc}")
            log.error("rebuild of members %s stopped at stripe %d: %s", list(self.roles), self.pos, exc)
        except Exception as exc:  # noqa: BLE001 - a bug here must not end the mount
            self.stop(f"internal error: {exc!r}")
            log.exception("rebuild of members %s stopped at stripe %d", list(self.roles), self.pos)
        if self.state == "running":
            self._finish()
        a.rebuild_ended(self)

    async def step(self, count: int = 1) -> None:
        """Rebuild the next ``count`` stripes (the task's unit of work; tests call it directly).

        Raises:
            LostData: more members are missing than the redundancy survives; the stripe
                cannot be rebuilt.
        """
        a, g = self.raid, self.raid.geometry
        scheme = g.redundancy
        for _ in range(count):
            if self.state != "running" or self.pos >= self.stripes:
                return
            s = self.pos
            async with a.stripe_lock(s):
                if self.state != "running":
                    return
                others = a.health.missing(s) - set(self.roles)
                buf = StripeBuffer(a.mapping, s)
                cols = [j for j, d in enumerate(buf.columns) if d in self.roles]  # (a role's lanes: each of its strips)
                gone = set(cols) | {j for j, d in enumerate(buf.columns) if d in others}
                if not scheme.survives_columns(gone):
                    raise LostData(min(others or self.roles), f"stripe {s}: members {sorted(others)} missing as well")
                try:
                    await a.members.run([buf.request(j, "read", 0, g.u, priority=Priority.REBUILD)
                                         for j in scheme.rebuild_sources(gone, len(buf.columns))])
                    reconstruct(buf, sorted(gone))
                    await a.members.run([buf.request(col, "write", 0, g.u, priority=Priority.REBUILD) for col in cols])
                except MemberIOError as exc:
                    for disk in exc.disks:
                        a.fail_member(disk, str(exc))  # the spare failing stops this rebuild
                    if self.state == "running":  # a survivor failed: try the stripe again (it will say why not)
                        continue
                    return
                self.pos = s + 1
                a.health.rebuild_pos = self.pos
                if self.pos % max(1, self.stripes // 100) == 0:  # about every 1 %: for the TUI and labs
                    for role, spare in zip(self.roles, self.spares):
                        a.events.publish(RebuildEvent(time=a.clock.now(), role=role, spare=spare.name,
                                                      state="running", stripe=self.pos, stripes=self.stripes))
            await trio.lowlevel.checkpoint()

    async def _pace(self) -> None:
        """Sleep until the rate limit allows the next stripe (re-read every quarter
        second, so a new rate or a stop takes effect soon)."""
        clock = self.raid.clock
        while self.state == "running":
            rate = self.raid.rebuild_rate
            if not rate:
                return
            t0, s0 = self._anchor
            wait = t0 + (self.pos - s0) * self.stripe_bytes / rate - clock.now()
            if wait <= 0:
                return
            await clock.sleep(min(wait, 0.25))

    def _finish(self) -> None:
        self.state = "done"
        self.finished = self.raid.clock.now()
        log.info("rebuild of members %s onto %s done (%d stripes)", list(self.roles),
                 ", ".join(sp.name for sp in self.spares), self.stripes)

    # -- status ---------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        now = self.finished if self.finished is not None else self.raid.clock.now()
        elapsed = max(0.0, now - self.started)
        speed = self.bytes_done / elapsed if elapsed > 0 else 0.0
        left = (self.stripes - self.pos) * self.stripe_bytes
        eta = left / speed if speed > 0 and self.state == "running" else None
        rate = self.raid.rebuild_rate
        return {
            "role": self.role,
            "spare": self.spare.name,
            "roles": list(self.roles),
            "spares": [sp.name for sp in self.spares],
            "state": self.state,
            "stripe": self.pos,
            "stripes": self.stripes,
            "progress": self.pos / self.stripes if self.stripes else 1.0,
            "bytes_done": self.bytes_done,
            "bytes_total": self.stripes * self.stripe_bytes,
            "elapsed": elapsed,
            "speed_mb_s": speed / 1e6,
            "eta_seconds": eta if eta is None or math.isfinite(eta) else None,
            "rate_limit_mb_s": rate / 1e6 if rate else None,
            "paused": self.raid.rebuild_paused,
            "error": self.error,
        }
