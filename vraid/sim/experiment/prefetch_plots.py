"""Experiment ``prefetch``: the figures that draw paper 001's numbers beside vraid's.

The paper prints its Fig. 8 and Fig. 10 results as ratios in the text (sec. 5.2, 5.4), not
as bandwidths, so the comparison drawn is of ratios: ``claims.png`` puts the paper's ratio
(hollow bar) beside vraid's (filled) for every numeric row of ``paper_vs_vraid``;
``fig10.png`` draws SASEQP over SEQP against the maximum prefetch size for the web server
(paper 001 Fig. 10a/10b) with the paper's values as markers on vraid's lines.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from . import figures
from .prefetch_paper import FIG10


def claims_png(rows: list[dict[str, Any]], path: Path) -> Path | None:
    """Paper vs vraid for every judged ratio row (unit ``x``); None when there is none."""
    rows = [r for r in rows if r.get("unit") == "x" and r["verdict"] not in ("input", "not run")
            and not math.isnan(float(r["vraid"]))]
    if not rows:
        return None
    plt = figures.pyplot()
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(rows) + 1.2))
    ys = range(len(rows))
    ax.barh([y + 0.2 for y in ys], [r["paper"] for r in rows], height=0.38, fill=False, edgecolor="black",
            label="paper 001")
    ax.barh([y - 0.2 for y in ys], [r["vraid"] for r in rows], height=0.38, color="tab:blue", label="vraid")
    ax.axvline(1.0, color="grey", lw=0.8)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([r["item"][:70] for r in rows], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("ratio (x)")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("paper 001 against vraid: every ratio claim", fontsize=9)
    return figures.save(fig, path)


def fig10_png(extra: list[dict[str, Any]], path: Path) -> Path | None:
    """SASEQP over SEQP against the max prefetch size, web server, both strips (paper: markers)."""
    web = [r for r in extra if r.get("kind") == "webserver" and r.get("filesize") == 4 << 20
           and not r.get("ablation")]
    if not web:
        return None
    plt = figures.pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for (strip, pairs), colour in zip(FIG10.items(), ("tab:blue", "tab:orange")):
        xs, ours, papers = [], [], []
        for m, paper in pairs:
            a = next((r for r in web if r["strip"] == strip and r["policy"] == "saseqp" and r["max_kib"] == m), None)
            b = next((r for r in web if r["strip"] == strip and r["policy"] == "seqp" and r["max_kib"] == m), None)
            if a and b and b["mb_s"]:
                xs.append(m)
                ours.append(a["mb_s"] / b["mb_s"])
                papers.append(paper)
        ax.plot(xs, ours, "-o", color=colour, label=f"vraid, strip {strip >> 10} KiB")
        ax.plot([x for x, p in zip(xs, papers) if p], [p for p in papers if p], "x", color=colour, markersize=9,
                label=f"paper, strip {strip >> 10} KiB")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("maximum prefetch size (KiB)")
    ax.set_ylabel("SASEQP over SEQP (x)")
    ax.set_title("paper 001 Fig. 10a/10b: FileBench web server, 32 threads", fontsize=9)
    ax.legend(fontsize=7)
    return figures.save(fig, path)


__all__ = ["claims_png", "fig10_png"]
