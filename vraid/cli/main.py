"""The ``vraid`` command line. Each subcommand is a small function; errors a
user can act on (:class:`~vraid.errors.VraidError`) print their message and
hint to stderr and exit with status 1 (2 for bad usage, as argparse does)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.markup import escape

from vraid import __version__
from vraid.errors import MountError, VraidError
from vraid.core.geometry import Geometry
from vraid.core.units import parse_size

from .common import add_geometry_args, layout_of, size_type, add_policy_flags, console, err, mount_families, policy_args

#: the most stripes `vraid layout` prints
MAX_LAYOUT_STRIPES = 1024

__all__ = ["build_parser", "console", "err", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vraid",
        description="vraid: a virtual RAID disk for teaching. Create an array of member files, mount it as one "
        "image file, put a filesystem on it through a loop device, and watch what the RAID-5 controller does.",
    )
    parser.add_argument("--version", action="version", version=f"vraid {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("create", help="create an array: member files with superblocks, and vraid.toml")
    p.add_argument("dir", type=Path, help="directory for the member files (created if missing)")
    add_geometry_args(p, disk_size=True)
    p.add_argument("--image", default="disk.img", help="name of the image file the mount exposes (default disk.img)")
    p.add_argument("--force", action="store_true", help="overwrite an array that is already in DIR (its data is lost)")
    p.add_argument("--bitmap-chunk", metavar="SIZE|none", default=None,
                   help="data covered by one write-intent bitmap bit, rounded to whole stripes (default 4M); "
                        "none: no bitmap (a crash then resyncs the whole array)")
    p.add_argument("--spares", type=int, default=0, metavar="N", help="also create N spare members (RAID-1, 4, 5, 10): a failed member is rebuilt onto one")
    add_policy_flags(p.add_argument_group(
        "chosen here, for the array's life (`vraid policies log`, `vraid policies placement`)",
        "--log: a log disk in front of the array (paper 002, VC-RAID; docs/log-disk.md): scd one log file, mcd:N "
        "N log files round robin, mirrored two copies, per-disk a region at the end of every member. --placement: "
        "where written blocks go (paper 004, multibuffering; docs/multibuffer.md): static in place, multibuffer or dpsr new stripes "
        "through a stripe directory kept on the members"), ("log", "placement"))
    p.set_defaults(func=cmd_create)

    p = sub.add_parser("examine", help="print the superblocks of a member file or of every member in a directory")
    p.add_argument("path", type=Path, help="a member file or an array directory")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_examine)

    p = sub.add_parser("layout", help="print which logical block lives where, and where parity (or the copies) is")
    add_geometry_args(p, disk_size=False)
    p.add_argument("--stripes", type=int, default=4, help="how many stripes to show (default 4)")
    p.add_argument("--highlight", metavar="FIRST-LAST[,FIRST-LAST...]", default=None,
                   help="mark these logical block ranges, the i-th with the letter a, b, c, ... "
                        "(e.g. a file's prefetch requests: --highlight 16,17-18,19-22; docs/prefetch.md)")
    p.set_defaults(func=cmd_layout)

    p = sub.add_parser("mount", help="serve an array as one image file (runs in the background)")
    p.add_argument("dir", type=Path, help="the array directory")
    p.add_argument("mountpoint", type=Path, help="an existing empty directory")
    p.add_argument("--foreground", action="store_true", help="stay attached and log to stderr")
    p.add_argument("--debug-fuse", action="store_true", help="log every FUSE request (with --foreground)")
    p.add_argument("--nonempty", action="store_true", help="mount onto a directory that is not empty (its files are hidden while mounted)")
    p.add_argument("--trace", type=Path, help="record every host request to this trace file (see docs/trace-format.md)")
    p.add_argument("--disk-model", metavar="MODEL", help="timing model for every member, e.g. hdd:st373454lc (see `vraid models`)")
    p.add_argument("--time", default="real", metavar="MODE", help="real (modelled time passes, default), real:FACTOR (scaled, e.g. real:0.1), or none (ignore the model)")
    g = p.add_argument_group("policies (defaults from DIR/vraid.toml; `vraid policies` lists them)")
    add_policy_flags(g, mount_families())
    g.add_argument("--nvram", type=Path, metavar="FILE", help="keep dirty blocks in this file (emulated battery-backed NVS): an fsync of the image then syncs only this file, and a crash loses nothing acknowledged")
    p.add_argument("--fault", action="append", default=[], metavar="DISK:KEY=VALUE[,...]",
                   help="inject failures into a member (repeatable): disk2:eio=1000-1010, disk1:fail-after=5000, "
                        "disk0:latency=50ms,every=100 (or p=0.01,seed=7), disk3:torn-after=300, all:volatile (docs/crash-and-scrub.md)")
    g = p.add_argument_group("failures (docs/failures.md)")
    g.add_argument("--force", action="store_true", help="start an array that is both dirty (not shut down cleanly) and degraded; reconstructed blocks may be wrong; "
                   "or whose log disk (--log) is missing or unreadable: a new empty log is made and what the old one held is lost; "
                   "or whose log is damaged in the middle: every intact segment is replayed and the damaged ones reported as lost")
    g.add_argument("--rebuild-rate", type=float, metavar="MB/s", help="limit a rebuild to this many MB/s of the new member (default: no limit)")
    p.set_defaults(func=cmd_mount)

    p = sub.add_parser("umount", help="flush, mark clean, unmount and wait for the daemon")
    p.add_argument("mountpoint", type=Path)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the daemon to finish (default 300)")
    p.set_defaults(func=cmd_umount)

    p = sub.add_parser("status", help="geometry, state and per-member counters of a mount or an array")
    p.add_argument("target", type=Path, help="a mountpoint or an array directory")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("demo", help="the main job: create, mount, losetup, mkfs.ext4, copy files, verify, unmount")
    p.add_argument("--dir", type=Path, help="work directory (default: a new temporary one, removed afterwards)")
    p.add_argument("--copy", type=Path, help="directory to copy onto the filesystem (default: an installed Python package)")
    p.add_argument("--disk-size", type=size_type("disk size"), default=parse_size("128M"), help="member size (default 128M)")
    p.add_argument("--keep", action="store_true", help="keep the array directory afterwards")
    p.set_defaults(func=cmd_demo)

    from vraid.cli import ct as cli_ct, failures as cli_failures, fuzz as cli_fuzz, lab as cli_lab, policies as cli_policies, sim as cli_sim, top as cli_top

    cli_policies.add_commands(sub)  # policies (the registry's families)
    cli_sim.add_commands(sub)  # models, sim, experiment (virtual time)
    cli_ct.add_commands(sub)  # rxw, stride-bench (contiguity transform)
    cli_failures.add_commands(sub)  # fail, add, rebuild, check (failures and recovery)
    cli_top.add_commands(sub)  # top, ctl (live view and run-time control)
    cli_lab.add_commands(sub)  # lab (seeded exercises)
    cli_fuzz.add_commands(sub)  # fuzz (a student's policy against the model machines)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except VraidError as exc:

        err.print(f"[bold red]vraid {args.command}:[/] {escape(exc.message)}", highlight=False)
        if exc.hint:
            err.print(f"  [bold]hint:[/] {escape(exc.hint)}", highlight=False)
        return 1
    except KeyboardInterrupt:
        return 130
    except (SystemExit, GeneratorExit) as exc:  # the last line of defence: the guards contain these
        where = _raised_outside_vraid(exc)
        if where is None:
            raise  # vraid's own exit (e.g. a closed pipe)
        err.print(f"[bold red]vraid {args.command}:[/] " + escape(f"code in {where} raised {type(exc).__name__}"
                                                                  f"{f': {exc}' if str(exc) else ''} (nothing ran to the end)"),
                  highlight=False)
        err.print("  [bold]hint:[/] a policy must not exit: raise an exception or return an answer instead",
                  highlight=False)
        return 1
    except OSError as exc:
        import errno

        if exc.errno != errno.ENOTCONN:
            raise
        from vraid.fuse.mountinfo import dead_mount_error

        dead = dead_mount_error(Path(exc.filename or "MOUNTPOINT"))
        err.print(f"[bold red]vraid {args.command}:[/] {escape(dead.message)}", highlight=False)
        err.print(f"  [bold]hint:[/] {escape(dead.hint)}", highlight=False)
        return 1


def _raised_outside_vraid(exc: BaseException) -> str | None:
    """The file that raised ``exc`` when it is a student's (not vraid's, nor a library's
    installed with Python: argparse's exit stays an exit), else None."""
    tb, frame = exc.__traceback__, None
    while tb is not None:
        frame, tb = tb.tb_frame, tb.tb_next
    if frame is None:
        return None
    name, path = str(frame.f_globals.get("__name__", "?")), frame.f_code.co_filename
    installed = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    if name == "vraid" or name.startswith("vraid.") or any(path.startswith(p + os.sep) for p in installed):
        return None
    return path


# -- commands -------------------------------------------------------------------
def cmd_create(args) -> int:
    from vraid.ondisk.create import create

    from vraid.core.units import format_size
    from vraid.engine.build import new_array_layout
    from vraid.policies import registry

    log = registry.parse("log", args.log)  # the log family (vraid.policies.log); none without --log
    log_spec = None if log.target is None else log.text
    if args.log_size is not None and log_spec is None:
        raise VraidError("--log-size without --log", "add --log scd (or mcd:N, mirrored, per-disk)")
    log_size = registry.setting_value("log_size", args.log_size)  # range-checked: --log-size 0 is refused
    shape = dict(level=args.level, ndisks=args.disks, block_size=args.block, strip_size=args.strip, layout=layout_of(args))
    g, placement = new_array_layout(shape, args.disk_size, args.placement, log_spec, log_size)
    asm = create(args.dir, g, args.disk_size, force=args.force, image=args.image,
                 bitmap_chunk=_bitmap_chunk(g, args.bitmap_chunk), spares=args.spares,
                 log=log_spec, log_size=log_size if log_spec else None, placement=placement)
    console.print(f"created {asm.summary()} in {args.dir}", highlight=False)
    if asm.log is not None:
        console.print(f"log disk: {asm.log.describe()}{_defaulted(log, args.log)}", highlight=False)
    if placement is not None:
        d = placement[2]
        console.print(f"placement: {placement[0]}; {d.strips} strips of data in {d.stripes} stripes "
                      f"({len(d.free_stripes)} free), image {format_size(d.capacity)}; stripe directory at the end "
                      "of every member", highlight=False)
        hint = (f"give a file system {format_size(g.strip_size)} blocks: mkfs.ext4 -b {g.strip_size}"
                if g.strip_size <= 4096 else "file systems write blocks of at most 4K, so create with --strip 4K")
        console.print(f"only whole-strip writes are buffered, a write of part of a strip is made in place; {hint}",
                      highlight=False)
    spares = f"; spares: {', '.join(p.name for p in asm.spares)}" if asm.spares else ""
    console.print(f"members: {', '.join(p.name for p in asm.paths)}{spares}; settings: {args.dir / 'vraid.toml'}", highlight=False)
    return 0


def _defaulted(spec, given: str) -> str:
    """`` (--log mcd is mcd:2: disks, ..., default 2)`` when the canonical spec filled in a
    parameter the user left out, so the output says what was chosen."""
    from vraid.policies.registry import policy_class, schema

    if spec.text.lower() == given.strip().lower():
        return ""
    filled = [p for p in schema(policy_class(spec)) if p.name not in given]
    said = "; ".join(f"{p.name}: {p.doc}, {p.range_text()}, default {p.default}" for p in filled)
    return f" (--log {given} is {spec.text}{': ' + said if said else ''})"


def _bitmap_chunk(g: Geometry, text: str | None) -> int | None:
    """``--bitmap-chunk``: None (the default size), 0 (none) or stripes per bit."""
    if text is None:
        return None
    from vraid.ondisk.bitmap import parse_chunk

    return parse_chunk(g, text)


def cmd_examine(args) -> int:
    from vraid.ondisk.assemble import examine
    from vraid.tui.render import superblock_table

    found = examine(args.path)
    if args.json:
        print(json.dumps([{"path": str(p), "superblock": sb.to_dict() if sb else None, "problem": prob} for p, sb, prob in found], indent=2))
        return 0 if any(sb for _, sb, _ in found) else 1
    if not found:
        raise VraidError(f"{args.path} holds no files", "give a member file or an array directory")
    for path, sb, problem in found:
        console.print(superblock_table(str(path), sb, problem))
    return 0 if any(sb for _, sb, _ in found) else 1


def cmd_layout(args) -> int:
    from vraid.tui.render import layout_table

    if not 1 <= args.stripes <= MAX_LAYOUT_STRIPES:
        raise VraidError(f"--stripes {args.stripes}: show from 1 to {MAX_LAYOUT_STRIPES} stripes",
                         "e.g. --stripes 4 (the layout repeats every N stripes anyway)")
    g = Geometry(level=args.level, ndisks=args.disks, stripes=max(1, args.stripes), block_size=args.block, strip_size=args.strip, layout=layout_of(args))
    console.print(layout_table(g, args.stripes, _block_ranges(args.highlight)))
    return 0


def _block_ranges(text: str | None) -> list[tuple[int, int]] | None:
    """``16,17-18,19-22`` as [(16, 16), (17, 18), (19, 22)] (None: nothing to mark)."""
    if not text:
        return None
    out = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        first, _, last = item.partition("-")
        try:
            a, b = int(first), int(last or first)
        except ValueError:
            raise VraidError(f"--highlight {item!r} is not a block or block range", "write e.g. 16,17-18,19-22") from None
        if a < 0 or b < a:
            raise VraidError(f"--highlight {item!r}: give FIRST-LAST with 0 <= FIRST <= LAST", "e.g. 19-22")
        out.append((a, b))
    return out


def cmd_mount(args) -> int:
    from vraid.fuse.daemon import MountOptions, mount

    given = policy_args(args)
    fixed = {k: given.pop(k) for k in list(given) if k in MountOptions.__dataclass_fields__}
    message = mount(args.dir, args.mountpoint, MountOptions(
        foreground=args.foreground, debug_fuse=args.debug_fuse, trace=args.trace, disk_model=args.disk_model,
        time=args.time, nvram=args.nvram,
        faults=tuple(args.fault), force=args.force, rebuild_rate=args.rebuild_rate, policies=given, nonempty=args.nonempty, **fixed,
    ))
    if message:
        console.print(message, highlight=False)
    return 0


def cmd_umount(args) -> int:
    from .umount import unmount

    console.print(unmount(args.mountpoint, args.timeout), highlight=False)
    return 0


def cmd_status(args) -> int:
    from .status import gather
    from vraid.tui.render import status_tables

    st = gather(args.target)
    if args.json:
        print(json.dumps(st, indent=2, default=str))
        return 0
    for t in status_tables(st):
        console.print(t)
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo

    return run_demo(args, console)


if __name__ == "__main__":
    sys.exit(main())
