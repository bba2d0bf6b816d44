"""CLI commands of the contiguity transform: ``rxw`` and ``stride-bench``.

``vraid rxw`` is a pencil-and-paper companion to seed 000 (Baek & Park), sections II-A and
III-B..E: give a stripe's cache-state matrix Z and see the basic rxw-matrix M the controller
plans, the matrix the contiguity transform makes of it, and the member requests each column
issues. ``--random`` deals a Z to work out by hand first.
"""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

from .errors import VraidError

#: Table I of seed 000, in vraid's spelling (the paper prints the XOR destination as "-")
LEGEND = (
    ("r", "read the block from the disk into the block cache"),
    ("t", "read the block from the disk into a temporary memory (freed after the destage)"),
    ("w", "write the block cache memory to the disk"),
    ("x", "XOR the block cache memory"),
    ("xx", "XOR the block cache memory and the temporary memory"),
    ("_", "the destination of the XOR result (the new parity)"),
)
#: --random: how likely each block state is (mostly empty, as in a real stripe cache)
RANDOM_WEIGHTS = {"D": 0.35, "C": 0.2, "E": 0.45}
MAX_ROWS = 256
MAX_DISKS = 32


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register these subcommands on the ``vraid`` parser."""
    _add_rxw(sub)


# -- rxw ------------------------------------------------------------------------------
def _add_rxw(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rxw", help="show the rxw-matrix of a stripe and its contiguity transform (seed 000 Fig. 7, 10)",
        description="Plan one stripe write as the controller does: Z (cache state of each data block: "
                    "D dirty, C clean, E empty) gives the basic rxw-matrix M by choosing reconstruct-write "
                    "or read-modify-write per row (seed 000 sec. II-A); the contiguity transform (--ct) adds "
                    "reads and writes that join each column's requests (sec. III-B..E, Fig. 10). Rows and "
                    "columns are numbered from 0 (the paper counts from 1); the parity column is last.",
        epilog="example (the paper's eq. (2)): vraid rxw --z DEEE,ECED,EEEE,DDDD,DCDD,EDEE,DEEE\n"
               "practice: vraid rxw --random --seed 7, work out M on paper, then add --answer",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--z", metavar="ROWS", help="Z as comma-separated rows of D/C/E, one letter per data strip, "
                     "e.g. DEEE,ECED,EEEE (the parity column is added)")
    src.add_argument("--random", action="store_true", help="deal a random Z to work out by hand (see --answer)")
    p.add_argument("--ct", default="msc", metavar="SPEC",
                   help="contiguity transform: none or msc[:sr_max=N,sw_max=N,sr_except=a-b;c-d,sw_except=a-b] "
                        "(default msc). Limits not given here are generous (every gap is filled), so the "
                        "paper's example transforms fully; a mount uses measured limits instead (docs/ct.md)")
    p.add_argument("--seed", type=int, default=0, help="--random: seed of the dealt Z (default 0)")
    p.add_argument("--rows", type=int, default=7, help="--random: blocks per strip, u (default 7, as the paper)")
    p.add_argument("--disks", type=int, default=5, help="--random: member disks, v, parity included (default 5)")
    p.add_argument("--answer", action="store_true", help="--random: also show the matrices and requests")
    p.add_argument("--json", action="store_true", help='print {"z", "basic", "transformed", "requests"} as JSON')
    p.set_defaults(func=cmd_rxw)


def random_z(seed: int, rows: int, disks: int) -> tuple[tuple[str, ...], ...]:
    """A reproducible Z of ``rows`` x (``disks`` - 1) for practice."""
    if not 1 <= rows <= MAX_ROWS:
        raise VraidError(f"--rows {rows} is out of range", f"give 1 to {MAX_ROWS} blocks per strip")
    if not 3 <= disks <= MAX_DISKS:
        raise VraidError(f"--disks {disks} is out of range", f"RAID-5 needs 3 to {MAX_DISKS} disks here")
    rng = random.Random(seed)
    states, weights = zip(*RANDOM_WEIGHTS.items())
    return tuple(tuple(rng.choices(states, weights, k=disks - 1)) for _ in range(rows))


def rxw_result(z, ct_spec: str) -> dict[str, Any]:
    """Z, basic M, transformed M and the member requests, JSON-ready (0-based, parity last)."""
    from .policies.ct import GENEROUS, load_ct
    from .rxw import Plan

    ct = load_ct(ct_spec, GENEROUS)
    ncols = len(z[0]) + 1
    plan = Plan.build(0, z, list(range(ncols)))
    if ct is not None:
        plan = ct(plan)
    return {
        "z": [list(r) for r in z],
        "basic": [[list(c) for c in r] for r in plan.basic],
        "transformed": [[list(c) for c in r] for r in plan.transformed],
        "requests": [r.to_dict() for r in plan.requests],
        "basic_requests": [r.to_dict() for r in Plan.build(0, z, list(range(ncols))).requests],
        "ct": "none" if ct is None else ct.spec,
    }


def _parse_z(text: str):
    from .rxw import parse_z

    try:
        z = parse_z(text)
    except ValueError as exc:
        raise VraidError(f"--z {text!r}: {exc}", "example: --z DEEE,ECED,EEEE (D dirty, C clean, E empty)") from None
    if len(z[0]) < 2:
        raise VraidError(f"--z {text!r} has {len(z[0])} data strip per row", "RAID-5 needs at least 2 data strips (3 disks)")
    if len(z[0]) > MAX_DISKS - 1 or len(z) > MAX_ROWS:
        raise VraidError(f"--z {text!r} is too large to show", f"at most {MAX_ROWS} rows of {MAX_DISKS - 1} letters")
    return z


def cmd_rxw(args) -> int:
    from .policies.ct import parse_spec

    parse_spec(args.ct)  # a bad --ct fails before anything is printed
    if args.random:
        z = random_z(args.seed, args.rows, args.disks)
    else:
        z = _parse_z(args.z)
    result = rxw_result(z, args.ct)
    practice = args.random and not args.answer
    if args.json:
        out = {k: result[k] for k in ("z", "basic", "transformed", "requests")}
        if practice:
            out = {"z": result["z"], "seed": args.seed}
        print(json.dumps(out))
        return 0
    from rich.table import Table

    from .cli import console

    for item in rxw_renderables(result, practice=practice, seed=args.seed if args.random else None):
        need = _natural_width(item) if isinstance(item, Table) and item.box is None else 0
        if need > console.width:  # the matrices side by side must not be cut: a wider console for them
            from rich.console import Console

            Console(width=need, file=console.file, force_terminal=console.is_terminal,
                    color_system=console.color_system, highlight=False).print(item)
        else:
            console.print(item)
    return 0


def _natural_width(renderable) -> int:
    """The width ``renderable`` takes when nothing limits it (rendered once, off screen)."""
    import io

    from rich.console import Console
    from rich.segment import Segment

    wide = Console(width=1000, file=io.StringIO(), color_system=None)
    lines = wide.render_lines(renderable, wide.options, pad=False)
    return max((Segment.get_line_length(line) for line in lines), default=0)


def _cell_text(ops: list[str], basic: list[str] | None):
    """A cell's operations; those the transform added are bold."""
    from rich.text import Text

    if not ops:
        return Text(".", style="dim")
    t = Text()
    for op in ops:
        added = basic is not None and op not in basic
        t.append(op, style="bold magenta" if added else "")
    return t


def rxw_renderables(result: dict[str, Any], *, practice: bool = False, seed: int | None = None) -> list:
    """Rich renderables of ``vraid rxw``: the matrices side by side, the requests, the legend."""
    from rich.table import Table
    from rich.text import Text

    from rich import box

    z, basic, tr = result["z"], result["basic"], result["transformed"]
    nd = len(z[0])
    heads = [f"d{j}" for j in range(nd)]

    def table(title: str, columns: list[str], rows: list[list], row_numbers: bool) -> Table:
        t = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1), title_justify="left")
        if row_numbers:
            t.add_column("row", justify="right", style="dim", no_wrap=True)
        for j, h in enumerate(columns):
            widest = max([len(h)] + [len(r[j].plain) for r in rows])
            t.add_column(h, no_wrap=True, min_width=widest)
        for i, cells in enumerate(rows):
            t.add_row(*([Text(str(i))] if row_numbers else []), *cells)
        return t

    colour = {"D": "bold red", "C": "green", "E": "dim"}
    zt = table("Z", heads, [[Text(s, style=colour[s]) for s in row] for row in z], True)
    if practice:
        t = zt
    else:
        mt = table("basic M", heads + ["P"], [[_cell_text(c, None) for c in row] for row in basic], False)
        ct = table("after CT" if result["ct"] != "none" else "no CT (--ct none)", heads + ["P"],
                   [[_cell_text(c, b) for c, b in zip(row, brow)] for row, brow in zip(tr, basic)], False)
        t = Table.grid(padding=(0, 2))
        for _ in range(3):
            t.add_column(no_wrap=True)
        t.add_row(zt, mt, ct)
        out_head = [Text(f"contiguity transform: {result['ct']}; rows and columns count from 0, parity column P last; "
                         "bold: operations the transform added", style="dim")]
    out: list = [t] if practice else [t] + out_head
    if practice:
        out.append(Text(
            f"Predict for each row the cycle (RCW or RMW, sec. II-A), the basic rxw-matrix M, what the read and "
            f"write contiguity transforms add (Fig. 10), and each column's member requests. Then run the same "
            f"command with --answer (seed {seed}).", style="bold"))
        out.append(Text("D dirty (new data in the cache), C clean (cached, equal to the disk), E empty (not cached); "
                        "the parity column P is added last. Rows and columns count from 0.", style="dim"))
        return out
    r = Table(title="member requests per column (one request per run of rows)", title_justify="left")
    for col in ("column", "reads (first row x rows)", "writes (first row x rows)", "requests: basic -> CT"):
        r.add_column(col)
    ncols = nd + 1
    for j in range(ncols):
        name = "P" if j == nd else f"d{j}"
        mine = [q for q in result["requests"] if q["column"] == j]
        before = sum(1 for q in result["basic_requests"] if q["column"] == j)
        reads = ", ".join(f"{q['first_row']}x{q['rows']}" for q in mine if q["op"] == "read") or "-"
        writes = ", ".join(f"{q['first_row']}x{q['rows']}" for q in mine if q["op"] == "write") or "-"
        r.add_row(name, reads, writes, f"{before} -> {len(mine)}")
    out.append(r)
    legend = Table(title="operations (seed 000 Table I); bold: added by the contiguity transform", title_justify="left",
                   show_header=False)
    legend.add_column("op", style="bold")
    legend.add_column("meaning")
    for op, meaning in LEGEND:
        legend.add_row(op, meaning)
    legend.add_row(".", "no operation")
    out.append(legend)
    return out
