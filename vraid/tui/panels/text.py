"""The text forms the panels of ``vraid top`` share: ratios as percentages, rates, durations and fill bars."""

from __future__ import annotations

from typing import Any


def pct(v: Any) -> str:
    """A ratio as a whole percentage; ``-`` for anything not a number (``None``: not measured)."""
    return f"{100 * float(v):.0f}%" if isinstance(v, (int, float)) else "-"


def num(v: float) -> str:
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def seconds(t: float) -> str:
    if t >= 3600:
        return f"{t / 3600:.1f} h"
    if t >= 60:
        return f"{t / 60:.1f} min"
    return f"{t:.2f} s"


def bar(fraction: float, width: int = 30) -> str:
    """``width`` characters, the part ``fraction`` (clamped to 0..1) filled."""
    n = int(round(max(0.0, min(1.0, fraction)) * width))
    return "█" * n + "·" * (width - n)
