"""The read path: host reads between the array and the members, and read-ahead.

A host read is served, block by block, from the first of

1. the write-back cache (:mod:`vraid.engine.cache`), if there is one: its
   dirty and clean units;
2. the clean-block read cache (:class:`ReadCache`), if it is on
   (``Array(read_cache_bytes=...)``; 0, the default, is off);
3. the members, through the destage target (:mod:`vraid.engine.target`).

What the members return fills the read cache. After each host read the
prefetch policy (:mod:`vraid.policies.prefetch`, seed 001) says what else to
read; those blocks are read into the read cache by background tasks, and the
host read returns without waiting for them. With no read cache and
``NoPrefetch`` the path is exactly the one vraid had before it existed.

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
(:class:`vraid.engine.members.Priority`): after host requests, before destages.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import trio

from vraid.errors import MemberIOError, VraidError
from vraid.policies.prefetch import HostRead, NoPrefetch, PrefetchPolicy
from .events import PrefetchEvent
from .members import Priority
from .metrics import ReadPathMetrics

if TYPE_CHECKING:
    from .cache import WriteBackCache
    from .target import Target

log = logging.getLogger(__name__)
_D = 2  # the write-back cache's state of a dirty block


@dataclass
class ReadCacheMetrics:
    lookups: int = 0  # blocks looked up by host reads
    hits: int = 0
    prefetch_hits: int = 0  # hits on blocks a prefetch brought in, first use only
    fills: int = 0  # blocks put in by host-read misses
    prefetched: int = 0  # blocks put in by prefetches
    prefetches: int = 0  # prefetch reads issued
    prefetch_skipped: int = 0  # prefetch advice dropped: too many prefetches in flight
    stale_drops: int = 0  # fills refused: the block was written while being fetched
    evictions: int = 0
    invalidations: int = 0  # blocks dropped because the host wrote them
    #: prefetched blocks dropped before the host read them: evicted (LRU) or overwritten
    prefetch_evicted_unread: int = 0
    prefetch_invalidated_unread: int = 0

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["hit_ratio"] = self.hits / self.lookups if self.lookups else 0.0
        # of the blocks host reads looked up, the share a prefetch had brought in
        out["prefetch_hit_ratio"] = self.prefetch_hits / self.lookups if self.lookups else 0.0
        # of the blocks prefetched, the share the host read (prefetch accuracy)
        out["prefetch_used_ratio"] = self.prefetch_hits / self.prefetched if self.prefetched else 0.0
        return out


@dataclass
class Fetch:
    """One fetch in flight: the blocks it may fill and the epoch it began in."""

    start: int
    blocks: list[int]
    prefetch: bool = False
    done: bool = field(default=False)


class ReadCache:
    """Clean blocks by logical block number, least recently used evicted first;
    at most ``size`` bytes of block data."""

    def __init__(self, size: int, block_size: int) -> None:
        if size < block_size:
            raise VraidError(f"a read cache of {size} bytes cannot hold one {block_size}-byte block",
                             "give at least one block, or 0 to turn the read cache off")
        self.size = size
        self.block_size = block_size
        self.capacity = size // block_size  # blocks
        self._blocks: OrderedDict[int, bytes] = OrderedDict()
        self._prefetched: set[int] = set()  # brought in by a prefetch, not read by the host yet
        self._epoch = 0
        self._fetching: dict[int, int] = {}  # block -> fetches in flight
        self._stamp: dict[int, int] = {}  # block -> epoch of its last invalidation during a fetch
        self.metrics = ReadCacheMetrics()

    def __len__(self) -> int:
        return len(self._blocks)

    def __contains__(self, block: int) -> bool:
        return block in self._blocks

    @property
    def used(self) -> int:
        """Bytes of block data held."""
        return len(self._blocks) * self.block_size

    def get(self, block: int) -> bytes | None:
        """The block's bytes (a host read: counted, moved to the most recently used end)."""
        m = self.metrics
        m.lookups += 1
        data = self._blocks.get(block)
        if data is None:
            return None
        m.hits += 1
        if block in self._prefetched:
            self._prefetched.discard(block)
            m.prefetch_hits += 1
        self._blocks.move_to_end(block)
        return data

    def begin(self, blocks: Sequence[int], *, prefetch: bool = False) -> Fetch:
        """A fetch of ``blocks`` starts now: only fills for them made through it count."""
        for b in blocks:
            self._fetching[b] = self._fetching.get(b, 0) + 1
        return Fetch(self._epoch, list(blocks), prefetch)

    def fill(self, fetch: Fetch, block: int, data: bytes) -> bool:
        """Put the fetched ``block`` in, unless it was invalidated since ``fetch`` began."""
        if self._stamp.get(block, -1) > fetch.start:
            self.metrics.stale_drops += 1
            return False
        if block in self._blocks:  # a newer fetch of the same bytes got there first
            self._blocks.move_to_end(block)
            return True
        self._blocks[block] = bytes(data)
        if fetch.prefetch:
            self._prefetched.add(block)
            self.metrics.prefetched += 1
        else:
            self.metrics.fills += 1
        while len(self._blocks) > self.capacity:
            old, _ = self._blocks.popitem(last=False)
            if old in self._prefetched:
                self._prefetched.discard(old)
                self.metrics.prefetch_evicted_unread += 1
            self.metrics.evictions += 1
        return True

    def end(self, fetch: Fetch) -> None:
        """The fetch is over (filled, failed or cancelled)."""
        if fetch.done:
            return
        fetch.done = True
        for b in fetch.blocks:
            n = self._fetching[b] - 1
            if n:
                self._fetching[b] = n
            else:
                del self._fetching[b]
                self._stamp.pop(b, None)

    def invalidate(self, first: int, count: int) -> None:
        """The host writes blocks first..first+count-1: drop them, and refuse fills of
        them by fetches that began before now."""
        self._epoch += 1
        blocks, fetching = self._blocks, self._fetching
        if count > len(blocks) + len(fetching):
            hit = [b for b in (*blocks, *fetching) if first <= b < first + count]
        else:
            hit = [b for b in range(first, first + count) if b in blocks or b in fetching]
        for b in hit:
            if blocks.pop(b, None) is not None:
                if b in self._prefetched:
                    self._prefetched.discard(b)
                    self.metrics.prefetch_invalidated_unread += 1
                self.metrics.invalidations += 1
            if b in fetching:
                self._stamp[b] = self._epoch

    def fetching(self, block: int) -> bool:
        """Whether a fetch (a host-read miss or a prefetch) is reading ``block`` now."""
        return block in self._fetching

    def status(self) -> dict[str, Any]:
        m = self.metrics
        return ({"size": self.size, "blocks": len(self._blocks), "capacity_blocks": self.capacity,
                 "fetching": len(self._fetching)} | m.to_dict()
                | {"prefetch_unread": len(self._prefetched),  # held, not read by the host yet
                   "prefetch_wasted": m.prefetch_evicted_unread + m.prefetch_invalidated_unread})


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
    ) -> None:
        self.target = target
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
        self.stats = ReadPathMetrics()
        self._waiting = 0  # host reads waiting for the members now
        self._wait_t0 = 0.0
        self._busy0: list[float] = []
        self._state: Any = None  # the prefetch policy's state last published

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
        """``length`` bytes at ``offset`` (inside the array), newest data."""
        rc = self.read_cache
        self.stats.host_reads += 1
        if rc is None:
            if self.cache is not None:
                return await self.cache.read(offset, length, fetch=self._through)
            return await self._members(offset, length, [(offset, length)])
        bs = self.geometry.block_size
        first = offset // bs * bs
        end = -(-(offset + length) // bs) * bs
        before = (rc.metrics.lookups - rc.metrics.hits, rc.metrics.prefetch_hits)
        if self.cache is not None:
            data = await self.cache.read(offset, length, fetch=self._fetch)
        else:
            whole = await self._fetch(first, end - first, None)
            data = whole[offset - first : offset - first + length]
        if self.prefetching:
            m = rc.metrics
            self._advise(HostRead(first // bs, (end - first) // bs, m.lookups - m.hits - before[0],
                                  m.prefetch_hits - before[1], self.target.clock.now()))
        return data

    async def _fetch(self, first: int, length: int, need: np.ndarray | None) -> bytes:
        """Blocks of the aligned range first..first+length from the read cache, the rest from
        the target (filling the read cache); blocks ``need`` marks False are left zero."""
        rc = self.read_cache
        assert rc is not None
        bs = self.geometry.block_size
        b0, n = first // bs, length // bs
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
            self._count_host([(first + i * bs, k * bs) for i, k in runs])
            self._wait_begin()
            try:
                if len(runs) == 1:
                    await self._read_run(out, first, *runs[0])
                else:
                    async with trio.open_nursery() as nursery:
                        for i, k in runs:
                            nursery.start_soon(self._read_run, out, first, i, k)
            finally:
                self._wait_end()
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
        self._count_host(ranges)
        self._wait_begin()
        try:
            return await self.target.read(offset, length)
        finally:
            self._wait_end()

    # -- seed 001's metrics -------------------------------------------------------------
    def _strips(self, offset: int, length: int) -> int:
        """Member requests a read of these bytes makes: one per strip touched."""
        strip = self.geometry.strip_size
        return (offset + length - 1) // strip - offset // strip + 1 if length > 0 else 0

    def _count_host(self, ranges: list[tuple[int, int]]) -> None:
        n = sum(self._strips(o, k) for o, k in ranges)
        st = self.stats
        st.host_reads_to_members += 1
        st.member_requests += n
        if n > 1:
            st.split_reads += 1

    def _busy(self) -> list[float]:
        members = getattr(getattr(self.target, "raid", None), "members", None)
        return [d.stats.busy_seconds for d in members.disks] if members is not None else []

    def _wait_begin(self) -> None:
        if not self._waiting:
            self._wait_t0 = self.target.clock.now()
            self._busy0 = self._busy()
        self._waiting += 1

    def _wait_end(self) -> None:
        self._waiting -= 1
        if self._waiting:
            return
        span = self.target.clock.now() - self._wait_t0
        if span <= 0:
            return
        st = self.stats
        st.wait_seconds += span
        busy = self._busy()
        if len(busy) == len(self._busy0):
            st.idle_member_seconds += sum(span - min(span, max(0.0, b1 - b0)) for b0, b1 in zip(self._busy0, busy))

    def _dirty(self, first: int, length: int) -> np.ndarray:
        if self.cache is None:
            return np.zeros(length // self.geometry.block_size, dtype=bool)
        return self.cache.block_states(first, first + length) == _D

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
    def _advise(self, read: HostRead) -> None:
        """Ask the policy, and start reading what it names (not what is held already)."""
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
            if self._nursery is None or self._prefetching >= self.max_prefetches:
                rc.metrics.prefetch_skipped += 1
                continue
            bs = g.block_size
            held = (self.cache.block_states(start * bs, stop * bs) != 0) if self.cache is not None else None
            # Fig. 7 line 32: not what is held, nor what a fetch is reading already
            want = [b for b in range(start, stop)
                    if b not in rc and not rc.fetching(b) and (held is None or not held[b - start])]
            if not want:
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
                self.stats.prefetch_member_requests += self._strips(i * bs, k * bs)
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
        except Exception:  # a student's state() is for display only: never fails a read
            return None
        return dict(state) if isinstance(state, dict) else None

    def status(self) -> dict[str, Any]:
        members = len(self._busy()) or self.geometry.ndisks
        out: dict[str, Any] = {"prefetch": self.prefetch.describe(), "prefetching": self._prefetching}
        state = self._policy_state()
        if state is not None:
            out["policy_state"] = state
        out |= self.stats.to_dict(members)
        if self.read_cache is not None:
            out |= self.read_cache.status()
        return out


def _runs(items: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted integers as (first, count) runs of consecutive values."""
    runs: list[tuple[int, int]] = []
    for x in items:
        if runs and runs[-1][0] + runs[-1][1] == x:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((x, 1))
    return runs
