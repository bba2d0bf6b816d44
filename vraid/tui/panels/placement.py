"""The placement panel of ``vraid top`` (seed 004): each member's write buffer, free stripes,
stripe writes by kind and by size (Table 1), the cleaner and the directory."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from vraid.core.units import format_size

from .text import bar


def placement_panel(snap: dict[str, Any]) -> Panel:
    """The placement (seed 004, ``status()["placement"]``): each member's write buffer, free
    stripes, stripe writes by kind and by size (Table 1), the cleaner and the directory."""
    pl = snap.get("placement") or {}
    per = pl.get("buffered_per_disk") or {}
    pool = pl.get("buffer_strips") or max(1, sum(per.values()))
    lines = []
    for disk, n in sorted(per.items(), key=lambda kv: int(kv[0])):
        label = f"disk {disk}" if int(disk) >= 0 else "shared"
        line = Text(f"{label:<8} ", style="bold")
        line.append(f"{bar(n / pool, 24)} {n} strips")
        lines.append(line)
    stats = pl.get("stats") or {}
    stripes = pl.get("stripes") or 1
    free = pl.get("free_stripes", 0)
    lines.append(Text(f"free stripes {bar(free / stripes, 24)} {free}/{stripes}"))
    sizes = stats.get("sizes") or {}
    lines.append(Text(f"stripe writes: LW {stats.get('LW', 0)}  PW {stats.get('PW', 0)}   by size S: "
                      + ("  ".join(f"{k}:{sizes[k]}" for k in sorted(sizes, key=int)) or "-")))
    ratio = pl.get("write_hit_ratio")
    lines.append(Text(f"cleaner: {stats.get('swaps', 0)} swaps, {stats.get('releases', 0)} releases "
                      f"({stats.get('background_cleanings', 0)} cleanings in idle time)   "
                      f"in place {stats.get('in_place', 0)} + {stats.get('partial_in_place', 0)} parts of strips   buffer hits: writes "
                      f"{'-' if ratio is None else f'{100 * ratio:.0f}%'}, reads {stats.get('read_hits', 0)} strips"))
    d = pl.get("directory") or {}
    lines.append(Text(f"directory: step {d.get('seq', 0)}, {d.get('commits', 0)} commits "
                      f"({d.get('forced_commits', 0)} before reusing a slot; {stats.get('forgets', 0)} stale copies forgotten), "
                      f"{d.get('checkpoints', 0)} checkpoints, "
                      f"journal {format_size(d.get('journal_bytes', 0))}/{format_size(d.get('journal_size', 0))}"))
    if stats.get("lost"):
        lines.append(Text(f"{stats['lost']} strips lost their only copy in the last crash", style="yellow"))
    return Panel(Group(*lines), title=f"placement: {pl.get('spec', pl.get('policy', ''))} (paper 004)", title_align="left")
