"""The destage plan panel of ``vraid top``: the latest plan as seed 000 draws it.

Z (D/C/E), the basic rxw-matrix M and the transformed M side by side (operations the CT
inserted highlighted and marked ``*``), the member requests of each column, the rows' RCW/RMW/
full counts (seed 000 section II-A) and Table I's legend of the cell operations."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text


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
    covers = plan.get("covers")  # a mirror's copies: check column i copies data column covers[i][0]
    for i, j in enumerate(range(nd, min(nd + k, len(cols)))):  # the check columns, P then Q
        names[j] = (f"m{cols[j]}" if covers and len(covers[i]) == 1 else
                    f"{'PQ'[i] if i < 2 else f'C{i}'}{cols[j]}")
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
        return Panel(body, title="destage plan (paper 000 rxw-matrix)", title_align="left")
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
    title = "destage plan (paper 000 rxw-matrix)"
    cause = plan.get("cause", "destage")
    if cause not in ("destage", "host"):  # a destage level of a log disk, a rebuild...: name it
        title = f"{cause} plan (paper 000 rxw-matrix)"
    if frozen:
        title = f"[reverse] STEP [/] frozen plan of the stepped stripe ({len(frozen)} stepped)"
    elif not plan.get("destage", True):
        title = "write plan (write-through: no cache)"
    parts: list[RenderableType] = [head]
    if max_rows > 0:
        parts.append(plan_table(plan, max_rows=max_rows))
    else:
        parts.append(Text(f"{active_rows(plan)} more active rows not shown (a taller terminal shows the matrices)",
                          style="dim"))
    if requests:
        parts.append(rt)
    if legend:
        parts.append(legend_text())
    return Panel(Group(*parts), title=title, title_align="left")


def active_rows(plan: dict[str, Any]) -> int:
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
