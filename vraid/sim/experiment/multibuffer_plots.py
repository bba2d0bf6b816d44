"""The PNGs of experiment ``multibuffer``: vraid's curves with paper 004's values beside them.

Figs. 3-8 of the paper are drawn, not printed: what the paper gives in numbers is its
prose (section 2.3: hit rates 8 % to 86 %; sections 4.2-4.3: DPSR 14 % worse than RAID-5
at W/R 0.1, the two matching near W/R 0.4, savings of 40 %, 84 %, 86 %, 17 %, 89 %) and
Table 1. Each figure has two panels: the accesses (the cleaner counted by the paper's rule,
solid; the requests' own accesses, faint dashed) and the ratios those numbers are about,
with the paper's values as black stars (a dotted line where the paper gives a best value
but not where). ``table1.png`` puts the shares of stripe writes by size beside the paper's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import figures
from .multibuffer_paper import TABLE1_COUNTS

_STYLE = {"multibuffer": "-o", "dpsr": "--s", "raid5": ":^"}
_COLOUR = {"multibuffer": "C0", "dpsr": "C1", "raid5": "C2"}
_LABEL = {"multibuffer": "Multibuffering (LRW)", "dpsr": "DPSR", "raid5": "RAID-5"}
#: figure -> [(ratio, x, paper's value, note)]; x None: the paper's best value, no position given
PAPER_RATIOS: dict[str, list[tuple[str, float | None, float, str]]] = {
    "fig5.png": [("dpsr/raid5", 0.1, 1.14, "14 % worse"), ("dpsr/raid5", 0.4, 1.0, "match near 0.4"),
                 ("mb/raid5", None, 0.16, "best saving 84 %"), ("mb/dpsr", None, 0.60, "best saving 40 %")],
    "fig7.png": [("mb/best", 1.0, 0.14, "86 % better"), ("mb/dpsr", 0.0, 0.83, "17 % better")],
    "fig8.png": [("mb/dpsr", 1.0, 0.11, "89 % better")],
}
_RATIO_LABEL = {"mb/raid5": "MB / RAID-5", "mb/dpsr": "MB / DPSR", "dpsr/raid5": "DPSR / RAID-5",
                "mb/best": "MB / better of the two"}
_RATIO_COLOUR = {"mb/raid5": "C0", "mb/dpsr": "C3", "dpsr/raid5": "C1", "mb/best": "C4"}


def _ratio(d: dict[str, list[int]], name: str) -> list[float]:
    mb, dp, r5 = d["multibuffer"], d["dpsr"], d["raid5"]
    pairs = {"mb/raid5": zip(mb, r5), "mb/dpsr": zip(mb, dp), "dpsr/raid5": zip(dp, r5),
             "mb/best": zip(mb, (min(a, b) for a, b in zip(dp, r5)))}[name]
    return [a / b if b else float("nan") for a, b in pairs]


def plots(res: dict[str, Any], out_dir: Path) -> list[Path]:
    """fig3.png .. fig8.png and table1.png; ImportError without matplotlib."""
    plt = figures.pyplot()

    out = [_fig3(plt, res, out_dir / "fig3.png")]
    panels = [("fig4.png", "Fig. 4: skew 0.3", res["by_wr"]["0.3"], "wr", "W/R ratio"),
              ("fig5.png", "Fig. 5: skew 0.7", res["by_wr"]["0.7"], "wr", "W/R ratio"),
              ("fig6.png", "Fig. 6: W/R 0.1", res["by_skew"]["0.1"], "skew", "access skew"),
              ("fig7.png", "Fig. 7: W/R 0.5", res["by_skew"]["0.5"], "skew", "access skew"),
              ("fig8.png", "Fig. 8: W/R 0.9", res["by_skew"]["0.9"], "skew", "access skew")]
    for name, title, data, key, xlabel in panels:
        fig, (ax, rx) = plt.subplots(1, 2, figsize=(10, 3.8))
        xs = data[key]
        for s in _LABEL:
            ax.plot(xs, data["paper_rule"][s], _STYLE[s], color=_COLOUR[s], label=f"{_LABEL[s]}, cleaner by paper's rule"
                    if s != "raid5" else _LABEL[s])
            if s != "raid5":
                ax.plot(xs, data[s], "--", color=_COLOUR[s], alpha=0.35, label=f"{_LABEL[s]}, requests only")
        ax.plot(xs, data["hot_all"]["multibuffer"], ":", color=_COLOUR["multibuffer"], alpha=0.6,
                label="MB, whole array hot (ablation)")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("concurrent accesses (vraid)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"{title}: accesses", fontsize=10)
        ax.legend(fontsize=6)
        marks = PAPER_RATIOS.get(name, [])
        names = sorted({m[0] for m in marks}) or ["mb/raid5", "dpsr/raid5"]
        for rname in names:
            c = _RATIO_COLOUR[rname]
            rx.plot(xs, _ratio(data["paper_rule"], rname), "-o", color=c, label=f"{_RATIO_LABEL[rname]} (vraid)")
            rx.plot(xs, _ratio({s: data[s] for s in _LABEL}, rname), "--", color=c, alpha=0.35,
                    label=f"{_RATIO_LABEL[rname]}, requests only")
        for rname, x, value, note in marks:
            if x is None:
                rx.axhline(value, color=_RATIO_COLOUR[rname], linestyle=":", linewidth=1)
                rx.annotate(f"paper: {note}", (xs[0], value), fontsize=6, va="bottom")
            else:
                rx.plot([x], [value], "k*", markersize=11)
                rx.annotate(f"paper: {note}", (x, value), fontsize=6, xytext=(4, 4), textcoords="offset points")
        if not marks:
            rx.text(0.5, 0.95, "the paper prints no number for this figure", transform=rx.transAxes,
                    ha="center", va="top", fontsize=7)
        rx.axhline(1.0, color="grey", linewidth=0.5)
        rx.set_xlabel(xlabel)
        rx.set_ylabel("ratio of accesses")
        rx.set_ylim(bottom=0)
        rx.set_title(f"{title}: ratios, paper (stars) vs vraid", fontsize=10)
        rx.legend(fontsize=6)
        out.append(figures.save(fig, out_dir / name))
    out.append(_table1(plt, res, out_dir / "table1.png"))
    return out


def _fig3(plt: Any, res: dict[str, Any], path: Path) -> Path:
    h = res["hit_rate"]
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    ax.plot(h["skew"], [100 * v for v in h["fifo"]], "--s", label="FIFO (vraid)")
    ax.plot(h["skew"], [100 * v for v in h["lrw"]], "-o", label="LRW (vraid)")
    ax.plot(h["skew"], [100 * v for v in h["lrw_first_block"]], ":", label="LRW, read's first block only")
    ax.plot([min(h["skew"]), max(h["skew"])], [8, 86], "k*", markersize=11, label="paper (sec. 2.3: 8 % to 86 %)")
    ax.set_xlabel("access skew")
    ax.set_ylabel("hit rate (%)")
    ax.set_title("Fig. 3: hit rates vs skew, W/R 0.3", fontsize=10)
    ax.legend(fontsize=7)
    return figures.save(fig, path)


def _table1(plt: Any, res: dict[str, Any], path: Path) -> Path:
    sizes = res["write_sizes"]
    total, paper_total = sum(sizes.values()) or 1, sum(TABLE1_COUNTS.values())
    ks = list(range(1, 9))
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.bar([k - 0.2 for k in ks], [100 * TABLE1_COUNTS[k] / paper_total for k in ks], 0.4, color="k",
           label="paper (Table 1)")
    ax.bar([k + 0.2 for k in ks], [100 * sizes[str(k)] / total for k in ks], 0.4, color="C0", label="vraid")
    ax.set_yscale("log")
    ax.set_xlabel("stripe write size S (data blocks)")
    ax.set_ylabel("share of stripe writes (%)")
    ax.set_title("Table 1: multibuffering's stripe writes by size", fontsize=10)
    ax.legend(fontsize=8)
    return figures.save(fig, path)
