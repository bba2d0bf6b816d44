"""CLI commands of the failures and recovery: ``fail``, ``add``, ``rebuild``, ``check``."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from .errors import MountError, VraidError

#: exit status of ``vraid check`` when mismatches were found and not repaired (as fsck's 4)
EXIT_MISMATCHES = 4


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register these subcommands on the ``vraid`` parser."""
    _add_check(sub)


# -- check ------------------------------------------------------------------------
def _add_check(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="scrub: read every stripe and count parity mismatches (--repair rewrites parity)",
        description="Read every stripe of a RAID-5 array and count the parity blocks that are not the XOR of "
                    "their data blocks (like md's check and mismatch_cnt). On a mountpoint the running daemon "
                    "does it while the image stays in use; on an unmounted array directory it runs here.",
        epilog=f"exit status: 0 no mismatch left, {EXIT_MISMATCHES} mismatches found and not repaired, "
               "1 error. See docs/crash-and-scrub.md.",
    )
    p.add_argument("target", type=Path, help="a vraid mountpoint, or an unmounted array directory")
    p.add_argument("--repair", action="store_true", help="rewrite the parity of every mismatching block from its data")
    p.add_argument("--json", action="store_true", help="print the result as JSON (no progress bar)")
    p.set_defaults(func=cmd_check)


def cmd_check(args) -> int:
    from . import control, mountinfo
    from .assemble import assemble

    target = Path(args.target)
    if not target.exists():
        raise VraidError(f"{target} does not exist", "give a vraid mountpoint or an array directory")
    m = mountinfo.mount_of_mountpoint(target)
    if m is not None:
        asm = assemble(m.source)
        if asm.geometry.level != 5:
            return _no_parity(args, m.source)
        return _check_mounted(args, control.socket_path(asm.directory, asm.uuid), m.source)
    if mountinfo.is_mountpoint(target):
        raise VraidError(f"{target} is a mountpoint, but not of vraid", "give a vraid mountpoint or an array directory")
    asm = assemble(target)
    existing = mountinfo.mount_of_array(target)
    if existing is not None or control.alive(control.socket_path(asm.directory, asm.uuid)):
        where = existing.mountpoint if existing is not None else "a running daemon"
        raise MountError(f"{target} is mounted at {where}: it cannot be checked behind the daemon's back",
                         f"check the mount instead: `vraid check {where}`")
    if asm.geometry.level != 5:
        return _no_parity(args, target)
    if args.repair and not asm.was_clean:
        raise VraidError(f"{target} was not shut down cleanly: its parity is not repaired by check",
                         "mount it once (the mount resyncs what the crash left), then check; or check without --repair")
    return _check_offline(args, asm)


def _no_parity(args, where: Path) -> int:
    text = f"{where}: RAID-0 has no parity, so there is nothing to check"
    if args.json:
        print(json.dumps({"checked": False, "level": 0, "reason": "RAID-0 has no parity"}))
    else:
        _console().print(text, highlight=False)
    return 0


def _check_mounted(args, sock: Path, directory: Path) -> int:
    from . import control

    prog = control.request(sock, "check_start", repair=bool(args.repair))["check"]
    try:
        with _bar(args, prog["total"]) as update:
            while True:
                prog = control.request(sock, "check_status")["check"]
                update(prog)
                if not prog["running"]:
                    break
                time.sleep(0.2)
    except KeyboardInterrupt:
        control.request(sock, "check_stop")
        raise
    if prog["error"]:
        raise VraidError(f"the check of {directory} failed after {prog['done']} of {prog['total']} stripes: {prog['error']}",
                         f"see {directory / 'vraid.log'}")
    return _report(args, prog, directory, mounted=True)


def _check_offline(args, asm) -> int:
    import trio

    from .array import open_array
    from .scrub import ScrubProgress, scrub_array

    g = asm.geometry
    asm.open_stores()
    prog = ScrubProgress(total=g.stripes, repair=args.repair)
    try:
        with _bar(args, g.stripes) as update:
            async def main() -> None:
                async with open_array(g, asm.stores) as array:
                    await scrub_array(array, repair=args.repair, progress=prog, notify=lambda p: update(p.to_dict()))
                    if args.repair and prog.repaired:
                        await array.members.flush()

            trio.run(main)
    finally:
        asm.close()
    return _report(args, prog.to_dict(), asm.directory, mounted=False, dirty=not asm.was_clean)


class _bar:
    """A rich progress bar over stripes, updated from a progress dict (nothing with --json)."""

    def __init__(self, args, total: int) -> None:
        self.args = args
        self.total = total
        self.progress = None

    def __enter__(self):
        if self.args.json:
            return lambda prog: None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("stripes"),
            TextColumn("{task.fields[found]}"), TimeRemainingColumn(), console=_console(), transient=False,
        )
        self.progress.start()
        what = "repair" if self.args.repair else "check"
        task = self.progress.add_task(what, total=self.total, found="0 mismatches")

        def update(prog: dict) -> None:
            self.progress.update(task, completed=prog["done"], found=f"{prog['mismatches']} mismatches")

        return update

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()


def _report(args, prog: dict, directory: Path, *, mounted: bool, dirty: bool = False) -> int:
    left = prog["mismatches"] - prog["repaired"]
    if args.json:
        print(json.dumps(prog | {"directory": str(directory), "mounted": mounted, "dirty": dirty}, indent=2))
    else:
        console = _console()
        where = "stripe" if prog["mismatched_stripes"] == 1 else "stripes"
        noun = "mismatch" if prog["mismatches"] == 1 else "mismatches"
        line = (f"{prog['mismatches']} {noun} (parity blocks) in {prog['mismatched_stripes']} {where}; "
                f"{prog['done']} of {prog['total']} stripes checked in {prog['elapsed']:.1f} s")
        if prog["cancelled"]:
            line += " (stopped before the end)"
        console.print(line, highlight=False)
        if prog["stripes"]:
            shown = ", ".join(map(str, prog["stripes"][:20])) + (" ..." if prog["mismatched_stripes"] > 20 else "")
            console.print(f"stripes with mismatches: {shown}", highlight=False)
        if prog["repair"] and prog["repaired"]:
            console.print(f"repaired: rewrote {prog['repaired']} parity blocks from their data", highlight=False)
        elif left:
            hint = ("the array was not shut down cleanly: mount it and the resync fixes these"
                    if dirty else f"`vraid check {args.target} --repair` rewrites their parity from the data")
            console.print(f"hint: {hint}", highlight=False)
    return EXIT_MISMATCHES if left else 0


def _console():
    from .cli import console

    return console
