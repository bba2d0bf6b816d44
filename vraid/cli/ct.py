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
from pathlib import Path
from typing import Any

from vraid.core.redundancy import LEVELS, for_level
from vraid.errors import VraidError

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
#: --random --difficulty: (rows u, disks N) of the dealt Z (the default is the paper's 7 x 5)
DIFFICULTY = {"easy": (3, 4), "medium": (5, 5), "hard": (7, 6)}
MAX_ROWS = 256
MAX_DISKS = 32
#: the levels whose stripes have parity columns to plan (RAID-4/5: P; RAID-6: P and Q); a
#: mirror's copies (coverage of one data column each) have no rxw-matrix to show: a write
#: writes every copy and reads nothing (docs/levels.md)
RXW_LEVELS = tuple(n for n in LEVELS if for_level(n).parity_columns and for_level(n).coverage(1) is None)
#: what the operations mean in a Q column (RAID-6): the same letters, GF(2^8) arithmetic
Q_LEGEND = ("x/xx into Q", "RAID-6: the GF(2^8) multiply-accumulate Q += g^i * D_i (md's syndrome, "
            "g = {02}, i the strip's slot); in P it is the XOR")


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register these subcommands on the ``vraid`` parser."""
    _add_rxw(sub)
    _add_stride_bench(sub)


# -- rxw ------------------------------------------------------------------------------
def _add_rxw(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rxw", help="show the rxw-matrix of a stripe and its contiguity transform (paper 000 (MSC-CT) Fig. 7, 10)",
        description="Plan one stripe write as the controller does: Z (cache state of each data block: "
                    "D dirty, C clean, E empty) gives the basic rxw-matrix M by choosing reconstruct-write "
                    "or read-modify-write per row (paper 000 (MSC-CT) sec. II-A); the contiguity transform (--ct) adds "
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
    p.add_argument("--rows", type=int, help="--random: blocks per strip, u (default 7, as the paper; or as --difficulty)")
    p.add_argument("--disks", type=int, help="--random: member disks, v, parity included (default 5; or as --difficulty)")
    p.add_argument("--level", type=int, choices=RXW_LEVELS, default=5,
                   help="RAID level: 5 plans one check column P, 6 two, P and Q (default 5)")
    p.add_argument("--difficulty", choices=tuple(DIFFICULTY),
                   help="--random: the size of the dealt Z: " + ", ".join(
                       f"{k} {r} rows x {d} disks" for k, (r, d) in DIFFICULTY.items()) + " (--rows/--disks override)")
    p.add_argument("--answer", action="store_true", help="--random: also show the matrices and requests")
    p.add_argument("--json", action="store_true", help='print {"z", "basic", "transformed", "requests"} as JSON')
    p.set_defaults(func=cmd_rxw)


def random_z(seed: int, rows: int, disks: int, checks: int = 1) -> tuple[tuple[str, ...], ...]:
    """A reproducible Z of ``rows`` x (``disks`` - ``checks``) for practice."""
    if not 1 <= rows <= MAX_ROWS:
        raise VraidError(f"--rows {rows} is out of range", f"give 1 to {MAX_ROWS} blocks per strip")
    if not checks + 2 <= disks <= MAX_DISKS:
        raise VraidError(f"--disks {disks} is out of range",
                         f"RAID-{4 + checks} needs {checks + 2} to {MAX_DISKS} disks here")
    rng = random.Random(seed)
    states, weights = zip(*RANDOM_WEIGHTS.items())
    return tuple(tuple(rng.choices(states, weights, k=disks - checks)) for _ in range(rows))


def rxw_result(z, ct_spec: str, checks: int = 1) -> dict[str, Any]:
    """Z, basic M, transformed M and the member requests, JSON-ready (0-based, the
    ``checks`` check columns last: P, then Q)."""
    from vraid.policies.ct import GENEROUS
    from vraid.policies.ct.spec import load_ct
    from vraid.core.rxw import Plan

    ct = load_ct(ct_spec, GENEROUS)
    ncols = len(z[0]) + checks
    plan = Plan.build(0, z, list(range(ncols)), checks=checks)
    if ct is not None:
        plan = ct(plan)
    out = {
        "z": [list(r) for r in z],
        "basic": [[list(c) for c in r] for r in plan.basic],
        "transformed": [[list(c) for c in r] for r in plan.transformed],
        "requests": [r.to_dict() for r in plan.requests],
        "basic_requests": [r.to_dict() for r in Plan.build(0, z, list(range(ncols)), checks=checks).requests],
        "cycles": plan.cycles(),
        "ct": "none" if ct is None else ct.spec,
    }
    if checks != 1:
        out["checks"] = checks
    return out


def _parse_z(text: str):
    from vraid.core.rxw import parse_z

    try:
        z = parse_z(text)
    except ValueError as exc:
        raise VraidError(f"--z {text!r}: {exc}", "example: --z DEEE,ECED,EEEE (D dirty, C clean, E empty)") from None
    if len(z[0]) < 2:
        raise VraidError(f"--z {text!r} has {len(z[0])} data strip per row", "a stripe needs at least 2 data strips (RAID-5: 3 disks, RAID-6: 4)")
    if len(z[0]) > MAX_DISKS - 1 or len(z) > MAX_ROWS:
        raise VraidError(f"--z {text!r} is too large to show", f"at most {MAX_ROWS} rows of {MAX_DISKS - 1} letters")
    return z


def cmd_rxw(args) -> int:
    from vraid.policies.ct.spec import parse_spec

    parse_spec(args.ct)  # a bad --ct fails before anything is printed
    checks = for_level(args.level).parity_columns
    if args.random:
        rows, disks = DIFFICULTY.get(args.difficulty or "", (7, 5))
        z = random_z(args.seed, args.rows if args.rows is not None else rows, args.disks if args.disks is not None else disks,
                     checks)
    elif args.difficulty or args.rows is not None or args.disks is not None:
        raise VraidError("--difficulty, --rows and --disks go with --random", "--z gives the rows and disks itself")
    else:
        z = _parse_z(args.z)
    result = rxw_result(z, args.ct, checks)
    practice = args.random and not args.answer
    if args.json:
        out = {k: result[k] for k in ("z", "cycles", "basic", "transformed", "requests")}
        if checks != 1:
            out["checks"] = checks
        if practice:
            out = {"z": result["z"], "seed": args.seed}
        print(json.dumps(out))
        return 0
    from rich.table import Table

    from vraid.cli.common import console

    mark = not console.is_terminal  # no bold in a pipe or a file: a * after each added operation
    for item in rxw_renderables(result, practice=practice, seed=args.seed if args.random else None, mark=mark,
                                width=console.width):
        need = _natural_width(item) if isinstance(item, Table) and item.box is None else 0
        if need > console.width:  # the matrices side by side must not be cut: a wider console for them
            from rich.console import Console

            Console(width=need, file=console.file, force_terminal=console.is_terminal,
                    color_system=console.color_system, highlight=False).print(item)
        else:
            console.print(item)
    return 0


def _side_by_side(*tables):
    """A borderless grid holding ``tables`` in one row, two spaces apart."""
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    for _ in tables:
        grid.add_column(no_wrap=True)
    grid.add_row(*tables)
    return grid


def _natural_width(renderable) -> int:
    """The width ``renderable`` takes when nothing limits it (rendered once, off screen)."""
    import io

    from rich.console import Console
    from rich.segment import Segment

    wide = Console(width=1000, file=io.StringIO(), color_system=None)
    lines = wide.render_lines(renderable, wide.options, pad=False)
    return max((Segment.get_line_length(line) for line in lines), default=0)


def _cell_text(ops: list[str], basic: list[str] | None, mark: bool = False):
    """A cell's operations; those the transform added are bold (and followed by ``*`` with ``mark``)."""
    from rich.text import Text

    if not ops:
        return Text(".", style="dim")
    t = Text()
    for op in ops:
        added = basic is not None and op not in basic
        t.append(op + ("*" if added and mark else ""), style="bold magenta" if added else "")
    return t


def rxw_renderables(result: dict[str, Any], *, practice: bool = False, seed: int | None = None,
                    mark: bool = False, width: int | None = None) -> list:
    """Rich renderables of ``vraid rxw``: the matrices side by side, the requests, the legend.
    With ``width``, matrices that do not fit side by side are stacked (Z and M, then the
    transformed M; or one under the other), so that nothing wraps."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from rich import box

    z, basic, tr = result["z"], result["basic"], result["transformed"]
    nd = len(z[0])
    heads = [f"d{j}" for j in range(nd)]
    names = ["P", "Q"][: result.get("checks", 1)]  # the check columns, last

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
        mt = table("basic M", heads + names + ["cycle"], [[_cell_text(c, None) for c in row] + [Text(cyc, style="dim")]
                                                       for row, cyc in zip(basic, result["cycles"])], False)
        ct = table("after CT" if result["ct"] != "none" else "no CT (--ct none)", heads + names,
                   [[_cell_text(c, b, mark) for c, b in zip(row, brow)] for row, brow in zip(tr, basic)], False)
        t = _side_by_side(zt, mt, ct)
        if width is not None and _natural_width(t) > width:
            pair = _side_by_side(zt, mt)
            t = Group(pair, ct) if _natural_width(pair) <= width else Group(zt, mt, ct)
        out_head = [Text(f"contiguity transform: {result['ct']}; rows and columns count from 0, "
                         f"{'parity column P' if len(names) == 1 else 'check columns P and Q'} last; "
                         "bold" + (" and *" if mark else "") + ": operations the transform added; cycle: "
                         "rcw, rmw, full (every block dirty) or none (nothing dirty), sec. II-A", style="dim")]
    out: list = [t] if practice else [t] + out_head
    if practice:
        out.append(Text(
            f"Predict for each row the cycle (RCW or RMW, sec. II-A), the basic rxw-matrix M, what the read and "
            f"write contiguity transforms add (Fig. 10), and each column's member requests. Then run the same "
            f"command with --answer (seed {seed}).", style="bold"))
        out.append(Text("D dirty (new data in the cache), C clean (cached, equal to the disk), E empty (not cached); "
                        + ("the parity column P is added last" if len(names) == 1 else "the check columns P and Q are added last")
                        + ". Rows and columns count from 0.", style="dim"))
        return out
    r = Table(title="member requests per column (one request per run of rows)", title_justify="left")
    for col in ("column", "reads (first row x rows)", "writes (first row x rows)", "requests: basic -> CT"):
        r.add_column(col)
    ncols = nd + len(names)
    for j in range(ncols):
        name = names[j - nd] if j >= nd else f"d{j}"
        mine = [q for q in result["requests"] if q["column"] == j]
        before = sum(1 for q in result["basic_requests"] if q["column"] == j)
        reads = ", ".join(f"{q['first_row']}x{q['rows']}" for q in mine if q["op"] == "read") or "-"
        writes = ", ".join(f"{q['first_row']}x{q['rows']}" for q in mine if q["op"] == "write") or "-"
        r.add_row(name, reads, writes, f"{before} -> {len(mine)}")
    out.append(r)
    legend = Table(title="operations (paper 000 Table I); bold: added by the contiguity transform", title_justify="left",
                   show_header=False)
    legend.add_column("op", style="bold")
    legend.add_column("meaning")
    for op, meaning in LEGEND:
        legend.add_row(op, meaning)
    if len(names) > 1:
        legend.add_row(*Q_LEGEND)
    legend.add_row(".", "no operation")
    out.append(legend)
    return out


# -- stride-bench -------------------------------------------------------------------
def _add_stride_bench(sub: argparse._SubParsersAction) -> None:
    from vraid.cli.common import size_type

    p = sub.add_parser(
        "stride-bench", help="measure S_w^max, S_r^max (paper 000 (MSC-CT) Fig. 8/9) on a member or a disk model",
        description="The stride benchmark of paper 000 (MSC-CT; sec. III-D, Fig. 8): one-block writes and reads every S "
                    "blocks from a fixed start to a fixed end, S = 1 (contiguous) .. --max-stride, normalized to "
                    "S = 1; S_w^max, S_r^max and the excluded regions by the 1.2 rule. On an array directory "
                    "(not mounted) it times a real member file with the wall clock and writes back the bytes the "
                    "member holds (data area only); with --disk-model it runs the model in virtual time.",
    )
    p.add_argument("dir", nargs="?", type=Path, metavar="DIR", help="array directory (not mounted) to benchmark")
    p.add_argument("--disk-model", metavar="MODEL", help="benchmark a timing model instead, e.g. hdd:st373454lc (see `vraid models`)")
    p.add_argument("--array", type=Path, metavar="DIR", help="with --disk-model --save: the array whose superblocks get the result")
    p.add_argument("--member", type=int, help="DIR mode: member (role) to benchmark (default 0)")
    p.add_argument("--max-stride", type=int, help="largest stride S (default 32 on a member, 64 on a model)")
    p.add_argument("--span", type=size_type("span"), help="bytes from the first to the last block of a pass "
                                                         "(default 1M on a member, 2M on a model)")
    p.add_argument("--passes", type=int, help="passes per stride, each on fresh blocks (default 2)")
    p.add_argument("--repeat", type=int, help="DIR mode: rounds over all strides, the median is kept (default 5)")
    p.add_argument("--depth", type=int, help="--disk-model mode: requests kept outstanding (default 32, as the "
                   "paper's 32-64; 1: one at a time), on the drive's own command queue (on by default for a "
                   "drive that has one; tcq=off in the spec times one command at a time); "
                   "DIR mode issues one at a time")
    p.add_argument("--out", type=Path, default=Path("."), help="directory for stride-bench.png (default: current)")
    p.add_argument("--json", action="store_true", help="print the numbers as JSON")
    p.add_argument("--save", action="store_true", help='store the limits in every superblock as params["ct"] '
                                                        "(read by `vraid mount --ct msc`)")
    p.set_defaults(func=cmd_stride_bench)


def _idle_array(directory: Path):
    """Assemble ``directory`` after checking that no mount or daemon uses it."""
    from vraid.fuse import control, mountinfo
    from vraid.ondisk.assemble import assemble

    asm = assemble(directory)
    existing = mountinfo.mount_of_array(directory)
    if existing is not None:
        raise VraidError(f"{directory} is mounted at {existing.mountpoint}; the benchmark needs the members to itself",
                         f"unmount it first: `vraid umount {existing.mountpoint}`")
    if control.alive(control.socket_path(asm.directory, asm.uuid)):
        raise VraidError(f"a vraid daemon is serving {directory}", "stop it (`vraid umount MOUNTPOINT`) first")
    return asm


def _positive(name: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise VraidError(f"{name} {value} must be at least 1", f"e.g. {name} 2")


def cmd_stride_bench(args) -> int:
    from vraid.sim import stride_bench as sb
    from vraid.cli.common import console

    if (args.dir is None) == (args.disk_model is None):
        raise VraidError("give either an array directory or --disk-model, not both or neither",
                         "e.g. `vraid stride-bench ./arr` or `vraid stride-bench --disk-model hdd:st373454lc`")
    for name, value in (("--passes", args.passes), ("--repeat", args.repeat)):
        _positive(name, value)
    if args.max_stride is not None and args.max_stride < 2:
        raise VraidError(f"--max-stride {args.max_stride} is below 2", "e.g. --max-stride 32")
    if args.out.exists() and not args.out.is_dir():
        raise VraidError(f"--out {args.out} is not a directory", "give a directory for stride-bench.png")
    asm = None
    if args.disk_model is not None:
        for flag, value in (("--member", args.member), ("--repeat", args.repeat)):
            if value is not None:
                raise VraidError(f"{flag} applies to an array directory, not to --disk-model", f"drop {flag}")
        if args.depth is not None and args.depth < 1:
            raise VraidError(f"--depth {args.depth} is below 1", "e.g. --depth 32 (the paper keeps 32-64 outstanding)")
        if args.save and args.array is None:
            raise VraidError("--save with --disk-model needs --array DIR", "name the array whose superblocks get the limits")
        if args.array is not None:
            asm = _idle_array(args.array)  # checked before the run
        result = sb.bench_model(args.disk_model, max_stride=args.max_stride or sb.MODEL_MAX_STRIDE,
                                span=args.span or sb.MODEL_SPAN, passes=args.passes or sb.MODEL_PASSES,
                                depth=args.depth or sb.DEPTH)
    else:
        if args.array is not None:
            raise VraidError("--array goes with --disk-model; in DIR mode the array is DIR", "drop --array")
        if args.depth is not None:
            raise VraidError("--depth applies to --disk-model; DIR mode issues one request at a time", "drop --depth")
        asm = _idle_array(args.dir)
        role = 0 if args.member is None else args.member
        n = asm.geometry.ndisks
        if not 0 <= role < n:
            raise VraidError(f"--member {role} is not a member of this {n}-disk array", f"choose 0..{n - 1}")
        g = asm.geometry
        path = asm.paths[role]
        if path is None or role in asm.failed:
            raise VraidError(f"member {role} of {asm.directory} is missing or failed", "benchmark another member with --member")
        member = sb.Member(path, role, g.data_offset, g.data_offset + g.member_data_bytes,
                           f"member {role} of {asm.directory} ({path.name})")
        result = sb.bench_member(member, max_stride=args.max_stride or sb.FILE_MAX_STRIDE,
                                 span=args.span or sb.FILE_SPAN, passes=args.passes or sb.FILE_PASSES,
                                 repeat=args.repeat or sb.FILE_REPEAT)
    args.out.mkdir(parents=True, exist_ok=True)
    png = sb.plot(result, args.out / "stride-bench.png")
    saved = None
    if args.save:
        assert asm is not None
        asm = _idle_array(asm.directory)  # still nobody else: re-read the superblocks just before writing
        params = dict(asm.ref.params)
        params["ct"] = result.ct_params()
        asm.mark(clean=asm.was_clean, params=params)
        saved = str(asm.directory)
    if args.json:
        print(json.dumps({**result.to_dict(), "plot": str(png), "saved": saved}, indent=2))
        return 0
    from vraid.tui.render import rich_table

    for t in sb.table(result):
        console.print(rich_table(t))
    console.print(f"plot: {png}", highlight=False)
    if saved:
        console.print(f'saved params["ct"] in the superblocks of {saved} (read by `vraid mount --ct msc`)', highlight=False)
    return 0
