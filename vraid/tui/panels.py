"""The panels of ``vraid top``: pure functions from a snapshot dict to rich renderables.

A snapshot is what :meth:`vraid.engine.host.live.LiveState.snapshot` returns (the ``snapshot`` control
command), with ``rates`` added by the viewer (:func:`vraid.engine.host.live.derive_rates`). Nothing here
reads a clock, a socket or the terminal, so the same snapshot always draws the same text;
tests/test_top_panels.py keeps rendered panels as snapshot files.

Panels (docs/top.md says how to read each):

* :func:`plan_panel`: the latest destage plan of seed 000: Z (D/C/E), the basic rxw-matrix M
  and the transformed M (operations the CT inserted are highlighted and marked ``*``), the
  member requests of each column, and Table I's legend;
* :func:`watermark_panel`: cache occupancy over time with the HWM and LWM lines and the
  times destages were in flight;
* :func:`members_panel`: per member disk: state, queue depth, busy fraction, requests/s,
  contiguous vs fragmented requests;
* :func:`counters_panel`: hit and overwrite ratios, throughput, response-time percentiles;
* :func:`extras_panel`: the controller's prefetch row (read cache, MSP's SC, seed 001's losses:
  :func:`prefetch_summary`), host read-ahead windows and log-disk fill, only when a snapshot
  has them.
"""

from __future__ import annotations

from typing import Any, Callable

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from vraid.core.units import format_size

#: Table I of seed 000: the operations of an rxw-matrix cell
LEGEND = (
    ("r", "read to cache"),
    ("t", "read to temp"),
    ("w", "write"),
    ("x", "xor cache"),
    ("xx", "xor cache with temp"),
    ("_", "xor destination"),
)
STATE_STYLE = {"D": "bold red", "C": "green", "E": "dim"}
INSERTED_STYLE = "bold black on yellow"

KEYS_ENGINE = (("p", "pause destaging"), ("s", "step 1 stripe"), ("r", "resume"), ("q", "quit"))
KEYS_SIM = (("+", "faster"), ("-", "slower"), ("space", "stop time"))


# ------------------------------------------------------------------------- helpers
def _pct(v: Any) -> str:
    return "-" if v is None else f"{100 * v:.0f}%"


def _num(v: float) -> str:
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def _seconds(t: float) -> str:
    if t >= 3600:
        return f"{t / 3600:.1f} h"
    if t >= 60:
        return f"{t / 60:.1f} min"
    return f"{t:.2f} s"


def _cell_text(basic: list[str], transformed: list[str]) -> Text:
    """A transformed cell; operations not in the basic cell styled and the cell marked ``*``."""
    if not transformed:
        return Text(".", style="dim")
    text = Text()
    inserted = False
    for op in transformed:
        if op in basic:
            text.append(op)
        else:
            text.append(op, style=INSERTED_STYLE)
            inserted = True
    if inserted:
        text.append("*", style="bold yellow")
    return text


def _checks(plan: dict[str, Any]) -> int:
    """The plan's check columns (a feed without ``checks``: one with parity, else none)."""
    return int(plan.get("checks", 1 if plan.get("parity", True) else 0))


def _column_names(plan: dict[str, Any]) -> list[str]:
    cols = plan["columns"]
    k = _checks(plan)
    nd = len(plan["z"][0]) if plan["z"] else len(cols) - k
    names = [f"d{c}" for c in cols]
    for i, j in enumerate(range(nd, min(nd + k, len(cols)))):  # the check columns, P then Q
        names[j] = f"{'PQ'[i] if i < 2 else f'C{i}'}{cols[j]}"
    return names


def _requests_by_column(plan: dict[str, Any], ncols: int) -> list[str]:
    out = [[] for _ in range(ncols)]
    for r in plan.get("requests", []):
        rows = r["rows"]
        span = f"{r['first_row']}" if rows == 1 else f"{r['first_row']}-{r['first_row'] + rows - 1}"
        out[r["column"]].append(("R" if r["op"] == "read" else "W") + span)
    return [" ".join(x) or "-" for x in out]


# ------------------------------------------------------------------------- the plan
def plan_table(plan: dict[str, Any], *, max_rows: int = 16) -> Table:
    """Z, basic M and transformed M side by side, one line per active row (PBG) of the plan."""
    z, basic, trans = plan["z"], plan["basic"], plan["transformed"]
    names = _column_names(plan)
    ndata = len(z[0]) if z else 0
    active = [i for i in range(len(z)) if "D" in z[i] or any(trans[i]) or any(basic[i])]
    shown = active[:max_rows]
    row0 = plan.get("row0", 0)

    def matrix(title: str, headers: list[str]) -> Table:
        m = Table(title=title, title_style="bold", box=None, pad_edge=False, show_edge=False, padding=(0, 1))
        for h in headers:
            m.add_column(h, justify="center")
        return m

    rows = matrix(" ", ["row"])
    zt = matrix("Z", names[:ndata])
    bt = matrix("basic M", names)
    tt = matrix("transformed M", names)
    for i in shown:
        rows.add_row(Text(str(row0 + i), style="dim"))
        zt.add_row(*[Text(s, style=STATE_STYLE.get(s, "")) for s in z[i]])
        bt.add_row(*[Text("".join(c) or ".", style="" if c else "dim") for c in basic[i]])
        tt.add_row(*[_cell_text(b, c) for b, c in zip(basic[i], trans[i])])
    grid = Table.grid(padding=(0, 2))
    for _ in range(4):
        grid.add_column()
    grid.add_row(rows, zt, bt, tt)
    hidden = len(active) - len(shown)
    quiet = len(z) - len(active)
    notes = []
    if hidden:
        notes.append(f"{hidden} more active rows not shown")
    if quiet:
        notes.append(f"{quiet} rows without operations not shown")
    if notes:
        grid.caption = "; ".join(notes)
    return grid


def legend_text() -> Text:
    text = Text("ops: ", style="dim")
    for i, (op, meaning) in enumerate(LEGEND):
        if i:
            text.append("  ")
        text.append(op, style="bold")
        text.append(f" {meaning}")
    text.append("  ")
    text.append("r", style=INSERTED_STYLE)
    text.append("* inserted by CT", style="")
    text.append("   Z: ")
    for s, name in (("D", "dirty"), ("C", "clean"), ("E", "empty")):
        text.append(s, style=STATE_STYLE[s])
        text.append(f" {name} ")
    return text


def plan_panel(snap: dict[str, Any], *, max_rows: int = 16, legend: bool = True, requests: bool = True) -> Panel:
    """The latest destage plan (or the one step mode froze), as seed 000 draws it.

    On a short terminal :func:`frame` asks for fewer matrix rows (``max_rows``; 0 draws only
    the head line and how many rows are not shown) and may leave out the member requests and
    the legend."""
    frozen = snap.get("step") or []
    plan = frozen[-1] if frozen else snap.get("plan")
    if not plan:
        body: RenderableType = Group(Text("no stripe written yet: the matrices appear with the first destage",
                                          style="dim"), legend_text())
        return Panel(body, title="destage plan (seed 000 rxw-matrix)", title_align="left")
    names = _column_names(plan)
    reqs = _requests_by_column(plan, len(names))
    rt = Table(box=None, pad_edge=False, padding=(0, 1), show_header=True, show_edge=False)
    rt.add_column("member requests", style="dim")
    for name in names:
        rt.add_column(name)
    rt.add_row("", *reqs)
    nreq = len(plan.get("requests", []))
    cycles = _cycles(plan)
    head = Text()
    head.append(f"stripe {plan['stripe']}", style="bold")
    if plan.get("row0"):
        head.append(f" (PBG rows from {plan['row0']})")
    head.append(f"  {nreq} member requests  {cycles}  CT {plan.get('ct', 'none')}")
    inserted = sum(len(set(t) - set(b)) for rb, rt in zip(plan["basic"], plan["transformed"]) for b, t in zip(rb, rt))
    if inserted:
        head.append(f" (+{inserted} ops)", style="bold yellow")
    if plan.get("unit") is not None:
        head.append(f"  unit {plan['unit']}")
    title = "destage plan (seed 000 rxw-matrix)"
    cause = plan.get("cause", "destage")
    if cause not in ("destage", "host"):  # a destage level of a log disk, a rebuild...: name it
        title = f"{cause} plan (seed 000 rxw-matrix)"
    if frozen:
        title = f"[reverse] STEP [/] frozen plan of the stepped stripe ({len(frozen)} stepped)"
    elif not plan.get("destage", True):
        title = "write plan (write-through: no cache)"
    parts: list[RenderableType] = [head]
    if max_rows > 0:
        parts.append(plan_table(plan, max_rows=max_rows))
    else:
        parts.append(Text(f"{_active_rows(plan)} more active rows not shown (a taller terminal shows the matrices)",
                          style="dim"))
    if requests:
        parts.append(rt)
    if legend:
        parts.append(legend_text())
    return Panel(Group(*parts), title=title, title_align="left")


def _active_rows(plan: dict[str, Any]) -> int:
    z, basic, trans = plan["z"], plan["basic"], plan["transformed"]
    return sum(1 for i in range(len(z)) if "D" in z[i] or any(trans[i]) or any(basic[i]))


def _cycles(plan: dict[str, Any]) -> str:
    """RCW/RMW/full counts of the plan's rows (seed 000 section II-A rule)."""
    from vraid.core.rxw import row_cycle

    counts: dict[str, int] = {}
    checks = _checks(plan)
    for row in plan["z"]:
        if not checks:
            c = "write" if "D" in row else "none"
        else:
            c = row_cycle(tuple(row), len(row) + checks, checks)
        if c != "none":
            counts[c] = counts.get(c, 0) + 1
    return " ".join(f"{k.upper()} {v}" for k, v in sorted(counts.items())) or "no rows to write"


# ------------------------------------------------------------------------- watermarks
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
    info.append(f"occupancy {_pct(cache.get('occupancy'))}", style="bold cyan")
    info.append(f"  dirty {cache.get('dirty_units', 0)}/{cache.get('capacity_units', 0)}")
    info.append("  HWM ", style="bold red")
    info.append(_pct(cache.get("hwm")))
    info.append("  LWM ", style="bold blue")
    info.append(_pct(cache.get("lwm")))
    info.append(f"\ndestaging {cache.get('destaging', 0)}  last {_seconds(window)}")
    sched = cache.get("scheduler")
    spec = sched.get("spec", "") if isinstance(sched, dict) else str(sched or "")
    title = f"watermarks: {spec}" + ("  [bold reverse yellow] PAUSED [/]" if snap.get("paused") else "")
    return Panel(Group(info, grid), title=title, title_align="left")


# ------------------------------------------------------------------------- members
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
            state = f"{state} {_pct(d['progress'])}"
        cells = [str(d["disk"]), Text(state, style=style), str(d.get("queue", 0)),
                 "-" if busy is None else (f"{busy:4.0%}" if narrow else f"{busy:4.0%} {bar}"),
                 "-" if not r else _num(r["requests_per_s"]),
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
        label = state if d.get("progress") is None else f"{state} {_pct(d['progress'])}"
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
    if rebuild.get("role") is not None:
        text.append(f" of member {rebuild['role']}")
    if rebuild.get("spare"):
        text.append(f" onto {rebuild['spare']}")
    text.append(f" {'█' * n}{'·' * (20 - n)} {p:.0%}", style="yellow")
    if rebuild.get("state"):
        text.append(f" {rebuild['state']}")
    if rebuild.get("speed_mb_s"):
        text.append(f"  {rebuild['speed_mb_s']:.1f} MB/s")
    if rebuild.get("eta_seconds"):
        text.append(f"  {_seconds(rebuild['eta_seconds'])} left")
    return text


# ------------------------------------------------------------------------- counters
def counter_rows(snap: dict[str, Any]) -> list[tuple[int, str, str]]:
    """The counters as (priority, label, value) in display order; priority 0 is kept longest
    when :func:`frame` has to drop rows on a short terminal."""
    m = snap.get("metrics") or {}
    cache = snap.get("cache") or {}
    rates = snap.get("rates") or {}
    rows = [(0, "reads / writes", f"{m.get('host_reads', 0):,} / {m.get('host_writes', 0):,}")]
    if rates:
        rows.append((1, "throughput", f"{rates['host_mb_s']:.2f} MB/s {_num(rates['host_iops'])} req/s"))
    if cache.get("organisation", "none") != "none":
        rows.append((4, "read hit ratio", _pct(cache.get("read_hit_ratio", 0.0))))
        rows.append((3, "overwrite ratio", _pct(cache.get("overwrite_ratio", 0.0))))
        rows.append((6, "writes waited", f"{cache.get('write_misses', 0):,}"))
        if cache.get("bypass_whole_stripes"):
            rows.append((8, "stripes past cache", f"{cache.get('bypassed_stripes', 0):,}"))
        d = f"{cache.get('destages_finished', 0):,}"
        if rates:
            d += f"  ({_num(rates.get('destages_per_s', 0.0))}/s)"
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


# ------------------------------------------------------------------------- extras
EXTRA_KEYS = (("prefetch", "prefetch windows"), ("log_disk", "log disk"), ("placement_row", "write buffers"))


def _pct(v: Any) -> str:
    return f"{100 * float(v):.0f}%" if isinstance(v, (int, float)) else "-"


def prefetch_summary(reads: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) pairs of the read path's status (``status()["reads"]``): the prefetch
    policy and its state (MSP: SC, SPS), the read cache's prefetch hit ratio, prefetched blocks
    never read, member requests per host read, split reads (independency loss) and idle
    members while a host read waits (parallelism loss); docs/metrics.md defines each."""
    out = [("policy", str(reads.get("prefetch", "none")).split(":")[0])]
    state = reads.get("policy_state") or {}
    if "sc" in state:
        out.append(("SC", f"{state['sc']}{'(on)' if state.get('active') else ''}"))
    if "sps" in state:
        out.append(("SPS", str(state["sps"])))
    if "lookups" in reads:
        out.append(("hit", _pct(reads.get("hit_ratio"))))
        out.append(("prefetch-hit", _pct(reads.get("prefetch_hit_ratio"))))
        out.append(("unread", str(reads.get("prefetch_unread", 0))))
        out.append(("wasted", str(reads.get("prefetch_wasted", 0))))
    out.append(("req/read", f"{float(reads.get('member_requests_per_read', 0.0)):.2f}"))
    out.append(("split", _pct(reads.get("split_ratio"))))
    out.append(("idle-waiting", _pct(reads.get("parallelism_loss"))))
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


def _bar(fraction: float, width: int = 30) -> str:
    n = int(round(max(0.0, min(1.0, fraction)) * width))
    return "█" * n + "·" * (width - n)


def log_panel(snap: dict[str, Any]) -> Panel:
    """The log disk (seed 002, ``status()["log"]``): RAM buffer and log fill, both destage
    levels, hits, the slot table's states, failures."""
    log = snap.get("log") or {}
    ram_blocks = log.get("ram_blocks") or 1
    segs = log.get("log_segments") or 1
    ram, used = log.get("ram_used_blocks", 0), log.get("log_used_segments", 0)
    lines = []
    line = Text("RAM buffer ", style="bold")
    line.append(f"{_bar(ram / ram_blocks)} {ram}/{ram_blocks} blocks ({format_size(log.get('ram_bytes', 0))})")
    lines.append(line)
    line = Text("log        ", style="bold")
    line.append(f"{_bar(used / segs)} {used}/{segs} segments of {format_size(log.get('segment_bytes', 0))}"
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
        line.append(f"{_bar(n / pool, 24)} {n} strips")
        lines.append(line)
    stats = pl.get("stats") or {}
    stripes = pl.get("stripes") or 1
    free = pl.get("free_stripes", 0)
    lines.append(Text(f"free stripes {_bar(free / stripes, 24)} {free}/{stripes}"))
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
    return Panel(Group(*lines), title=f"placement: {pl.get('spec', pl.get('policy', ''))} (seed 004)", title_align="left")


# ------------------------------------------------------------------------- frame
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
    text.append(f"  t={_seconds(snap.get('uptime', 0.0))}")
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
        lines.append(Text(f"policy changed at t={_seconds(c['time'] - (snap.get('time', 0) - snap.get('uptime', 0)))}: "
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
    active = _active_rows(plan) if plan else 0
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
