"""The read path: host reads between the array and the members, and read-ahead.

A host read is served, block by block, from the first of

1. the write-back cache (:mod:`vraid.engine.cache`), if there is one: its
   dirty and clean units;
2. the clean-block read cache (:class:`ReadCache`), if it is on
   (``Array(read_cache_bytes=...)``; 0, the default, is off);
3. the members, through the destage target (:mod:`vraid.engine.layer`).

What the members return fills the read cache. As each host read *arrives*,
before any of its member reads is issued, the prefetch policy
(:mod:`vraid.policies.prefetch`, seed 001) says what else to read: seed 001's
RAID driver runs MSP on each request as it comes in, so the policy sees host
reads in arrival order (two reads in flight that complete in swapped order
would otherwise show MSP a strip sequence s + 1, s and keep its SC low). The
:class:`HostRead` it gets is what is known on arrival: its misses and
prefetch hits come from a peek at the write cache and the read cache that
counts no lookup and leaves the LRU order alone (:meth:`ReadPath._peek`). The
advised blocks are read into the read cache by background tasks, never the
host read's own blocks (it reads those itself, at HOST priority, so it never
waits on its own blocks at PREFETCH priority); the host read does not wait
for the prefetches. With no read cache and ``NoPrefetch`` the path is
exactly the one vraid had before it existed.

Never stale. A block the host overwrites must never come back from the read
cache with older bytes, also when a fetch of it is in flight. Every host
write invalidates its blocks when it starts and again when it is absorbed or
written through (``Array.write`` calls :meth:`ReadPath.invalidate` twice),
and a fill is accepted only if

* the block was not dirty in the write-back cache when its fetch began
  (while dirty, also DDIRTY during a destage, the members hold older bytes),
  and
* no invalidation of the block happened since its fetch began
  (:meth:`ReadCache.begin` records the epoch; :meth:`ReadCache.invalidate`
  stamps the blocks being fetched).

A block clean-or-absent in the write cache at the start of a fetch, and not
written since, is on the members as the host last wrote it, so what the
fetch returns is current. ``tests/test_readpath.py`` races prefetches against
writes to check this.

Prefetch member requests run in the PREFETCH priority class
(:class:`vraid.engine.members.request.Priority`): after host requests, before destages.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import trio

from vraid.errors import POLICY_ERRORS, MemberIOError, VraidError
from vraid.policies.prefetch import HostRead, NoPrefetch, PrefetchPolicy
from vraid.engine.events import PrefetchEvent
from vraid.engine.members.request import Priority
from vraid.engine.metrics import Metrics, ReadPathMetrics
from vraid.engine.read.readcache import Fetch, ReadCache, ReadCacheMetrics
from vraid.engine.read.status import ReadPathStatus
from vraid.engine.status import frozen_map, read_only

__all__ = ["Fetch", "ReadCache", "ReadCacheMetrics", "ReadPath"]

if TYPE_CHECKING:
    from vraid.engine.cache import WriteBackCache
    from vraid.engine.layer import Layer as Target

log = logging.getLogger(__name__)
_D = 2  # the write-back cache's state of a dirty block


class ReadPath:
    """Serves host reads (see the module docstring); :meth:`run` runs the prefetches."""

    #: prefetch reads in flight at most; further advice is dropped (and counted)
    max_prefetches = 8

    def __init__(
        self,
        target: "Target",
        *,
        cache: "WriteBackCache | None" = None,
        read_cache: ReadCache | None = None,
        prefetch: PrefetchPolicy | None = None,
        members: Any = None,
        host: Metrics | None = None,
    ) -> None:
        """``members``: the array's :class:`vraid.engine.members.queues.Members`, whose busy
        seconds give the parallelism loss (None: not counted). ``host``: the array's
        :class:`~vraid.engine.metrics.Metrics`, where each host read is counted with its
        response time once it is answered (the read path is the first layer a read enters,
        so it times it: one clock reading at each end serves both this and the wait)."""
        self.target = target
        self.host = host if host is not None else Metrics()
        self._now = target.clock.now
        self.cache = cache
        self.read_cache = read_cache
        self.prefetch = prefetch if prefetch is not None else NoPrefetch(target.geometry)
        if read_cache is None and not isinstance(self.prefetch, NoPrefetch):
            raise VraidError(f"prefetch policy {self.prefetch.name!r} needs a read cache to prefetch into",
                             "give the array a read cache (read_cache_bytes), or use prefetch none")
        self.geometry = target.geometry
        self._nursery: trio.Nursery | None = None
        self._prefetching = 0
        self.last_error: MemberIOError | None = None
        #: member requests, split reads and parallelism loss (seed 001's metrics)
        self.stats = ReadPathMetrics(self.geometry.strip_size, target.clock.now, self._busy)
        self._state: Any = None  # the prefetch policy's state last published
        #: every member's busy seconds, kept by the members in one list (Members.busy)
        self._busy_seconds: list[float] = members.busy if members is not None else []

    @property
    def prefetching(self) -> bool:
        """Whether reads are followed by read-ahead (a background task is needed)."""
        return self.read_cache is not None and not isinstance(self.prefetch, NoPrefetch)

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Hold the nursery the prefetches run in, until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            try:
                await trio.sleep_forever()
            finally:
                self._nursery = None

    # -- host reads -------------------------------------------------------------------
    async def read(self, offset: int, length: int) -> bytes:
        """``length`` bytes at ``offset`` (inside the array), newest data; counted in
        :attr:`host` with its response time once answered (not when it fails)."""
        now = self._now
        start = now()
        rc = self.read_cache
        self.stats.host_reads += 1
        if rc is None:
            if self.cache is not None:
                data = await self.cache.read(offset, length, fetch=self._through)
                self.host.host_read(length, now() - start)
                return data
            stats = self.stats  # (what _members does, for the one range of a host read)
            stats.count_range(offset, length)
            data = self.target.read_now(offset, length)  # on this thread when the target can
            if data is not None:
                end = now()
                stats.waited_alone(end - start)  # (nothing else ran meanwhile)
            else:
                stats.wait_begin(start)
                try:
                    data = await self.target.read(offset, length)
                finally:
                    end = now()
                    stats.wait_end(end)
            self.host.host_read(length, end - start)
            return data
        bs = self.geometry.block_size
        first = offset // bs * bs
        end = -(-(offset + length) // bs) * bs
        if self.prefetching:  # on arrival, before any member read of this one (seed 001's RAID driver)
            b0, n = first // bs, (end - first) // bs
            misses, prefetch_hits = self._peek(b0, n)
            self._advise(HostRead(b0, n, misses, prefetch_hits, start), own=(b0, b0 + n))
        if self.cache is not None:
            data = await self.cache.read(offset, length, fetch=self._fetch)
        else:
            whole = await self._fetch(first, end - first, None)
            data = whole[offset - first : offset - first + length]
        self.host.host_read(length, now() - start)
        return data

    async def _fetch(self, first: int, length: int, need: np.ndarray | None) -> bytes:
        """Blocks of the aligned range first..first+length from the read cache, the rest from
        the target (filling the read cache); blocks ``need`` marks False are left zero."""
        rc = self.read_cache
        assert rc is not None
        bs = self.geometry.block_size
        b0, n = first // bs, length // bs
        # a block a prefetch is reading now is waited for, not read a second time (Fig. 7 line 32)
        pending = rc.prefetches_of(b0 + i for i in range(n) if need is None or need[i])
        if pending:
            self.stats.prefetch_waits += 1
            with self.stats.waiting():
                for ended in pending:
                    await ended.wait()
        out = bytearray(length)
        missing: list[int] = []
        for i in range(n):
            if need is not None and not need[i]:
                continue
            data = rc.get(b0 + i)
            if data is None:
                missing.append(i)
            else:
                out[i * bs : (i + 1) * bs] = data
        if not missing:
            return bytes(out)
        dirty = self._dirty(first, length)
        fetch = rc.begin([b0 + i for i in missing if not dirty[i]])
        try:
            runs = _runs(missing)
            self.stats.count_host([(first + i * bs, k * bs) for i, k in runs])
            with self.stats.waiting():
                if len(runs) == 1:
                    await self._read_run(out, first, *runs[0])
                else:
                    async with trio.open_nursery() as nursery:
                        for i, k in runs:
                            nursery.start_soon(self._read_run, out, first, i, k)
            for b in fetch.blocks:
                i = b - b0
                rc.fill(fetch, b, out[i * bs : (i + 1) * bs])
        finally:
            rc.end(fetch)
        return bytes(out)

    async def _read_run(self, out: bytearray, first: int, i: int, k: int, priority: Priority = Priority.HOST) -> None:
        bs = self.geometry.block_size
        out[i * bs : (i + k) * bs] = await self.target.read(first + i * bs, k * bs, priority=priority)

    async def _through(self, first: int, length: int, need: np.ndarray | None) -> bytes:
        """The write cache's misses without a read cache: the whole range from the target,
        as the cache's own default fetch does, counted."""
        return await self._members(first, length, [(first, length)])

    async def _members(self, offset: int, length: int, ranges: list[tuple[int, int]]) -> bytes:
        stats = self.stats
        stats.count_host(ranges)
        stats.wait_begin()  # what stats.waiting() does, without a generator per read
        try:
            return await self.target.read(offset, length)
        finally:
            stats.wait_end()

    def _busy(self) -> list[float]:
        """Every member's busy seconds so far (for the parallelism loss): the members' own
        list, live (ReadPathMetrics copies it where it keeps it)."""
        return self._busy_seconds

    def _dirty(self, first: int, length: int) -> np.ndarray:
        if self.cache is None:
            return np.zeros(length // self.geometry.block_size, dtype=bool)
        return self.cache.block_states(first, first + length) == _D

    def _peek(self, b0: int, n: int) -> tuple[int, int]:
        """(misses, prefetch hits) of the host read of blocks b0..b0+n-1 as known on its
        arrival, without counting a lookup or touching the LRU order: a miss is a block
        neither the write cache nor the read cache holds nor a prefetch is reading; a
        prefetch hit, one the write cache does not hold that a prefetch brought in (not read
        since) or is reading now (the read will wait for it)."""
        rc = self.read_cache
        assert rc is not None
        bs = self.geometry.block_size
        held = (self.cache.block_states(b0 * bs, (b0 + n) * bs) != 0) if self.cache is not None else None
        misses = prefetch_hits = 0
        for i in range(n):
            if held is not None and held[i]:
                continue
            kind = rc.peek(b0 + i)
            if kind is None:
                misses += 1
            elif kind:
                prefetch_hits += 1
        return misses, prefetch_hits

    # -- host writes ------------------------------------------------------------------
    def invalidate(self, offset: int, length: int) -> None:
        """The host writes these bytes (called before and after the write)."""
        rc = self.read_cache
        if rc is None or length <= 0:
            return
        bs = self.geometry.block_size
        first = offset // bs
        rc.invalidate(first, -(-(offset + length) // bs) - first)

    # -- read-ahead -------------------------------------------------------------------
    def _advise(self, read: HostRead, own: tuple[int, int] = (0, 0)) -> None:
        """Ask the policy, and start reading what it names: not what is held already, nor the
        blocks ``own`` (first, end) of the host read being served, which it reads itself at
        HOST priority (so it never waits on its own blocks at PREFETCH priority)."""
        rc = self.read_cache
        assert rc is not None
        g = self.geometry
        total = g.capacity // g.block_size
        advice = self.prefetch.after_read(read)
        self._publish(advice)
        for start, count in advice:
            start, stop = max(0, start), min(total, start + count)
            if start >= stop:
                continue
            bs = g.block_size
            held = (self.cache.block_states(start * bs, stop * bs) != 0) if self.cache is not None else None
            # Fig. 7 line 32: not what is held, nor what a fetch is reading already
            want = [b for b in range(start, stop)
                    if not own[0] <= b < own[1] and b not in rc and not rc.fetching(b)
                    and (held is None or not held[b - start])]
            if not want:
                continue
            if self._nursery is None or self._prefetching >= self.max_prefetches:
                rc.metrics.prefetch_skipped += 1  # only advice that would have read something
                continue
            fetch = rc.begin(want, prefetch=True)  # now: not dirty in the write cache at this instant
            self._prefetching += 1
            rc.metrics.prefetches += 1
            self._nursery.start_soon(self._prefetch, fetch)

    async def _prefetch(self, fetch: Fetch) -> None:
        rc = self.read_cache
        assert rc is not None
        bs = self.geometry.block_size
        try:
            for i, k in _runs(fetch.blocks):
                self.stats.prefetch_member_requests += self.stats.strips(i * bs, k * bs)
                data = await self.target.read(i * bs, k * bs, priority=Priority.PREFETCH)
                for j in range(k):
                    rc.fill(fetch, i + j, data[j * bs : (j + 1) * bs])
        except MemberIOError as exc:  # a prefetch is a hint: the host read that needs the block will retry
            self.last_error = exc
            log.warning("prefetch of blocks %d.. failed: %s", fetch.blocks[0], exc)
        finally:
            rc.end(fetch)
            self._prefetching -= 1

    def _publish(self, advice: Sequence[tuple[int, int]]) -> None:
        """A ``prefetch`` event when the policy's state (if it has one) changed."""
        state = self._policy_state()
        if state is None or state == self._state:
            return
        self._state = state
        events = getattr(self.target, "events", None)
        if events is not None:
            events.publish(PrefetchEvent(time=self.target.clock.now(), policy=str(self.prefetch.describe()),
                                         state=state, ranges=tuple(tuple(r) for r in advice)))

    def _policy_state(self) -> dict[str, Any] | None:
        fn = getattr(self.prefetch, "state", None)
        if not callable(fn):
            return None
        try:
            state = fn()
        except POLICY_ERRORS:  # a student's state() is for display only: never fails a read
            return None
        return dict(state) if isinstance(state, dict) else None

    def status(self) -> ReadPathStatus:
        members = len(self._busy()) or self.geometry.ndisks
        state = self._policy_state()
        return ReadPathStatus(
            prefetch=read_only(self.prefetch.describe()), prefetching=self._prefetching,
            policy_state=frozen_map(state) if state is not None else None,
            counters=frozen_map(self.stats.to_dict(members)),
            read_cache=self.read_cache.status() if self.read_cache is not None else None)


def _runs(items: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted integers as (first, count) runs of consecutive values."""
    runs: list[tuple[int, int]] = []
    for x in items:
        if runs and runs[-1][0] + runs[-1][1] == x:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((x, 1))
    return runs
