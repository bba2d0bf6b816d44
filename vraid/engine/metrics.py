"""Counters the controller keeps: host traffic, write cycles, response times."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field


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
        self.max = max(self.max, seconds)
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
