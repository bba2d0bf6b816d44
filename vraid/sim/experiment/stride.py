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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Sequence

from vraid.backends.hdd import HddModel
from vraid.backends.hdd_params import HddParams
from vraid.backends.memory import MemoryStore
from vraid.backends.models import PRESETS
from vraid.engine.clock import TrioClock
from ..stride_bench import DEPTH, bench_spec, merge_runs, model_curve
from ..stride_bench import time_passes as _time_passes
from vraid.core.stride_rule import THRESHOLD, derive_limits
from ..workload import ExpStride
from .runner import load_json

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


def describe() -> str:
    return ("seed 000 Fig. 9 and Fig. 1: normalized turnaround of stride-S (and exponential-stride) "
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
    return specs


def run(spec: dict[str, Any]) -> dict[str, Any]:
    depth = spec.get("depth", DEPTH)
    if spec["kind"] == "fig9":
        return stride_curve(spec["preset"], spec["op"], spec["strides"], span=spec["span"], passes=spec["passes"],
                            depth=depth)
    if spec["kind"] == "fig1":
        return exp_stride_curve(spec["preset"], spec["means"], smax=spec["max"], span=spec["span"],
                                passes=spec["passes"], seed=spec["seed"], depth=depth)
    if spec["kind"] == "fig15":
        return ct_limit_curve(spec["preset"], spec["op"], spec["limits"], mean=spec["mean"], smax=spec["max"],
                              span=spec["span"], passes=spec["passes"], seed=spec["seed"], depth=depth)
    raise ValueError(f"unknown run kind {spec['kind']!r}")


def _round(x: float) -> float:
    return round(x, 4)


def collect(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """results.json: ``{"disks": {PRESET: {"write": {"S", "normalized"}, "read": ..., "sw_max",
    "sr_max", "sw_except", "sr_except"}}, "fig15": {"preset", "mean", "max", "write": {"limit",
    "normalized", "fastest"}, "read": ...}, "paper_vs_vraid": [{"item", "paper", "vraid",
    "verdict", "why"}, ...]}``; the limits are derived from the rounded values written beside
    them, so the file is self-consistent."""
    from .stride_paper import paper_vs_vraid

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
            fig15[spec["op"]] = {"limit": [p["limit"] for p in out["points"]],
                                 "normalized": [_round(p["normalized"]) for p in out["points"]],
                                 "fastest": out["fastest"]}
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
    out: dict[str, Any] = {"disks": disks}
    if fig15:
        out["fig15"] = {"preset": FIG15_PRESET, "mean": FIG15_MEAN, "max": FIG15_MAX, **fig15}
    out["paper_vs_vraid"] = paper_vs_vraid(disks, fig1, fig15, facts)
    return out


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


def summary(results: dict[str, Any]):
    """The S^max table for the terminal."""
    from ..table import TextTable

    t = TextTable(title="seed 000 Fig. 9: stride benchmark (1.2 rule)")
    for col in ("disk", "S_w^max", "S_w^except", "S_r^max", "S_r^except", "write S=2", "read S=2"):
        t.add_column(col, justify="left" if col == "disk" else "right")
    for preset, d in results["disks"].items():
        t.add_row(preset, str(d["sw_max"]), _regions(d["sw_except"]), str(d["sr_max"]), _regions(d["sr_except"]),
                  _at(d["write"], 2), _at(d["read"], 2))
    return t


def _regions(regions: list[list[int]]) -> str:
    return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in regions) or "-"


def _at(curve: dict[str, list], s: int) -> str:
    return f"{curve['normalized'][curve['S'].index(s)]:.2f}" if s in curve["S"] else "-"


# ---------------------------------------------------------------------- report
#: what seed 000 says about each disk (its Fig. 9 values are drawn, not printed)
PAPER = {
    "st373454lc": "Fig. 9(a) (sec. IV-F names it): S_w^max, S_r^max are drawn in the figure only, our text of "
                  "the paper has no numbers; no read-ahead (sec. I-C); the stride-pattern limits equal the "
                  "fastest CT setting of Fig. 15 (sec. IV-F)",
}
_NOT_IN_PAPER = "not measured in seed 000 (Fig. 9(b)-(d) do not name their disks)"


def report(results: dict[str, Any], out_dir: Path) -> list[Path]:
    """results.md, fig9.png and fig1.png (plots only when matplotlib is installed)."""
    out_dir = Path(out_dir)
    fig1 = load_json(out_dir / "fig1.json")
    detail = load_json(out_dir / "detail.json")
    files: list[Path] = []
    plots = True
    try:
        files += _plots(results, fig1, out_dir)
    except ImportError:
        plots = False
    md = out_dir / "results.md"
    md.write_text(_markdown(results, fig1, detail, plots))
    return [md, *files]




def _markdown(results: dict[str, Any], fig1: dict[str, Any], detail: dict[str, Any], plots: bool) -> str:
    disks = results["disks"]
    setup = detail.get("setup", {})
    f9 = setup.get("fig9", {})
    lines = ["# stride: seed 000 Fig. 9 and Fig. 1 on vraid's disk models", ""]
    if f9:
        lines += [f"Stride benchmark (Fig. 8) on one member disk: 4 KiB blocks, S = {f9['strides'][0]}.."
                  f"{f9['strides'][1]}, {f9['span'] >> 20} MiB from the first to the last block, {f9['passes']} "
                  f"passes per point, {f9.get('depth', 1)} requests outstanding (sec. I-C: the paper's benchmark "
                  "keeps 32 to 64), adjacent blocks merged (so S = 1 is one request). Each preset with "
                  "`stroke=partition` and its own cache settings, with its command queue on (`tcq=on`: "
                  "the preset's native depth, SPTF or C-LOOK; the default of vraid's disk models, which "
                  "the other experiments use too). "
                  "S^max by the 1.2 rule (`vraid.core.stride_rule.derive_limits`).", ""]
    if results.get("paper_vs_vraid"):
        from .stride_paper import markdown as verdicts

        lines += ["## Paper vs vraid", "",
                  "Verdicts: reproduced (within 25 % where the paper gives a number), direction (same "
                  "direction or shape only), not reproduced (with the physical reason in the model).", ""]
        lines += verdicts(results["paper_vs_vraid"]) + [""]
    lines += ["## S^max and excluded regions (Fig. 9)", "",
              "| disk | drive | read-ahead | queue (tcq=on) | S_w^max | S_w^except | S_r^max | S_r^except | seed 000 |",
              "|---|---|---|---|--:|---|--:|---|---|"]
    for preset, d in disks.items():
        p = PRESETS[preset]
        assert isinstance(p, HddParams)
        queue = f"{p.queue_depth} {p.scheduling}" if p.queue_depth > 1 else "none"
        lines.append(f"| {preset} | {p.drive} | {p.read_ahead} | {queue} | {d['sw_max']} | "
                     f"{_regions(d['sw_except'])} | {d['sr_max']} | {_regions(d['sr_except'])} | "
                     f"{PAPER.get(preset, _NOT_IN_PAPER)} |")
    lines += ["", "## Normalized turnaround time (Fig. 9 curves, excerpt)", ""]
    show = [s for s in (1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 48, 64) if any(s in d["write"]["S"] for d in disks.values())]
    lines += ["| disk | op | " + " | ".join(f"S={s}" for s in show) + " |",
              "|---|---|" + "--:|" * len(show)]
    for preset, d in disks.items():
        for op in ("write", "read"):
            lines.append(f"| {preset} | {op} | " + " | ".join(_at(d[op], s) for s in show) + " |")
    if fig1.get("disks"):
        means = next(iter(fig1["disks"].values()))["mean"]
        lines += ["", f"## Fig. 1: exponential stride distance (max {fig1.get('max_stride')} blocks), writes", "",
                  "| disk | " + " | ".join(f"mean {m:g}" for m in means) + " |", "|---|" + "--:|" * len(means)]
        for preset, c in fig1["disks"].items():
            lines.append(f"| {preset} | " + " | ".join(f"{v:.2f}" for v in c["normalized"]) + " |")
    f15 = results.get("fig15")
    if f15:
        lims = f15["write"]["limit"] if "write" in f15 else f15["read"]["limit"]
        lines += ["", f"## Fig. 15: CT limit L on exponential strides ({f15['preset']}, mean {f15['mean']:g}, "
                  f"max {f15['max']}), normalized to no CT", "",
                  "| op | " + " | ".join(f"L={x}" for x in lims) + " | fastest |", "|---|" + "--:|" * (len(lims) + 1)]
        for op in ("write", "read"):
            if op in f15:
                lines.append(f"| {op} | " + " | ".join(f"{v:.2f}" for v in f15[op]["normalized"])
                             + f" | {f15[op]['fastest']} |")
    lines += ["", "## Against the paper", ""] + _comparison(disks, fig1, detail)
    if plots:
        lines += ["", "![Fig. 9](fig9.png)", "", "![Fig. 1](fig1.png)"]
    else:
        lines += ["", "(No plots: matplotlib is not installed.)"]
    return "\n".join(lines) + "\n"


def _comparison(disks: dict[str, Any], fig1: dict[str, Any], detail: dict[str, Any]) -> list[str]:
    out: list[str] = []
    slow_w = [p for p, d in disks.items() if d["sw_max"] > 1]
    out.append(f"- *\"In all of the disks shown in Fig. 9, a fragmented I/O such that its stride distance S is less "
               f"than a threshold shows degraded performance.\"* Writes: {len(slow_w)} of {len(disks)} of our disks "
               f"have S_w^max > 1 (" + ", ".join(f"{p} {disks[p]['sw_max']}" for p in disks) + ").")
    sr1 = [p for p, d in disks.items() if d["sr_max"] == 1]
    out.append("- *\"Some disks have a S_r^max value of 1, as shown in Figs. 9(b) and 9(c).\"* Ours: "
               + (", ".join(sr1) if sr1 else "none") + " (the disks whose read-ahead serves the next blocks of "
               "the track; without read-ahead a read S blocks on misses its sector like a write). "
               + _read_ahead_note(disks))
    exc = [p for p, d in disks.items() if d["sw_except"] or d["sr_except"]]
    if exc:
        out.append("- *Fig. 9(d) shows an excluded region.* Ours: " + ", ".join(
            f"{p} (write {_regions(disks[p]['sw_except'])}, read {_regions(disks[p]['sr_except'])})" for p in exc) + ".")
    else:
        out.append("- *Fig. 9(d) shows an excluded region.* None of our disks has one. In the model the only "
                   "penalty of a stride is a missed revolution, which happens for every S whose gap under the "
                   "head is shorter than command overhead plus transfer and for no wider S, so each curve is a "
                   "step; whatever makes the paper's disk 9(d) fast at some strides below its S_w^max is not modelled.")
    low = {p: min(d["read"]["normalized"]) for p, d in disks.items()}
    below = [p for p, v in low.items() if v < 1.0]
    if not below:
        out.append("- *\"All reads shown in Fig. 9 are never below one.\"* Ours: the same: the smallest "
                   f"normalized read time is {min(low.values()):.2f}.")
    else:
        first = {p: next(s for s, v in zip(disks[p]["read"]["S"], disks[p]["read"]["normalized"]) if v < 1.0)
                 for p in below}
        out.append("- *\"All reads shown in Fig. 9 are never below one.\"* Ours: below one on " + ", ".join(
            f"{p} (from S = {first[p]}, {_blocks_per_track(p):.0f} blocks per outer track; min {low[p]:.2f})"
            for p in below) + ". With 32 commands queued the drive (SPTF) serves blocks of several tracks "
            "of a cylinder in one revolution when the gap outlasts a head switch, and once a stride skips "
            "more than a track the head no longer passes over the skipped blocks, so the fragmented pass "
            "beats the contiguous one. Our text of the paper does not say how far the S axis of Fig. 9 goes.")
    if fig1.get("disks"):
        mins = {p: min(v for m, v in zip(c["mean"], c["normalized"]) if m > 1) for p, c in fig1["disks"].items()}
        ok = all(v > 1 for v in mins.values())
        note = "" if ok else (" Below one only where the 32-block maximum stride exceeds a track (" + ", ".join(
            f"{p}: {_blocks_per_track(p):.0f} blocks per track" for p, v in mins.items() if v <= 1) +
            "): long strides then skip whole tracks.")
        out.append("- *Fig. 1: \"All of the normalized turnaround times of the fragmented writes ... are always "
                   "higher than 1.\"* Ours: " + ("the same" if ok else "not always") + "; the curves fall as the "
                   "mean stride grows (smallest values: " + ", ".join(f"{p} {v:.2f}" for p, v in mins.items())
                   + ")." + note)
    eq1 = _eq1_check(detail)
    if eq1:
        out.append("- *Eq. (1), t_d = t_c + t_r N_r.* For S = 2 writes the measured turnaround against "
                   "t_c + t_r N_r (N_r: missed revolutions the model counted): " + eq1 + ".")
    def s2(kv) -> float:
        return float(_at(kv[1]["write"], 2)) if 2 in kv[1]["write"]["S"] else 0.0

    def queue(preset: str) -> tuple[int, str]:
        p = PRESETS[preset]
        assert isinstance(p, HddParams)
        return p.queue_depth, p.scheduling

    sptf = [kv for kv in disks.items() if queue(kv[0])[0] > 1 and queue(kv[0])[1] == "sptf"]
    others = [kv for kv in disks.items() if not (queue(kv[0])[0] > 1 and queue(kv[0])[1] == "sptf")]
    peak = max(sptf, key=s2) if sptf else None
    slow = ", ".join(f"{k} {_at(d['write'], 2)}" for k, d in others if 2 in d["write"]["S"])
    out.append("- *Magnitude.* With the commands queued on an SPTF drive, a slow stride costs about one "
               "extra pass of the platter over the span, not a revolution per block"
               + (f" ({peak[0]}: {_at(peak[1]['write'], 2)} at S = 2)" if peak else "") + ": "
               "the drive writes the blocks it can reach in time and comes back for the ones it missed, "
               "serving other queued commands meanwhile. A drive without a queue (the ATA presets) or one "
               "that orders its queue by LBA (C-LOOK: ascending, the order the blocks arrive in anyway) "
               "still loses a revolution per block"
               + (f" (S = 2: {slow})" if slow else "") + ". S^max is the stride at which the gap under "
               "the head outlasts the drive's setup of the next transfer (its command overhead); the paper's "
               "values are drawn in Fig. 9, not printed, so the shape is what we compare.")
    return out


def _blocks_per_track(preset: str) -> float:
    """4 KiB blocks on one outer-zone track of ``preset``."""
    from vraid.backends.hdd_zones import SECTOR, HddGeometry

    p = PRESETS[preset]
    assert isinstance(p, HddParams)
    return HddGeometry(p, BLOCK).zones[0].spt * SECTOR / BLOCK


def _read_ahead_note(disks: dict[str, Any]) -> str:
    odd = [p for p, d in disks.items() if d["sr_max"] > 1 and PRESETS[p].read_ahead != "off"]  # type: ignore[union-attr]
    if not odd:
        return ""
    return ("With read-ahead but S_r^max > 1: " + ", ".join(
        f"{p} (read S=2 {_at(disks[p]['read'], 2)})" for p in odd) + ": the model's track read-ahead stops at the "
        "end of the track, and at some track boundaries the next request arrives after it stopped and waits "
        "a revolution (missed rotations per point are in detail.json).")


def _eq1_check(detail: dict[str, Any]) -> str:
    parts = []
    for preset, d in detail.get("disks", {}).items():
        pts = {p["S"]: p for p in d.get("write", [])}
        if 1 in pts and 2 in pts:
            t_c, t_d = pts[1]["seconds"], pts[2]["seconds"]
            pred = t_c + d["revolution"] * pts[2]["missed_rotations"]
            parts.append(f"{preset} {t_d * 1e3:.1f} ms vs {pred * 1e3:.1f} ms")
    return "; ".join(parts)


def _plots(results: dict[str, Any], fig1: dict[str, Any], out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    disks = results["disks"]
    n = len(disks)
    cols = min(4, n)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
    for ax, (preset, d) in zip(axes.flat, disks.items()):
        for op, style in (("write", "-o"), ("read", "-s")):
            ax.plot(d[op]["S"], d[op]["normalized"], style, markersize=3, label=op)
        ax.axhline(THRESHOLD, color="grey", linestyle="--", linewidth=0.8)
        ax.axvline(d["sw_max"], color="C0", linestyle=":", linewidth=1)
        ax.axvline(d["sr_max"], color="C1", linestyle=":", linewidth=1)
        ax.set_yscale("log")
        ax.set_title(f"{preset}: S_w^max={d['sw_max']}, S_r^max={d['sr_max']}", fontsize=9)
        ax.set_xlabel("stride distance S (blocks)")
        ax.set_ylabel("normalized turnaround")
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle("seed 000 Fig. 9 on vraid's hdd model (dashed: 1.2)")
    fig.tight_layout()
    p9 = out_dir / "fig9.png"
    fig.savefig(p9, dpi=90)
    plt.close(fig)
    files = [p9]
    if fig1.get("disks"):
        fig, ax = plt.subplots(figsize=(6, 4))
        for preset, c in fig1["disks"].items():
            ax.plot(c["mean"], c["normalized"], "-o", markersize=3, label=preset)
        ax.set_yscale("log")
        ax.set_xlabel(f"average stride distance (blocks, exponential, max {fig1.get('max_stride')})")
        ax.set_ylabel("normalized turnaround of the write")
        ax.set_title("seed 000 Fig. 1 on vraid's hdd model")
        ax.legend(fontsize=8)
        fig.tight_layout()
        p1 = out_dir / "fig1.png"
        fig.savefig(p1, dpi=90)
        plt.close(fig)
        files.append(p1)
    return files
