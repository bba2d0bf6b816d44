"""The log disk panel of ``vraid top`` (seed 002): RAM buffer and log fill, both destage levels,
hits, the slot table's states and failures."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from vraid.core.units import format_size

from .text import bar


def log_panel(snap: dict[str, Any]) -> Panel:
    """The log disk (seed 002, ``status()["log"]``): RAM buffer and log fill, both destage
    levels, hits, the slot table's states, failures."""
    log = snap.get("log") or {}
    ram_blocks = log.get("ram_blocks") or 1
    segs = log.get("log_segments") or 1
    ram, used = log.get("ram_used_blocks", 0), log.get("log_used_segments", 0)
    lines = []
    line = Text("RAM buffer ", style="bold")
    line.append(f"{bar(ram / ram_blocks)} {ram}/{ram_blocks} blocks ({format_size(log.get('ram_bytes', 0))})")
    lines.append(line)
    line = Text("log        ", style="bold")
    line.append(f"{bar(used / segs)} {used}/{segs} segments of {format_size(log.get('segment_bytes', 0))}"
                f" on {', '.join(log.get('stores') or [])}")
    lines.append(line)
    lines.append(Text(f"level 1 (RAM -> log):   {log.get('level1_destages', 0)} destages, {log.get('level1_segments', 0)} "
                      f"segments, {log.get('level1_blocks', 0)} blocks   hits: RAM {log.get('ram_hits', 0)}"))
    lines.append(Text(f"level 2 (log -> array): {log.get('level2_destages', 0)} segments, {log.get('level2_blocks', 0)} "
                      f"blocks   hits: log {log.get('log_hits', 0)}"))
    slots = log.get("slots") or {}
    lines.append(Text("slots: " + "  ".join(f"{k} {slots.get(k, 0)}" for k in
                                            ("IN_RAM_BUFFER", "IN_CACHE_DISK", "IN_DATA_DISK", "SLOT_FREE"))))
    if log.get("message"):
        lines.append(Text(log["message"], style="bold red" if log.get("failed") else "yellow"))
    sched = log.get("scheduler")
    spec = sched.get("spec", "") if isinstance(sched, dict) else str(sched or "")
    return Panel(Group(*lines), title=f"log disk: {log.get('kind', '')} (level 2: {spec})", title_align="left")
