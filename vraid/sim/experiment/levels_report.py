"""The report half of experiment ``levels``: results.md, levels.png and the terminal table.

The book's table (OSTEP ch. 38, Fig. 38.8) has a row per property and a column per level;
so do these, each cell the book's formula, its value at N, vraid's value in the same unit and
the verdict (:mod:`.verdict`'s one rule). Where a verdict is not ``reproduced`` the cause
column of the paper-vs-vraid table says what the measurement shows (set by :func:`.levels.collect`:
the run's counters, or :data:`CAUSES`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import figures
from .levels_book import ROWS
from .store import source_commit
from .verdict import REPRODUCED, from_json, markdown_table, tally

#: where a row comes out off the book's value: what to examine first, by row (not measured yet: every row of
#: the levels registered when this was written is reproduced; a new level's miss says so and names these)
CAUSES = {
    "seq_read": "not examined yet; first candidate: the members pass their check strips under the head too",
    "seq_write": "not examined yet; first candidate: the members write the check strips too",
    "rand_read": "not examined yet; first candidate: the tagged queue's throughput grows with each member's depth",
    "rand_write": ("not examined yet; first candidates: the tagged queue's depth, and a read-modify-write "
                   "rewriting the sectors it just read, a rotation later"),
    "lat_read": "not examined yet",
    "lat_write": "not examined yet; first candidate: a read-modify-write waits a rotation, not a random access",
    "capacity": "not examined yet",
    "reliability_sure": "not examined yet: the scheme's reconstruct rebuilds other failure sets than the book assumes",
    "reliability_lucky": "not examined yet: the scheme's reconstruct rebuilds other failure sets than the book assumes",
}


def summary(results: dict[str, Any]):
    from ..table import TextTable

    t = TextTable(title=f"OSTEP Fig. 38.8 on vraid, N = {results['disks']}: book / vraid (units of B, S, R, T)")
    t.add_column("row")
    for entry in results["levels"]:
        t.add_column(entry["title"], justify="right")
    for row in ROWS:
        t.add_row(row.label, *(_short(entry["rows"][row.key]) for entry in results["levels"]))
    return t


def _short(cell: dict[str, Any]) -> str:
    if cell.get("vraid") is None:
        return "not run"
    return f"{_num(cell['book'])} / {_num(cell['vraid'])}" + ("" if cell.get("verdict") == REPRODUCED else " *")


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


def report(results: dict[str, Any], out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    files: list[Path] = []
    plots = True
    try:
        files.append(_plot(results, out_dir))
    except ImportError:
        plots = False
    md = out_dir / "results.md"
    md.write_text(_markdown(results, plots))
    return [md, *files]


THROUGHPUT = ("seq_read", "seq_write", "rand_read", "rand_write")


def _plot(res: dict[str, Any], out_dir: Path) -> Path:
    plt = figures.pyplot()

    labels = {row.key: (row.label, row.unit) for row in ROWS}
    fig, axes = plt.subplots(2, 2, figsize=(8, 6))
    titles = [e["title"] for e in res["levels"]]
    for ax, key in zip(axes.flat, THROUGHPUT):
        vraid = [e["rows"][key].get("vraid") or 0.0 for e in res["levels"]]
        book = [e["rows"][key].get("book") for e in res["levels"]]
        xs = range(len(titles))
        ax.bar(xs, vraid, color="tab:blue", label="vraid (hdd model)")
        ax.scatter([x for x, b in zip(xs, book) if b is not None], [b for b in book if b is not None],
                   color="black", marker="_", s=600, linewidths=2, label="book (OSTEP Fig. 38.8)", zorder=3)
        ax.set_xticks(list(xs), titles)
        label, unit = labels[key]
        ax.set_title(f"{label} (units of one disk's {unit})", fontsize=9)
        ax.set_ylim(bottom=0)
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(f"RAID levels on {res['disks']} disks: measured vs the book", fontsize=10)
    return figures.save(fig, out_dir / "levels.png")


def _cell(cell: dict[str, Any]) -> str:
    if cell.get("book") is None:
        return f"not run: {cell.get('not_run', '')}"
    book = f"{cell['formula']} = {_num(cell['book'])}"
    if cell.get("vraid") is None:
        return f"{book}; vraid: not run ({cell.get('not_run', '')})"
    return f"{book}; vraid {_num(cell['vraid'])} ({cell['verdict']})"


def _markdown(res: dict[str, Any], plots: bool) -> str:
    u = res["units"]
    levels = res["levels"]
    rows = from_json(res["paper_vs_vraid"])
    caused = [type(r)(r.item, r.paper, r.vraid, r.verdict, "" if r.verdict == REPRODUCED else r.cause, r.unit)
              for r in rows]
    counts = tally(rows)
    L = ["# OSTEP ch. 38, Fig. 38.8 on vraid: the RAID levels compared", "",
         f"Produced by commit `{source_commit()}` with `vraid experiment levels`; settings and wall time in "
         "meta.json.", "",
         f"Every RAID level vraid runs, on N = {res['disks']} members of the hdd model `{res['model']}` (each "
         f"member's tagged queue capped at {res['depth']}, the depth R is measured at: the book's R is a constant, "
         "and a deeper queue would serve more requests per second), measured with the engine a mount runs, in virtual time; beside each value the book's "
         "formula (OSTEP ch. 38, Fig. 38.8) at that N. The book's reasoning is applied to each level's redundancy "
         "scheme (`vraid/sim/experiment/levels_book.py`), so a level the book has no column for gets the formula its "
         "reasoning gives; the book's RAID-1 (mirrored pairs, striped) is md's RAID-10 near-2 layout.", "",
         "**Units**, one disk (the baseline level on one member) measured the same way: "
         f"S = {_num(u['seq_read'])} MB/s reading, {_num(u['seq_write'])} MB/s writing (one stream of 4 MiB requests); "
         f"R = {_num(u['rand_read'])} MB/s reading, {_num(u['rand_write'])} MB/s writing (4 KiB random, "
         f"{res['depth']} outstanding per member); T = {_num(u['lat_read'])} ms reading, {_num(u['lat_write'])} ms "
         "writing (one 4 KiB random request at a time). B is one member's data area. A level's reads are in units of "
         "the disk's read S, R, T, its writes in those of the disk's writes.", "",
         "**Verdict**, one rule for every row (`vraid.sim.experiment.verdict.judge`, tolerance 25 %): *reproduced* "
         "when vraid's value is within 25 % of the book's, *direction* when it is further off (every value here is "
         "positive, so it is on the book's side of 0), *not reproduced* when the book's value is 0 and vraid's is "
         f"more than 0.25 from it. Tally: {counts[REPRODUCED]} reproduced, {counts['direction']} direction, "
         f"{counts['not reproduced']} not reproduced.", "",
         "## Fig. 38.8, book and vraid", "",
         "| | " + " | ".join(e["title"] for e in levels) + " |", "|---|" + "---|" * len(levels)]
    for row in ROWS:
        L.append(f"| {row.label} ({row.unit}) | " + " | ".join(_cell(e["rows"][row.key]) for e in levels) + " |")
    L += ["", "How each row is measured: " + "; ".join(f"{row.label.lower()}: {row.how}" for row in ROWS) + ".", "",
          "## Small writes: member I/Os per one-block write", "",
          "The book's count is the subtractive method (read the old data and the old check strips, write both); "
          "vraid's planner takes reconstruct-write instead when that needs fewer I/Os (paper 000 sec. II-A): a level "
          "whose counts differ below is one where it did. Measured: member requests of the write-latency run over "
          "its host writes.", "",
          "| level | book reads | book writes | vraid reads | vraid writes |", "|---|---:|---:|---:|---:|"]
    for e in levels:
        sw = e.get("small_write")
        if sw is None:
            L.append(f"| {e['title']} | not run: {e.get('not_run', '')} | | | |")
            continue
        got = sw["vraid"] or [None, None]
        L.append(f"| {e['title']} | {sw['book'][0]} | {sw['book'][1]} | {_num(got[0])} | {_num(got[1])} |")
    L += ["", "## Book vs vraid, row by row", "", markdown_table(caused)]
    if plots:
        L += ["![throughput of each level, measured (bars) and the book's (marks)](levels.png)", ""]
    L += ["## Every run", "", "| run | workload | MB/s | mean response ms | member reads | member writes | virtual s |",
          "|---|---|---:|---:|---:|---:|---:|"]
    for rid, out in res["runs"].items():
        if "throughput_mb_s" in out:
            L.append(f"| {rid} | `{out['workload']}` | {out['throughput_mb_s']:.2f} | {out['mean_response_ms']:.2f} | "
                     f"{out['disk_read_requests']} | {out['disk_write_requests']} | {out['virtual_seconds']:.2f} |")
        elif "not_run" in out:
            L.append(f"| {rid} | not run: {out['not_run']} | | | | | |")
    return "\n".join(L) + "\n"
