"""Members and their request queues: the execution layer under the controller.

Each member disk has one queue served by one trio task, so a disk serves one
request at a time, as a real disk's command queue does, and a timing model
below it sees requests in the order the queue picks. Requests carry a
priority class (:class:`Priority`): host, prefetch, destage, rebuild, served
strictly in that order (seed 003, section 3.1: a disk serves its destage queue
only while its host queue is empty; vraid adds prefetch above destage and puts
rebuild, resync and scrub below it). Inside a class the order is a policy of
the ``queue`` family (:mod:`vraid.policies.queue`): FIFO by default, or C-LOOK
as seed 003 serves each disk queue; each member has one instance per class.

The controller submits a *batch* of requests (all reads of a plan, or all its
writes) to all members at once and waits for the whole batch: the members are
driven concurrently.

A store that queues commands itself (``store.queue_depth`` > 1: the hdd model
with tagged command queueing, on by default for the presets that queue) is handed up to
that many requests at once, in
the order the member's queues pick them; the drive then serves them in its own
order. With depth 1 the member serves one request at a time, as before.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import trio

from vraid.backends.base import Store
from vraid.engine.clock import Clock
from vraid.engine.members.inline_sync import InlineSyncRule
from vraid.errors import MemberIOError
from vraid.policies.queue import QueueOrder, queue_order as resolve_queue_order
from vraid.engine.events import Cause


class Priority(enum.IntEnum):
    """A member request's priority class; a lower value is served first, always."""

    HOST = 0
    PREFETCH = 1
    DESTAGE = 2
    #: rebuild, resync and scrub: background work that never holds up a destage
    REBUILD = 3

    @classmethod
    def of(cls, cause: Cause) -> "Priority":
        """The class the requests of ``cause`` go in."""
        return _PRIORITY_OF[cause]

    @property
    def cause(self) -> Cause:
        """The cause of a plan or request issued in this class when nobody says more."""
        return _CAUSE_OF[self]


_PRIORITY_OF = {
    Cause.HOST: Priority.HOST,
    Cause.PREFETCH: Priority.PREFETCH,
    Cause.DESTAGE: Priority.DESTAGE,
    Cause.DESTAGE_L1: Priority.DESTAGE,
    Cause.DESTAGE_L2: Priority.DESTAGE,
    Cause.REBUILD: Priority.REBUILD,
    Cause.RESYNC: Priority.REBUILD,
    Cause.SCRUB: Priority.REBUILD,
}
_CAUSE_OF = {Priority.HOST: Cause.HOST, Priority.PREFETCH: Cause.PREFETCH,
             Priority.DESTAGE: Cause.DESTAGE, Priority.REBUILD: Cause.REBUILD}

#: the names of the two classes before Priority (kept for callers not yet moved over)
HOST, DESTAGE = Priority.HOST, Priority.DESTAGE


@dataclass(slots=True)
class Request:
    """One member request. ``buffer`` receives a read (a writable view of
    ``length`` bytes) or holds the data of a write; a read without a buffer
    leaves its bytes in ``result``."""

    disk: int
    op: str  # "read" | "write"
    offset: int
    length: int
    buffer: memoryview | None = None
    priority: Priority = Priority.HOST
    error: BaseException | None = None
    result: bytes | None = None
    _batch: "_Batch | None" = None
    #: the member's epoch when the request was queued (see :meth:`Member.retire`)
    _epoch: int = 0
    #: a write that must be durable when it completes (``Store.write_durable``)
    durable: bool = False


class _Batch:
    __slots__ = ("pending", "done")

    def __init__(self, n: int) -> None:
        self.pending = n
        self.done = trio.Event()

    def finish_one(self) -> None:
        self.pending -= 1
        if self.pending == 0:
            self.done.set()


@dataclass
class MemberStats:
    reads: int = 0
    writes: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    errors: int = 0
    busy_seconds: float = 0.0
    max_queue: int = 0
    #: a request that starts where the previous one on this member ended
    contiguous: int = 0

    def to_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


class Member:
    """One member disk: its store, queue and statistics."""

    def __init__(
        self, index: int, store: Store, clock: Clock, queue_order: "str | Callable[[], QueueOrder] | None" = None
    ) -> None:
        self.index = index
        self.store = store
        self.clock = clock
        self.stats = MemberStats()
        factory = resolve_queue_order(queue_order)
        #: one queue per priority class, in Priority order
        self._queues: tuple[QueueOrder, ...] = tuple(factory() for _ in Priority)
        self._queued = 0
        self._wakeup = trio.Event()
        self._last_end = -1
        self._active = False
        #: bumped when the member fails or its role gets a new store (a spare): a request
        #: queued before that must not run on whatever the role holds now
        self.epoch = 0
        #: clock time until which a request charged on the fast path keeps the disk busy
        self.busy_until = -math.inf
        self._scale = getattr(clock, "scale", 1.0)
        #: requests handed to a queueing store and not yet complete (see serve_tagged)
        self._inflight = 0
        self._issued_end = -1
        self._busy_since = 0.0
        self._slot = trio.Event()
        #: the clock's sleep_until (a virtual clock skips the scheduler when nothing else runs)
        self._sleep_until = getattr(clock, "sleep_until", trio.sleep_until)

    @property
    def can_charge(self) -> bool:
        """True when a request may be served on the virtual-time fast path: a
        timing model over an instant store, idle, with nothing queued."""
        store = self.store
        return (
            store.timed
            and store.inner.instant  # type: ignore[attr-defined]
            and not self._active
            and not self._queued
            and self.busy_until <= self.clock.now()
        )

    async def charge(self, req: Request) -> float:
        """Serve ``req`` now without sleeping: the model charges its time, the data
        moves at once, and the disk counts as busy until the charged completion.
        Returns the completion time on the clock."""
        dt = self.store.charge(req.op, req.offset, req.length) * self._scale
        inner = self.store.inner  # type: ignore[attr-defined]
        now = self.clock.now()
        # an instant store: no time passes, so the busy time is the charged one alone
        await self._execute(req, store=inner, busy=False)
        self.busy_until = now + dt
        self.stats.busy_seconds += dt
        return self.busy_until

    def charge_now(self, req: Request) -> float:
        """:meth:`charge` of a request that :func:`runs_now` on the model's store, with no
        await."""
        dt = self.store.charge(req.op, req.offset, req.length) * self._scale
        now = self.clock.now()
        self._execute_now(req, self.store.inner, now, busy=False)  # type: ignore[attr-defined]
        self.busy_until = now + dt
        self.stats.busy_seconds += dt
        return self.busy_until

    @property
    def can_inline(self) -> bool:
        """True when a request may run right now on the caller's task: the
        store takes no time and nothing is queued or running, so no queue
        order can be bypassed."""
        return self.store.instant and not self._active and not self._queued

    @property
    def queue_depth(self) -> int:
        return self._queued

    def retire(self) -> None:
        """The member failed, or its role now has another store: requests still queued were
        planned for what it held before, and fail (their plan is retried degraded) rather
        than run on the new store (a spare not yet rebuilt holds no data of theirs)."""
        self.epoch += 1
        self._wakeup.set()

    def submit(self, req: Request) -> None:
        req._epoch = self.epoch
        self._queues[req.priority].add(req)
        self._queued += 1
        self.stats.max_queue = max(self.stats.max_queue, self._queued)
        self._wakeup.set()

    def _pick(self, head: int | None = None) -> Request | None:
        """The next request: the first non-empty class, in its queue order from the head
        (``head``: where the last request ended; default the last one served)."""
        for q in self._queues:
            if len(q):
                self._queued -= 1
                return q.pop(self._last_end if head is None else head)
        return None

    async def serve(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Serve this member's queue until cancelled."""
        task_status.started()
        depth = getattr(self.store, "queue_depth", 1)
        if depth > 1:
            await self._serve_tagged(depth)
        while True:
            req = self._pick()
            if req is None:
                self._wakeup = trio.Event()
                await self._wakeup.wait()
                continue
            if req._epoch != self.epoch:  # queued before the member failed (see retire)
                self.stats.errors += 1
                req.error = OSError(f"member {self.index} failed while the request waited in its queue")
                if req._batch is not None:
                    req._batch.finish_one()
                continue
            self._active = True
            try:
                if self.busy_until > self.clock.now():  # a fast-path request still has the disk
                    await self._sleep_until(self.busy_until)
                await self._execute(req)
            finally:
                self._active = False

    async def _serve_tagged(self, depth: int) -> None:
        """Hand up to ``depth`` requests at once to a store that queues commands
        (``begin``/``end``, the hdd model's tagged command queueing). Requests leave the
        member's queues in their order (C-LOOK counts from the end of the last request
        handed over) and arrive at the drive in that order; the drive reorders them."""
        async with trio.open_nursery() as nursery:
            while True:
                store = self.store  # a spare may have taken the role
                depth = getattr(store, "queue_depth", 1)
                if self._inflight >= depth:
                    self._slot = trio.Event()
                    await self._slot.wait()
                    continue
                req = self._pick(self._issued_end)
                if req is None:
                    self._wakeup = trio.Event()
                    await self._wakeup.wait()
                    continue
                if req._epoch != self.epoch:  # queued before the member failed (see retire)
                    self.stats.errors += 1
                    req.error = OSError(f"member {self.index} failed while the request waited in its queue")
                    if req._batch is not None:
                        req._batch.finish_one()
                    continue
                if self.busy_until > self.clock.now():  # a fast-path request still has the disk
                    await self._sleep_until(self.busy_until)
                if depth <= 1:  # a store that does not queue (a spare of another kind)
                    self._active = True
                    try:
                        await self._execute(req)
                    finally:
                        self._active = False
                    continue
                try:
                    cmd = store.begin(req.op, req.offset, req.length)  # type: ignore[attr-defined]
                except (OSError, ValueError) as exc:
                    self.stats.errors += 1
                    req.error = exc
                    if req._batch is not None:
                        req._batch.finish_one()
                    continue
                if not self._inflight:
                    self._active = True
                    self._busy_since = self.clock.now()
                self._inflight += 1
                self._issued_end = req.offset + req.length
                nursery.start_soon(self._finish_tagged, store, req, cmd)

    async def _finish_tagged(self, store: Store, req: Request, cmd) -> None:
        try:
            await store.end(cmd)  # type: ignore[attr-defined]
            await self._execute(req, store=store.inner, busy=False)  # type: ignore[attr-defined]
        finally:
            self._inflight -= 1
            if not self._inflight:
                self._active = False
                self.stats.busy_seconds += self.clock.now() - self._busy_since
            self._slot.set()

    async def _execute(self, req: Request, store: Store | None = None, busy: bool = True, start: float | None = None) -> float:
        """Run ``req`` on ``store`` (default the member's); ``start``: the clock's reading
        just before, if the caller has it. Returns the clock's reading when it ended."""
        if start is None:
            start = self.clock.now()
        if store is None:
            store = self.store
        if runs_now(store, req):
            return self._execute_now(req, store, start, busy)
        try:
            if req.op == "read":
                self._done(req, await store.read(req.offset, req.length))
            else:
                assert req.buffer is not None
                if req.durable:
                    await store.write_durable(req.offset, req.buffer)
                else:
                    await store.write(req.offset, req.buffer)
                self._done(req, None)
        except (OSError, ValueError, MemberIOError) as exc:
            self.stats.errors += 1
            req.error = exc
        finally:
            end = self._ended(req, start, busy)
        return end

    def _execute_now(self, req: Request, store: Store, start: float, busy: bool = True) -> float:
        """:meth:`_execute` of a request that :func:`runs_now` on ``store``, with no await:
        the same counts, busy time and batch accounting, without a coroutine per request."""
        try:
            if req.op == "read":
                self._done(req, store.read_sync(req.offset, req.length))
            else:
                store.write_now(req.offset, req.buffer)  # type: ignore[arg-type]
                self._done(req, None)
        except (OSError, ValueError, MemberIOError) as exc:
            self.stats.errors += 1
            req.error = exc
        finally:
            end = self._ended(req, start, busy)
        return end

    def _done(self, req: Request, data: bytes | None) -> None:
        """``req`` succeeded (``data``: what a read returned): its result and counts."""
        if req.op == "read":
            if req.buffer is None:
                req.result = data
            else:
                req.buffer[:] = data  # type: ignore[index]
        self.counted(req.op == "read", req.offset, req.length)

    def counted(self, read: bool, offset: int, length: int) -> None:
        """Count a request that succeeded (a read, or a write), and where it ended (for the
        next one's contiguity); also for a read the array makes itself (``Array._read_now``)."""
        st = self.stats
        if read:
            st.reads += 1
            st.read_bytes += length
        else:
            st.writes += 1
            st.write_bytes += length
        if offset == self._last_end:
            st.contiguous += 1
        self._last_end = offset + length

    def _ended(self, req: Request, start: float, busy: bool) -> float:
        """``req`` ended, well or not: the busy time (``busy``) and its batch. Returns the
        clock's reading then (``start`` when the busy time is not counted)."""
        end = start
        if busy:
            end = self.clock.now()
            self.stats.busy_seconds += end - start
        if req._batch is not None:
            req._batch.finish_one()
        return end


def runs_now(store: Store, req: Request) -> bool:
    """Whether ``req`` may run on ``store`` with no await (:meth:`Member._execute_now`): a
    read on a store whose ``read`` is ``read_sync``, a write that need not be durable on
    one whose ``write`` is ``write_now`` (``Store.sync_reads``, ``sync_writes``)."""
    return store.sync_reads if req.op == "read" else store.sync_writes and not req.durable


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
        self.disks = [Member(i, s, clock, self.queue_order) for i, s in enumerate(stores)]
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
            disk = disks[req.disk]
            if disk.can_inline:
                store = disk.store
                if runs_now(store, req):
                    disk._execute_now(req, store, self.clock.now())
                else:
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
        batch = _Batch(len(requests))
        for req in requests:
            req._batch = batch
            self.disks[req.disk].submit(req)
        await batch.done.wait()
        self._raise_first_error(requests)

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


def busy_fraction(stats: MemberStats, elapsed: float) -> float:
    return stats.busy_seconds / elapsed if elapsed > 0 and math.isfinite(elapsed) else 0.0
