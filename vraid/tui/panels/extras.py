"""The extras panel of ``vraid top``: the controller's prefetch row (read cache, MSP's SC, seed
001's losses: :func:`prefetch_summary`), host read-ahead windows, log-disk fill and the write
buffers of a placement, one line each, drawn only when a snapshot carries them."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from .text import pct


EXTRA_KEYS = (("prefetch", "prefetch windows"), ("log_disk", "log disk"), ("placement_row", "write buffers"))


def prefetch_summary(reads: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) pairs of the read path's status (``status()["reads"]``): the prefetch
    policy and its state (MSP: SC, SPS, the share of its strip changes after which it was on),
    the read cache's prefetch hit ratio, prefetched blocks
    never read, member requests per host read, split reads (independency loss) and idle
    members while a host read waits (parallelism loss); docs/metrics.md defines each."""
    out = [("policy", str(reads.get("prefetch", "none")).split(":")[0])]
    state = reads.get("policy_state") or {}
    if "sc" in state:
        out.append(("SC", f"{state['sc']}{'(on)' if state.get('active') else ''}"))
    if "sps" in state:
        out.append(("SPS", str(state["sps"])))
    if state.get("strip_changes"):  # MSP's detector since the mount: on after this share of its steps
        out.append(("on", pct(state.get("active_changes", 0) / state["strip_changes"])))
    if "lookups" in reads:
        out.append(("hit", pct(reads.get("hit_ratio"))))
        out.append(("prefetch-hit", pct(reads.get("prefetch_hit_ratio"))))
        out.append(("unread", str(reads.get("prefetch_unread", 0))))
        out.append(("wasted", str(reads.get("prefetch_wasted", 0))))
    out.append(("req/read", f"{float(reads.get('member_requests_per_read', 0.0)):.2f}"))
    out.append(("split", pct(reads.get("split_ratio"))))
    out.append(("idle-waiting", pct(reads.get("parallelism_loss"))))
    return out


def log_disk_row(log: dict[str, Any]) -> dict[str, Any]:
    """The one-line form of a log cache's status (``status()["log"]``) for the extras row."""
    segs = log.get("log_segments") or 1
    return {"fill": log.get("log_used_segments", 0) / segs, "kind": log.get("kind", ""),
            "ram": f"{log.get('ram_used_blocks', 0)}/{log.get('ram_blocks', 0)}",
            "L1": log.get("level1_segments", 0), "L2": log.get("level2_destages", 0),
            "hits": log.get("ram_hits", 0) + log.get("log_hits", 0)} | ({"FAILED": "yes"} if log.get("failed") else {})


def placement_row(pl: dict[str, Any]) -> dict[str, Any]:
    """The one-line form of a placement's status (``status()["placement"]``, seed 004) for the extras row."""
    stats = pl.get("stats") or {}
    pool = pl.get("buffer_strips") or 0
    return ({"fill": pl.get("buffered", 0) / pool} if pool else {}) | {
        "strips": pl.get("buffered", 0), "free stripes": pl.get("free_stripes", 0),
        "LW": stats.get("LW", 0), "PW": stats.get("PW", 0), "swaps": stats.get("swaps", 0)}


def _extra(snap: dict[str, Any], key: str) -> Any:
    data = snap.get(key)
    if not data and key == "log_disk" and snap.get("log"):
        return log_disk_row(snap["log"])
    if not data and key == "placement_row" and snap.get("placement"):
        return placement_row(snap["placement"])
    return data


def has_extras(snap: dict[str, Any]) -> bool:
    return bool(snap.get("reads")) or any(_extra(snap, k) for k, _ in EXTRA_KEYS)


def extras_panel(snap: dict[str, Any]) -> Panel:
    """The controller's prefetch row, host read-ahead windows and log-disk fill: drawn only
    when a snapshot carries them."""
    parts: list[RenderableType] = []
    reads = snap.get("reads")
    if reads:
        line = Text("prefetch: ", style="bold")
        line.append("  ".join(f"{k}={v}" for k, v in prefetch_summary(reads)))
        parts.append(line)
    for key, title in EXTRA_KEYS:
        data = _extra(snap, key)
        if not data:
            continue
        line = Text(f"{title}: ", style="bold")
        if isinstance(data, dict):
            fill = data.get("fill")
            if isinstance(fill, (int, float)):
                n = int(round(float(fill) * 30))
                line.append(f"{'█' * n}{'·' * (30 - n)} {fill:.0%}  ")
            line.append("  ".join(f"{k} {v}" for k, v in data.items() if k != "fill"))
        else:
            line.append(str(data))
        parts.append(line)
    return Panel(Group(*parts), title="prefetch / log disk / placement", title_align="left")
