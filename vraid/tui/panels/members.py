"""The members panel of ``vraid top``: per member disk its state (active, failed, rebuilding,
spare), queue depth, busy fraction, requests/s, contiguous vs fragmented requests, errors, and
a rebuild's progress."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .text import num, pct, seconds


MEMBER_STYLE = {"active": "green", "failed": "bold red", "rebuilding": "yellow", "spare": "dim"}


def members_panel(snap: dict[str, Any], *, compact: bool = False, narrow: bool = False, width: int = 100) -> Panel:
    """One line per member disk; ``narrow`` (under 100 columns) leaves out the read and write
    counts and the busy bar; ``compact`` (a short terminal) packs the members side by side,
    several to a line (``width`` columns), with state, queue and busy only."""
    rates = {m["disk"]: m for m in (snap.get("rates") or {}).get("members", [])}
    if compact:
        return _members_compact(snap, rates, width)
    t = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
    for col, just in (("disk", "right"), ("state", "left"), ("queue", "right"), ("busy", "left"),
                      ("req/s", "right"), ("reads", "right"), ("writes", "right"), ("contiguous", "right"),
                      ("fragmented", "right"), ("", "left")):
        if narrow and col in ("reads", "writes"):
            continue
        t.add_column(col, justify=just, no_wrap=bool(col))
    for d in snap.get("members", []):
        state = d.get("state", "active")
        style = MEMBER_STYLE.get(state, "")
        r = rates.get(d["disk"], {})
        reqs = int(d.get("reads", 0)) + int(d.get("writes", 0))
        contiguous = int(d.get("contiguous", 0))
        busy = r.get("busy")
        bar = ""
        if busy is not None:
            n = int(round(busy * 8))
            bar = "█" * n + "·" * (8 - n)
        extra = f"{d['errors']} errors" if d.get("errors") else ""
        if d.get("progress") is not None:
            state = f"{state} {pct(d['progress'])}"
        cells = [str(d["disk"]), Text(state, style=style), str(d.get("queue", 0)),
                 "-" if busy is None else (f"{busy:4.0%}" if narrow else f"{busy:4.0%} {bar}"),
                 "-" if not r else num(r["requests_per_s"]),
                 f"{int(d.get('reads', 0)):,}", f"{int(d.get('writes', 0)):,}",
                 f"{contiguous:,} ({contiguous / reqs:.0%})" if reqs else "0",
                 f"{reqs - contiguous:,}", extra]
        if narrow:
            del cells[5:7]
        t.add_row(*cells)
    parts: list[RenderableType] = [t]
    spares = [s.get("store", "?") for s in snap.get("spares") or [] if isinstance(s, dict)]
    if spares:
        parts.append(Text(f"spares: {', '.join(spares)}", style="dim"))
    rebuild = snap.get("rebuild")
    if isinstance(rebuild, dict) and rebuild.get("progress") is not None:
        parts.append(rebuild_line(rebuild))
    return Panel(Group(*parts), title="members", title_align="left")


def _members_compact(snap: dict[str, Any], rates: dict[Any, Any], width: int) -> Panel:
    entries: list[Text] = []
    for d in snap.get("members", []):
        state = d.get("state", "active")
        e = Text(f"{d['disk']} ", style="bold")
        label = state if d.get("progress") is None else f"{state} {pct(d['progress'])}"
        e.append(label, style=MEMBER_STYLE.get(state, ""))
        busy = rates.get(d["disk"], {}).get("busy")
        e.append(f" q{d.get('queue', 0)}" + ("" if busy is None else f" {busy:.0%}"))
        if d.get("errors"):
            e.append(f" {d['errors']} err", style="bold red")
        entries.append(e)
    # whole entries to a line, as many as fit inside the box
    lines: list[Text] = []
    for e in entries:
        if lines and len(lines[-1]) + 3 + len(e) <= max(1, width - 4):
            lines[-1].append(" | ", style="dim")
            lines[-1].append_text(e)
        else:
            lines.append(e.copy())
    parts: list[RenderableType] = [Text("\n").join(lines)]
    rebuild = snap.get("rebuild")
    if isinstance(rebuild, dict) and rebuild.get("progress") is not None:
        parts.append(rebuild_line(rebuild))
    return Panel(Group(*parts), title="members (disk state queue busy)", title_align="left")


def rebuild_line(rebuild: dict[str, Any]) -> Text:
    """A rebuild's progress bar with what is known of it (member, spare, speed, time left)."""
    p = float(rebuild["progress"])
    n = int(round(p * 20))
    text = Text("rebuild", style="bold yellow")
    if rebuild.get("roles") and len(rebuild["roles"]) > 1:
        text.append(f" of members {', '.join(map(str, rebuild['roles']))}")
    elif rebuild.get("role") is not None:
        text.append(f" of member {rebuild['role']}")
    if rebuild.get("spare"):
        text.append(f" onto {rebuild['spare']}")
    text.append(f" {'█' * n}{'·' * (20 - n)} {p:.0%}", style="yellow")
    if rebuild.get("state"):
        text.append(f" {rebuild['state']}")
    if rebuild.get("speed_mb_s"):
        text.append(f"  {rebuild['speed_mb_s']:.1f} MB/s")
    if rebuild.get("eta_seconds"):
        text.append(f"  {seconds(rebuild['eta_seconds'])} left")
    return text
