"""How long each size of an experiment would take here (``vraid experiment NAME --estimate``).

A run's wall time grows with the work it simulates: the host requests it issues (prefetch,
msc-ct, multibuffer, levels), the entries of the cache whose periods it runs through
(adaptive-hlwm: every time scales with N_W, and the cost of a request grows with it: N_W^1.5), the I/Os of the stride passes (stride), the
PostMark files and transactions and the tree's files (vc-raid, real time). :data:`WORK` gives
that measure for one spec of each experiment. :func:`calibrate` runs a few runs of the quick
size in this process, spread over its specs, for about :data:`CALIBRATION_SECONDS` (at least
one run), and fits a run's seconds as a fixed cost plus a rate per unit of work
(:func:`fit`; the rate alone when the runs cannot tell the two apart); :func:`estimate`
applies that to every size's specs and spreads the sum over the workers (one at a time for a
``SERIAL`` experiment), never shorter than its longest run. An estimate, not a promise: a
run's cost per unit of work changes somewhat with its size (caches, queues) and with what
else the machine is doing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable

from . import get
from .sizes import SIZES, specs_for
from .task import timed_run

#: the calibration's budget of wall time, seconds (it runs at least one run)
CALIBRATION_SECONDS = 20.0
BLOCK = 4096


def _stride_work(spec: dict[str, Any]) -> float:
    per = spec["span"] // BLOCK * spec["passes"]  # blocks one pass covers, times the passes
    if spec["kind"] == "fig9":
        return per * sum(1 / s for s in spec["strides"])
    if spec["kind"] == "fig1":
        return per * sum(1 / m for m in spec["means"])
    return per / spec["mean"] * len(spec["limits"])


def _vc_raid_work(spec: dict[str, Any]) -> float:
    from .vc_raid_bench import tree_file_count

    parts = spec.get("parts", ["postmark", "sync"])
    tree = tree_file_count(spec["tree"]) if "sync" in parts and "tree" in spec else 0
    rounds = 1 if "round" in spec else spec.get("repeats", 1)  # a round runs PostMark once; an older spec, all repeats
    pm = sum(p["files"] + p["transactions"] for p in spec.get("postmark", [])) * rounds * ("postmark" in parts)
    return pm + 6 * tree  # untar, copy, remove: async and sync


def _msc_ct_work(spec: dict[str, Any]) -> float:
    """A Tiobench run (Fig. 11, Fig. 12, the ablations) writes ``writes`` blocks; a Table II run
    makes ``requests`` requests; an eq. (1) run writes its span at stride 1 and 2, ``passes`` times;
    a mount run (:func:`_msc_ct_mount_work`) moves real blocks in scaled real time."""
    if spec.get("kind") == "eq1":
        return 2 * spec["passes"] * spec["span"] / 4096
    if spec.get("kind") == "mount":
        return _msc_ct_mount_work(spec)
    return spec["requests"] if spec.get("kind") == "table2" else spec["writes"]


#: adaptive-hlwm: a run's time against W_synth^1's at the same N_W (quick runs: W_synth^2 1.25x, the
#: stand-ins of W_traced^1 and W_traced^2 0.36x and 0.23x; the ablation runs 2 of the 8 periods)
ADAPTIVE_HLWM_SHARE = {"synth1": 1.0, "synth2": 1.25, "traced1": 0.36, "traced2": 0.23}


def _adaptive_hlwm_work(spec: dict[str, Any]) -> float:
    share = ADAPTIVE_HLWM_SHARE.get(spec.get("workload", "synth1"), 1.0)
    if spec.get("until"):
        share *= spec["until"] / 8
    return spec["nw"] ** 1.5 * share


def _msc_ct_mount_work(spec: dict[str, Any]) -> float:
    """A mount run (real time): the 4 KiB blocks its workload moves, written and read, plus the
    mkfs of its array; DBench, which runs for a set time, as its seconds at about 10 MB/s."""
    from vraid.core.units import parse_size

    mib = (1 << 20) // BLOCK
    array = parse_size(spec["disk_size"], "disk size") * (spec["disks"] - 1) // BLOCK
    if spec["bench"] == "table2":
        copied = spec["video_mb"] + spec["music_files"] * spec["music_mb"] + (40 if spec["tree"] == "full" else 5)
        return array // 8 + 3 * copied * mib + 5 * spec["fio_mb"] * mib
    if spec["bench"].startswith("dbench"):
        return array // 8 + len(spec["clients"]) * spec["seconds"] * 10 * mib
    return array // 8 + spec["cycles"] * array // 3  # aging: 90 % filled once, then 20 % a cycle


#: experiment -> the work of one spec (units that a run's wall time is taken to be proportional to)
WORK: dict[str, Callable[[dict[str, Any]], float]] = {
    "stride": _stride_work,
    "prefetch": lambda s: s["total"] // s["record"] + s["streams"],
    "msc-ct": _msc_ct_work,
    # N_W scales every time and the space, and a larger cache costs more per request: a run's wall
    # time grew as N_W^1.5 (14 s at the quick 205, 1,137 s at the paper's 4,096; 3x from 205 to 410)
    "adaptive-hlwm": _adaptive_hlwm_work,
    "multibuffer": lambda s: s["requests"],
    "levels": lambda s: s.get("requests", 0) * s["disks"],
    "vc-raid": _vc_raid_work,
}


@dataclass
class Calibration:
    """A run takes ``overhead + rate * work`` seconds: fitted to ``runs`` quick runs that took
    ``seconds`` in all."""

    rate: float
    runs: int
    seconds: float
    overhead: float = 0.0

    def time(self, work: float) -> float:
        return self.overhead + self.rate * work


def fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """``(overhead, rate)`` of the least-squares line through ``(work, seconds)`` points; a
    line through zero (rate = seconds / work) when the points cannot give a positive one."""
    n = len(points)
    work = sum(w for w, _ in points)
    seconds = sum(t for _, t in points)
    ratio = (0.0, seconds / work if work else 0.0)
    if n < 3:
        return ratio
    mw, mt = work / n, seconds / n
    var = sum((w - mw) ** 2 for w, _ in points)
    if var <= 0:
        return ratio
    rate = sum((w - mw) * (t - mt) for w, t in points) / var
    overhead = mt - rate * mw
    return (overhead, rate) if rate > 0 and overhead >= 0 else ratio


@dataclass
class SizeEstimate:
    size: str
    runs: int
    work: float
    serial_seconds: float
    longest_seconds: float
    workers: int

    @property
    def wall_seconds(self) -> float:
        return max(self.serial_seconds / self.workers, self.longest_seconds)


def work_of(name: str, spec: dict[str, Any]) -> float:
    return float(WORK[name](spec))


def _spread(n: int) -> list[int]:
    """0..n-1 in an order that samples the whole range early: 0, n/2, n/4, 3n/4, ..."""
    order: list[int] = []
    step = n
    while step >= 1 and len(order) < n:
        order += [i for i in range(0, n, step) if i not in order]
        step //= 2
    return order + [i for i in range(n) if i not in order]


def calibrate(module: ModuleType, name: str, options: dict[str, Any] | None = None,
              budget: float = CALIBRATION_SECONDS) -> Calibration:
    """Run quick-size runs of experiment ``name`` here, spread over its specs, until ``budget``
    seconds have passed (at least one run with work in it); seconds per unit of work."""
    specs = [s for s in specs_for(module, name, "quick", options) if work_of(name, s) > 0]
    points: list[tuple[float, float]] = []
    for i in _spread(len(specs)):
        points.append((work_of(name, specs[i]), timed_run(module.__name__, specs[i], worker="calibration")["seconds"]))
        if sum(t for _, t in points) >= budget:
            break
    overhead, rate = fit(points)
    return Calibration(rate, len(points), sum(t for _, t in points), overhead)


def estimate(name: str, options: dict[str, Any] | None = None, *, workers: int,
             calibration: Calibration | None = None) -> tuple[Calibration, list[SizeEstimate]]:
    """The calibration and the estimate of every size of experiment ``name`` on ``workers``."""
    module = get(name)
    cal = calibration or calibrate(module, name, options)
    workers = 1 if getattr(module, "SERIAL", False) else max(1, workers)
    out = []
    for size in SIZES:
        specs = specs_for(module, name, size, options)
        works = [work_of(name, s) for s in specs]
        out.append(SizeEstimate(size, len(specs), sum(works), sum(cal.time(w) for w in works),
                                max((cal.time(w) for w in works), default=0.0), workers))
    return cal, out


__all__ = ["CALIBRATION_SECONDS", "Calibration", "SizeEstimate", "WORK", "calibrate", "estimate", "fit", "work_of"]
