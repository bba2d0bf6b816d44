"""Report of the ``vc-raid`` experiment: the tables, the verdicts, results.md and the PNG.

The paper's numbers are in :mod:`.vc_raid_paper` (seed 002: Table 2's PostMark TPS, Fig. 7's
untar/copy/remove gains in synchronous and asynchronous mode, Fig. 8's Bonnie gains, and the
ServerBench claims of Figs. 4-6, which are not run); the rows that judge them, with
:mod:`.verdict`'s one rule, are in :mod:`.vc_raid_rows`. The ratios are compared (the machines
differ by 25 years; the absolute TPS do not carry over). A configuration that did not run is
listed as such, not judged. The PNG draws the paper's value beside every ratio of ours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from . import figures
from .vc_raid_paper import FIG7_SYNC, PROGRAMS, TABLE2, number as _num
from .verdict import INPUT, NOT_RUN, from_json, markdown_table, rule_text, tally

LABEL = {"raid0": "RAID-0", "raid5": "RAID-5", "scd": "VC-RAID scd", "mcd": "VC-RAID mcd",
         "scd-fill": "scd, 4M log (ablation)", "raid0-floor": "RAID-0, no disk time (ablation)",
         "raid5-floor": "RAID-5, no disk time (ablation)"}
COLOUR = {"raid0": "C0", "raid5": "C1", "scd": "C2", "mcd": "C3", "scd-fill": "C4", "raid0-floor": "C5",
          "raid5-floor": "C6"}
RANGE_RULE = ("PostMark ran each configuration R times (below); a cell is the median and the range (lowest to "
              "highest run). A ratio's value is the ratio of the medians, its range (min of the top's runs / max "
              "of the bottom's, max / min): the runs of two arrays are not paired, so this is the widest the runs "
              "allow. A ratio whose range crosses 1, or reaches into the 25 % band around the paper's value "
              "without lying inside it, is *inconclusive* (the one rule, `verdict.judge`). untar/copy/remove "
              "and Bonnie ran once per configuration: no range.")


def comparisons(res: dict[str, Any]) -> list[dict[str, Any]]:
    """The paper_vs_vraid rows (:func:`.vc_raid_rows.comparisons`)."""
    from .vc_raid_rows import comparisons as rows

    return rows(res)


def not_run(res: dict[str, Any]) -> list[str]:
    """The paper's claims this run could not judge because a configuration was not available."""
    missing = sorted({c for size in res.get("postmark", {}).values() for c, v in size.items() if _num(v) is None}
                     | {c for k in ("untar_s", "copy_s", "remove_s") for c, v in res.get(k, {}).items() if _num(v) is None})
    out = []
    if "scd" in missing:
        out.append("PostMark scd / RAID-5 (paper 1.68x, 2.10x, 1.75x) and scd / RAID-0 (0.85x, 0.93x, 0.90x), Table 2")
    for c in ("scd", "mcd"):
        if c in missing:
            gains = ", ".join(f"{p} {FIG7_SYNC[(c, p)]:g}x" for p in PROGRAMS)
            out.append(f"{c} over RAID-5, sync untar/copy/remove (Fig. 7): {gains}")
    return out


def _cell(v: Any, fmt: str) -> str:
    n = _num(v)
    return format(n, fmt) if n is not None else str(v if v is not None else "-")


def _pm_cell(res: dict[str, Any], size: str, config: str) -> str:
    med = res.get("postmark", {}).get(size, {}).get(config)
    runs = res.get("postmark_runs", {}).get(size, {}).get(config) or []
    text = _cell(med, ".0f")
    return text + (f" ({min(runs):.0f}-{max(runs):.0f})" if len(runs) > 1 else "")


def summary(res: dict[str, Any]):
    from ..table import TextTable

    configs = _configs(res)
    t = TextTable(title="paper 002 on vraid: PostMark TPS (median of the runs), untar/copy/remove seconds")
    t.add_column("", justify="left")
    for c in configs:
        t.add_column(LABEL.get(c, c), justify="right")
    for size in res.get("postmark", {}):
        t.add_row(f"PostMark {size} (TPS)", *(_pm_cell(res, size, c) for c in configs))
    for mode, sfx in (("sync", "_s"), ("async", "_async_s")):
        for prog in PROGRAMS:
            t.add_row(f"{prog}, {mode} (s)", *(_cell(res.get(f"{prog}{sfx}", {}).get(c, "-"), ".2f") for c in configs))
    return t


def _configs(res: dict[str, Any]) -> list[str]:
    seen: list[str] = []
    rows = [*res.get("postmark", {}).values(), *(res.get(f"{p}_s", {}) for p in PROGRAMS), res.get("bonnie", {})]
    for row in rows:
        seen += [c for c in row if c not in seen]
    return seen


def report(res: dict[str, Any], out_dir: Path) -> list[Path]:
    from .runner import load_json

    detail = load_json(out_dir / "detail.json")
    files: list[Path] = []
    try:
        files.append(_plot(res, out_dir / "vc-raid.png"))
    except ImportError:
        pass
    md = out_dir / "results.md"
    md.write_text(markdown(res, detail, plotted=bool(files)))
    return [md, *files]


def _settings(spec: dict[str, Any], res: dict[str, Any]) -> str:
    """The report's first line from the sweep's settings (``spec``: :func:`.vc_raid_collect.settings_of`)."""
    from .store import source_commit

    pm = ", ".join(f"{s['name']} {s['files']}/{s['transactions']}" for s in spec.get("postmark", []))
    return (f"**This run:** PostMark {pm} (files/transactions), each configuration {res.get('repeats', '?')} times; "
            f"members of {next((a for i, a in enumerate(spec.get('create', [])) if i and spec['create'][i - 1] == '--disk-size'), '?')}, "
            f"time scale {spec.get('time_scale', '?')}, memory cap {res.get('ram_mb') or 'none'} MB, bonnie++ file "
            f"{spec.get('bonnie_mb', '?')} MiB, tree `{spec.get('tree', '?')}`. Produced by commit `{source_commit()}` "
            "with `vraid experiment vc-raid` (the settings above are its `--set` options; see docs/experiments.md).")


def _part_table(title: str, columns: str, data: dict[str, dict[str, dict[str, Any]]],
                cells: Callable[[dict[str, Any]], str]) -> list[str]:
    """A table of one row per configuration and part (``data`` {config: {part: counters}}), under
    ``title``; ``columns``: the header after "configuration | part", ``cells`` a row's cells after them."""
    if not data:
        return []
    lines = [title, "", f"| configuration | part | {columns} |", "|---|---|" + "--:|" * (columns.count("|") + 1)]
    lines += [f"| {LABEL.get(c, c)} | {part} | {cells(g)} |" for c, parts in data.items() for part, g in parts.items()]
    return lines + [""]


def _log_table(res: dict[str, Any]) -> list[str]:
    return _part_table(
        "## The log disk during each part (`vraid status --json`)",
        "segments in use at most / all | level-1 destages | level-2 destages | level-1 waits for a full log | "
        "writes waiting for RAM", res.get("log", {}),
        lambda g: f"{g.get('max_used_segments')} / {g.get('log_segments')} | {g.get('level1_destages')} | "
                  f"{g.get('level2_destages')} | {g.get('log_full_waits')} | {g.get('ram_full_waits')}")


def _cycle_table(res: dict[str, Any]) -> list[str]:
    """The array's write cycles during each part (runs that read them: since 2026-11-29's evening)."""
    return _part_table(
        "## The array's write cycles during each part (`vraid status --json`; paper 000 sec. II-A)",
        "host writes | MiB written | full-stripe PBGs | read-modify-write PBGs | reconstruct-write PBGs",
        res.get("cycles", {}),
        lambda g: f"{g.get('host_writes', 0):,} | {(g.get('host_write_bytes') or 0) / (1 << 20):,.1f} | "
                  f"{g.get('pbg_full', 0):,} | {g.get('pbg_rmw', 0):,} | {g.get('pbg_rcw', 0):,}")


def markdown(res: dict[str, Any], detail: dict[str, Any], *, plotted: bool = False) -> str:
    from . import vc_raid_notes
    from .vc_raid_collect import settings_of

    configs = _configs(res)
    runs = detail.get("runs", [])
    settings = settings_of([r["spec"] for r in runs if "spec" in r])  # once: the first line and the PostMark table
    lines = ["# vc-raid: paper 002 (VC-RAID) Table 2, Fig. 7 and Fig. 8 on a real mount", "",
             _settings(settings, res), ""]
    lines += vc_raid_notes.setup(detail) + [""]
    lines += ["## PostMark, transactions per second (Table 2): median (lowest-highest) of the runs", "",
              "| configuration (files / transactions) | " + " | ".join(LABEL.get(c, c) for c in configs)
              + " | paper RAID 0 | paper SCD | paper RAID 5 |",
              "|---|" + "--:|" * (len(configs) + 3)]
    shape = {s["name"]: s for s in settings.get("postmark", [])}
    for size in res.get("postmark", {}):
        s, p = shape.get(size, {}), TABLE2.get(size, {})
        lines.append(f"| {size} ({s.get('files', '?')} / {s.get('transactions', '?')}) | "
                     + " | ".join(_pm_cell(res, size, c) for c in configs)
                     + f" | {p.get('raid0', '-')} | {p.get('scd', '-')} | {p.get('raid5', '-')} |")
    timed = [c for c in configs if c in res.get("untar_s", {}) or c in res.get("untar_async_s", {})]
    lines += ["", "## untar / copy / remove, seconds (Fig. 7): ext4 -o sync, and as mounted by default (async)", "",
              "| program | " + " | ".join(LABEL.get(c, c) for c in timed) + " |", "|---|" + "--:|" * len(timed)]
    for mode, sfx in (("sync", "_s"), ("async", "_async_s")):
        for prog in PROGRAMS:
            if res.get(f"{prog}{sfx}"):
                lines.append(f"| {prog}, {mode} | " + " | ".join(_cell(res[f'{prog}{sfx}'].get(c, '-'), '.2f')
                                                                   for c in timed) + " |")
    bon = res.get("bonnie", {})
    if bon:
        lines += ["", "## Bonnie (Fig. 8): bonnie++ block write, rewrite, block read (KiB/s), random seeks (/s)", "",
                  "| configuration | block write | rewrite | block read | random seeks |", "|---|--:|--:|--:|--:|"]
        for c, b in bon.items():
            vals = [(b or {}).get(k) if isinstance(b, dict) else b
                    for k in ("block_write_kBps", "rewrite_kBps", "block_read_kBps", "seeks_per_s")]
            lines.append(f"| {LABEL.get(c, c)} | " + " | ".join(_cell(v, ".0f") for v in vals) + " |")
    lines += [""] + _log_table(res) + _cycle_table(res)
    if plotted:
        lines += ["![PostMark TPS with ranges; every ratio of ours beside the paper's](vc-raid.png)", ""]
    rows = from_json(res.get("paper_vs_vraid", []))
    lines += ["## Paper vs vraid", "", rule_text(), "", RANGE_RULE, "", markdown_table(rows).rstrip()]
    t = tally(rows)
    lines += ["", ", ".join(f"{n} {v}" for v, n in t.items())]
    missing = not_run(res)
    if missing:
        lines += ["", "### Not available in this run", ""]
        reasons = sorted({r.get("reason", "") for r in runs if not r.get("available", True)})
        lines += [f"- reason: {r}" for r in reasons if r]
        lines += [f"- not judged: {m}" for m in missing]
    lines += ["", "## Why ours look the way they do", ""] + vc_raid_notes.notes(res, detail)
    return "\n".join(lines) + "\n"


def _plot(res: dict[str, Any], path: Path) -> Path:
    plt = figures.pyplot()

    configs = [c for c in _configs(res) if c in next(iter(res.get("postmark", {}).values()), {})]
    rows = [r for r in from_json(res.get("paper_vs_vraid", [])) if r.verdict not in (NOT_RUN, INPUT) and r.unit == "x"]
    fig, axes = plt.subplots(1, 2, figsize=(15, max(4.5, 0.32 * len(rows) + 1.5)),
                             gridspec_kw={"width_ratios": [1, 1.6]})
    sizes = list(res.get("postmark", {}))
    width = 0.8 / max(len(configs), 1)
    marked = False  # the paper's diamonds are named in the legend once
    for i, c in enumerate(configs):
        med = [_num(res["postmark"][s].get(c)) or 0.0 for s in sizes]
        runs = [res.get("postmark_runs", {}).get(s, {}).get(c) or [m] for s, m in zip(sizes, med)]
        err = [[m - min(r) for m, r in zip(med, runs)], [max(r) - m for m, r in zip(med, runs)]]
        axes[0].bar([x + i * width for x in range(len(sizes))], med, width, yerr=err, capsize=2,
                    label=LABEL.get(c, c), color=COLOUR.get(c))
        # the paper's TPS of the same configuration and size (Table 2: RAID 0, SCD, RAID 5) on the bar
        paper = [(x + i * width, TABLE2[s][c]) for x, s in enumerate(sizes) if c in TABLE2.get(s, {})]
        if paper:
            axes[0].scatter(*zip(*paper), marker="D", color="black", edgecolors="white", zorder=3,
                            label=None if marked else "paper (Table 2)")
            marked = True
    axes[0].set_xticks([x + 0.4 - width / 2 for x in range(len(sizes))], sizes)
    axes[0].set_ylabel("transactions per second (median, bar: range)")
    axes[0].set_yscale("log")
    axes[0].set_title("PostMark TPS, log scale: vraid (bars)\nand the paper (diamonds: ext2, 1999's disks)",
                      fontsize=9)
    axes[0].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=2)
    ax = axes[1]
    ys = list(range(len(rows)))[::-1]
    ours = [r.vraid for r in rows]
    lo = [r.vraid - (r.spread[0] if r.spread else r.vraid) for r in rows]
    hi = [(r.spread[1] if r.spread else r.vraid) - r.vraid for r in rows]
    colours = {"reproduced": "C2", "direction": "C8", "inconclusive": "C7", "not reproduced": "C3"}
    ax.barh(ys, ours, xerr=[lo, hi], capsize=2, color=[colours.get(r.verdict, "C7") for r in rows], alpha=0.8,
            label="vraid (bar: range over the runs)")
    ax.scatter([r.paper for r in rows], ys, marker="D", color="black", zorder=3, label="paper")
    ax.axvline(1.0, color="grey", linewidth=0.8)
    ax.set_yticks(ys, [r.item[:70] for r in rows], fontsize=6)
    ax.set_xscale("log")
    ax.set_xlabel("ratio (log scale); bar colour: green reproduced, yellow direction, grey inconclusive, red not")
    ax.set_title("every judged ratio: vraid (bars) and the paper (diamonds)", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    fig.suptitle("paper 002 (VC-RAID) on vraid: 4 x hdd:dnes-318350, scaled real time", fontsize=10)
    return figures.save(fig, path)


__all__ = ["FIG7_SYNC", "TABLE2", "comparisons", "markdown", "not_run", "report", "summary"]
