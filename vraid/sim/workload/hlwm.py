"""The synthetic workloads W_synth of the adaptive HLWM paper (seed 003, sec. 4.1, Table 1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from .base import CHUNK, HostRequest, Param, Workload, make_rng, need


@dataclass(frozen=True, slots=True)
class Period:
    """One time-period of Table 1: [start, end) in seconds (scaled), mean inter-arrival time,
    locality (fraction of the space each of the four subset processes covers), and which case of
    sec. 2.3.1 it provokes."""

    name: str
    start: float
    end: float
    iat: float
    locality: float
    case: str


# seed 003, Table 1: period, avg. inter-arrival time, % of entire disk accessed, workload pattern
TABLE1 = (("T1", 20e-3, 0.004, "initial"), ("T2", 40e-3, 0.004, "Case 1"), ("T3", 20e-3, 0.004, "initial"),
          ("T4", 10e-3, 0.004, "Case 2"), ("T5", 20e-3, 0.004, "initial"), ("T6", 20e-3, 0.002, "Case 3"),
          ("T7", 20e-3, 0.004, "initial"), ("T8", 20e-3, 0.008, "Case 4"))
PROCESSES = 5


class HlwmPeriods(Workload):
    """W_synth of seed 003 (sec. 4.1, Table 1): five processes over eight periods T1..T8.

    Process 0 (``stream`` 0) accesses the whole space uniformly; processes 1-4 each access a
    subset of ``locality`` of it (Table 1: 0.4 %; 0.2 % in T6, 0.8 % in T8), starting at 0, 1/5,
    2/5 and 3/5 of the space, so a subset shrinks or grows in place from period to period.
    Arrivals are Poisson with the period's mean inter-arrival time (Table 1: 20 ms; 40 ms in
    T2, 10 ms in T4) and each arrival belongs to a process drawn uniformly: the paper does not
    say how requests divide among the processes, nor whether the time is per process (we take
    it as the aggregate). Requests are ``size`` = 16 KB (the cache entry), offsets aligned to
    it, reads with probability ``read_fraction`` (W1: 0.6, W2: 0.4). Each period lasts
    ``period`` (5 min) times ``scale``; ``scale`` also shrinks the space. Ends after T8.
    """

    name = "hlwm-periods"
    summary = "five processes over periods T1..T8 with Table 1 inter-arrival times and locality"
    source = "paper 003 (Nam & Park, adaptive HLWM), sec. 4.1, Table 1, Figs. 4-6"
    PARAMS = {"read_fraction": Param("float", 0.6, "fraction of reads (W1 0.6, W2 0.4)"),
              "size": Param("size", 16384, "request size = cache entry size"),
              "period": Param("time", 300.0, "length of each period T_i before scaling"),
              "space": Param("size", None, "storage space before scaling (default: whole array)"),
              "scale": Param("float", 1.0, "multiplies the period length and the space")}

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(0 <= p["read_fraction"] <= 1, "hlwm-periods: read_fraction must be within 0..1", "e.g. 0.4")
        need(p["period"] > 0 and p["scale"] > 0, "hlwm-periods: period and scale must be positive",
             "e.g. scale=0.1")

    @property
    def closed_loop(self) -> None:
        return None

    @property
    def period_length(self) -> float:
        """Seconds each period lasts (``period`` x ``scale``)."""
        return self.params["period"] * self.params["scale"]

    def periods(self) -> tuple[Period, ...]:
        """T1..T8 with their scaled start and end times: the boundaries for per-period metrics."""
        length = self.period_length
        return tuple(Period(n, i * length, (i + 1) * length, iat, loc, case)
                     for i, (n, iat, loc, case) in enumerate(TABLE1))

    def period_of(self, t: float) -> str:
        """Name of the period holding time ``t``; before 0 is T1, after the end T8."""
        i = int(t // self.period_length) if t > 0 else 0
        return TABLE1[min(i, len(TABLE1) - 1)][0]

    def space_bytes(self, capacity: int) -> int:
        """The scaled space the processes access, in whole requests."""
        size = self.params["size"]
        return int((self.params["space"] or capacity) * self.params["scale"]) // size * size

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        size, read_fraction = self.params["size"], self.params["read_fraction"]
        space = self.space_bytes(capacity)
        self._fit("space", space, capacity, block_size)
        self._fit("size", size, space, block_size)
        base = [0] + [j * space // PROCESSES // size * size for j in range(PROCESSES - 1)]
        rng, t, i = make_rng(seed), 0.0, CHUNK
        for per in self.periods():
            subset = max(1, int(per.locality * space) // size)      # slots of each subset process
            slots = [space // size] + [subset] * (PROCESSES - 1)
            while True:
                if i == CHUNK:
                    gap = rng.exponential(1.0, CHUNK).tolist()
                    proc = rng.integers(0, PROCESSES, CHUNK).tolist()
                    where = rng.random(CHUNK).tolist()
                    read = (rng.random(CHUNK) < read_fraction).tolist()
                    i = 0
                nxt = t + gap[i] * per.iat
                i += 1
                if nxt >= per.end:          # Poisson is memoryless: restart the clock at the boundary
                    t = per.end
                    break
                t, pr = nxt, proc[i - 1]
                yield HostRequest("read" if read[i - 1] else "write",
                                  base[pr] + int(where[i - 1] * slots[pr]) * size, size, t, pr)
