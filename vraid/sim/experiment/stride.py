"""Experiment ``stride``: seed 000 (Baek & Park, MSC-CT) Fig. 9 and Fig. 1 on the disk models.

**Fig. 9** (sec. III-D): the stride benchmark of Fig. 8 on one member disk. For every stride
distance S, one-block I/Os go to blocks first, first+S, first+2S, ... and always end at the
same destination block (:meth:`vraid.sim.workload.Stride.pass_blocks`); the turnaround time of the
whole pass is divided by that of the contiguous pass (S = 1). From each curve the 1.2 rule
(:func:`vraid.core.stride_rule.derive_limits`) gives S_w^max (writes), S_r^max (reads) and the
excluded regions.

**Fig. 1** (sec. I-C): ascending one-block writes whose stride distance is exponentially
distributed (truncated at 32 blocks, :class:`vraid.sim.workload.ExpStride`), normalized the same
way, against the mean stride distance.

**Fig. 15** (sec. IV-F): on ST373454LC, ascending one-block I/O with exponential stride
distance (mean 10, at most 64) to which a contiguity transform is applied with limit L: every
gap shorter than L blocks is filled (written, or read, as well), so the pass becomes fewer,
longer requests. The paper: the fastest L equals the S^max its stride benchmark derives
(Fig. 9(a)). vraid's simplification: writes and reads are varied separately (a write-only
and a read-only pass), not as the reads and writes of RAID-5 destages.

How the benchmark drives the disk. The paper's benchmark is a kernel driver that keeps 32-64
requests outstanding (sec. I-C) so that the contiguous pass streams ("t_c consists of only the
transfer time"). We keep :data:`DEPTH` (32) outstanding, in ascending order, a new one as each
completes; a disk with tagged command queueing (its preset's ``queue_depth``, on by default
in the disk models and spelt out here as ``tcq=on``) takes them and orders them itself
(SPTF or C-LOOK, the preset's ``scheduling``), a disk without one serves
them one at a time in that order. Adjacent blocks are merged into one request, as a block
layer would (the contiguous pass is a single request; strided blocks stay separate).
Each disk is the preset with ``stroke=partition`` (the member is the start of the full-size
disk, the outer zone, as a benchmark at the start of a raw disk) and the preset's own cache
settings (write-on-arrival; read-ahead as the preset says). Every curve point is a fresh disk
in a fresh virtual clock, so points do not depend on one another; a point is ``passes``
consecutive repetitions of the pass, each on the next ``span`` bytes (fresh blocks: no pass
is served from what the on-board cache kept of the one before).

**The queue ablation** (``abl-tcqoff-...``): every Fig. 9 run, and Fig. 1 on ST373454LC, again
on the one-command model (``tcq=off``: the drive takes the next command only when it has
finished one), so the rows whose cause is the drive's queue quote what changes without it.

**The bus ablation** (``abl-bus...-fig15-...``): Fig. 15 again with the drive's bus serial
(``bus_serial=on``: one command's data at a time, as on a SCSI bus; the disk model's default
lets the transfers of queued commands overlap) at the preset's 320 MB/s (Ultra320) and at
:data:`FIG15_BUS`'s slower rates. Sec. III-D sets the 1.2 threshold above 1.0 partly for "the
performance degradation caused by additional I/Os that occupy additional bus resources such as
the SCSI bus"; the ablation measures how slow the bus must be before that cost moves the fastest
L. The memory bus is not modelled.

This module runs the benchmark and collects; :mod:`.stride_report` draws the terminal's table
and writes results.md and the plots, :mod:`.stride_paper` holds the paper's claims.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from vraid.backends.hdd import HddModel
from vraid.backends.hdd_params import HddParams
from vraid.backends.memory import MemoryStore
from vraid.backends.models import PRESETS
from vraid.core.stride_rule import THRESHOLD, derive_limits
from vraid.engine.clock import TrioClock

from ..stride_bench import DEPTH, bench_spec, merge_runs, model_curve
from ..stride_bench import time_passes as _time_passes
from ..workload import ExpStride
from .stride_report import report, summary

NAME = "stride"
BLOCK = 4096
#: Fig. 9 presets of a --quick run; a full run takes every hdd preset
QUICK_PRESETS = ("st373454lc", "st39175fc", "dnes-318350")
#: Fig. 1 mean stride distances (the truncated law needs mean < (max+1)/2)
FIG1_MEANS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0)
FIG1_MAX = 32
#: Fig. 15 (sec. IV-F): the disk, the exponential law (mean, max) and the CT limits tried
FIG15_PRESET = "st373454lc"
FIG15_MEAN, FIG15_MAX = 10.0, 64
FIG15_LIMITS = tuple(range(1, 21))
#: the bus ablation of Fig. 15 (MB/s; None: the preset's own, Ultra320's 320): Ultra320 shared by
#: the 2.5 disks per host adapter of the paper's machine (sec. IV-A: two adapters, five disks),
#: then two-thirds and a third of the outer zone's 96 MB/s media rate
FIG15_BUS = (None, 128, 64, 32)


def describe() -> str:
    return ("paper 000 Fig. 9 and Fig. 1: normalized turnaround of stride-S (and exponential-stride) "
            "one-block I/O vs contiguous I/O on each hdd preset; S_w^max, S_r^max by the 1.2 rule")


def hdd_presets() -> list[str]:
    return [name for name, p in PRESETS.items() if isinstance(p, HddParams)]


# ---------------------------------------------------------------------- measuring
# The stride benchmark itself lives in vraid.sim.stride_bench (shared with `vraid stride-bench`).
def disk_model(preset: str, store: MemoryStore, clock: TrioClock) -> HddModel:
    """The benchmarked disk: ``preset`` over ``store``, member at the start of the full disk."""
    model = bench_spec(f"hdd:{preset}").wrap(store, clock)
    assert isinstance(model, HddModel)
    return model


def time_passes(preset: str, op: str, passes: Sequence[Sequence[tuple[int, int]]], store: MemoryStore,
                block: int = BLOCK, depth: int = DEPTH) -> dict[str, float]:
    """Serve ``passes`` (lists of (block, count) requests) on a fresh disk, ``depth`` outstanding."""
    return _time_passes(bench_spec(f"hdd:{preset}"), op, passes, store, block, depth)


def stride_curve(preset: str, op: str, strides: Iterable[int], *, span: int, passes: int,
                 start: int = 0, block: int = BLOCK, depth: int = DEPTH) -> dict[str, Any]:
    """The Fig. 9 curve of one disk and op (:func:`vraid.sim.stride_bench.model_curve`)."""
    return model_curve(bench_spec(f"hdd:{preset}"), op, strides, span=span, passes=passes, start=start, block=block,
                       depth=depth)


def _exp_passes(mean: float, smax: int, span: int, passes: int, seed: int, block: int) -> list[list[int]]:
    """The blocks of ``passes`` exponential-stride passes, pass k on ``[k*span, (k+1)*span)``."""
    per = span // block
    w = ExpStride(mean=mean, max=smax, span=span, op="write")
    one: list[int] = []
    out: list[list[int]] = []
    for req in w.requests(span, block, 1 << 40, seed):
        one.append(req.offset // block + len(out) * per)
        if req.offset // block == per - 1:
            out.append(one)
            one = []
            if len(out) == passes:
                break
    return out


def fill_gaps(blocks: Sequence[int], limit: int) -> list[int]:
    """A contiguity transform with limit ``limit`` on ascending ``blocks``: every stride
    S = b - a < ``limit`` is filled with the blocks between (eq. 8/9 with S^max = limit)."""
    out: list[int] = []
    for b in blocks:
        if out and 1 < b - out[-1] < limit:
            out.extend(range(out[-1] + 1, b))
        out.append(b)
    return out


def exp_stride_curve(preset: str, means: Iterable[float], *, smax: int, span: int, passes: int,
                     seed: int = 0, block: int = BLOCK, depth: int = DEPTH) -> dict[str, Any]:
    """The Fig. 1 curve of one disk: exponential-stride write passes, normalized to contiguous.

    As in :func:`stride_curve`, pass k covers ``[k*span, (k+1)*span)``.
    """
    store = MemoryStore(passes * span, name=preset)
    per = span // block
    contiguous = time_passes(preset, "write", [[(k * per, per)] for k in range(passes)], store, block,
                             depth)["seconds"]
    points = []
    for mean in means:
        all_passes = [merge_runs(p) for p in _exp_passes(mean, smax, span, passes, seed, block)]
        blocks_written = sum(c for p in all_passes for _, c in p)
        t = time_passes(preset, "write", all_passes, store, block, depth)
        points.append({"mean": mean, "seconds": t["seconds"], "normalized": t["seconds"] / contiguous,
                       "blocks": blocks_written, "requests": t["requests"],
                       "missed_rotations": t["missed_rotations"]})
    return {"contiguous_seconds": contiguous, "points": points}


def ct_limit_curve(preset: str, op: str, limits: Iterable[int], *, mean: float, smax: int, span: int, passes: int,
                   seed: int = 0, block: int = BLOCK, depth: int = DEPTH) -> dict[str, Any]:
    """Fig. 15 on one disk and op: exponential-stride passes after a contiguity transform of
    limit L (:func:`fill_gaps`), turnaround per L normalized to L = 1 (no transform)."""
    store = MemoryStore(passes * span, name=preset)
    raw = _exp_passes(mean, smax, span, passes, seed, block)
    points = []
    for lim in limits:
        all_passes = [merge_runs(fill_gaps(p, lim)) for p in raw]
        t = time_passes(preset, op, all_passes, store, block, depth)
        points.append({"limit": lim, "seconds": t["seconds"], "requests": t["requests"],
                       "blocks": sum(c for p in all_passes for _, c in p)})
    base = points[0]["seconds"]
    for p in points:
        p["normalized"] = p["seconds"] / base
    best = min(points, key=lambda p: (round(p["seconds"], 9), p["limit"]))
    return {"points": points, "fastest": best["limit"]}


# ---------------------------------------------------------------------- the experiment
def _settings(quick: bool) -> dict[str, Any]:
    if quick:
        return {"presets": list(QUICK_PRESETS), "strides": list(range(1, 33)), "span": 2 << 20, "passes": 2,
                "fig1_span": 2 << 20, "fig1_passes": 2, "fig15_span": 4 << 20, "fig15_passes": 2, "depth": DEPTH}
    return {"presets": hdd_presets(), "strides": list(range(1, 65)), "span": 16 << 20, "passes": 2,
            "fig1_span": 8 << 20, "fig1_passes": 4, "fig15_span": 16 << 20, "fig15_passes": 4, "depth": DEPTH}


def runs(quick: bool) -> list[dict[str, Any]]:
    """One run per (disk, op) curve of Fig. 9 and one per disk for Fig. 1."""
    st = _settings(quick)
    specs: list[dict[str, Any]] = []
    for preset in st["presets"]:
        for op in ("write", "read"):
            specs.append({"id": f"fig9-{preset}-{op}", "kind": "fig9", "preset": preset, "op": op,
                          "strides": st["strides"], "span": st["span"], "passes": st["passes"], "depth": st["depth"]})
    for preset in st["presets"]:
        specs.append({"id": f"fig1-{preset}", "kind": "fig1", "preset": preset, "means": list(FIG1_MEANS),
                      "max": FIG1_MAX, "span": st["fig1_span"], "passes": st["fig1_passes"], "seed": 0,
                      "depth": st["depth"]})
    for op in ("write", "read"):
        specs.append({"id": f"fig15-{FIG15_PRESET}-{op}", "kind": "fig15", "preset": FIG15_PRESET, "op": op,
                      "limits": list(FIG15_LIMITS), "mean": FIG15_MEAN, "max": FIG15_MAX, "span": st["fig15_span"],
                      "passes": st["fig15_passes"], "seed": 0, "depth": st["depth"]})
    # the queue ablation: the same Fig. 9 and Fig. 1 runs on the one-command model (tcq=off)
    specs += [{**s, "id": f"abl-tcqoff-{s['id']}", "tcq": "off"} for s in list(specs)
              if s["kind"] == "fig9" or (s["kind"] == "fig1" and s["preset"] == FIG15_PRESET)]
    # the bus ablation: Fig. 15 with the bus serial, at the preset's rate and slower ones
    specs += [{**s, "id": f"abl-bus{bus or 'preset'}-{s['id']}", "bus_serial": True, "bus": bus}
              for bus in FIG15_BUS for s in list(specs) if s["kind"] == "fig15"]
    return specs


def _model(spec: dict[str, Any]) -> str:
    """The preset as the benchmark's model spec names it: ``PRESET``, ``PRESET,tcq=off`` (the
    queue ablation) or ``PRESET,bus_serial=on[,bus=MB/s]`` (the bus ablation)."""
    return (spec["preset"] + (",tcq=off" if spec.get("tcq") == "off" else "")
            + (",bus_serial=on" if spec.get("bus_serial") else "") + (f",bus={spec['bus']}" if spec.get("bus") else ""))


def bus_rate(spec: dict[str, Any]) -> float:
    """The run's bus rate, MB/s: the spec's ``bus`` or the preset's own."""
    return float(spec.get("bus") or PRESETS[spec["preset"]].bus_rate)


def run(spec: dict[str, Any]) -> dict[str, Any]:
    depth = spec.get("depth", DEPTH)
    if spec["kind"] == "fig9":
        return stride_curve(_model(spec), spec["op"], spec["strides"], span=spec["span"], passes=spec["passes"],
                            depth=depth)
    if spec["kind"] == "fig1":
        return exp_stride_curve(_model(spec), spec["means"], smax=spec["max"], span=spec["span"],
                                passes=spec["passes"], seed=spec["seed"], depth=depth)
    if spec["kind"] == "fig15":
        return ct_limit_curve(_model(spec), spec["op"], spec["limits"], mean=spec["mean"], smax=spec["max"],
                              span=spec["span"], passes=spec["passes"], seed=spec["seed"], depth=depth)
    raise ValueError(f"unknown run kind {spec['kind']!r}")


def _round(x: float) -> float:
    return round(x, 4)


def collect(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """results.json: ``{"disks": {PRESET: {"write": {"S", "normalized"}, "read": ..., "sw_max",
    "sr_max", "sw_except", "sr_except"}}, "fig15": {"preset", "mean", "max", "write": {"limit",
    "normalized", "fastest"}, "read": ...}, "paper_vs_vraid": [{"item", "paper", "vraid",
    "verdict", "cause", ...}, ...], "ablation_tcq_off": {"disks", "fig1"}, "ablation_bus_serial":
    {MB/s: {"write": {"limit", "normalized", "fastest", "bus_busy"}, "read": ...}}}`` (:mod:`.stride_paper`,
    the one rule's rows; the ablations: the Fig. 9 and Fig. 1 runs on the one-command model, and
    Fig. 15 with a serial bus, whose counts the rows' causes quote); the limits are derived from
    the rounded values written beside them, so the file is self-consistent. ``bus_busy``: the
    share of the fastest L's run the bus spends moving its blocks at that rate."""
    from .stride_paper import paper_vs_vraid

    buses = [(spec, out) for spec, out in results if spec.get("bus_serial")]
    main = [(spec, out) for spec, out in results if spec.get("tcq") != "off" and not spec.get("bus_serial")]
    disks, fig1, fig15, facts = _gather(main)
    out: dict[str, Any] = {"disks": disks}
    if fig15:
        out["fig15"] = {"preset": FIG15_PRESET, "mean": FIG15_MEAN, "max": FIG15_MAX, **fig15}
    abl = _gather([(spec, o) for spec, o in results if spec.get("tcq") == "off"])
    ablation = {"disks": abl[0], "fig1": abl[1], "facts": abl[3]} if abl[0] else None
    if ablation:
        out["ablation_tcq_off"] = {"disks": abl[0], "fig1": abl[1]}
    bus: dict[str, dict[str, Any]] = {}
    for spec, o in buses:
        rate = bus_rate(spec)
        bus.setdefault(f"{rate:g}", {})[spec["op"]] = _fig15_entry(o, rate)
    if bus:
        out["ablation_bus_serial"] = dict(sorted(bus.items(), key=lambda kv: -float(kv[0])))
    out["paper_vs_vraid"] = paper_vs_vraid(disks, fig1, fig15, facts, ablation, bus or None)
    return out


def _fig15_entry(out: dict[str, Any], rate: float) -> dict[str, Any]:
    """A Fig. 15 curve as results.json keeps it; ``bus_busy``: the share of the fastest L's run
    a bus of ``rate`` MB/s spends moving that run's blocks."""
    best = next(p for p in out["points"] if p["limit"] == out["fastest"])
    return {"limit": [p["limit"] for p in out["points"]], "normalized": [_round(p["normalized"]) for p in out["points"]],
            "fastest": out["fastest"], "bus_busy": _round(best["blocks"] * BLOCK / (rate * 1e6) / best["seconds"])}


def _gather(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[dict, dict, dict, dict]:
    """(disks, fig1, fig15, facts) of :func:`collect` from one model's runs."""
    disks: dict[str, dict[str, Any]] = {}
    fig1: dict[str, Any] = {}
    fig15: dict[str, Any] = {}
    facts: dict[str, dict[str, Any]] = {}
    for spec, out in results:
        if spec["kind"] == "fig1":
            fig1[spec["preset"]] = {"mean": [p["mean"] for p in out["points"]],
                                    "normalized": [_round(p["normalized"]) for p in out["points"]]}
            continue
        if spec["kind"] == "fig15":
            fig15[spec["op"]] = _fig15_entry(out, bus_rate(spec))
            continue
        if spec["kind"] != "fig9":
            continue
        if spec["op"] == "write":
            pts = {p["S"]: p for p in out["points"]}
            f = facts.setdefault(spec["preset"], {})
            f.update(revolution=out["points"][0]["revolution"], avg_write_seek=_avg_write_seek(spec["preset"]),
                     depth=spec.get("depth", DEPTH))
            if 2 in pts:
                f.update(s1_seconds=pts[1]["seconds"], s2_seconds=pts[2]["seconds"],
                         s2_requests=pts[2]["requests"], s2_missed=pts[2]["missed_rotations"])
        entry = disks.setdefault(spec["preset"], {})
        entry[spec["op"]] = {"S": [p["S"] for p in out["points"]],
                             "normalized": [_round(p["normalized"]) for p in out["points"]]}
    for preset, entry in disks.items():
        for op, key in (("write", "sw"), ("read", "sr")):
            s_max, regions = derive_limits(entry[op]["S"], entry[op]["normalized"], THRESHOLD)
            entry[f"{key}_max"] = s_max
            entry[f"{key}_except"] = regions
        disks[preset] = {k: entry[k] for k in ("write", "read", "sw_max", "sr_max", "sw_except", "sr_except")}
    return disks, fig1, fig15, facts


def _avg_write_seek(preset: str) -> float:
    """The model's average write seek over random sector pairs (what sec. I-C's 4.1 ms is)."""
    return disk_model(preset, MemoryStore(1 << 20), TrioClock()).seek.mean_write


def extras(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """fig1.json (the Fig. 1 curves) and detail.json (setup, seconds, requests and missed
    rotations of every point)."""
    fig1: dict[str, Any] = {"max_stride": FIG1_MAX, "disks": {}}
    detail: dict[str, Any] = {"setup": {}, "disks": {}}
    for spec, out in results:
        preset = spec["preset"]
        if spec["kind"] == "fig1":
            fig1["disks"][preset] = {"mean": [p["mean"] for p in out["points"]],
                                     "normalized": [_round(p["normalized"]) for p in out["points"]],
                                     "missed_rotations": [p["missed_rotations"] for p in out["points"]],
                                     "contiguous_seconds": out["contiguous_seconds"]}
            detail["setup"]["fig1"] = {"span": spec["span"], "passes": spec["passes"], "max": spec["max"],
                                       "seed": spec["seed"]}
        elif spec["kind"] == "fig9":
            detail["disks"].setdefault(preset, {})[spec["op"]] = [
                {k: p[k] for k in ("S", "seconds", "requests", "missed_rotations")} for p in out["points"]]
            detail["setup"]["fig9"] = {"span": spec["span"], "passes": spec["passes"], "block": BLOCK,
                                       "strides": [spec["strides"][0], spec["strides"][-1]],
                                       "depth": spec.get("depth", DEPTH)}
            detail["disks"][preset]["revolution"] = out["points"][0]["revolution"]
    return {"fig1.json": fig1, "detail.json": detail}


__all__ = ["BLOCK", "NAME", "QUICK_PRESETS", "collect", "ct_limit_curve", "describe", "disk_model",
           "exp_stride_curve", "extras", "fill_gaps", "hdd_presets", "report", "run", "runs", "stride_curve",
           "summary", "time_passes"]
