"""One member disk: its queues and the worker that serves them.

Each member disk has one queue per priority class (:class:`~vraid.engine.members.request.Priority`)
served by one trio task, so a disk serves one request at a time, as a real disk's command
queue does, and a timing model below it sees requests in the order the queue picks. The
classes are served strictly in order (seed 003, section 3.1); inside a class the order is a
policy of the ``queue`` family (:mod:`vraid.policies.queue`): FIFO by default, or C-LOOK as
seed 003 serves each disk queue; each member has one instance per class.

A store that queues commands itself (``store.queue_depth`` > 1: the hdd model with tagged
command queueing, on by default for the presets that queue) is handed up to that many
requests at once, in the order the member's queues pick them; the drive then serves them in
its own order. With depth 1 the member serves one request at a time.

A request may also skip the queue when nothing could be bypassed: run inline on an idle
instant store (:attr:`Member.can_inline`), or charged on the virtual-time fast path of an
idle timing model (:attr:`Member.can_charge`).
"""

from __future__ import annotations

import math
from typing import Callable

import trio

from vraid.backends.base import Store
from vraid.engine.clock import Clock
from vraid.engine.members.request import MemberStats, Priority, Request
from vraid.errors import MemberIOError
from vraid.policies.queue import QueueOrder, queue_order as resolve_queue_order


class Member:
    """One member disk: its store, queue and statistics."""

    def __init__(
        self, index: int, store: Store, clock: Clock, queue_order: "str | Callable[[], QueueOrder] | None" = None,
        busy: list[float] | None = None,
    ) -> None:
        """``busy``: the list of every member's busy seconds this member keeps its own in, at
        ``index`` (:attr:`vraid.engine.members.queues.Members.busy`; None: a list of its own)."""
        self.index = index
        self.store = store
        self.clock = clock
        self.stats = MemberStats()
        #: the busy seconds of all members, this one's at ``index`` (as ``stats.busy_seconds``)
        self.busy = busy if busy is not None else [0.0] * (index + 1)
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
        self.busy[self.index] += dt
        return self.busy_until

    def charge_now(self, req: Request) -> float:
        """:meth:`charge` of a request that :func:`runs_now` on the model's store, with no
        await."""
        dt = self.store.charge(req.op, req.offset, req.length) * self._scale
        now = self.clock.now()
        self._execute_now(req, self.store.inner, now, busy=False)  # type: ignore[attr-defined]
        self.busy_until = now + dt
        self.stats.busy_seconds += dt
        self.busy[self.index] += dt
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

    @property
    def head(self) -> int:
        """The member offset where its last completed request ended (-1: none yet): where the
        disk's head is, as md's raid1 keeps ``head_position`` for its read balancing."""
        return self._last_end

    @property
    def pending(self) -> int:
        """Requests queued, in flight or being served (a charged one until its completion):
        how busy the member is now (md's ``nr_pending``)."""
        busy = self._active or self.busy_until > self.clock.now()
        return self._queued + self._inflight + (1 if busy else 0)

    def reset_stats(self) -> None:
        """Counts from zero (the role got a new store: a spare)."""
        self.stats = MemberStats()
        self.busy[self.index] = 0.0

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
            if self._stale(req):
                continue
            self._active = True
            try:
                if self.busy_until > self.clock.now():  # a fast-path request still has the disk
                    await self._sleep_until(self.busy_until)
                await self._execute(req)
            finally:
                self._active = False

    def _stale(self, req: Request) -> bool:
        """Fail ``req`` if it was queued before the member failed (see :meth:`retire`)."""
        if req._epoch == self.epoch:
            return False
        self.stats.errors += 1
        req.error = OSError(f"member {self.index} failed while the request waited in its queue")
        if req._batch is not None:
            req._batch.finish_one()
        return True

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
                if self._stale(req):
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
                dt = self.clock.now() - self._busy_since
                self.stats.busy_seconds += dt
                self.busy[self.index] += dt
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
            if req.op == "read":  # (what _done does, without its call)
                data = store.read_sync(req.offset, req.length)
                if req.buffer is None:
                    req.result = data
                else:
                    req.buffer[:] = data
                self.counted(True, req.offset, req.length)
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
            dt = end - start
            self.stats.busy_seconds += dt
            self.busy[self.index] += dt
        if req._batch is not None:
            req._batch.finish_one()
        return end


def runs_now(store: Store, req: Request) -> bool:
    """Whether ``req`` may run on ``store`` with no await (:meth:`Member._execute_now`): a
    read on a store whose ``read`` is ``read_sync``, a write that need not be durable on
    one whose ``write`` is ``write_now`` (``Store.sync_reads``, ``sync_writes``)."""
    return store.sync_reads if req.op == "read" else store.sync_writes and not req.durable
