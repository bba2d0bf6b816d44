"""The counters panel of ``vraid top``: host reads and writes, throughput, the cache's hit and
overwrite ratios, destages, the PBGs' RCW/RMW/full counts and response-time percentiles
(docs/metrics.md defines each)."""

from __future__ import annotations

from typing import Any

from rich.panel import Panel
from rich.table import Table

from .text import num, pct


def counter_rows(snap: dict[str, Any]) -> list[tuple[int, str, str]]:
    """The counters as (priority, label, value) in display order; priority 0 is kept longest
    when :func:`frame` has to drop rows on a short terminal."""
    m = snap.get("metrics") or {}
    cache = snap.get("cache") or {}
    rates = snap.get("rates") or {}
    rows = [(0, "reads / writes", f"{m.get('host_reads', 0):,} / {m.get('host_writes', 0):,}")]
    if rates:
        rows.append((1, "throughput", f"{rates['host_mb_s']:.2f} MB/s {num(rates['host_iops'])} req/s"))
    if cache.get("organisation", "none") != "none":
        rows.append((4, "read hit ratio", pct(cache.get("read_hit_ratio", 0.0))))
        rows.append((3, "overwrite ratio", pct(cache.get("overwrite_ratio", 0.0))))
        rows.append((6, "writes waited", f"{cache.get('write_misses', 0):,}"))
        if cache.get("bypass_whole_stripes"):
            rows.append((8, "stripes past cache", f"{cache.get('bypassed_stripes', 0):,}"))
        d = f"{cache.get('destages_finished', 0):,}"
        if rates:
            d += f"  ({num(rates.get('destages_per_s', 0.0))}/s)"
        rows.append((5, "destages", d))
    rows.append((7, "PBGs RCW/RMW/full",
                 f"{m.get('pbg_rcw', 0):,} / {m.get('pbg_rmw', 0):,} / {m.get('pbg_full', 0):,}"))
    resp = m.get("response_ms") or {}
    if resp:
        percentiles = " / ".join(f"{resp.get(k, 0.0):.2f}" for k in ("p50", "p90", "p99"))
        rows.append((2, "resp p50/p90/p99", percentiles + " ms"))
    mean, worst = m.get("mean_response_ms", 0.0), m.get("max_response_ms", 0.0)
    rows.append((9, "resp mean / max", f"{mean:.2f} / {worst:.2f} ms"))
    return rows


def counters_panel(snap: dict[str, Any], *, max_rows: int | None = None, columns: int = 1) -> Panel:
    """Hit ratios, throughput and response times. With ``max_rows`` only that many table
    rows, the counters of lowest priority left out (the title says how many are shown);
    ``columns=2`` puts two counters side by side on each row (a wide, short terminal)."""
    rows = counter_rows(snap)
    per_row = max(1, columns)
    keep = len(rows) if max_rows is None else max(0, max_rows) * per_row
    if keep < len(rows):
        kept = {id(r) for r in sorted(rows, key=lambda r: r[0])[:keep]}
        shown = [r for r in rows if id(r) in kept]
    else:
        shown = rows
    t = Table(box=None, show_header=False, pad_edge=False, show_edge=False, padding=(0, 1))
    for i in range(per_row):
        t.add_column("what", style="bold", no_wrap=True)
        t.add_column("value", justify="right", no_wrap=True)
    for i in range(0, len(shown), per_row):
        cells: list[str] = []
        for _prio, label, value in shown[i:i + per_row]:
            cells += [label, value]
        t.add_row(*cells)
    title = "counters" if len(shown) == len(rows) else f"counters ({len(shown)} of {len(rows)})"
    return Panel(t, title=title, title_align="left")
