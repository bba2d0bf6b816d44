"""The live view's layout of ``vraid top``: every panel sized so the frame fits the terminal.

:func:`fit` starts from each panel's smallest form and hands out the lines left in a fixed
order (docs/top.md, "A small terminal"); a terminal too small even for those drops whole
panels, least needed first."""

from __future__ import annotations

from typing import Any, Callable

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .counters import counter_rows, counters_panel
from .extras import extras_panel, has_extras
from .members import members_panel
from .plan import active_rows, plan_panel
from .watermarks import watermark_panel


#: the tallest chart the live view draws, and the most matrix rows it asks room for
CHART_MAX = 16
PLAN_ROWS_MAX = 64


class _Measure:
    """Heights of renderables drawn ``width`` columns wide (on a console writing nowhere)."""

    def __init__(self, width: int, height: int) -> None:
        import io

        from rich.console import Console

        self.console = Console(width=width, height=max(1, height), file=io.StringIO(), color_system=None,
                               force_terminal=False, legacy_windows=False)
        self.options = self.console.options.update(width=width)

    def __call__(self, renderable: RenderableType) -> int:
        return len(self.console.render_lines(renderable, self.options, pad=False, new_lines=False))


def fit(snap: dict[str, Any], width: int, height: int, head: Text, foot: RenderableType) -> RenderableType:
    """The live view's frame in at most ``height`` lines, footer (keys, policy change,
    message) always at the bottom and whole.

    Every panel has a smallest form: the header on one line, the plan's head line and how
    many matrix rows it leaves out, a one-line occupancy chart, the three most telling
    counters (two to a row from 140 columns), the members packed side by side. From there
    room is handed out in this order
    while it lasts: the whole header, a 2-line chart, up to 4 plan rows, the members' table,
    all the counters, a 4-line chart, the plan's member requests and legend, the prefetch/log-disk panel,
    an 8-line chart, every active plan row, then a chart of up to ``CHART_MAX`` lines. A
    terminal too small even for the smallest forms loses the plan, then the members, then
    the chart and counters (a smaller one comes back if it fits); the footer stays (below
    the key list's height its other lines are cut). Lines left over go above the footer.
    """
    measure = _Measure(width, height)
    foot_h = measure(foot)
    if foot_h >= height:  # a tiny terminal: the key list wraps, the other footer lines are cut
        lines = list(foot.split("\n"))
        for line in lines[1:]:
            line.no_wrap, line.overflow = True, "ellipsis"
        short = Group(*lines)
        if measure(short) >= height:
            out = measure.console.render_lines(short, measure.options, pad=False, new_lines=False)[:height]
            return Group(*[Text("").join(Text(seg.text, style=seg.style or "") for seg in row) for row in out])
        foot, foot_h = short, measure(short)
    nmembers = len(snap.get("members", []))
    frozen = snap.get("step") or []
    plan = frozen[-1] if frozen else snap.get("plan")
    active = active_rows(plan) if plan else 0
    extras = has_extras(snap)
    narrow = width < 100
    cols = 2 if width >= 140 else 1  # a wide terminal: two counters to a row, half as many rows
    counters_total = -(-len(counter_rows(snap)) // cols)
    # the counters box as wide as its widest row needs, leaving the chart's box 34 columns
    counters_w = min(max(width // 2, width - 34),
                     measure.console.measure(counters_panel(snap, columns=cols), options=measure.options).maximum)
    cache_on = (snap.get("cache") or {}).get("organisation", "none") != "none"

    # the smallest form of everything; "show_*" switch whole panels on
    cfg = {"head_full": False, "members_full": False, "counter_rows": min(3, counters_total), "chart": 1,
           "plan_rows": 0, "requests": False, "legend": False, "extras": False,
           "show_plan": True, "show_members": nmembers > 0, "show_middle": True}

    one_line = head.copy()
    one_line.no_wrap, one_line.overflow = True, "ellipsis"
    cache: dict[tuple, tuple[RenderableType, int]] = {}

    def part(key: tuple, build: Callable[[], Any]) -> tuple[RenderableType, int]:
        if key not in cache:
            r = build()
            cache[key] = r if isinstance(r, tuple) else (r, measure(r))
        return cache[key]

    def middle(chart: int, nrows: int) -> tuple[RenderableType, int]:
        """The watermark chart and the counters side by side, both boxes as tall as the taller."""
        wm = watermark_panel(snap, width - counters_w, chart)
        counters = part(("counters", nrows), lambda: counters_panel(snap, max_rows=nrows, columns=cols))[0]
        # each line of the chart is one line of the box (measured once, at one line)
        wm1 = part(("wm_h",), lambda: (None, _height_at(watermark_panel(snap, width - counters_w, 1),
                                                         width - counters_w, measure)))[1]
        h = max(wm1 + chart - 1,
                part(("counters_h", nrows), lambda: (None, _height_at(counters, counters_w, measure)))[1])
        grid = Table.grid(expand=True)
        grid.add_column(ratio=1)
        grid.add_column(width=counters_w)
        grid.add_row(_with_height(wm, h), _with_height(counters, h))
        return grid, h

    def parts(c: dict[str, Any]) -> list[tuple[RenderableType, int]]:
        out = [part(("head", c["head_full"]), lambda: head if c["head_full"] else one_line)]
        if c["show_plan"]:
            out.append(part(("plan", c["plan_rows"], c["requests"], c["legend"]),
                            lambda: plan_panel(snap, max_rows=c["plan_rows"], legend=c["legend"],
                                               requests=c["requests"])))
        if c["show_middle"]:
            out.append(part(("middle", c["chart"], c["counter_rows"]), lambda: middle(c["chart"], c["counter_rows"])))
        if c["show_members"]:
            out.append(part(("members", c["members_full"]),
                            lambda: members_panel(snap, compact=not c["members_full"], narrow=narrow, width=width)))
        if c["extras"]:
            out.append(part(("extras",), lambda: extras_panel(snap)))
        return out

    def fits(c: dict[str, Any]) -> bool:
        return sum(h for _, h in parts(c)) + foot_h <= height

    # too small for the smallest forms: drop whole panels, least needed first
    dropped = []
    for drop in ("show_plan", "show_members", "show_middle"):
        if fits(cfg):
            break
        if cfg[drop]:
            cfg[drop] = False
            dropped.append(drop)
    for back in reversed(dropped[:-1]):  # a smaller panel may fit where a larger one did not
        if fits(cfg | {back: True}):
            cfg[back] = True

    def grow(key: str, target: Any) -> None:
        if isinstance(target, bool):
            trial = cfg | {key: target}
            if fits(trial):
                cfg.update(trial)
            return
        lo, hi = cfg[key], target  # the most that fits: heights grow with the value
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(cfg | {key: mid}):
                lo = mid
            else:
                hi = mid - 1
        cfg[key] = lo

    if fits(cfg):
        grow("head_full", True)
        if cfg["show_middle"] and cache_on:
            grow("chart", 2)
        if cfg["show_plan"] and plan:
            grow("plan_rows", min(4, active))
        if cfg["show_members"]:
            grow("members_full", True)
        if cfg["show_middle"]:
            grow("counter_rows", counters_total)
            if cache_on:
                grow("chart", 4)
        if cfg["show_plan"] and plan:
            grow("requests", True)
        if cfg["show_plan"]:
            grow("legend", True)
        if extras:
            grow("extras", True)
        if cfg["show_middle"] and cache_on:
            grow("chart", 8)
        if cfg["show_plan"] and plan:
            grow("plan_rows", min(PLAN_ROWS_MAX, active))
        if cfg["show_middle"] and cache_on:
            grow("chart", CHART_MAX)
    chosen = parts(cfg)
    used = sum(h for _, h in chosen) + foot_h
    if used > height:  # the header alone does not fit above the footer
        return foot
    rows: list[RenderableType] = [r for r, _ in chosen]
    if height - used:
        rows.append(Text("\n" * (height - used - 1)))
    rows.append(foot)
    return Group(*rows)


def _with_height(panel: Panel, height: int) -> Panel:
    """A copy of ``panel`` drawn ``height`` lines tall."""
    import copy

    out = copy.copy(panel)
    out.height = height
    return out


def _height_at(renderable: RenderableType, width: int, measure: "_Measure") -> int:
    return len(measure.console.render_lines(renderable, measure.options.update(width=width), pad=False,
                                            new_lines=False))
