"""Tagged command queueing in a modelled disk: the drive's queue and its order (SPTF or C-LOOK).

A mix-in of :class:`backends.hdd.HddModel`. The drive accepts up to ``queue_depth``
commands (:meth:`TaggedCommandQueue.begin` / :meth:`TaggedCommandQueue.end`) and
serves them one media transfer at a time in its own order: ``"sptf"``, shortest
positioning time first (seek curve, head switch and platter angle at the moment
the head becomes free), or ``"clook"``, ascending LBA from where the head stopped,
wrapping. A command's decode and bus transfer overlap the media work of the ones
before it; a transfer that does not continue the one in progress pays the firmware
setup once the head is free, and may so miss its sectors and a revolution (seed
000, section I-C, eq. (1)). Overlapping commands keep their order; a command
waiting longer than ``STARVE_REVOLUTIONS`` revolutions is served next (aging).
:mod:`backends.hdd`'s docstring tells the whole model.
"""

from __future__ import annotations

import math

import trio

from .base import check_range
from .hdd_zones import SECTOR

#: a queued command waiting longer than this many revolutions (1 s at 15,000 rpm) is served next (aging)
STARVE_REVOLUTIONS = 250


class QueuedCommand:
    """One command in the drive's queue (model seconds)."""

    __slots__ = ("write", "lba", "n", "nbytes", "arrival", "seq", "earliest", "after", "dispatched", "queued",
                 "free", "done", "event", "moved")

    def __init__(self, write: bool, lba: int, n: int, nbytes: int, arrival: float, seq: int) -> None:
        self.write, self.lba, self.n, self.nbytes, self.arrival, self.seq = write, lba, n, nbytes, arrival, seq
        self.earliest = 0.0  # a write's media transfer may not start before its data is in the buffer
        self.moved: float | None = None  # bus_serial: when its data began to cross the bus (booked)
        self.after: QueuedCommand | None = None  # an earlier queued command it overlaps (served first)
        self.dispatched = False
        self.queued = False  # waited in the queue (False: served at once from the buffer)
        self.free = arrival  # when the head is done with it (the next command may start)
        self.done = arrival  # completion
        self.event: trio.Event | None = None


class TaggedCommandQueue:
    """The drive's command queue over the one-command model (``_read``, ``_write``, ``_reach``)."""

    def begin(self, op: str, offset: int, length: int) -> QueuedCommand:
        """A command arrives now (tagged command queueing): it joins the drive's queue, or is
        served at once from the buffer (a write the write-back cache takes, a read found in a
        cache segment). Synchronous, so commands arrive in the caller's order; :meth:`end`
        waits for the one returned. The caller keeps at most ``queue_depth`` outstanding and
        moves the data itself once ``end`` returns."""
        check_range(self, offset, length)
        now = self.clock.now() / self._scale
        lba = offset // SECTOR
        n = -(-(offset + length) // SECTOR) - lba
        st = self.stats
        st.requests += 1
        write = op != "read"
        if write:
            st.writes += 1
            st.write_bytes += length
        else:
            st.reads += 1
            st.read_bytes += length
        self._seq += 1
        cmd = QueuedCommand(write, lba, n, length, now, self._seq)
        if not n:
            cmd.dispatched = True
            return cmd
        if write:
            if self._write_back and n <= self._cache_sectors:  # acknowledged from the buffer
                cmd.done = cmd.free = self._write(now, lba, n, length)
                cmd.dispatched = True
                self._busy(now, cmd.done)
                return cmd
            bus = length * self._bus_per_byte
            lag = bus - n * self.geometry.mean_sector_time
            t = now + self._overhead
            if self._bus_serial:  # the data moves when the bus is free
                t = cmd.moved = self._book_bus(t, bus)
            cmd.earliest = t + self._sec_bus + (lag if lag > 0 else 0.0)
        else:
            end = lba + n
            for s, e in self._segs:
                if s <= lba and end <= e:  # buffered: no need for the head
                    st.cache_hits += 1
                    bus = length * self._bus_per_byte
                    t = now + self._overhead
                    cmd.done = cmd.free = (self._book_bus(t, bus) if self._bus_serial else t) + bus
                    cmd.dispatched = True
                    self._busy(now, cmd.done)
                    return cmd
        q = self._queue
        for c in reversed(q):
            if c.lba < lba + n and lba < c.lba + c.n:
                cmd.after = c
                break
        cmd.queued = True
        cmd.event = trio.Event()
        q.append(cmd)
        st.queued += 1
        if len(q) > st.max_queued:
            st.max_queued = len(q)
        return cmd

    async def end(self, cmd: QueuedCommand) -> None:
        """Wait until ``cmd`` (from :meth:`begin`) completes. The task of the command whose
        media transfer has the head wakes when the head is free and picks the next one."""
        clock, scale = self.clock, self._scale
        try:
            while not cmd.dispatched:
                if self._serving is None and self._queue:  # an idle drive: start now
                    self._dispatch(clock.now() / scale)
                else:
                    assert cmd.event is not None
                    await cmd.event.wait()
            if cmd.queued:
                dt = cmd.free - clock.now() / scale
                if dt > 0:
                    await clock.sleep(dt)
                if self._serving is cmd:
                    self._release(cmd.free)
            dt = cmd.done - clock.now() / scale
            if dt > 0:
                await clock.sleep(dt)
        finally:
            if not cmd.dispatched and cmd in self._queue:  # cancelled while waiting
                self._queue.remove(cmd)
                for c in self._queue:
                    if c.after is cmd:
                        c.after = cmd.after
            if self._serving is cmd:  # cancelled in service: the drive goes on with the queue
                self._release(max(clock.now() / scale, cmd.free))

    def _release(self, t: float) -> None:
        """The head is free at ``t``: start the next queued command."""
        self._serving = None
        if self._queue:
            self._dispatch(t)

    def _dispatch(self, t: float) -> None:
        """Choose the next command at ``t`` (the head is free) and account its service."""
        cmd = self._choose(t)
        self._queue.remove(cmd)
        if self._queue and self._queue[0].seq < cmd.seq:
            self.stats.reordered += 1
        lba, n = cmd.lba, cmd.n
        if cmd.arrival >= t:  # served on arrival by an idle drive: the one-command model
            done = self._write(t, lba, n, cmd.nbytes, cmd.moved) if cmd.write else self._read(t, lba, n, cmd.nbytes)
        else:
            ov = self._overhead
            ready = t if lba == self._end_lba and cmd.arrival + ov <= t else t + ov
            if cmd.write:
                done = self._write_queued(ready, cmd.earliest, lba, n)
            else:
                done = self._read(ready - ov, lba, n, cmd.nbytes)
        self._end_lba = lba + n
        free = self._media_free if self._media_free > t else t
        cmd.free = free if free < done else done
        cmd.done = done
        cmd.dispatched = True
        self._serving = cmd
        self._busy(t, done)
        assert cmd.event is not None
        cmd.event.set()

    def _busy(self, t: float, done: float) -> None:
        """Count [t, done) in ``busy_seconds`` where no command counted before covers it."""
        b = self._busy_to
        if done > b:
            self.stats.busy_seconds += done - (t if t > b else b)
            self._busy_to = done

    def _choose(self, t: float) -> QueuedCommand:
        """The queued command to serve next when the head is free at ``t``."""
        q = self._queue
        first = q[0]  # the oldest: nothing it overlaps is still queued
        if len(q) == 1 or t - first.arrival > self._starve:
            return first
        best = first
        if self._clook:
            head = self._end_lba
            lowest = None
            best = None
            for c in q:
                a = c.after
                if a is not None and not a.dispatched:
                    continue
                if c.lba >= head and (best is None or c.lba < best.lba):
                    best = c
                if lowest is None or c.lba < lowest.lba:
                    lowest = c
            return best or lowest or first
        ov, head = self._overhead, self._end_lba
        best_t = math.inf
        for c in q:
            a = c.after
            if a is not None and not a.dispatched:
                continue
            s = self._reach(t if c.lba == head and c.arrival + ov <= t else t + ov, c.lba, c.write, c.earliest)
            if s < best_t:
                best, best_t = c, s
        return best
