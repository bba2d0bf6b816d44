"""The watermark panel of ``vraid top``: write-cache occupancy over time with the high and low
water marks (HWM, LWM) of each moment and the times destages were in flight."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .text import pct, seconds


_BLOCKS = " ▁▂▃▄▅▆▇█"


def occupancy_chart(history: list[Any], width: int, height: int = 8) -> Text:
    """A bar chart of cache occupancy (one column per bucket, newest right), the HWM (``━``)
    and LWM (``╌``) of each bucket, and a bottom line marking (``▀``) when destages were in
    flight; columns with destages are shaded too."""
    cols = list(history[-width:]) if width > 0 else []
    cols = [None] * (width - len(cols)) + cols
    lines: list[Text] = []
    for level in range(height, 0, -1):
        top, bottom = level / height, (level - 1) / height
        line = Text()
        for b in cols:
            if b is None:
                line.append(" ")
                continue
            peak, _last, hwm, lwm, busy = b
            shade = "on grey23" if busy else ""
            if hwm is not None and bottom <= hwm < top or (hwm == 1.0 and level == height):
                ch, style = "━", "bold red"
            elif lwm is not None and bottom <= lwm < top:
                ch, style = "╌", "bold blue"
            elif peak >= top:
                ch, style = "█", "cyan"
            elif peak > bottom:
                ch, style = _BLOCKS[max(1, int((peak - bottom) * height * 8))], "cyan"
            else:
                ch, style = " ", ""
            line.append(ch, style=f"{style} {shade}".strip())
        lines.append(line)
    busy_line = Text()
    for b in cols:
        busy_line.append("▀" if b is not None and b[4] else " ", style="magenta")
    lines.append(busy_line)
    return Text("\n").join(lines)


def watermark_panel(snap: dict[str, Any], width: int = 100, height: int = 8) -> Panel:
    """Cache occupancy over the last window with the high and low water marks."""
    cache = snap.get("cache") or {}
    if cache.get("organisation", "none") == "none":
        what = ("the log disk's RAM buffer is the write cache: see the log panel" if snap.get("log")
                else "no write cache (--cache none): every write goes through")
        return Panel(Text(what, style="dim"), title="watermarks", title_align="left")
    chart_width = max(10, width - 4 - 6)
    chart = occupancy_chart(snap.get("history") or [], chart_width, height)
    marks = [""] * height
    marks[0] = "100%"
    if height >= 3:
        marks[height // 2] = " 50%"
    if height >= 2:
        marks[-1] = "  0%"
    axis = Text("\n".join(marks + ["dstg"]), style="dim")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=4, justify="right")
    grid.add_column()
    grid.add_row(axis, chart)
    window = snap.get("window", 60.0)
    info = Text()
    info.append(f"occupancy {pct(cache.get('occupancy'))}", style="bold cyan")
    info.append(f"  dirty {cache.get('dirty_units', 0)}/{cache.get('capacity_units', 0)}")
    info.append("  HWM ", style="bold red")
    info.append(pct(cache.get("hwm")))
    info.append("  LWM ", style="bold blue")
    info.append(pct(cache.get("lwm")))
    info.append(f"\ndestaging {cache.get('destaging', 0)}  last {seconds(window)}")
    sched = cache.get("scheduler")
    spec = sched.get("spec", "") if isinstance(sched, dict) else str(sched or "")
    title = f"watermarks: {spec}" + ("  [bold reverse yellow] PAUSED [/]" if snap.get("paused") else "")
    return Panel(Group(info, grid), title=title, title_align="left")
