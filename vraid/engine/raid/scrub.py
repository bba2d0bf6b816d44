"""Scrub: read every stripe, count the parity blocks that disagree with their data.

Like md's ``check`` and ``repair`` sync actions (``echo check >
/sys/block/mdX/md/sync_action``; the count lands in ``mismatch_cnt``): every
stripe is read whole from all members and, row by row (per PBG), the parity
must be what the redundancy scheme makes of the data (RAID-5: the XOR of
the data blocks; RAID-6: P and Q, each checked on its own;
:meth:`vraid.core.redundancy.Redundancy.disagree`). A row where any check
block is not is one *mismatch*; ``by_check`` counts, per check column (P, Q),
the rows where that one disagrees, so a RAID-6 scrub says which is wrong (md's
``check`` only counts; mdadm's ``raid6check`` tells P from Q from data). Stripes are physical stripes, walked in
order (``range(mapping.stripes)``, :mod:`vraid.core.mapping`). vraid counts mismatches in
parity blocks (PBGs) and also says how many stripes hold one; md counts
512-byte sectors (in units of its 4 KiB stripe pages), so md's number is 8x
vraid's for the same damage on 4 KiB blocks.

Which check column disagrees is counted per member too (``check_members``:
:meth:`vraid.core.redundancy.Redundancy.disagree`): for a mirror (RAID-1,
RAID-10) that names the copy that differs from its data strip's member (the
"primary"), as md's raid1 ``check`` compares every mirror with the first readable
one; for RAID-4/5 it is the parity member.

``repair`` rewrites the parity of every mismatching row from its data, as md
does: scrub cannot tell whether the data or the parity is wrong, and data
wins (a mirror: the primary's bytes are written over the copies, md's raid1
repair). (With a failed member or a dirty array, repair is the resync's job.)

Correct while the array is in use: a batch of stripes is read under their
stripe locks, the same locks every write and destage holds while it writes
a stripe, so a stripe being written is never read half-old, half-new, and
never reported. Member requests go in the rebuild priority class (the lowest),
so host requests and destages go first. A repair write is a member write like any other: the
write-intent bitmap records it first.

``control_handlers`` adds the ``check_start``/``check_status``/``check_stop``
commands to a mount's control socket: the check runs in the daemon as a
task, and ``vraid check`` polls it and draws the progress bar.
"""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import trio

from vraid.core.schema import Bool, takes
from vraid.errors import VraidError
from vraid.engine.events import ScrubEvent
from vraid.engine.members.request import Priority, Request

if TYPE_CHECKING:
    from vraid.engine.raid.layer import RaidLayer

log = logging.getLogger(__name__)

#: stripes read per step (one member request per member covers them all)
BATCH = 8
#: stripes listed by number in a report (the count is always exact)
LIST_LIMIT = 100


@dataclass
class ScrubProgress:
    """A check or repair, while it runs and when it is done."""

    total: int
    repair: bool = False
    done: int = 0
    #: parity blocks (PBG rows) whose parity is not the XOR of their data
    mismatches: int = 0
    #: stripes holding at least one mismatch
    mismatched_stripes: int = 0
    #: parity blocks rewritten (repair)
    repaired: int = 0
    #: per check column (P, and Q on RAID-6): its blocks that disagree with the data
    by_check: dict[str, int] = field(default_factory=dict)
    #: the first LIST_LIMIT stripes with a mismatch
    stripes: list[int] = field(default_factory=list)
    #: member (as a string: a JSON key) -> its check blocks that disagree with their data
    check_members: dict[str, int] = field(default_factory=dict)
    running: bool = True
    cancelled: bool = False
    error: str = ""
    started: float = 0.0
    elapsed: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__) | {"unit": "parity blocks"}


async def scrub_array(
    array: "RaidLayer",
    *,
    repair: bool = False,
    progress: ScrubProgress | None = None,
    notify: Callable[[ScrubProgress], None] | None = None,
    batch: int = BATCH,
) -> ScrubProgress:
    """Check (and with ``repair`` fix) the parity of every stripe of ``array``.

    Raises:
        VraidError: for RAID-0 (there is no parity to check).
        MemberIOError: when a member cannot be read (or written, repairing).
    """
    g = array.geometry
    if not g.redundancy.parity_columns:
        raise VraidError("RAID-0 has no parity to check", "check and repair apply to RAID-1, 4, 5, 6 and 10 arrays")
    stripes = array.mapping.stripes
    prog = progress or ScrubProgress(total=stripes, repair=repair)
    prog.started = array.clock.now()
    try:
        for first in range(0, stripes, batch):
            n = min(batch, stripes - first)
            await _check_run(array, first, n, prog)
            prog.done = first + n
            prog.elapsed = array.clock.now() - prog.started
            array.events.publish(ScrubEvent(time=array.clock.now(), done=prog.done, total=prog.total,
                                            mismatches=prog.mismatches, repaired=prog.repaired))
            if notify is not None:
                notify(prog)
            await trio.lowlevel.checkpoint()  # never starve the host, even on instant stores
    finally:
        prog.elapsed = array.clock.now() - prog.started
    prog.running = False
    return prog


async def _check_run(array: "RaidLayer", first: int, n: int, prog: ScrubProgress) -> None:
    """Stripes first..first+n-1, under their locks (taken in ascending order, as
    every writer takes at most one at a time: no deadlock)."""
    g, mapping = array.geometry, array.mapping
    strip, u, bs, nd = g.strip_size, g.u, g.block_size, g.data_disks
    async with AsyncExitStack() as locks:
        for s in range(first, first + n):
            await locks.enter_async_context(array.stripe_lock(s))
        depth = g.depth  # strips of a member per stripe (its lanes)
        areas = np.empty((g.ndisks, n * depth * strip), dtype=np.uint8)
        offset = mapping.member_offset(first)
        reqs = [Request(d, "read", offset, n * depth * strip, memoryview(areas[d]), Priority.REBUILD)
                for d in range(g.ndisks)]
        await array.members.run(reqs)
        by_member = areas.reshape(g.ndisks, n, depth, u, bs)
        order = np.array([mapping.columns(s) for s in range(first, first + n)])  # (n, columns)
        lanes = np.array([mapping.lanes(s) for s in range(first, first + n)])  # (n, columns)
        rows = by_member[order.T, np.arange(n)[None, :], lanes.T]  # (columns, n, u, block): data in order, parity last
        wrong = _disagree(g, rows, first, n)  # (check columns, n, u): per check, PBGs that disagree
        bad = wrong.any(axis=0)  # (n, u): PBGs whose parity disagrees with the data
        if not bad.any():
            return
        names = g.redundancy.check_names
        for i in np.flatnonzero(bad.any(axis=1)).tolist():
            stripe = first + i
            count = int(bad[i].sum())
            for member, blocks in zip(mapping.parity_disks(stripe), wrong[:, i].sum(axis=-1).tolist()):
                if blocks:
                    key = str(member)
                    prog.check_members[key] = prog.check_members.get(key, 0) + int(blocks)
            prog.mismatches += count
            prog.mismatched_stripes += 1
            per = {name: int(wrong[c, i].sum()) for c, name in enumerate(names)}
            for name, k in per.items():
                prog.by_check[name] = prog.by_check.get(name, 0) + k
            if len(prog.stripes) < LIST_LIMIT:
                prog.stripes.append(stripe)
            log.info("scrub: stripe %d has %d parity block(s) that disagree with the data (%s)", stripe, count,
                     ", ".join(f"{name}: {k}" for name, k in per.items()))
            if prog.repair:
                await _repair(array, stripe, rows[:, i], bad[i])
                prog.repaired += count


def _disagree(g, rows: np.ndarray, first: int, n: int) -> np.ndarray:
    """Per check column, which PBGs of stripes first..first+n-1 disagree with their data
    (``rows``: (columns, n, u, block)); all stripes at once unless their check columns
    weight the data in different orders (RAID-6's asymmetric layouts: one stripe at a time)."""
    nd, scheme = g.data_disks, g.redundancy
    slots = [g.slots(s) for s in range(first, first + n)]
    if all(sl is None for sl in slots):
        return scheme.disagree(rows[:nd], rows[nd:])
    return np.stack([scheme.disagree(rows[:nd, i], rows[nd:, i], slots=slots[i]) for i in range(n)], axis=1)


async def _repair(array: "RaidLayer", stripe: int, rows: np.ndarray, bad: np.ndarray) -> None:
    """Rewrite the parity of the mismatching rows of ``stripe`` from its data.
    ``rows`` is (columns, u, block) as read, in column order (data, then parity);
    the caller holds the stripe lock."""
    g, mapping = array.geometry, array.mapping
    checks = g.redundancy.generate(rows[: g.data_disks], slots=g.slots(stripe))  # (parity columns, u, block)
    reqs = []
    nd = g.data_disks
    for c, (p, parity) in enumerate(zip(mapping.parity_disks(stripe), checks)):
        for r0, r1 in _runs(np.flatnonzero(bad).tolist()):
            buf = memoryview(np.ascontiguousarray(parity[r0 : r1 + 1])).cast("B")
            reqs.append(Request(p, "write", mapping.column_offset(stripe, nd + c, r0), len(buf), buf, Priority.REBUILD))
    async with array.intent_of(stripe):
        await array.members.run(reqs)


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for r in rows:
        if out and out[-1][1] == r - 1:
            out[-1] = (out[-1][0], r)
        else:
            out.append((r, r))
    return out


# -- on a mount: the control socket commands ------------------------------------------
def control_handlers(array: "RaidLayer", nursery: trio.Nursery) -> dict[str, Callable]:
    """``check_start {repair}``, ``check_status``, ``check_stop`` for a mount's daemon."""
    state: dict[str, Any] = {"progress": None, "scope": None}

    async def run(prog: ScrubProgress, scope: trio.CancelScope) -> None:
        with scope:
            try:
                await scrub_array(array, repair=prog.repair, progress=prog)
                log.info("check finished: %d mismatches in %d stripes%s", prog.mismatches, prog.mismatched_stripes,
                         f", {prog.repaired} repaired" if prog.repair else "")
            except Exception as exc:  # noqa: BLE001 - reported to the CLI, the mount goes on
                prog.error = str(exc)
                log.error("check failed: %s", exc)
        if scope.cancelled_caught:
            prog.cancelled = True
        prog.running = False

    @takes(repair=Bool())
    async def check_start(req: dict[str, Any]) -> dict[str, Any]:
        if not array.geometry.redundancy.parity_columns:
            raise VraidError("RAID-0 has no parity to check")
        if array.health.degraded:
            raise VraidError(f"the array is degraded (member {', '.join(map(str, array.health.missing_roles))} missing): "
                             "parity cannot be checked without every member",
                             "add a spare (`vraid add`) and wait for the rebuild (`vraid rebuild --wait`), then check")
        current = state["progress"]
        if current is not None and current.running:
            raise VraidError(f"a {'repair' if current.repair else 'check'} is already running "
                             f"({current.done}/{current.total} stripes)")
        prog = ScrubProgress(total=array.mapping.stripes, repair=req.get("repair", False) is True)
        state["progress"] = prog
        state["scope"] = scope = trio.CancelScope()
        nursery.start_soon(run, prog, scope)
        return {"check": prog.to_dict()}

    @takes()
    async def check_status(_req: dict[str, Any]) -> dict[str, Any]:
        prog = state["progress"]
        return {"check": prog.to_dict() if prog is not None else None}

    @takes()
    async def check_stop(_req: dict[str, Any]) -> dict[str, Any]:
        scope = state["scope"]
        prog = state["progress"]
        if scope is not None and prog is not None and prog.running:
            scope.cancel()
        return {"check": prog.to_dict() if prog is not None else None}

    return {"check_start": check_start, "check_status": check_status, "check_stop": check_stop}
