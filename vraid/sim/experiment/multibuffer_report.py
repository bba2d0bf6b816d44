"""The report half of experiment ``multibuffer``: results.md, the PNGs and the terminal table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .runner import load_json
from .verdict import from_json, markdown_table

_STYLE = {"multibuffer": "-o", "dpsr": "--s", "raid5": ":^"}
_LABEL = {"multibuffer": "Multibuffering (LRW)", "dpsr": "DPSR", "raid5": "RAID-5"}


def summary(results: dict[str, Any]):
    from ..table import TextTable

    t = TextTable(title="paper 004: concurrent accesses (after warm-up) vs W/R ratio, skew 0.7 (Fig. 5)")
    t.add_column("W/R", justify="right")
    for s in _LABEL:
        t.add_column(_LABEL[s], justify="right")
    f5 = results["by_wr"]["0.7"]
    for i, w in enumerate(f5["wr"]):
        t.add_row(f"{w:.1f}", *(str(f5[s][i]) for s in _LABEL))
    return t


def report(results: dict[str, Any], out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    files: list[Path] = []
    plots = True
    try:
        files += _plots(results, out_dir)
    except ImportError:
        plots = False
    detail = load_json(out_dir / "detail.json").get("runs", [])
    md = out_dir / "results.md"
    md.write_text(_markdown(results, detail, plots))
    return [md, *files]


def _plots(res: dict[str, Any], out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    h = res["hit_rate"]
    fig, ax = plt.subplots(figsize=(5, 3.6))
    ax.plot(h["skew"], [100 * v for v in h["fifo"]], "--s", label="FIFO")
    ax.plot(h["skew"], [100 * v for v in h["lrw"]], "-o", label="LRW")
    ax.set_xlabel("access skew")
    ax.set_ylabel("hit rate (%)")
    ax.set_title("Fig. 3 on vraid: hit rates vs skew, W/R 0.3", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out.append(out_dir / "fig3.png")
    fig.savefig(out[-1], dpi=90)
    plt.close(fig)
    panels = [("fig4.png", "Fig. 4: accesses vs W/R, skew 0.3", res["by_wr"]["0.3"], "wr", "W/R ratio"),
              ("fig5.png", "Fig. 5: accesses vs W/R, skew 0.7", res["by_wr"]["0.7"], "wr", "W/R ratio"),
              ("fig6.png", "Fig. 6: accesses vs skew, W/R 0.1", res["by_skew"]["0.1"], "skew", "access skew"),
              ("fig7.png", "Fig. 7: accesses vs skew, W/R 0.5", res["by_skew"]["0.5"], "skew", "access skew"),
              ("fig8.png", "Fig. 8: accesses vs skew, W/R 0.9", res["by_skew"]["0.9"], "skew", "access skew")]
    for name, title, data, key, xlabel in panels:
        fig, ax = plt.subplots(figsize=(5, 3.6))
        for s in _LABEL:
            ax.plot(data[key], data[s], _STYLE[s], label=_LABEL[s])
        ax.set_xlabel(xlabel)
        ax.set_ylabel("concurrent accesses")
        ax.set_ylim(bottom=0)
        ax.set_title(title + " (vraid)", fontsize=10)
        ax.legend(fontsize=8)
        fig.tight_layout()
        out.append(out_dir / name)
        fig.savefig(out[-1], dpi=90)
        plt.close(fig)
    return out


def _series_table(data: dict[str, Any], key: str, label: str) -> list[str]:
    lines = [f"| {label} | " + " | ".join(_LABEL[s] for s in _LABEL) + " | MB saving vs DPSR | vs RAID-5 |",
             "|---:|" + "---:|" * (len(_LABEL) + 2)]
    for i, x in enumerate(data[key]):
        mb, dp, r5 = (data[s][i] for s in ("multibuffer", "dpsr", "raid5"))
        lines.append(f"| {x:g} | {mb} | {dp} | {r5} | {100 * (1 - mb / dp):.0f} % | {100 * (1 - mb / r5):.0f} % |")
    return lines


def _markdown(res: dict[str, Any], detail: list[dict[str, Any]], plots: bool) -> str:
    sizes = res["write_sizes"]
    total = sum(sizes.values()) or 1
    r = detail[0] if detail else {}
    L = ["# paper 004 on vraid: multibuffering vs DPSR vs RAID-5", "",
         "The paper's simulator is an access-counting simulation (section 3: the metric is the number of "
         "concurrent accesses, each touching up to nine disks; no disk timing). So is this experiment: it drives "
         "vraid's placement policies (`static`, `multibuffer`, `dpsr`) and stripe directory, the objects the engine "
         "will run, and counts accesses as `vraid/sim/experiment/multibuffer_sim.py` describes. The cleaner's "
         "(multibuffering) and garbage collector's (DPSR) accesses are background work, counted apart (detail.json "
         "`background`), not in the figures: ours, the paper does not say how it counts them.", "",
         f"Requests per run: {r.get('requests', '?')} ({r.get('warmup', '?')} warm-up; the paper: 120000 and 70000); "
         "wall time in meta.json.", "",
         "## Paper vs vraid", "", markdown_table(from_json(res["paper_vs_vraid"])), "",
         "## Table 1: sizes of multibuffering's stripe writes (all its runs, final flushes included)", "",
         "| S | " + " | ".join(sizes) + " |", "|---|" + "---:|" * len(sizes),
         "| #W | " + " | ".join(str(v) for v in sizes.values()) + " |",
         "| %W | " + " | ".join(f"{100 * v / total:.1f}" for v in sizes.values()) + " |", "",
         "Paper: 6, 10, 13, 13, 14, 16, 106, 10130 (98.3 % large writes).", "",
         "## Fig. 3: hit rate vs skew, W/R 0.3", "", "| skew | FIFO | LRW |", "|---:|---:|---:|"]
    h = res["hit_rate"]
    L += [f"| {z:g} | {100 * f:.1f} % | {100 * l:.1f} % |" for z, f, l in zip(h["skew"], h["fifo"], h["lrw"])]
    for z in ("0.3", "0.7"):
        L += ["", f"## Fig. {4 if z == '0.3' else 5}: accesses vs W/R, skew {z}", ""]
        L += _series_table(res["by_wr"][z], "wr", "W/R")
    for w, fig in (("0.1", 6), ("0.5", 7), ("0.9", 8)):
        L += ["", f"## Fig. {fig}: accesses vs skew, W/R {w}", ""]
        L += _series_table(res["by_skew"][w], "skew", "skew")
    if plots:
        L += ["", "![Fig. 3](fig3.png) ![Fig. 4](fig4.png) ![Fig. 5](fig5.png)",
              "![Fig. 6](fig6.png) ![Fig. 7](fig7.png) ![Fig. 8](fig8.png)"]
    if detail:
        L += ["", "## Every run", "", "| scheme | order | skew | W/R | accesses | reads | writes | background | hit rate "
              "| LW | PW | RAID-5 small writes |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for d in detail:
            L.append(f"| {d['scheme']} | {d['order'] if d['scheme'] == 'multibuffer' else ''} | {d['skew']:g} | "
                     f"{d['wr']:g} | {d['accesses']} | {d['read_accesses']} | {d['write_accesses']} | "
                     f"{d['background']} | {100 * d['hit_rate']:.1f} % | {d['lw']} | {d['pw']} | {d['small_writes']} |")
    return "\n".join(L) + "\n"
