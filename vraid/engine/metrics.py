"""Counters the controller keeps: host traffic, write cycles, response times."""

from __future__ import annotations

from array import array
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator


class ResponseTimes:
    """Host response times in seconds: exact for the first ``limit`` samples,
    then a ring of the most recent ``limit`` (a long mount stays bounded)."""

    def __init__(self, limit: int = 1 << 20) -> None:
        self._samples = array("d")
        self._limit = limit
        self._next = 0
        self.count = 0
        self.total = 0.0
        self.max = 0.0

    def add(self, seconds: float) -> None:
        self.count += 1
        self.total += seconds
        if seconds > self.max:
            self.max = seconds
        if len(self._samples) < self._limit:
            self._samples.append(seconds)
        else:
            self._samples[self._next] = seconds
            self._next = (self._next + 1) % self._limit

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def percentile(self, p: float) -> float:
        """The ``p``-th percentile (0..100) of the kept samples (nearest rank)."""
        if not self._samples:
            return 0.0
        ordered = sorted(self._samples)
        rank = max(0, min(len(ordered) - 1, int(round(p / 100 * len(ordered) + 0.5)) - 1))
        return ordered[rank]

    def percentiles(self, ps: "tuple[float, ...]", recent: int | None = None) -> list[float]:
        """Several percentiles at once (one sort; nearest rank, as :meth:`percentile`), of
        the kept samples or of only the ``recent`` newest ones (cheap enough for a live view)."""
        if not self._samples:
            return [0.0 for _ in ps]
        import numpy as np

        kept = np.frombuffer(self._samples, dtype=np.float64)
        if recent is not None and recent < len(kept):
            if len(kept) < self._limit:  # not a ring yet: the newest are at the end
                kept = kept[-recent:]
            else:  # a ring: the newest end just before _next
                end = self._next
                older = max(0, recent - end)
                kept = np.concatenate((kept[max(0, end - recent) : end], kept[len(kept) - older :] if older else kept[:0]))
        ordered = np.sort(kept)
        n = len(ordered)
        return [float(ordered[max(0, min(n - 1, int(round(p / 100 * n + 0.5)) - 1))]) for p in ps]


@dataclass
class Metrics:
    host_reads: int = 0
    host_writes: int = 0
    host_read_bytes: int = 0
    host_write_bytes: int = 0
    host_flushes: int = 0
    #: PBGs written per cycle of seed 000 section II-A
    pbg_rcw: int = 0
    pbg_rmw: int = 0
    pbg_full: int = 0
    plans: int = 0
    partial_block_writes: int = 0
    response: ResponseTimes = field(default_factory=ResponseTimes)

    def host_read(self, nbytes: int, seconds: float) -> None:
        """A host read of ``nbytes`` answered after ``seconds``."""
        self.host_reads += 1
        self.host_read_bytes += nbytes
        self.response.add(seconds)

    def count_cycles(self, cycles: list[str]) -> None:
        for c in cycles:
            if c == "rcw":
                self.pbg_rcw += 1
            elif c == "rmw":
                self.pbg_rmw += 1
            elif c == "full":
                self.pbg_full += 1

    def count_cycle_totals(self, totals: tuple[int, int, int]) -> None:
        """Add (rcw, rmw, full) PBG counts at once (what :meth:`count_cycles` counts)."""
        rcw, rmw, full = totals
        self.pbg_rcw += rcw
        self.pbg_rmw += rmw
        self.pbg_full += full

    def to_dict(self) -> dict[str, float]:
        out = {k: v for k, v in self.__dict__.items() if k != "response"}
        out["mean_response_ms"] = self.response.mean * 1000
        out["p99_response_ms"] = self.response.percentile(99) * 1000
        return out


@dataclass
class ReadPathMetrics:
    """What the read path counts of host reads and prefetches at the members (seed 001).

    * ``member_requests / host_reads``: member requests per host read (a hit costs none);
    * ``split_reads``: host reads whose member requests cross a strip boundary, so one read
      keeps two or more members busy: seed 001's *independency loss* (Fig. 2a);
    * parallelism loss (Fig. 2b's opposite): while at least one host read waits for the
      members (``wait_seconds``, the union of those waits), the member-seconds no request kept
      busy (``idle_member_seconds``); ``parallelism_loss`` is their share of
      ``members x wait_seconds``. A member's busy time in a wait is what its busy-seconds
      counter grew by meanwhile, clipped to the wait (a request that started before the wait
      or, in virtual time, is charged ahead counts whole), so it is exact for waits that
      start with the members idle and a close estimate otherwise.
    """

    #: bytes per strip, the clock's ``now``, and every member's busy seconds so far (a list
    #: that may be live: the members' own; it is copied where it is kept)
    strip_size: int
    now: Callable[[], float]
    busy: Callable[[], list[float]]
    host_reads: int = 0  # host reads the read path served
    host_reads_to_members: int = 0  # of them, reads that needed the members
    member_requests: int = 0  # member requests those issued (one per strip touched)
    split_reads: int = 0  # host reads whose member requests crossed a strip (independency loss)
    prefetch_member_requests: int = 0  # member requests issued by prefetches (PREFETCH class)
    prefetch_waits: int = 0  # host reads that waited for a prefetch in flight instead of reading again
    wait_seconds: float = 0.0  # time at least one host read waited for the members
    idle_member_seconds: float = 0.0  # member-seconds idle during those waits
    _waiting: int = 0  # host reads waiting for the members now
    _t0: float = 0.0
    _busy0: list[float] = field(default_factory=list)

    def strips(self, offset: int, length: int) -> int:
        """Member requests a read of these bytes makes: one per strip touched."""
        s = self.strip_size
        return (offset + length - 1) // s - offset // s + 1 if length > 0 else 0

    def count_host(self, ranges: list[tuple[int, int]]) -> None:
        """One host read goes to the members for these (offset, length) byte ranges."""
        n = sum(self.strips(o, k) for o, k in ranges)
        self.host_reads_to_members += 1
        self.member_requests += n
        if n > 1:
            self.split_reads += 1

    def count_range(self, offset: int, length: int) -> None:
        """:meth:`count_host` of one range, without building a list."""
        s = self.strip_size
        n = (offset + length - 1) // s - offset // s + 1 if length > 0 else 0
        self.host_reads_to_members += 1
        self.member_requests += n
        if n > 1:
            self.split_reads += 1

    def wait_begin(self, now: float | None = None) -> None:
        """A host read starts waiting for the members (``now``: the clock's reading, when the
        caller has just taken it)."""
        if not self._waiting:
            self._t0 = self.now() if now is None else now
            self._busy0 = self.busy()[:]
        self._waiting += 1

    def wait_end(self, now: float | None = None) -> None:
        """It got its blocks; the last one to end closes the wait."""
        self._waiting -= 1
        if self._waiting:
            return
        span = (self.now() if now is None else now) - self._t0
        if span <= 0:
            return
        self.wait_seconds += span
        busy = self.busy()
        busy0 = self._busy0
        if len(busy) == len(busy0):
            # sum(span - min(span, max(0, b1 - b0))) without a generator per read: the terms
            # that are 0.0 are skipped, which leaves the float sum bit for bit the same
            idle = 0.0
            for b0, b1 in zip(busy0, busy):
                d = b1 - b0
                if d < span:
                    idle += span - d if d > 0.0 else span
            self.idle_member_seconds += idle

    def waited_alone(self, span: float) -> None:
        """A host read got its blocks from one member request made on the reader's thread
        with no await (``Layer.read_now``), so nothing else ran during its wait of ``span``
        seconds: inside another read's open wait it adds nothing (that wait's end counts the
        time); alone, its member was busy for all of it and every other member idle. (The
        loop of :meth:`wait_end` would also count as idle the member's own moments around its
        ``pread``; this rule, the one the direct read used before the engine's layers, needs
        no copy of the busy list.)"""
        if self._waiting or span <= 0:
            return
        self.wait_seconds += span
        self.idle_member_seconds += span * (len(self.busy()) - 1)

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """A host read waits for the members inside this block (:meth:`wait_begin` and
        :meth:`wait_end` around it, also when the read fails or is cancelled)."""
        self.wait_begin()
        try:
            yield
        finally:
            self.wait_end()

    def to_dict(self, members: int) -> dict[str, float]:
        keep = ("host_reads", "host_reads_to_members", "member_requests", "split_reads", "prefetch_member_requests",
                "prefetch_waits", "wait_seconds", "idle_member_seconds")
        out: dict[str, float] = {k: getattr(self, k) for k in keep}
        out["member_requests_per_read"] = self.member_requests / self.host_reads if self.host_reads else 0.0
        out["split_ratio"] = self.split_reads / self.host_reads_to_members if self.host_reads_to_members else 0.0
        span = members * self.wait_seconds
        out["parallelism_loss"] = self.idle_member_seconds / span if span > 0 else 0.0
        return out


@dataclass
class LogMetrics:
    """Counters of a log cache (seed 002, vraid.engine.log.cache)."""

    host_write_blocks: int = 0
    overwrites: int = 0  # host writes of a block already in the RAM buffer
    read_blocks: int = 0
    ram_hits: int = 0  # blocks read from the RAM buffer
    log_hits: int = 0  # blocks read from the log disk
    level1_destages: int = 0
    level1_segments: int = 0
    level1_blocks: int = 0
    level2_destages: int = 0
    level2_blocks: int = 0
    ram_full_waits: int = 0  # host writes that waited for a level-1 destage
    log_full_waits: int = 0  # level-1 destages that waited for level 2
    checkpoints: int = 0
    replayed_blocks: int = 0
    lost_blocks: int = 0

    def to_dict(self) -> dict[str, float]:
        return dict(self.__dict__)
