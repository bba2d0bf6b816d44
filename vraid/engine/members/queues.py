"""The members of an array, driven together: the execution layer under the controller.

The controller submits a *batch* of requests (all reads of a plan, or all its writes) to all
members at once and waits for the whole batch (:meth:`Members.run`): the members are driven
concurrently, each by its own queue and worker (:mod:`vraid.engine.members.member`), in the
priority classes of :mod:`vraid.engine.members.request` (seed 003, section 3.1). A batch
whose members are all idle skips the queues: run inline on instant stores, or charged in one
sleep on timing models. A flush flushes every member that has not failed, on the trio
thread when that is short (:mod:`vraid.engine.members.inline_sync`).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import trio

from vraid.backends.base import Store
from vraid.engine.clock import Clock
from vraid.engine.members.inline_sync import InlineSyncRule
from vraid.engine.members.member import Member, runs_now
from vraid.engine.members.request import Batch, Request
from vraid.errors import MemberIOError
from vraid.policies.queue import QueueOrder, queue_order as resolve_queue_order


class Members:
    """All members of an array, driven concurrently."""

    def __init__(
        self, stores: Sequence[Store], clock: Clock, *, queue_order: "str | Callable[[], QueueOrder] | None" = None
    ) -> None:
        """``queue_order``: the order inside each priority class of every member, a name of
        :data:`vraid.policies.queue.QUEUE_ORDERS` or a factory of fresh orders (None: FIFO)."""
        self.clock = clock
        #: the factory every member's queues were made with (``vraid status`` names it)
        self.queue_order = resolve_queue_order(queue_order)
        #: every member's busy seconds (each member's ``stats.busy_seconds``), kept by the
        #: members in one list: the read path's wait accounting reads them all per host read
        self.busy: list[float] = [0.0] * len(stores)
        self.disks = [Member(i, s, clock, self.queue_order, self.busy) for i, s in enumerate(stores)]
        self._sleep_until = getattr(clock, "sleep_until", trio.sleep_until)
        #: members not flushed (failed ones: the controller sends them nothing)
        self.excluded: set[int] = set()
        #: the metadata-only simulation (``vraid sim --no-data``): the stores keep no bytes, so
        #: the executor skips the parity computation (vraid.engine.raid.stripe); timing is unchanged
        self.no_data = False
        #: when a flush syncs the members on the trio thread (see :meth:`flush`)
        self.inline_flush = InlineSyncRule(clock)

    def __len__(self) -> int:
        return len(self.disks)

    def request(self, disk: int, op: str, offset: int, length: int, buffer: memoryview | None = None, *,
                durable: bool = False) -> Request:
        """A host-class request for :meth:`run` (how code below the engine, such as
        ``vraid.ondisk.bitmap``, makes one without naming the engine's types)."""
        return Request(disk, op, offset, length, buffer, durable=durable)

    def __getitem__(self, i: int) -> Member:
        return self.disks[i]

    async def serve(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Start one worker per member; runs until cancelled."""
        async with trio.open_nursery() as nursery:
            for disk in self.disks:
                await nursery.start(disk.serve)
            task_status.started()

    async def run(self, requests: Sequence[Request], *, queued: bool = False) -> None:
        """Submit ``requests`` (to any members) and wait until all are done. ``queued``:
        through the members' queues even when they could run inline one after another (so
        that requests that wait, such as durable writes, wait on all members at once).

        Raises:
            MemberIOError: for the first request that failed, after all finished.
        """
        if not requests:
            return
        disks = self.disks
        if len(requests) == 1 and not queued:  # one request (a read inside one strip): no batch checks
            req = requests[0]
            if self.run_now(req):
                return
            disk = disks[req.disk]
            if disk.can_inline:
                await disk._execute(req)
                if req.error is not None:
                    self._raise_first_error(requests)
                return
        if not queued and self._can_inline(requests):
            if len(requests) > 1:  # reads that would block one after another: start them all first
                for req in requests:
                    if req.op == "read":
                        disks[req.disk].store.prefetch(req.offset, req.length)
            t = self.clock.now()
            for req in requests:  # instant stores, idle members: no hand-off
                disk = disks[req.disk]
                store = disk.store
                if runs_now(store, req):  # one clock read per request, not even an await
                    t = disk._execute_now(req, store, t)
                else:
                    t = await disk._execute(req, start=t)
            self._raise_first_error(requests)
            return
        if not queued and self._can_charge(requests):
            done = -math.inf  # timing models, idle members, one request each: one sleep for the batch
            for req in requests:
                disk = disks[req.disk]
                end = disk.charge_now(req) if runs_now(disk.store.inner, req) else await disk.charge(req)  # type: ignore[attr-defined]
                if end > done:
                    done = end
            await self._sleep_until(done)
            self._raise_first_error(requests)
            return
        batch = Batch(len(requests))
        for req in requests:
            req._batch = batch
            self.disks[req.disk].submit(req)
        await batch.done.wait()
        self._raise_first_error(requests)

    def run_now(self, req: Request) -> bool:
        """Run the lone request ``req`` on this thread, with no await, when its member is idle
        and its store answers synchronously (:func:`runs_now`): True when it ran (its error
        raised as :meth:`run` raises it), False when it must go through :meth:`run`. The
        same counts and busy time as :meth:`run`, without a coroutine: what a random read
        of a plain array costs is one ``pread`` and this accounting."""
        disk = self.disks[req.disk]
        store = disk.store
        # (Member.can_inline and runs_now, without their calls: this runs once per host read)
        if not store.instant or disk._active or disk._queued:
            return False
        if not (store.sync_reads if req.op == "read" else store.sync_writes and not req.durable):
            return False
        disk._execute_now(req, store, self.clock.now())
        if req.error is not None:
            self._raise_first_error((req,))
        return True

    def _can_inline(self, requests: Sequence[Request]) -> bool:
        """:attr:`Member.can_inline` for every request's member (a loop, not a generator:
        this runs for every host request)."""
        disks = self.disks
        for r in requests:
            if not disks[r.disk].can_inline:
                return False
        return True

    def _can_charge(self, requests: Sequence[Request]) -> bool:
        """One request per member, and :attr:`Member.can_charge` for each (loops, not
        generators: this runs for every batch of a simulation)."""
        n = len(requests)
        if n == 2:  # the reads, or the writes, of a small write
            if requests[0].disk == requests[1].disk:
                return False
        elif n > 2 and len({r.disk for r in requests}) != n:
            return False
        disks = self.disks
        now = self.clock.now()  # Member.can_charge for each, with one clock reading
        for r in requests:
            d = disks[r.disk]
            store = d.store
            if not (store.timed and store.inner.instant and not d._active and not d._queued  # type: ignore[attr-defined]
                    and d.busy_until <= now):
                return False
        return True

    @staticmethod
    def _raise_first_error(requests: Sequence[Request]) -> None:
        failed = [req for req in requests if req.error is not None]
        if failed:
            raise Members.error_of(failed)

    @staticmethod
    def error_of(failed: Sequence[Request]) -> MemberIOError:
        """The MemberIOError for the failed requests of one batch (at least one): the first
        one's, naming every member that failed."""
        req = failed[0]
        exc = MemberIOError(req.disk, f"{req.op} at {req.offset}+{req.length} failed: {req.error}")
        exc.disks = sorted({r.disk for r in failed})  # every member that failed in this batch
        exc.op = req.op if all(r.op == req.op for r in failed) else "mixed"
        return exc

    async def flush(self) -> None:
        """Flush every member, except the failed ones (a member file store syncs only if
        written since its last flush: ``backends/file.py``).

        The members are flushed concurrently, each sync in a worker thread; but when every
        member can sync on this thread, all of them together have little to write out and
        such flushes have been short (:mod:`vraid.engine.members.inline_sync`), they sync one after
        another right here (:meth:`_flush_inline`).

        Raises:
            MemberIOError: naming every member whose flush failed.
        """
        failed: list[tuple[int, BaseException]] = []
        disks = [disk for disk in self.disks if disk.index not in self.excluded]
        if self.inline_flush.inline(self._unsynced_bytes(disks)):
            self.inline_flush.run(lambda: self._flush_inline(disks, failed))
            await trio.lowlevel.checkpoint()
        else:
            async def one(disk: Member) -> None:
                try:
                    await disk.store.flush()
                except (OSError, ValueError) as exc:
                    disk.stats.errors += 1
                    failed.append((disk.index, exc))

            async with trio.open_nursery() as nursery:
                for disk in disks:
                    nursery.start_soon(one, disk)
        if failed:
            exc = MemberIOError(failed[0][0], f"flush failed: {failed[0][1]}")
            exc.disks = sorted(d for d, _ in failed)
            exc.op = "flush"
            raise exc

    @staticmethod
    def _unsynced_bytes(disks: list[Member]) -> int | None:
        """What a flush of ``disks`` would write out, if every store can sync inline
        (``flush_inline``) and tell (``unsynced_bytes``: member files after their first
        flush; a simulation's stores cannot); None otherwise."""
        total = 0
        for disk in disks:
            store = disk.store
            pending = getattr(store, "unsynced_bytes", None)
            if pending is None or not hasattr(store, "flush_inline"):
                return None
            total += pending
        return total

    @staticmethod
    def _flush_inline(disks: list[Member], failed: list[tuple[int, BaseException]]) -> None:
        """Sync ``disks`` one after another on this thread; their failures go to ``failed``.

        Cheaper than the concurrent path, which makes a worker-thread hand-off per written
        member, when the syncs are short (:mod:`vraid.engine.members.inline_sync`)."""
        for disk in disks:
            try:
                disk.store.flush_inline()
            except (OSError, ValueError) as exc:
                disk.stats.errors += 1
                failed.append((disk.index, exc))

    def stats(self) -> list[dict[str, float]]:
        return [d.stats.to_dict() | {"queue": d.queue_depth} for d in self.disks]
