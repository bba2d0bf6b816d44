"""Host writes through a placement policy (seed 004, Hua, Vu & Hu): the engine's side.

The placement (``policies/placement``: ``multibuffer``, ``dpsr``) only decides; it returns
*steps* as plain data. This layer does what they say, in order, and keeps the bytes:

* a host write is split into logical strips (the directory's unit); for each one the
  policy's :meth:`write` steps are performed, then the strip's new bytes go into the
  write buffer (:attr:`PlacedWrites.buffer`, keyed by logical strip). A write of part of
  a strip that is in the buffer changes the buffered copy. A write of part of a strip
  that is *not* in the buffer is made in place instead (a RAID-5 small write at its live
  slot; the policy is not asked): buffering it would carry the strip's other blocks,
  flushed long ago, into the volatile buffer, and a crash after their old slot was
  recycled would lose them, which a disk must never do to blocks nobody wrote. The
  paper's unit of writing is its block (``u = 1``), so its writes never take this path;
  with a file system on top, choose the strip size equal to its block size so that
  its writes are buffered;
* a read is served from the buffer for the strips it holds (the newest copy; the disk's
  copy is stale once a strip is buffered), from the members through the directory for
  the rest;
* a flush (fsync, unmount) asks the policy for stripe writes until its buffers are
  empty, then commits the directory (:mod:`vraid.engine.placement.directory_store`).

What each step costs here (seed 004 counts its own costs; where vraid differs it says so):

* ``Dirty``, ``Release``: no I/O. vraid keeps each stripe's parity over the *physical*
  content of every strip, free slots included, so freeing a slot needs no parity update
  (the paper recomputes the parity without the freed blocks, section 2.2 step 3);
* ``StripeWrite`` LW: a full-stripe write of the buffered strips and their parity, no
  reads (a slot the policy leaves empty is written as zeros), as the paper's LW;
* ``StripeWrite`` PW: a RAID-5 small write of the strips into their free slots, by the
  planner's cheaper of read-modify-write and reconstruct-write. The paper reads only the
  parity because its free slots count as zeros; vraid's free slots keep their old bytes,
  so it reads them too (one more read per strip written);
* ``Swap``: read the live strip, small-write it into the partner's dirty slot;
* ``InPlace``: a RAID-5 small write at the strip's slot (DPSR's fallback);
* ``Forget`` (the engine's own, not the paper's): no I/O of its own, but a commit before
  the swap that overwrites the stale copy it gives up (:mod:`.directory_store`).

Every step is checked against the directory before its I/O
(:meth:`~vraid.core.directory.StripeDirectory.check_step`): a step that does not fit is
refused (the host write fails with EIO) and nothing on the members changes. All writes,
reads and flushes of the layer run one at a time (one lock): the directory changes only
between them, so a read never follows a slot that a step is overwriting.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np
import trio

from vraid.core.directory import NOWHERE, Dirty, DirectoryError, Forget, Release, StripeWrite, Swap
from vraid.errors import POLICY_ERRORS, VraidError
from vraid.engine.members.request import Priority
from vraid.engine.placement.status import PlacementStatus
from vraid.engine.raid.stripe import StripeBuffer
from vraid.engine.status import frozen_map, read_only

if TYPE_CHECKING:
    from vraid.engine.raid.layer import RaidLayer
    from .directory_store import DirectoryStore

log = logging.getLogger(__name__)

#: a placement whose flush() has not emptied its buffers after this many stripe writes per buffered strip is broken
_FLUSH_ROUNDS = 4


class PlacementError(VraidError):
    """The placement policy returned a step the directory refuses (nothing was written)."""


class _Refused(PlacementError):
    """A step the policy returned does not fit (checked before any of its I/O)."""


class PlacedWrites:
    """A placement policy's steps performed on an array (module docstring)."""

    def __init__(self, array: "RaidLayer", placement: Any, store: "DirectoryStore") -> None:
        self.raid = array
        self.array = array
        self.placement = placement
        self.store = store
        self.directory = store.directory
        self.geometry = array.geometry
        self.mapping = array.mapping
        self.clock = array.clock
        self.events = array.events
        #: logical strip -> its newest bytes (one strip each), the write buffers' contents
        self.buffer: dict[int, bytes | bytearray] = {}
        self._lock = trio.Lock()
        self._faulted = False
        #: seconds of no host request before the background cleaner runs, and when the last one came
        self.idle = 0.05
        self.last_host = -1e9
        self.stats = {"host_strips": 0, "read_hits": 0, "steps": 0, "LW": 0, "PW": 0, "swaps": 0, "releases": 0,
                      "in_place": 0, "partial_in_place": 0, "forgets": 0, "flushes": 0, "lost": 0, "sizes": {},
                      "background_cleanings": 0}
        placement.attach(self.directory)
        store.attach(array.members)

    # -- reads ------------------------------------------------------------------------------
    def read_now(self, offset: int, length: int, *, priority: Priority = Priority.HOST) -> bytes | None:
        """None: a read takes the directory's lock, so it is always awaited (:meth:`read`)."""
        return None

    async def read(self, offset: int, length: int, *, priority: Priority = Priority.HOST) -> bytes:
        """``length`` bytes at ``offset``: buffered strips from the buffer, the rest from the members."""
        S = self.geometry.strip_size
        self.last_host = self.clock.now()
        async with self._lock:
            first, last = offset // S, (offset + length - 1) // S
            strips = range(first, last + 1)
            held = [L for L in strips if L in self.buffer or self.directory.loc[L] == NOWHERE]
            if not held:
                return await self.array.read(offset, length, priority=priority)
            try:
                self.stats["read_hits"] += len(self.placement.read([L for L in held if L in self.buffer]))
            except POLICY_ERRORS:  # noqa: BLE001 - the policy's hit count is only a statistic
                pass
            out = bytearray(length)
            pos, end = offset, offset + length
            run_start = None
            for L in strips:
                lo, hi = max(pos, L * S), min(end, (L + 1) * S)
                if L in held:
                    if run_start is not None:
                        out[run_start - offset : lo - offset] = await self.array.read(run_start, lo - run_start, priority=priority)
                        run_start = None
                    data = self.buffer.get(L)
                    if data is not None:
                        out[lo - offset : hi - offset] = data[lo - L * S : hi - L * S]
                    # else: lost in a crash (module directory_store): zeros
                elif run_start is None:
                    run_start = lo
            if run_start is not None:
                out[run_start - offset :] = await self.array.read(run_start, end - run_start, priority=priority)
            return bytes(out)

    async def _strip_bytes(self, L: int) -> bytes | bytearray:
        data = self.buffer.get(L)
        if data is not None:
            return data
        S = self.geometry.strip_size
        if self.directory.loc[L] == NOWHERE:
            return bytes(S)
        return await self.array.read(L * S, S)

    # -- writes -----------------------------------------------------------------------------
    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        S = self.geometry.strip_size
        view = memoryview(data).cast("B") if not isinstance(data, memoryview) else data.cast("B")
        self.last_host = self.clock.now()
        async with self._lock:
            pos, end = offset, offset + len(view)
            while pos < end:
                L, within = divmod(pos, S)
                n = min(S - within, end - pos)
                piece = view[pos - offset : pos - offset + n]
                if n < S and L not in self.buffer and not self.directory.is_dirty(L):
                    await self.array.write(pos, piece)  # module docstring: part of a strip in place
                    self.stats["partial_in_place"] += 1
                    pos += n
                    continue
                if n == S:
                    new: bytes | bytearray = bytes(piece)
                else:
                    old = await self._strip_bytes(L)
                    new = bytearray(old)
                    new[within : within + n] = piece
                await self._run("write", lambda p: p.write(L))
                self.buffer[L] = new
                self.stats["host_strips"] += 1
                pos += n

    async def flush(self) -> None:
        """Every buffered strip written to a stripe, then the directory made durable."""
        async with self._lock:
            await self._drain()
            await self.store.commit()
        self.stats["flushes"] += 1

    async def _drain(self) -> None:
        rounds = _FLUSH_ROUNDS * (len(self.buffer) + 1)
        while self.buffer:
            rounds -= 1
            if rounds < 0:
                self._fault("flush", _Refused(f"flush() does not empty the buffers ({len(self.buffer)} strips left)"))
                rounds = _FLUSH_ROUNDS * (len(self.buffer) + 1)

            def ask(p: Any) -> list:
                steps = list(p.flush())
                if not steps:
                    raise _Refused(f"flush() returned no stripe write with {len(self.buffer)} strips buffered")
                return steps

            await self._run("flush", ask)

    # -- the background cleaner -------------------------------------------------------------
    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Until cancelled: once the host has been quiet for :attr:`idle` seconds, clean
        (:meth:`clean_once`) until the policy has nothing to do or the host comes back. A
        cleaning that fails (a member lost under it) is logged and tried again later."""
        task_status.started()
        while True:
            await self.clock.sleep(self.idle)
            try:
                while self.clock.now() - self.last_host >= self.idle and not self._lock.locked():
                    if not await self.clean_once():
                        break
                    await trio.lowlevel.checkpoint()
            except Exception as exc:  # noqa: BLE001 - the host path reports I/O errors; here: log, go on
                log.error("placement: background cleaning failed: %s", exc)

    async def clean_once(self) -> bool:
        """One round of the policy's :meth:`clean` (its swaps at destage priority); whether it did anything."""
        async with self._lock:
            before = self.stats["steps"]
            await self._run("clean", lambda p: p.clean())
            if self.stats["steps"] == before:
                return False
            self.stats["background_cleanings"] += 1
            return True

    # -- the guard (seed 004 policies are student code too) ----------------------------------
    async def _run(self, call: str, ask: Any) -> None:
        """Ask the policy for steps and perform them. A policy that raises, or returns a step
        the directory refuses (checked before its I/O, so nothing is overwritten), is
        replaced by the policy guard's replacement (the built-in of the directory's kind),
        which takes over what is buffered; the call is asked again of it."""
        for attempt in (0, 1):
            try:
                steps = list(ask(self.placement))
                self._forget_ahead(steps)
                for step in steps:
                    await self._perform(step)
                return
            except POLICY_ERRORS as exc:
                if isinstance(exc, PlacementError) and not isinstance(exc, _Refused):
                    raise
                if not _is_policy_error(exc) or attempt:
                    raise
                self._fault(call, exc)

    def _forget_ahead(self, steps: list) -> None:
        """The stale copies the swaps of one answer overwrite, forgotten before the first of
        them (one commit for the whole answer; :meth:`_perform` forgets any left, one by one)."""
        d = self.directory
        for step in steps:
            try:
                if not isinstance(step, Swap) or not (0 <= step.partner < d.stripes and 0 <= step.member < len(d.state[0])):
                    continue
                self._forget((step.partner, step.member))
            except POLICY_ERRORS:  # noqa: BLE001 - a malformed step is refused when its turn comes
                continue

    def _forget(self, slot: tuple[int, int]) -> None:
        """If the directory still names a stale copy at ``slot``: a Forget of it, noted for
        the next commit (which the rule then forces before the slot is written)."""
        if self.directory.named(*slot) >= 0:
            forget = Forget(*slot)
            self.store.noted(forget)
            self.directory.apply(forget)
            self.stats["forgets"] += 1

    def _fault(self, call: str, exc: BaseException) -> None:
        if self._faulted:
            raise PlacementError(f"the built-in placement {self._name()} failed in {call}: {exc}",
                                 "report this as a vraid bug") from exc
        d = self.directory
        new = self.array.guard.replacement("placement", self.placement, directory=d)  # the registry's fallback
        new.attach(d)
        new.restore(list(self.buffer))
        old = _spec(self.placement)
        self.array.guard.fault("placement", old, call, exc, new.spec)  # stop mode (a simulation): raises
        self.placement = new
        self._faulted = True

    async def shutdown(self) -> None:
        """Unmount: drain, then a checkpoint (the next mount reads one table, no journal),
        then the RAID layer shut down."""
        async with self._lock:
            await self._drain()
            await self.store.checkpoint()
        await self.array.shutdown()

    async def checkpoint(self) -> None:
        """A checkpoint on every member that is there (after a rebuild: the new member too)."""
        async with self._lock:
            await self.store.checkpoint()

    async def restore_lost(self) -> int:
        """After a crash, the strips the directory marks as updated in a write buffer
        (their slot DIRTY, or recycled: no slot) whose buffered copy the crash took: back
        into the buffers, with the copy their slot still holds (or zeros when it was
        recycled), and written to live slots at once (a flush). Returns how many had no
        copy left (they read as zeros)."""
        d, S = self.directory, self.geometry.strip_size
        back, lost = [], 0
        async with self._lock:
            for L in range(d.strips):
                if L in self.buffer or not d.is_dirty(L):
                    continue
                if d.loc[L] == NOWHERE:
                    self.buffer[L] = bytes(S)
                    lost += 1
                else:
                    self.buffer[L] = await self.array.read(L * S, S)
                back.append(L)
            if back:  # placed again now: the slot a restored copy came from may be recycled next
                try:
                    self.placement.restore(back)
                except POLICY_ERRORS as exc:  # noqa: BLE001 - student code: the built-in takes over (it restores all)
                    self._fault("restore", exc)
                await self._drain()
                await self.store.commit()
        self.stats["lost"] = lost
        self.stats["restored"] = len(back)
        return lost

    # -- steps ------------------------------------------------------------------------------
    def _name(self) -> str:
        return getattr(self.placement, "name", type(self.placement).__name__)

    async def _perform(self, step: Any) -> None:
        from vraid.policies.placement import InPlace

        d, store = self.directory, self.store
        if isinstance(step, InPlace):
            for L in step.strips:
                await self._in_place(L)
            return
        if not isinstance(step, (Dirty, StripeWrite, Swap, Release)):
            raise _Refused(f"{step!r} is not a step")
        try:
            d.check_step(step)
        except DirectoryError as exc:
            raise _Refused(f"a step the directory refuses: {exc}") from exc
        writes = store.writes_of(step)
        for slot in writes:  # a stale copy the directory still names: forgotten durably before it goes
            self._forget(slot)
        if store.must_commit_before(writes):
            await store.commit(forced=True)
        if isinstance(step, StripeWrite):
            await self._stripe_write(step)
        elif isinstance(step, Swap):
            await self._swap(step)
        store.noted(step)
        d.apply(step)
        self.stats["steps"] += 1
        if isinstance(step, StripeWrite):
            for _m, L in step.slots:
                self.buffer.pop(L, None)
            self.stats[step.kind] += 1
            sizes = self.stats["sizes"]
            sizes[step.size] = sizes.get(step.size, 0) + 1
        elif isinstance(step, Swap):
            self.stats["swaps"] += 1
        elif isinstance(step, Release):
            self.stats["releases"] += 1
        elif isinstance(step, Dirty):
            pass

    async def _stripe_write(self, w: StripeWrite) -> None:
        g, d = self.geometry, self.directory
        buf = StripeBuffer(self.mapping, w.stripe)
        if w.kind == "LW":  # the stripe as it will be: the parity member the write chooses
            buf.columns = d._order[w.parity] + (w.parity,)
        cols = buf.columns
        written = set()
        for m, L in w.slots:
            data = self.buffer.get(L)
            if data is None:
                raise _Refused(f"{w} writes strip {L}, which is not buffered")
            k = cols.index(m)
            buf.data[k] = np.frombuffer(data, dtype=np.uint8).reshape(g.u, g.block_size)
            written.add(k)
        if w.kind == "LW":
            for k in range(g.data_disks):
                if k not in written:
                    buf.data[k] = 0
            written = set(range(g.data_disks))
        z = tuple(tuple("D" if k in written else "E" for k in range(g.data_disks)) for _ in range(g.u))
        await self.array.write_plan(buf, z, priority=Priority.HOST)

    async def _swap(self, sw: Swap) -> None:
        g, d = self.geometry, self.directory
        src = StripeBuffer(self.mapping, sw.stripe)
        k_src = src.columns.index(sw.member)
        await self.array.read_blocks(src, [(k_src, r) for r in range(g.u)])
        dst = StripeBuffer(self.mapping, sw.partner)
        k = dst.columns.index(sw.member)
        dst.data[k] = src.data[k_src]
        z = tuple(tuple("D" if j == k else "E" for j in range(g.data_disks)) for _ in range(g.u))
        await self.array.write_plan(dst, z, priority=Priority.DESTAGE)

    async def _in_place(self, L: int) -> None:
        data = self.buffer.get(L)
        if data is None:
            return  # nothing newer than the slot holds
        if self.directory.loc[L] == NOWHERE:
            raise _Refused(f"InPlace({L}): strip {L} has no slot to write in place")
        S = self.geometry.strip_size
        await self.array.write(L * S, data)
        self.buffer.pop(L, None)
        self.stats["in_place"] += 1

    # -- state ------------------------------------------------------------------------------
    def status(self) -> PlacementStatus:
        d = self.directory
        try:
            per = {str(m): n for m, n in self.placement.buffered().items()}
        except POLICY_ERRORS:  # noqa: BLE001
            per = {}
        try:
            policy_stats = {k: (dict(v) if isinstance(v, dict) else v) for k, v in getattr(self.placement, "stats", {}).items()}
        except POLICY_ERRORS:  # noqa: BLE001
            policy_stats = {}
        hits, misses = policy_stats.get("write_hits", 0), policy_stats.get("write_misses", 0)
        return PlacementStatus(
            policy=self._name(),
            spec=read_only(getattr(self.placement, "spec", self._name())),
            buffer_strips=read_only(getattr(self.placement, "buffer", None)),
            write_hit_ratio=hits / (hits + misses) if hits + misses else None,
            policy_stats=frozen_map(policy_stats),
            buffered=len(self.buffer),
            buffered_per_disk=frozen_map(per),
            free_stripes=len(d.free_stripes),
            stripes=d.stripes,
            strips=d.strips,
            stats=frozen_map({k: (dict(v) if isinstance(v, dict) else v) for k, v in self.stats.items()}),
            directory=frozen_map(self.store.status()),
        )


def _is_policy_error(exc: BaseException) -> bool:
    """An exception from the policy's code or a refused step, not a member's I/O error."""
    from vraid.errors import MemberIOError

    return isinstance(exc, _Refused) or (isinstance(exc, POLICY_ERRORS)
                                         and not isinstance(exc, (MemberIOError, trio.Cancelled)))


def _spec(policy: Any) -> str:
    try:
        return str(policy.spec)
    except POLICY_ERRORS:  # noqa: BLE001 - a student's spec may fail too
        return type(policy).__name__
