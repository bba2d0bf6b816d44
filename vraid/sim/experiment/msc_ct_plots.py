"""Experiment ``msc-ct``'s figures, the paper's values drawn beside vraid's.

* ``fig11.png``: MB/s against the workspace per host (vraid; the paper prints no MB/s for
  Fig. 11), and the three throughput ratios against the workspace, vraid's as lines and the
  paper's (sec. IV-B: 1 and 8 GB) as large hollow markers of the same colour;
* ``fig12.png``: the CT gain against the number of writes (the paper's 40k and 2560k points as
  hollow markers), and Table II's ratios, the paper's bars beside vraid's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import figures
from .msc_ct_paper import DISK_MODEL, HOSTS, NAMES, PAPER_RATIOS, POLICIES

_COLOURS = {"msc_ct_over_sc": "C2", "msc_ct_over_pbgc": "C3", "sc_over_pbgc": "C0"}
_LABELS = {"msc_ct_over_sc": "MSC-CT / SC", "msc_ct_over_pbgc": "MSC-CT / PBGC", "sc_over_pbgc": "SC / PBGC"}


def _pyplot():
    plt = figures.pyplot()

    return plt


def fig11(results: dict[str, Any], path: Path) -> Path:
    plt = _pyplot()
    hosts = [results["host"]] + [h for h in HOSTS if h in results]
    fig, axes = plt.subplots(1, len(hosts) + 1, figsize=(5.0 * (len(hosts) + 1), 3.9), squeeze=False)
    ws = results["workspace"]
    for ax, host in zip(axes[0], hosts):
        s = results if host == results["host"] else results[host]
        for key, style in zip(POLICIES, ("-s", "-o", "-^", ":x")):
            if key in s:
                ax.plot(ws, s[key], style, label=NAMES[key] + ("" if key != "pbgc" else " (md + elevator)"))
        ax.set(xlabel="workspace (GB, paper scale)", ylabel="throughput (MB/s)", xticks=ws,
               title=f"{host} host (vraid; the paper prints no MB/s)")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    ax = axes[0][-1]
    main = results
    for key in _COLOURS:
        a, b = key.split("_over_")
        ours = [x / y if y else float("nan") for x, y in zip(main[a], main[b])]
        ax.plot(ws, ours, "-", color=_COLOURS[key], label=f"{_LABELS[key]} vraid")
        pts = [(gb, v) for k, gb, v in PAPER_RATIOS if k == key]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", ms=10, mfc="none", mew=2, color=_COLOURS[key],
                label=f"{_LABELS[key]} paper")
    ax.axhline(1.0, color="grey", lw=0.6)
    ax.set(xlabel="workspace (GB)", ylabel="throughput ratio", xticks=ws, title=f"{main['host']} host: ratios")
    ax.legend(fontsize=7)
    st = results.get("setup", {})
    fig.suptitle(f"paper 000 Fig. 11 on vraid: random 4 KiB writes, 5 x {DISK_MODEL}, scale 1/{st.get('scale', '?')}; "
                 "hollow markers: the paper", fontsize=9)
    return figures.save(fig, path)


def fig12(results: dict[str, Any], path: Path) -> Path | None:
    from .msc_ct_figs import FIG12, TABLE2

    more = results.get("more", {})
    f, t2 = more.get("fig12"), more.get("table2")
    if not f and not t2:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.9))
    ax = axes[0]
    if f:
        w = [x / 1000 for x in f["writes"]]
        ax.plot(w, [c / s for c, s in zip(f["msc_ct"], f["sc"])], "-^", color="C2", label="MSC-CT / SC vraid")
        ax.plot(w, [s / p for s, p in zip(f["sc"], f["pbgc"])], "-o", color="C0", label="SC / PBGC vraid")
        ax.plot([40, 2560], [FIG12["gain_40k"], FIG12["gain_2560k"]], "o", ms=10, mfc="none", mew=2, color="C2",
                label="MSC-CT / SC paper")
        ax.set_xscale("log")
        ax.axhline(1.0, color="grey", lw=0.6)
        ax.set(xlabel="writes (thousands, paper scale)", ylabel="throughput ratio",
               title="Fig. 12(a): 1.5 GB workspace, page-cache host")
        ax.legend(fontsize=7)
    ax = axes[1]
    if t2:
        names = list(t2)
        paper = [TABLE2[n][1] / TABLE2[n][0] for n in names]
        ours = [t2[n]["sc"] / t2[n]["pbgc"] if t2[n]["pbgc"] else 0 for n in names]
        x = range(len(names))
        ax.bar([i - 0.2 for i in x], paper, 0.4, color="none", edgecolor="k", hatch="//", label="paper")
        ax.bar([i + 0.2 for i in x], ours, 0.4, color="C0", label="vraid")
        ax.axhline(1.0, color="grey", lw=0.6)
        ax.set_xticks(list(x))
        ax.set_xticklabels([n.replace(" (block)", "") for n in names], fontsize=7, rotation=15)
        ax.set(ylabel="SC / PBGC throughput", title="Table II, block level (512 KiB, stripe 512 KiB)")
        ax.legend(fontsize=7)
    return figures.save(fig, path)
