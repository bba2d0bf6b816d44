"""The ``stride`` experiment's report: the S^max table, results.md against seed 000, the plots.

Split from :mod:`.stride` (which runs the benchmark and collects): :func:`summary` is the
terminal's S^max table (seed 000 Fig. 9 and the 1.2 rule of sec. III-D), :func:`report` writes
``results.md`` (setup, the :mod:`.stride_paper` verdicts, S^max and excluded regions, the Fig. 9,
Fig. 1 and Fig. 15 curves, the comparison with the paper's prose) and ``fig9.png`` / ``fig1.png`` /
``fig15.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vraid.backends.hdd_params import HddParams
from vraid.backends.models import PRESETS
from vraid.core.stride_rule import THRESHOLD

from . import figures
from ..stride_bench import BLOCK
from .runner import load_json
from .store import source_commit


def summary(results: dict[str, Any]):
    """The S^max table for the terminal."""
    from ..table import TextTable

    t = TextTable(title="paper 000 Fig. 9: stride benchmark (1.2 rule)")
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
_NOT_IN_PAPER = "not measured in paper 000 (Fig. 9(b)-(d) do not name their disks)"


def report(results: dict[str, Any], out_dir: Path) -> list[Path]:
    """results.md, fig9.png, fig1.png and fig15.png (plots only when matplotlib is installed)."""
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
    lines = ["# stride: paper 000 Fig. 9 and Fig. 1 on vraid's disk models", "",
             f"Produced by commit `{source_commit()}` with `vraid experiment stride`; settings and wall time in "
             "meta.json.", ""]
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

        lines += ["## Paper vs vraid", ""]
        lines += verdicts(results["paper_vs_vraid"]) + [""]
    lines += ["## S^max and excluded regions (Fig. 9)", "",
              "| disk | drive | read-ahead | queue (tcq=on) | S_w^max | S_w^except | S_r^max | S_r^except | paper 000 |",
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
        if results.get("fig15"):
            lines += ["", "![Fig. 15](fig15.png)"]
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
    plt = figures.pyplot()

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
    fig.suptitle("paper 000 Fig. 9 on vraid's hdd model (dashed: 1.2)")
    files = [figures.save(fig, out_dir / "fig9.png")]
    if fig1.get("disks"):
        fig, ax = plt.subplots(figsize=(6, 4))
        for preset, c in fig1["disks"].items():
            ax.plot(c["mean"], c["normalized"], "-o", markersize=3, label=preset)
        ax.set_yscale("log")
        ax.set_xlabel(f"average stride distance (blocks, exponential, max {fig1.get('max_stride')})")
        ax.set_ylabel("normalized turnaround of the write")
        ax.set_title("paper 000 Fig. 1 on vraid's hdd model")
        ax.legend(fontsize=8)
        files.append(figures.save(fig, out_dir / "fig1.png"))
    if results.get("fig15"):
        files.append(_fig15_plot(plt, results, out_dir))
    return files


def _fig15_plot(plt: Any, results: dict[str, Any], out_dir: Path) -> Path:
    """Fig. 15: normalized turnaround against the CT limit L, ours beside the paper's claim (the
    fastest L is the stride benchmark's S^max: the dotted line, a cross where the paper puts the
    minimum), with the bus ablation's curves (a serial bus at each rate) thin and dashed."""
    f15, bus = results["fig15"], results.get("ablation_bus_serial") or {}
    disk = results["disks"].get(f15["preset"], {})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), squeeze=False)
    for ax, (op, key) in zip(axes.flat, (("write", "sw_max"), ("read", "sr_max"))):
        if op not in f15:
            ax.set_visible(False)
            continue
        c = f15[op]
        ax.plot(c["limit"], c["normalized"], "-o", markersize=3, color="C0", label=f"vraid (fastest L = {c['fastest']})")
        for k, (rate, curves) in enumerate(bus.items()):
            if op in curves and float(rate) < 320:
                ax.plot(curves[op]["limit"], curves[op]["normalized"], "--", linewidth=0.9, color=f"C{k + 2}",
                        label=f"ablation: serial bus {rate} MB/s (fastest {curves[op]['fastest']})")
        smax = disk.get(key)
        if smax:
            ax.axvline(smax, color="grey", linestyle=":", linewidth=1)
            at = dict(zip(c["limit"], c["normalized"])).get(smax)
            if at is not None:
                ax.plot([smax], [at], "x", color="red", markersize=9, mew=2,
                        label=f"paper: fastest at S^max = {smax} (Fig. 9(a))")
        ax.set_xlabel("CT limit L (blocks)")
        ax.set_ylabel("normalized turnaround (L = 1: no CT)")
        ax.set_title(f"{f15['preset']}, {op}s", fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(f"paper 000 Fig. 15 on vraid's hdd model (exponential strides, mean {f15['mean']:g})")
    return figures.save(fig, out_dir / "fig15.png")


__all__ = ["PAPER", "report", "summary"]
