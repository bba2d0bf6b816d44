"""One run of the ``adaptive-hlwm`` experiment: seed 003's eight periods T1..T8 in virtual time,
or the hour of a traced workload's stand-in.

:class:`Setup` derives everything from N_W and the workload (the array, the cache, the
``hlwm-periods`` workload of W_synth^1 or W_synth^2, the times scaled by tau); :func:`simulate`
runs one scheduler (static HLWM or adaptive thresholding, seed 003 sec. 3) through the periods
in a closed loop of five processes (the synthetic workloads) or the open loop of a stand-in
(:mod:`.adaptive_hlwm_standin`, in twelve 5-minute pieces) and aggregates each period: the
time-weighted marks, the overwrite ratio, the disk and destage traffic (sec. 4.1), the
occupancy, the share of time spent destaging. ``writes="block"`` is the destage-cost ablation
(every write one 4 KiB block at the start of its entry, so a destage is a read-modify-write).
:mod:`.adaptive_hlwm` (the experiment) says why it runs so.
"""

from __future__ import annotations

import math
import mmap
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import trio

from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig, open_engine
from vraid.engine.events import PlanEvent, WatermarksEvent

from ..workload import HlwmPeriods, parse_workload
from . import adaptive_hlwm_standin as standin
from .adaptive_hlwm_paper import (BLOCK, DESTAGE_ORDER, DISKS, ENTRY, MAX_DESTAGES, PAPER_DISK_BYTES, PAPER_DISKS,
                                  PAPER_NW, PAPER_PERIOD, PAPER_SPACE, PAPER_UPDATE, QUEUE_ORDER, RHO_H, RHO_L,
                                  SAMPLES_PER_PERIOD, STANDINS, SYNTH, THINK)

# ---------------------------------------------------------------------- setup
@dataclass(frozen=True)
class Setup:
    """Everything derived from N_W (``nw``) and the workload: the array, the cache, the
    workload, the times.

    ``tau`` is virtual seconds per second of the paper: the cache (and so a fill or a drain)
    is ``nw / 4096`` of the paper's, and with think times ``think`` (default ``THINK``) times
    Table 1's the cache fills ``think`` times more slowly per entry, so
    ``tau = think * nw / 4096``. A stand-in
    (``workload`` "traced1"/"traced2") runs open loop at Table 2's arrival rate, so its
    ``tau = nw / 4096``. ``read_fraction`` is W_synth's (0.6 for "synth1", 0.4 for "synth2").
    """

    nw: int
    seed: int = 0
    read_fraction: float = 0.6
    workload_name: str = "synth1"
    locality: float = standin.LOCALITY
    #: W_synth's think times as a multiple of Table 1's inter-arrival times (the think-factor
    #: ablation changes it; a stand-in runs open loop and has none)
    think: float = THINK

    @property
    def is_standin(self) -> bool:
        return self.workload_name in STANDINS

    @property
    def tau(self) -> float:
        return (1.0 if self.is_standin else self.think) * self.nw / PAPER_NW

    @property
    def period(self) -> float:
        """Length of each period T_i (virtual seconds)."""
        return PAPER_PERIOD * self.tau

    @property
    def update(self) -> float:
        """The adaptive scheduler's k (3 s in the paper), scaled like the periods."""
        return PAPER_UPDATE * self.tau

    @property
    def stripes(self) -> int:
        """Rows of the array: the paper's 160 entries of space per cache entry."""
        return PAPER_SPACE // ENTRY // PAPER_NW * self.nw

    def geometry(self) -> Geometry:
        return Geometry(5, DISKS, self.stripes, BLOCK, BLOCK)

    @property
    def cache_bytes(self) -> int:
        return self.nw * ENTRY

    def disk_model(self) -> str:
        """st39175fc with the member at the start of a disk of which it takes the share of the
        stroke the paper's LUN took (10 GB over 7 data disks' worth of 9.1 GB disks)."""
        share = PAPER_SPACE / (PAPER_DISKS - 1) / PAPER_DISK_BYTES
        capacity = int(self.geometry().member_size / share)
        return f"hdd:st39175fc,stroke=partition,capacity={capacity}"

    def workload(self, pool_factor: float) -> str:
        """The hlwm-periods spec whose periods last ``pool_factor`` x :attr:`period`.

        Scale ``nw / 4096`` shrinks the paper's 10 GiB space to 160 entries per cache entry;
        ``period`` is chosen so that each period of the workload lasts ``pool_factor`` times
        ours: the closed loop takes the requests of its current period from it, and needs
        enough of them.
        """
        scale = self.nw / PAPER_NW
        return (f"hlwm-periods:read_fraction={self.read_fraction},size={ENTRY},space={PAPER_SPACE},"
                f"scale={scale!r},period={self.period * pool_factor / scale!r}")

    def destage(self, scheduler: str) -> str:
        if scheduler == "static":
            return f"hlwm:high={RHO_H},low={RHO_L},max_destages={MAX_DESTAGES}"
        if scheduler == "adaptive":
            return f"adaptive:high={RHO_H},low={RHO_L},period={self.update!r},max_destages={MAX_DESTAGES}"
        raise ValueError(f"unknown scheduler {scheduler!r}")

    def describe(self) -> dict[str, Any]:
        g = self.geometry()
        return {"workload": self.workload_name, "nw": self.nw, "entry_bytes": ENTRY, "cache_bytes": self.cache_bytes,
                "tau": self.tau,
                "period_seconds": self.period, "update_seconds": self.update, "think_factor": self.think,
                "disks": DISKS, "block": BLOCK, "strip": BLOCK, "stripes": self.stripes,
                "space_bytes": g.capacity, "member_bytes": g.member_size, "disk_model": self.disk_model(),
                "organisation": "pbg", "destage_order": DESTAGE_ORDER, "queue_order": QUEUE_ORDER,
                "read_cache_bytes": self.cache_bytes, "max_destages": MAX_DESTAGES,
                "read_fraction": self.read_fraction, "seed": self.seed,
                **({"stand_in": standin.describe(self.workload_name, self.locality)} if self.is_standin else {}),
                "static": self.destage("static"), "adaptive": self.destage("adaptive")}


class SparseMemoryStore(MemoryStore):
    """A MemoryStore over an anonymous mmap: pages never written take no memory, so the
    paper's 10 GiB space costs only what the run writes."""

    def __init__(self, size: int, name: str = "sparse") -> None:
        self._data = mmap.mmap(-1, size)  # type: ignore[assignment]
        self.name = name


# ---------------------------------------------------------------------- one run
def simulate(nw: int, scheduler: str, *, seed: int = 0, loop: str = "closed",
             read_fraction: float | None = None, workload: str = "synth1", writes: str = "entry",
             until: int | None = None, locality: float | None = None, think: float | None = None) -> dict[str, Any]:
    """Run ``workload`` with ``scheduler`` ("static" or "adaptive") in virtual time.

    ``workload``: "synth1", "synth2" (W_synth^1, W_synth^2: the eight periods of Table 1) or
    a stand-in "traced1", "traced2" (open loop: ``loop`` must be "open"); ``read_fraction``
    overrides W_synth's. ``writes="block"``: every write is one 4 KiB block at the start of
    its entry (the destage-cost ablation). ``until``: run only the first ``until`` periods.
    ``locality``: a stand-in's (the locality ablation; default :data:`.standin.LOCALITY`).
    ``think``: W_synth's think factor (the think-factor ablation; default :data:`THINK`).
    Returns per-period aggregates (``periods``), the occupancy and marks over time
    (``timeline``), what the scheduler learned and the final drain. Deterministic: the same
    arguments give the same result.
    """
    if loop not in ("closed", "open"):
        raise ValueError(f"loop must be 'closed' or 'open', not {loop!r}")
    if workload not in SYNTH and workload not in STANDINS:
        raise ValueError(f"unknown workload {workload!r}: one of {', '.join([*SYNTH, *STANDINS])}")
    if workload in STANDINS and loop != "open":
        raise ValueError(f"the stand-in {workload!r} replays arrival times: loop must be 'open'")
    if writes not in ("entry", "block"):
        raise ValueError(f"writes must be 'entry' or 'block', not {writes!r}")
    fraction = read_fraction if read_fraction is not None else SYNTH.get(workload, 0.6)
    if locality is not None and workload not in STANDINS:
        raise ValueError("locality is a stand-in's: W_synth's is Table 1's")
    if think is not None and (workload in STANDINS or loop != "closed" or not think > 0):
        raise ValueError("think is W_synth's closed loop's: a positive factor, and loop 'closed'")
    setup = Setup(nw, seed, fraction, workload, standin.LOCALITY if locality is None else locality,
                  THINK if think is None else float(think))
    g = setup.geometry()
    pools: list[list[list[tuple[bool, int, int]]]]
    stamped: list[tuple[float, bool, int, int]] = []
    write_size = BLOCK if writes == "block" else ENTRY
    if setup.is_standin:
        periods: tuple = standin.periods(workload, setup.period, setup.locality)
        pools = [[[] for _ in range(5)] for _ in periods]
        stamped = list(standin.requests(workload, g.capacity, len(periods) * setup.period, seed, setup.locality))
    else:
        # the closed loop needs up to (period / think*iat) requests per process and period; the
        # workload offers (pool period / 5*iat): 1.5 x what it needs
        pool_factor = 1.5 * 5 / setup.think if loop == "closed" else 1.0
        synth = parse_workload(setup.workload(pool_factor))
        assert isinstance(synth, HlwmPeriods)
        periods = synth.periods()
        pools = [[[] for _ in range(5)] for _ in periods]
        pool_len = synth.period_length
        for req in synth.requests(g.capacity, BLOCK, 1 << 62, seed):
            k = min(int(req.at // pool_len), len(periods) - 1)
            write = req.op == "write"
            size = write_size if write else ENTRY
            if loop == "closed":
                pools[k][req.stream].append((write, req.offset, size))
            else:
                stamped.append((req.at, write, req.offset, size))
    if until is not None:
        periods = periods[:max(1, int(until))]
    engine = EngineConfig(g, store_factory=lambda role, size: SparseMemoryStore(size, name=f"disk{role}"),
                          policies={"cache": "pbg", "destage_order": DESTAGE_ORDER, "queue_order": QUEUE_ORDER,
                                    "destage": setup.destage(scheduler)},
                          cache_size=setup.cache_bytes, read_cache_size=setup.cache_bytes,
                          disk_model=setup.disk_model())
    payload = np.random.Generator(np.random.PCG64(seed)).integers(0, 256, ENTRY, dtype=np.uint8).tobytes()
    period = setup.period
    n = len(periods)

    async def main() -> dict[str, Any]:
        async with open_engine(engine) as built:
            array = built.array
            cache = array.cache
            assert cache is not None and cache.capacity == nw, (cache and cache.capacity, nw)
            t0 = trio.current_time()
            end = t0 + n * period
            marks: list[tuple[float, float, float]] = [(0.0, cache.hwm if cache.hwm is not None else RHO_H,
                                                        cache.lwm if cache.lwm is not None else RHO_L)]

            destaged = [0, 0]  # member blocks read and written by destages (the paper's disk IO traffic), read

            def on_event(ev) -> None:
                if isinstance(ev, WatermarksEvent) and ev.hwm is not None:
                    marks.append((ev.time - t0, ev.hwm, ev.lwm))
                elif isinstance(ev, PlanEvent) and ev.cause.is_destage:
                    destaged[0] += sum(r.rows for r in ev.plan.requests)
                    destaged[1] += sum(r.rows for r in ev.plan.requests if r.op == "read")

            unsubscribe = array.events.subscribe(on_event)
            counters: list[dict[str, float]] = []
            issued = [0]
            reused = [0]

            read_cache = array.reads.read_cache
            assert read_cache is not None

            def snapshot() -> None:
                m = cache.metrics
                disks = array.members.disks
                counters.append({
                    "t": trio.current_time() - t0,
                    "overwrites": m.overwrites, "write_blocks": m.write_blocks, "write_misses": m.write_misses,
                    "read_blocks": m.read_blocks, "read_hit_blocks": m.read_hit_blocks + read_cache.metrics.hits,
                    "destage_blocks": destaged[0], "destage_read_blocks": destaged[1],
                    "destages": m.destages_finished, "requests": issued[0],
                    "disk_blocks": sum(d.stats.read_bytes + d.stats.write_bytes for d in disks) // BLOCK,
                    "busy": sum(d.stats.busy_seconds for d in disks),
                })

            samples: list[tuple[float, float, bool]] = []
            rates: list[tuple[float, float | None, float | None]] = []
            sched = cache.scheduler

            async def sampler() -> None:
                step = period / SAMPLES_PER_PERIOD
                while True:
                    now = trio.current_time() - t0
                    samples.append((now, cache.occupancy, cache.in_flight > 0))
                    i_b, d_b = getattr(sched, "i_b", None), getattr(sched, "delta_b", None)
                    if i_b:
                        i_t, d_t = getattr(sched, "i_t", None), getattr(sched, "delta_t", None)
                        rates.append((now, None if i_t is None else i_t / i_b,
                                      None if (d_t is None or not d_b) else d_t / d_b))
                    await trio.sleep(step)

            async def issue(write: bool, offset: int, size: int) -> None:
                issued[0] += 1
                if write:
                    await array.write(offset, payload if size == ENTRY else payload[:size])
                else:
                    await array.read(offset, size)

            async def process(j: int) -> None:
                rng = np.random.Generator(np.random.PCG64([seed, j]))
                taken = [0] * n
                while True:
                    k = min(int((trio.current_time() - t0) // period), n - 1)
                    await trio.sleep(rng.exponential(periods[k].iat * setup.think))
                    now = trio.current_time()
                    if now >= end:
                        return
                    k = min(int((now - t0) // period), n - 1)
                    pool = pools[k][j]
                    if taken[k] >= len(pool):
                        reused[0] += 1
                    write, offset, size = pool[taken[k] % len(pool)]
                    taken[k] += 1
                    await issue(write, offset, size)

            async def open_loop(nursery) -> None:
                for at, write, offset, size in stamped:
                    when = t0 + at
                    if when >= end:
                        break
                    if when > trio.current_time():
                        await trio.sleep_until(when)
                    nursery.start_soon(issue, write, offset, size)

            async with trio.open_nursery() as outer:
                outer.start_soon(sampler)
                snapshot()
                async with trio.open_nursery() as hosts:
                    if loop == "closed":
                        for j in range(5):
                            hosts.start_soon(process, j)
                    else:
                        hosts.start_soon(open_loop, hosts)
                    for k in range(1, n + 1):
                        await trio.sleep_until(t0 + k * period)
                        snapshot()
                outer.cancel_scope.cancel()
            unsubscribe()
            learned = sched.describe()
            before = counters[-1]["disk_blocks"]
            drain_start = trio.current_time()
            await array.shutdown()
            drain_seconds = trio.current_time() - drain_start
            drain_blocks = sum(d.stats.read_bytes + d.stats.write_bytes for d in array.members.disks) // BLOCK - before
        return _aggregate(setup, periods, counters, samples, rates, marks, learned,
                          {"drain_blocks": drain_blocks, "drain_seconds": drain_seconds, "reused": reused[0]})

    from vraid.sim import simulator  # the simulator's clock and its reproducible task order
    from vraid.sim.driver import deterministic_trio

    with deterministic_trio(seed):
        out = trio.run(main, clock=simulator.loop_clock())
    out["setup"] = setup.describe() | {"scheduler": scheduler, "loop": loop}
    if writes != "entry" or until is not None:
        out["setup"] |= {"writes": writes, "until": len(periods)}
    return out


def _integrate(marks: list[tuple[float, float, float]], a: float, b: float) -> tuple[float, float]:
    """Time-weighted means of the step functions HWM(t), LWM(t) over [a, b)."""
    h = l = 0.0
    for idx, (t, hwm, lwm) in enumerate(marks):
        t_next = marks[idx + 1][0] if idx + 1 < len(marks) else math.inf
        lo, hi = max(a, t), min(b, t_next)
        if hi > lo:
            h += hwm * (hi - lo)
            l += lwm * (hi - lo)
    return h / (b - a), l / (b - a)


def _extremes(marks: list[tuple[float, float, float]], a: float, b: float) -> tuple[float, float, float, float]:
    """(lowest HWM, highest HWM, lowest LWM, highest LWM) of the step functions over [a, b)."""
    inside = [(h, l) for idx, (t, h, l) in enumerate(marks)
              if t < b and (idx + 1 == len(marks) or marks[idx + 1][0] > a)]
    hs, ls = [h for h, _ in inside], [l for _, l in inside]
    return min(hs), max(hs), min(ls), max(ls)


def _medians(marks: list[tuple[float, float, float]], a: float, b: float) -> tuple[float, float]:
    """Time-weighted medians of HWM(t), LWM(t) over [a, b): the level the marks hold for
    most of the period, unmoved by the transients at its start and by single updates."""
    spans: list[tuple[float, float, float]] = []
    for idx, (t, hwm, lwm) in enumerate(marks):
        t_next = marks[idx + 1][0] if idx + 1 < len(marks) else math.inf
        lo, hi = max(a, t), min(b, t_next)
        if hi > lo:
            spans.append((hi - lo, hwm, lwm))

    def median(k: int) -> float:
        half, acc = sum(w for w, _, _ in spans) / 2, 0.0
        for w, *v in sorted(spans, key=lambda x: x[k]):
            acc += w
            if acc >= half:
                return v[k - 1]
        return spans[-1][k]

    return median(1), median(2)


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def _aggregate(setup: Setup, periods, counters, samples, rates, marks, learned, tail) -> dict[str, Any]:
    rows = []
    for k, per in enumerate(periods):
        a, b = counters[k], counters[k + 1]
        t_a, t_b = k * setup.period, (k + 1) * setup.period
        hwm, lwm = _integrate(marks, t_a, t_b)
        hwm_min, hwm_max, lwm_min, lwm_max = _extremes(marks, t_a, t_b)
        hwm_median, lwm_median = _medians(marks, t_a, t_b)
        occ = [o for t, o, _ in samples if t_a <= t < t_b]
        busy = [d for t, _, d in samples if t_a <= t < t_b]
        in_rates = [r for r in rates if t_a <= r[0] < t_b]
        wb = b["write_blocks"] - a["write_blocks"]
        rb = b["read_blocks"] - a["read_blocks"]
        rows.append({
            "name": per.name, "case": per.case, "iat_ms": per.iat * 1e3, "locality": per.locality,
            "hwm": hwm, "lwm": lwm, "hwm_min": hwm_min, "hwm_max": hwm_max, "lwm_min": lwm_min, "lwm_max": lwm_max,
            "hwm_median": hwm_median, "lwm_median": lwm_median,
            "overwrite_ratio": (b["overwrites"] - a["overwrites"]) / wb if wb else 0.0,
            "disk_blocks": int(b["disk_blocks"] - a["disk_blocks"]),
            "destage_blocks": int(b["destage_blocks"] - a["destage_blocks"]),
            "destage_read_blocks": int(b["destage_read_blocks"] - a["destage_read_blocks"]),
            "occupancy": sum(occ) / len(occ) if occ else 0.0,
            "destaging_share": sum(busy) / len(busy) if busy else 0.0,
            "write_misses": int(b["write_misses"] - a["write_misses"]),
            "overwrites": int(b["overwrites"] - a["overwrites"]), "write_blocks": int(wb),
            "read_blocks": int(rb), "read_hit_blocks": int(b["read_hit_blocks"] - a["read_hit_blocks"]),
            "read_hit_ratio": (b["read_hit_blocks"] - a["read_hit_blocks"]) / rb if rb else 0.0,
            "requests": int(b["requests"] - a["requests"]),
            "destages": int(b["destages"] - a["destages"]),
            "disk_busy": (b["busy"] - a["busy"]) / setup.period / DISKS,
            "i_ratio": _mean(r[1] for r in in_rates),
            "delta_ratio": _mean(r[2] for r in in_rates),
        })
    scheduler = {k: learned.get(k) for k in ("name", "spec", "learned", "i_b", "delta_b", "updates")}
    units = learned.get("units_per_s") or {}
    scheduler["i_b_entries_per_s"] = units.get("i_b")
    scheduler["delta_b_entries_per_s"] = units.get("delta_b")
    # the marks' changes, thinned to one per sample step for the plot (the means above are exact)
    step = setup.period / SAMPLES_PER_PERIOD
    thinned: list[tuple[float, float, float]] = []
    for t, h, l in marks:
        if thinned and t - thinned[-1][0] < step and len(thinned) > 1:
            thinned[-1] = (thinned[-1][0], h, l)
        else:
            thinned.append((t, h, l))
    return {"periods": rows, "scheduler": scheduler, "tail": tail,
            "timeline": {"t": [rounded(t, 4) for t, _, _ in samples], "occupancy": [rounded(o, 4) for _, o, _ in samples],
                         "marks": [[rounded(t, 4), rounded(h, 4), rounded(l, 4)] for t, h, l in thinned]}}



def rounded(x: float | None, digits: int = 4) -> float | None:
    """``x`` rounded to ``digits`` (``None`` stays ``None``), for the JSON files."""
    return None if x is None else round(float(x), digits)


__all__ = ["Setup", "SparseMemoryStore", "rounded", "simulate"]
