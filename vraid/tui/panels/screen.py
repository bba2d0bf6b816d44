"""The whole screen of ``vraid top``: the header (source, geometry, policies, PAUSED, DEGRADED,
POLICY FAULT), the panels, and the footer (keys, the last policy change, a message); stacked at
natural height (``--once``) or fitted to the terminal by :func:`vraid.tui.panels.layout.fit`."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from .counters import counters_panel
from .extras import extras_panel, has_extras
from .layout import fit
from .log_disk import log_panel
from .members import members_panel
from .placement import placement_panel
from .plan import plan_panel
from .text import seconds
from .watermarks import watermark_panel


KEYS_ENGINE = (("p", "pause destaging"), ("s", "step 1 stripe"), ("r", "resume"), ("q", "quit"))
KEYS_SIM = (("+", "faster"), ("-", "slower"), ("space", "stop time"))


def header(snap: dict[str, Any], *, speed: str = "") -> Text:
    g = snap.get("geometry") or {}
    p = snap.get("policies") or {}
    text = Text()
    text.append("vraid top ", style="bold")
    if snap.get("paused"):
        text.append("PAUSED", style="bold reverse yellow")
        text.append(" ")
        if (snap.get("cache") or {}).get("draining"):  # an fsync (umount, sync) waits for the paused destager
            text.append("FLUSH WAITING (r resumes)", style="bold reverse red")
            text.append(" ")
    if snap.get("degraded"):
        text.append("DEGRADED", style="bold reverse red")
        text.append(" ")
    if snap.get("policy_faults"):  # seen even when the header is cut to one line
        text.append("POLICY FAULT", style="bold reverse red")
        text.append(" ")
    if speed:
        text.append(speed, style="bold")
        text.append(" ")
    text.append(snap.get("source", ""))
    text.append(f"  t={seconds(snap.get('uptime', 0.0))}")
    if g:
        text.append(f"  RAID-{g.get('level')} {g.get('disks')} disks")
    log = snap.get("log") or {}
    if log:  # the log disk's RAM is the write cache (paper 002): not "cache none"
        text.append(f"  log {log.get('kind', '?')} (its RAM is the write cache)")
    else:
        text.append(f"  cache {p.get('cache', 'none')}")
        if "destage" in p and p.get("cache", "none") != "none":
            text.append(f"  destage {p['destage']}  order {p.get('destage_order')}")
    text.append(f"  CT {p.get('ct', 'none')}")
    for key, label in (("queue_order", "queue"), ("prefetch", "prefetch"), ("placement", "placement")):
        if key in p:
            text.append(f"  {label} {p[key]}")
    faults = snap.get("policy_faults") or []
    if faults:  # vraid.engine.guard disabled a policy: which, why, and what runs instead (last on the line)
        f = faults[-1]
        more = f" (+{len(faults) - 1} earlier)" if len(faults) > 1 else ""
        text.append(f"  POLICY FAULT{more}: {f['family']} {f['policy']} failed in {f['call']}: {f['error']}; "
                    f"now {f['fallback']}", style="bold red")
    return text


def footer(snap: dict[str, Any], *, sim: bool = False, message: str = "", keys: bool = True) -> Text:
    text = Text()
    if keys:
        for k, what in KEYS_ENGINE + (KEYS_SIM if sim else ()):
            text.append(f"{k}", style="reverse")
            text.append(f" {what}  ")
    else:
        text.append("(no keys: stdin is not a terminal)", style="dim")
    log = snap.get("policy_log") or []
    lines = [text]
    if log:
        c = log[-1]
        lines.append(Text(f"policy changed at t={seconds(c['time'] - (snap.get('time', 0) - snap.get('uptime', 0)))}: "
                          f"{c['key']} {c['old']} -> {c['new']}", style="bold green"))
    if message:
        lines.append(Text(message, style="bold"))
    return Text("\n").join(lines)


def frame(snap: dict[str, Any], *, width: int = 100, height: int | None = None, sim: bool = False,
          message: str = "", speed: str = "", keys: bool = True) -> RenderableType:
    """The whole screen. With ``height`` (the live view) the panels are sized to fit in
    ``height`` lines (see :func:`fit`); without, they are stacked at their natural height
    (``--once``)."""
    foot = footer(snap, sim=sim, message=message, keys=keys)
    head = header(snap, speed=speed)
    if height is None:
        parts: list[RenderableType] = [head, plan_panel(snap), watermark_panel(snap, width),
                                       counters_panel(snap), members_panel(snap)]
        if snap.get("log"):
            parts.append(log_panel(snap))
        if snap.get("placement"):
            parts.append(placement_panel(snap))
        if has_extras(snap):
            parts.append(extras_panel(snap))
        parts.append(foot)
        return Group(*parts)
    return fit(snap, width, height, head, foot)
