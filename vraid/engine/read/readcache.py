"""The read cache: clean blocks by logical block number, bounded, LRU, never stale.

:class:`ReadCache` holds what host-read misses and prefetches brought in (seed 001's RAID
cache, beside the write-back cache). Its epochs and stamps are how a fill by a fetch that a
host write overtook is refused; :mod:`vraid.engine.read.readpath` says when it invalidates and
which blocks a fetch may fill at all.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import trio

from vraid.engine.read.status import ReadCacheStatus
from vraid.engine.status import frozen_map
from vraid.errors import VraidError


@dataclass
class ReadCacheMetrics:
    lookups: int = 0  # blocks looked up by host reads
    hits: int = 0
    prefetch_hits: int = 0  # hits on blocks a prefetch brought in, first use only
    fills: int = 0  # blocks put in by host-read misses
    prefetched: int = 0  # blocks put in by prefetches
    prefetches: int = 0  # prefetch reads issued
    prefetch_skipped: int = 0  # advice ranges with blocks to read, dropped: too many prefetches in flight
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
    #: set when a prefetch ends: a host read that needs one of its blocks waits for it
    ended: trio.Event | None = None


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
        self._prefetch_of: dict[int, Fetch] = {}  # block -> the prefetch reading it now
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

    def peek(self, block: int) -> bool | None:
        """Whether a host read of ``block`` now would hit, without counting it or touching
        the LRU order: None if it is neither held nor being prefetched (a miss), True if a
        prefetch brought it in (not read by the host since) or is reading it now, False if it
        is held otherwise."""
        if block in self._blocks:
            return block in self._prefetched
        f = self._prefetch_of.get(block)
        return True if f is not None and f.ended is not None else None

    def begin(self, blocks: Sequence[int], *, prefetch: bool = False) -> Fetch:
        """A fetch of ``blocks`` starts now: only fills for them made through it count."""
        for b in blocks:
            self._fetching[b] = self._fetching.get(b, 0) + 1
        fetch = Fetch(self._epoch, list(blocks), prefetch)
        if prefetch:
            fetch.ended = trio.Event()
            for b in blocks:
                self._prefetch_of[b] = fetch
        return fetch

    def prefetches_of(self, blocks: Iterable[int]) -> list[trio.Event]:
        """The end events of the prefetches reading any of ``blocks`` that are not held."""
        if not self._prefetch_of:
            return []
        out: dict[int, trio.Event] = {}
        for b in blocks:
            f = self._prefetch_of.get(b)
            if f is not None and f.ended is not None and b not in self._blocks:
                out[id(f)] = f.ended
        return list(out.values())

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
        if fetch.ended is not None:
            for b in fetch.blocks:
                if self._prefetch_of.get(b) is fetch:
                    del self._prefetch_of[b]
            fetch.ended.set()
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

    def status(self) -> ReadCacheStatus:
        m = self.metrics
        return ReadCacheStatus(size=self.size, blocks=len(self._blocks), capacity_blocks=self.capacity,
                               fetching=len(self._fetching), counters=frozen_map(m.to_dict()),
                               prefetch_unread=len(self._prefetched),  # held, not read by the host yet
                               prefetch_wasted=m.prefetch_evicted_unread + m.prefetch_invalidated_unread)
