"""The ``adaptive-hlwm`` experiment's plots, each with the paper's values beside ours.

``fig4.png``: seed 003 Fig. 4 (W_synth^1): occupancy and marks over time for both schedulers,
the marks the paper reports for T2, T4, T6 and T8 (sec. 4.2.1) drawn as dashed ghosts on the
adaptive panel. ``fig5_6.png``: Figs. 5 and 6: overwrite ratio and destage traffic per period,
and adaptive against HLWM in per cent with the paper's changes as markers. ``fig7_9.png``:
W_synth^2 and the traced workloads' stand-ins (Figs. 7-9): every judged row, ours beside the
paper's. Needs matplotlib (the report says so when it is missing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from . import figures
from . import verdict
from .adaptive_hlwm_paper import SCHEDULERS

#: the marks seed 003 reports for W_synth^1's Case periods (sec. 4.2.1), per cent: (HWM, LWM)
PAPER_MARKS = {"T2": (73.0, 33.0), "T4": (39.0, 2.0), "T6": (50.0, 26.0), "T8": (None, 9.0)}
#: the paper's changes, adaptive against HLWM, per cent (sec. 4.2.1)
PAPER_OVERWRITE = {"T2": 56.0, "T6": 36.0}
PAPER_TRAFFIC = {"T2": -9.0, "T4": 0.0, "T6": -4.0, "T8": 0.0}


def plots_for(results: dict[str, Any], timeline: dict[str, Any], out_dir: Path) -> list[Path]:
    """Write the plots into ``out_dir``; raises ImportError without matplotlib."""
    plt = figures.pyplot()

    files: list[Path] = []
    period = timeline.get("period_seconds")
    names = timeline.get("names", [row["name"] for row in results["periods"]])
    if period and all(s in timeline for s in SCHEDULERS):
        files.append(_fig4(plt, timeline, names, period, out_dir))
    files.append(_fig5_6(plt, results, out_dir))
    p79 = _fig7_9(plt, results, out_dir)
    if p79 is not None:
        files.append(p79)
    return files


def _fig4(plt, timeline: dict[str, Any], names: list[str], period: float, out_dir: Path) -> Path:
    fig, axes = plt.subplots(2, 1, figsize=(12, 6.5), sharex=True)
    for ax, s in zip(axes, SCHEDULERS):
        tl = timeline[s]
        ax.plot(tl["t"], [100 * o for o in tl["occupancy"]], color="0.35", linewidth=0.7, label="occupancy")
        mt = [m[0] for m in tl["marks"]] + [len(names) * period]
        mh = [100 * m[1] for m in tl["marks"]]
        ml = [100 * m[2] for m in tl["marks"]]
        ax.step(mt, mh + mh[-1:], where="post", color="C3", linewidth=1.2, label="HWM")
        ax.step(mt, ml + ml[-1:], where="post", color="C0", linewidth=1.2, label="LWM")
        for k, name in enumerate(names):
            if k:
                ax.axvline(k * period, color="0.6", linestyle="--", linewidth=0.8)
            ax.text((k + 0.5) * period, 103, name, ha="center", va="bottom", fontsize=9)
        if s == "adaptive":
            first = True
            for name, (h, l) in PAPER_MARKS.items():
                if name not in names:
                    continue
                k = names.index(name)
                for v, c in ((h, "C3"), (l, "C0")):
                    if v is not None:
                        ax.hlines(v, k * period, (k + 1) * period, colors=c, linestyles=":", linewidth=2.2,
                                  alpha=0.55, label="paper's marks" if first else None)
                        first = False
        ax.set_ylim(0, 110)
        ax.set_ylabel("write cache occupancy (%)")
        ax.set_title("static HLWM (0.5 / 0.1)" if s == "static" else
                     "adaptive thresholding (dotted: the paper's marks, sec. 4.2.1)", fontsize=10, loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8)
    axes[-1].set_xlabel("virtual time (s)")
    fig.suptitle("paper 003 Fig. 4 (W_synth^1) on vraid: occupancy with HWM and LWM", fontsize=11)
    return figures.save(fig, out_dir / "fig4.png")


def _fig5_6(plt, results: dict[str, Any], out_dir: Path) -> Path:
    rows = results["periods"]
    names = [row["name"] for row in rows]
    x = np.arange(len(rows))
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.6))
    for col, (key, label, paper) in enumerate((("overwrite_ratio", "overwrite ratio (Fig. 5)", PAPER_OVERWRITE),
                                               ("destage_blocks", "destage blocks read + written (Fig. 6)",
                                                PAPER_TRAFFIC))):
        ax = axes[0][col]
        for i, s in enumerate(SCHEDULERS):
            ax.bar(x + (i - 0.5) * 0.38, [row[s][key] for row in rows], width=0.38,
                   label="HLWM" if s == "static" else "adaptive")
        ax.set_xticks(x, names)
        ax.set_title(label, fontsize=10)
        ax.legend(fontsize=8)
        ax = axes[1][col]
        ours = [100 * (row["adaptive"][key] - row["static"][key]) / row["static"][key] if row["static"][key] else 0.0
                for row in rows]
        ax.bar(x, ours, width=0.5, color="C1", label="vraid")
        px = [names.index(n) for n in paper if n in names]
        ax.scatter(px, [paper[names[k]] for k in px], marker="D", s=40, facecolors="none", edgecolors="k",
                   linewidths=1.4, zorder=3, label="paper")
        ax.axhline(0, color="0.5", linewidth=0.8)
        ax.set_xticks(x, names)
        ax.set_ylabel("adaptive vs HLWM (%)")
        ax.legend(fontsize=8)
    fig.suptitle("paper 003 Figs. 5 and 6 (W_synth^1) on vraid; bottom: the paper's changes (markers) beside ours",
                 fontsize=10)
    return figures.save(fig, out_dir / "fig5_6.png")


def _fig7_9(plt, results: dict[str, Any], out_dir: Path) -> Path | None:
    rows = [r for r in verdict.from_json(results.get("paper_vs_vraid", []))
            if r.verdict not in (verdict.NOT_RUN, verdict.INPUT)
            and (r.item.startswith("W_synth^2") or r.item.startswith("W_traced"))]
    groups = [("entries/s", [r for r in rows if r.unit == ""]), ("%", [r for r in rows if r.unit == "%"]),
              ("x", [r for r in rows if r.unit == "x"])]
    groups = [(u, g) for u, g in groups if g]
    if not groups:
        return None
    heights = [max(1.2, 0.36 * len(g) + 0.8) for _, g in groups]
    fig, axes = plt.subplots(len(groups), 1, figsize=(12, sum(heights)), gridspec_kw={"height_ratios": heights})
    axes = np.atleast_1d(axes)
    for ax, (unit, g) in zip(axes, groups):
        y = np.arange(len(g))[::-1]
        ax.barh(y, [r.vraid for r in g], height=0.5, color="C1", label="vraid")
        ax.scatter([r.paper for r in g], y, marker="D", s=40, facecolors="none", edgecolors="k", linewidths=1.4,
                   zorder=3, label="paper")
        ax.set_yticks(y, [r.item if len(r.item) < 70 else r.item[:67] + "..." for r in g], fontsize=7)
        ax.axvline(0 if unit != "x" else 1, color="0.5", linewidth=0.8)
        ax.set_xlabel(unit)
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle("paper 003 W_synth^2 and Figs. 7-9 (traced workloads, on vraid's stand-ins): the paper's values "
                 "(markers) beside ours", fontsize=10)
    return figures.save(fig, out_dir / "fig7_9.png")


__all__ = ["PAPER_MARKS", "plots_for"]
