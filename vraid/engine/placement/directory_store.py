"""The stripe directory's durable copy on the members, and the rule that keeps it crash-safe.

Seed 004 (Hua, Vu & Hu, section 2.1) keeps a stripe directory but does not say how it
survives a power cut; vraid keeps it in every member's directory region
(:mod:`vraid.ondisk.directory_area`) as a checkpoint plus a journal of steps
(:mod:`vraid.core.directory_format`), written through the member queues like the
write-intent bitmap.

**Group commit.** A step's record is not written when the step is applied: records
collect in memory and :meth:`DirectoryStore.commit` writes them in one go, after
flushing the members (so the data a record points at is durable before the record is).
A commit runs on every host flush (fsync, unmount) and whenever a step is about to
overwrite a slot that the *durable* directory still names as some strip's place.

**The rule.** The engine never writes a slot that a step not yet committed *vacated*
(a LIVE slot that became DIRTY: its strip moved, or was rewritten into a write buffer,
or an old parity slot given up by a large write; a DIRTY slot whose stale copy the
directory still named, given up by a :class:`~vraid.core.directory.Release` or by the
engine's own :class:`~vraid.core.directory.Forget` just before a swap overwrites it).
Before such a write it commits. So
after a power cut the recovered directory (the newest whole checkpoint plus the journal
up to its first torn record) names, for every strip, a slot that still holds a copy of
it as of that commit or later: every strip reads back as its last flushed content or
newer, never another strip's bytes. A strip written since the last flush whose only
copy was in the (volatile) write buffer, and whose old slot was recycled after a
commit, may be lost: it reads as zeros (a drive's volatile write cache loses such
writes too; a flush is what promises). Only whole strips written since the flush are
ever in a buffer (:mod:`vraid.engine.placement.writes` writes part of any other strip in place),
so a block nobody wrote since the flush is never lost.

**Checkpoints.** When the journal would overflow, a checkpoint of the whole directory
goes to the slot not holding the newest one, the members are flushed, and the journal
restarts. Unmount and the end of a rebuild also checkpoint (a rebuilt member starts
with an empty region; the checkpoint gives it the directory).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Iterable, Sequence

from vraid.core.directory import DIRTY, Dirty, Forget, Release, Step, StripeDirectory, StripeWrite, Swap
from vraid.core.directory_format import (DirectoryFormatError, decode_checkpoint, decode_journal, encode_checkpoint,
                                         encode_step, records_after)
from vraid.errors import VraidError

if TYPE_CHECKING:
    from vraid.backends.base import Store
    from vraid.core.geometry import Geometry
    from vraid.ondisk.directory_area import DirectoryArea
    from vraid.engine.members.queues import Members

log = logging.getLogger(__name__)

Slot = tuple[int, int]


class DirectoryDamaged(VraidError):
    """Every member's directory journal stops short of records committed after it."""


def _touched(step: Step) -> set[int]:
    """The stripes a journal step changes (their strips may be misplaced if it is lost)."""
    stripe = getattr(step, "stripe", None)
    out = {stripe} if stripe is not None else set()
    partner = getattr(step, "partner", None)
    if partner is not None:
        out.add(partner)
    return out


def _read_one(store: "Store", area: "DirectoryArea", geometry: "Geometry",
              beyond: list | None = None) -> tuple[StripeDirectory, int, bytes]:
    """The directory one member's region holds: (directory, newest slot, the journal's bytes
    to append after; empty when no record follows the checkpoint, so the next commit
    starts the journal over). ``beyond`` collects the valid records found past the point
    where the journal stops (damage in the middle, not a torn end)."""
    best: tuple[int, StripeDirectory] | None = None
    for i in (0, 1):
        try:
            d = decode_checkpoint(store.read_sync(area.slot(i), area.checkpoint), geometry)
        except (DirectoryFormatError, ValueError):
            continue
        if best is None or d.seq > best[1].seq:
            best = (i, d)
    if best is None:
        raise DirectoryFormatError("no whole checkpoint")
    slot, d = best
    raw = store.read_sync(area.journal_offset, area.journal)
    records, end, _torn = decode_journal(raw)
    applied = 0
    for seq, step in records:
        if seq <= d.seq:
            continue
        if seq != d.seq + 1:
            break
        d.apply(step)
        applied += 1
    if beyond is not None:
        beyond.extend(records_after(raw, end, d.seq))
    keep = applied and records[-1][0] == d.seq
    return d, slot, bytes(raw[:end]) if keep else b""


class DirectoryStore:
    """The durable copy of ``directory`` in ``area`` of every member (module docstring)."""

    def __init__(self, directory: StripeDirectory, area: "DirectoryArea", *, active: int = 0) -> None:
        self.directory = directory
        self.area = area
        self.members: "Members | None" = None
        #: the checkpoint slot holding the newest checkpoint
        self.active = active
        #: journal bytes in use after that checkpoint (whole blocks are rewritten as it grows)
        self.journal = bytearray()
        self.pending: list[bytes] = []
        #: slots vacated by steps not yet committed (module docstring: the rule)
        self.vacated: set[Slot] = set()
        self.stats = {"records": 0, "commits": 0, "checkpoints": 0, "forced_commits": 0}
        #: what a forced load found damaged (the mount reports it); empty when nothing
        self.damage = ""

    # -- opening ------------------------------------------------------------------------
    @classmethod
    def load_sync(cls, stores: Sequence["Store"], area: "DirectoryArea", geometry: "Geometry", *,
                  force: bool = False) -> "DirectoryStore":
        """The newest directory any of ``stores`` (the members that are there) holds.

        A member whose journal stops at a bad record although valid, later-numbered records
        follow it is damaged; another member's copy that goes further wins. If none reaches
        the newest committed record any member holds, the directory would be stale.

        Raises:
            VraidError: no member holds a readable directory.
            DirectoryDamaged: every copy stops short of a committed record (unless ``force``:
                then the newest copy is served and the stripes it may misplace are named).
        """
        found: list[tuple[int, StripeDirectory, int, bytes]] = []
        problems = []
        beyond: list[tuple[int, Step]] = []
        for store in stores:
            try:
                d, slot, journal = _read_one(store, area, geometry, beyond)
            except (DirectoryFormatError, OSError, ValueError) as exc:
                problems.append(f"{store.name}: {exc}")
                continue
            found.append((d.seq, d, slot, journal))
        if not found:
            raise VraidError("no member holds a readable stripe directory (" + "; ".join(problems) + ")",
                             "the array's blocks cannot be found without it; restore the member files from a copy")
        _seq, d, slot, journal = max(found, key=lambda f: f[0])
        missed = sorted({seq: step for seq, step in beyond if seq > d.seq}.items())
        if missed:
            stripes = sorted(set().union(*(_touched(step) for _, step in missed)))
            shown = ", ".join(map(str, stripes[:20])) + (" ..." if len(stripes) > 20 else "")
            what = (f"the stripe directory journal is damaged on every member: the newest readable copy stops at "
                    f"record {d.seq}, but records up to {missed[-1][0]} were committed after it; strips of "
                    f"{len(stripes)} stripes ({shown}) may be misplaced")
            if not force:
                raise DirectoryDamaged(what + ", and serving this map would return other strips' bytes",
                                       "restore a member file with an intact directory region; or mount with --force "
                                       "to serve it anyway and check those stripes (docs/multibuffer.md)")
            log.warning("%s; --force: served as it is", what)
        store = cls(d, area, active=slot)
        store.journal = bytearray(journal)
        if missed:
            store.damage = what + " (--force: served as it is)"
        if problems:
            log.warning("stripe directory: %s", "; ".join(problems))
        return store

    @staticmethod
    def format_sync(stores: Iterable["Store"], area: "DirectoryArea", directory: StripeDirectory) -> None:
        """A new array's region: the directory as checkpoint A, B and the journal zeroed."""
        from vraid.ondisk.directory_area import format_members

        format_members(stores, area, directory)

    def attach(self, members: "Members") -> None:
        self.members = members

    # -- the rule -------------------------------------------------------------------------
    def writes_of(self, step: Step) -> list[Slot]:
        """The slots ``step``'s I/O writes (before it is applied)."""
        d = self.directory
        if isinstance(step, StripeWrite):
            if step.kind == "LW":
                return [(step.stripe, m) for m in range(d.geometry.ndisks)]
            return [(step.stripe, m) for m, _ in step.slots] + [(step.stripe, step.parity)]
        if isinstance(step, Swap):
            return [(step.partner, step.member), (step.partner, d.parity[step.partner])]
        return []

    def must_commit_before(self, slots: Iterable[Slot]) -> bool:
        return bool(self.pending) and any(s in self.vacated for s in slots)

    def noted(self, step: Step) -> None:
        """``step`` is about to be applied: remember what it vacates and queue its record."""
        d = self.directory
        if isinstance(step, Dirty):
            loc = d.loc[step.strip]
            if loc[0] >= 0:
                self.vacated.add(loc)
        elif isinstance(step, StripeWrite):
            for _m, L in step.slots:
                if d.loc[L][0] >= 0:
                    self.vacated.add(d.loc[L])
            if step.kind == "LW":
                self.vacated.add((step.stripe, d.parity[step.stripe]))
        elif isinstance(step, Swap):
            self.vacated.add((step.stripe, step.member))
        elif isinstance(step, Release):
            for m, st in enumerate(d.state[step.stripe]):
                if st == DIRTY and d.named(step.stripe, m) >= 0:
                    self.vacated.add((step.stripe, m))
        elif isinstance(step, Forget):
            self.vacated.add((step.stripe, step.member))
        else:
            return
        self.pending.append(encode_step(d.seq + 1, step))
        self.stats["records"] += 1

    # -- writing --------------------------------------------------------------------------
    async def _write_all(self, offset: int, data: bytes) -> None:
        from vraid.engine.members.request import Request

        members = self.members
        view = memoryview(data)
        reqs = [Request(disk, "write", offset, len(data), view) for disk in range(len(members))
                if disk not in members.excluded]
        await members.run(reqs)

    async def commit(self, *, forced: bool = False) -> None:
        """Members flushed, then the pending records durable (or a checkpoint, when the
        journal is full). Nothing pending: only the flush."""
        members = self.members
        await members.flush()
        if not self.pending:
            self.vacated.clear()
            return
        records = b"".join(self.pending)
        bs = self.directory.geometry.block_size
        if len(self.journal) + len(records) > self.area.journal:
            await self._checkpoint_flushed()
        else:
            start = len(self.journal) // bs * bs
            self.journal += records
            end = -(-len(self.journal) // bs) * bs
            chunk = bytes(self.journal[start:]) + bytes(end - len(self.journal))
            await self._write_all(self.area.journal_offset + start, chunk)
            await members.flush()
        self.pending.clear()
        self.vacated.clear()
        self.stats["commits"] += 1
        self.stats["forced_commits"] += forced

    async def checkpoint(self) -> None:
        """The whole directory into the other checkpoint slot; the journal restarts."""
        await self.members.flush()
        await self._checkpoint_flushed()
        self.pending.clear()
        self.vacated.clear()

    async def _checkpoint_flushed(self) -> None:
        cp = encode_checkpoint(self.directory)
        nxt = 1 - self.active
        await self._write_all(self.area.slot(nxt), cp + bytes(-len(cp) % self.directory.geometry.block_size))
        await self.members.flush()
        self.active = nxt
        self.journal = bytearray()
        self.stats["checkpoints"] += 1

    def status(self) -> dict[str, int]:
        return {**self.stats, "journal_bytes": len(self.journal), "journal_size": self.area.journal,
                "pending_records": len(self.pending), "seq": self.directory.seq}
