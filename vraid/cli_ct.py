"""CLI commands of the contiguity transform: ``rxw`` and ``stride-bench``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .errors import VraidError


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register these subcommands on the ``vraid`` parser."""
    _add_stride_bench(sub)


# -- stride-bench -------------------------------------------------------------------
def _add_stride_bench(sub: argparse._SubParsersAction) -> None:
    from .cli import _size

    p = sub.add_parser(
        "stride-bench", help="measure S_w^max, S_r^max (seed 000 Fig. 8/9) on a member or a disk model",
        description="The stride benchmark of seed 000 (sec. III-D, Fig. 8): one-block writes and reads every S "
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
    p.add_argument("--span", type=_size("span"), help="bytes from the first to the last block of a pass "
                                                         "(default 512K on a member, 2M on a model)")
    p.add_argument("--passes", type=int, help="passes per stride, each on fresh blocks (default 2)")
    p.add_argument("--repeat", type=int, help="DIR mode: rounds over all strides, the median is kept (default 3)")
    p.add_argument("--out", type=Path, default=Path("."), help="directory for stride-bench.png (default: current)")
    p.add_argument("--json", action="store_true", help="print the numbers as JSON")
    p.add_argument("--save", action="store_true", help='store the limits in every superblock as params["ct"] '
                                                        "(read by `vraid mount --ct msc`)")
    p.set_defaults(func=cmd_stride_bench)


def _idle_array(directory: Path):
    """Assemble ``directory`` after checking that no mount or daemon uses it."""
    from . import control, mountinfo
    from .assemble import assemble

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
    from . import stride_bench as sb
    from .cli import console

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
        if args.save and args.array is None:
            raise VraidError("--save with --disk-model needs --array DIR", "name the array whose superblocks get the limits")
        if args.array is not None:
            asm = _idle_array(args.array)  # checked before the run
        result = sb.bench_model(args.disk_model, max_stride=args.max_stride or sb.MODEL_MAX_STRIDE,
                                span=args.span or sb.MODEL_SPAN, passes=args.passes or sb.MODEL_PASSES)
    else:
        if args.array is not None:
            raise VraidError("--array goes with --disk-model; in DIR mode the array is DIR", "drop --array")
        asm = _idle_array(args.dir)
        role = 0 if args.member is None else args.member
        n = asm.geometry.ndisks
        if not 0 <= role < n:
            raise VraidError(f"--member {role} is not a member of this {n}-disk array", f"choose 0..{n - 1}")
        g = asm.geometry
        path = asm.paths[role]
        member = sb.Member(path, role, g.data_offset, g.data_offset + g.stripes * g.strip_size,
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
        params = dict(asm.superblocks[0].params)
        params["ct"] = result.ct_params()
        asm.mark(clean=asm.was_clean, params=params)
        saved = str(asm.directory)
    if args.json:
        print(json.dumps({**result.to_dict(), "plot": str(png), "saved": saved}, indent=2))
        return 0
    for t in sb.table(result):
        console.print(t)
    console.print(f"plot: {png}", highlight=False)
    if saved:
        console.print(f'saved params["ct"] in the superblocks of {saved} (read by `vraid mount --ct msc`)', highlight=False)
    return 0
