"""CLI commands of the failures and recovery: ``fail``, ``add``, ``rebuild``, ``check``.

``fail`` and ``add`` work on a mount (over its control socket: the running
array changes at once) and on an unmounted array directory (the superblocks
change; a rebuild starts at the next mount). ``rebuild`` shows the progress
of the rebuild a mount runs.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from vraid.errors import MountError, VraidError

#: exit status of ``vraid check`` when mismatches were found and not repaired (as fsck's 4)
EXIT_MISMATCHES = 4


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register these subcommands on the ``vraid`` parser."""
    add_failure_commands(sub)
    _add_check(sub)


# -- fail, add, rebuild ------------------------------------------------------------------------
def add_failure_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fail", help="fail a member of a RAID-1, 4, 5, 6 or 10 array (mounted or not): it runs degraded, a spare takes over")
    p.add_argument("target", type=Path, help="a mountpoint or an array directory")
    p.add_argument("disk", help="the member: its index (0..N-1) or its file name")
    p.add_argument("--force", action="store_true", help="fail it even though the level does not survive that (RAID-4/5: a second member; RAID-6: a third; RAID-10: both of a pair; RAID-1: the last): their blocks are lost")
    p.set_defaults(func=cmd_fail)

    p = sub.add_parser("add", help="add a spare member file to a RAID-1, 4, 5, 6 or 10 array; a failed member is rebuilt onto it")
    p.add_argument("target", type=Path, help="a mountpoint or an array directory")
    p.add_argument("file", type=Path, help="the spare: a new file in the array directory (created at member size), or an old member of it")
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("rebuild", help="show the progress of a mount's rebuild (or wait for it)")
    p.add_argument("target", type=Path, help="a mountpoint (or the directory of a mounted array)")
    p.add_argument("--wait", action="store_true", help="show a progress bar until the rebuild is done (exit 0), or stops (exit 1)")
    p.add_argument("--rate", type=float, metavar="MB/s", help="set the rebuild rate limit first (0: no limit)")
    p.add_argument("--json", action="store_true", help="print the rebuild status as JSON")
    p.set_defaults(func=cmd_rebuild)


def _locate(target: Path) -> tuple[Path, Path | None]:
    """The array directory of a mountpoint or directory, and its control socket if mounted."""
    from vraid.fuse import control, mountinfo
    from vraid.ondisk.assemble import assemble
    from vraid.ondisk.config import ArrayConfig

    target = Path(target)
    mountinfo.refuse_dead(target)
    m = mountinfo.mount_of_mountpoint(target) if target.exists() else None
    directory = m.source if m else target
    dead = mountinfo.dead_mount_of_array(directory) if Path(directory).is_dir() else None
    if dead is not None:
        raise mountinfo.dead_mount_error(dead.mountpoint)
    if not Path(directory).is_dir():
        raise VraidError(f"{target} is neither a vraid mountpoint nor an array directory", "give the mountpoint or the directory made by `vraid create`")
    config = ArrayConfig.load(directory)
    uuid = config.uuid if config and config.uuid else assemble(directory).uuid
    sock = control.socket_path(directory, uuid)
    if control.alive(sock):
        return Path(directory), sock
    if m is not None:
        raise MountError(f"{target} is mounted, but its daemon does not answer on {sock}", "check DIR/vraid.log")
    return Path(directory), None


def cmd_fail(args) -> int:
    from vraid.fuse import control
    from vraid.ondisk import failures as failure
    from vraid.ondisk.assemble import assemble
    from vraid.cli.common import console

    directory, sock = _locate(args.target)
    if sock is not None:
        answer = control.request(sock, "fail", disk=args.disk, force=args.force)
        st = answer["status"]
        state = ("the array has FAILED: more members are missing than it survives, their blocks read as EIO"
                 if st.get("data_lost") else "the array runs degraded")
        console.print(f"member {answer['disk']} ({answer['store']}) failed; {state}", highlight=False)
        _print_state(st)
        return 0
    from vraid.ondisk.lock import ArrayLock

    asm = assemble(directory)
    for note in asm.notes:
        console.print(note, highlight=False)
    role = failure.resolve_disk(asm, args.disk)
    failure.check_can_fail(asm, role, force=args.force)
    path = asm.paths[role]
    with ArrayLock.acquire(asm.directory, what="fail a member of"):  # never under a mount that is starting
        failure.fail_offline(asm, role)
    gone = sorted(set(asm.failed) | {role})
    scheme = asm.geometry.redundancy
    if not asm.geometry.survives_members(gone):  # which members, not only how many (RAID-10: pairs)
        console.print(
            f"member {role} ({path.name if path else 'missing'}) recorded as failed (events {asm.events}); the array has "
            f"FAILED: {scheme.name} {scheme.survival_text()}, members "
            f"{', '.join(map(str, gone))} are missing and the blocks they held are lost; it will not start",
            highlight=False,
        )
        return 0
    console.print(
        f"member {role} ({path.name if path else 'missing'}) recorded as failed in the superblocks of the others "
        f"(events {asm.events}); the array will run degraded"
        + (", and rebuild onto a spare," if asm.spares else "") + " at the next mount",
        highlight=False,
    )
    return 0


def cmd_add(args) -> int:
    from vraid.fuse import control
    from vraid.ondisk import failures as failure
    from vraid.ondisk.assemble import assemble
    from vraid.cli.common import console

    directory, sock = _locate(args.target)
    path = args.file if args.file.is_absolute() or args.file.parent != Path(".") else directory / args.file
    if sock is not None:
        answer = control.request(sock, "add", file=str(Path(path).resolve()))
        console.print(f"added spare {answer['path']}", highlight=False)
        _print_state(answer["status"])
        return 0
    from vraid.ondisk.lock import ArrayLock

    asm = assemble(directory)
    if not asm.geometry.redundancy.tolerates:
        raise VraidError("RAID-0 has no redundancy: a spare would never be used", "spares are for the levels with redundancy (1, 4, 5, 6, 10)")
    with ArrayLock.acquire(asm.directory, what="add a spare to"):
        added = failure.add_spare(asm, Path(path))
    tail = f"; member {min(asm.failed)} is rebuilt onto a spare at the next mount" if asm.failed else ""
    console.print(f"added spare {added.name} to {directory} ({len(asm.spares)} spare(s)){tail}", highlight=False)
    return 0


def _print_state(st: dict[str, Any]) -> None:
    from vraid.cli.common import console

    rb = st.get("rebuild")
    if rb and rb.get("state") == "running":
        console.print(f"rebuilding {_target(rb)}: {_progress_line(rb)}", highlight=False)
    elif st.get("degraded"):
        console.print(f"degraded: member(s) {', '.join(map(str, st.get('missing', [])))} missing; "
                      + ("add a spare with `vraid add` to rebuild" if not st.get("spares") else "a spare is waiting"), highlight=False)


def _target(rb: dict[str, Any]) -> str:
    """"member 1 onto spare1.img", or "members 1, 3 onto spare1.img, spare3.img" for a pass of two."""
    roles = rb.get("roles") or [rb["role"]]
    spares = rb.get("spares") or [rb["spare"]]
    names = ", ".join(Path(s).name for s in spares)
    return f"member{'s' if len(roles) > 1 else ''} {', '.join(map(str, roles))} onto {names}"


def _progress_line(rb: dict[str, Any]) -> str:
    eta = rb.get("eta_seconds")
    limit = f", limit {rb['rate_limit_mb_s']:.0f} MB/s" if rb.get("rate_limit_mb_s") else ""
    return (
        f"{100 * rb['progress']:.1f}% (stripe {rb['stripe']}/{rb['stripes']}), {rb['speed_mb_s']:.1f} MB/s{limit}"
        + (f", about {eta:.0f} s left" if eta is not None else "")
    )


def cmd_rebuild(args) -> int:
    from vraid.fuse import control
    from vraid.cli.common import console

    if args.rate is not None:
        from vraid.fuse.failure_ctl import check_rate

        check_rate(args.rate, "--rate")
    directory, sock = _locate(args.target)
    if sock is None:
        raise MountError(f"{directory} is not mounted: a rebuild runs inside a mount", f"mount it (`vraid mount {directory} MOUNTPOINT`); a spare then rebuilds a failed member")
    if args.rate is not None:
        control.request(sock, "rebuild-rate", rate=args.rate)
    st = control.request(sock, "status")["status"]
    rb = st.get("rebuild")
    if args.json and not args.wait:
        print(json.dumps({"degraded": st.get("degraded"), "missing": st.get("missing"), "rebuild": rb}, indent=2))
        return 0
    running = rb is not None and rb.get("state") == "running"
    if not running and not st.get("degraded"):
        console.print("the array is not degraded: nothing to rebuild" + (f" (last rebuild: member {rb['role']} {rb['state']})" if rb else ""), highlight=False)
        return 0
    if not running:
        raise VraidError(_why_no_rebuild(st), "add a spare with `vraid add MOUNTPOINT FILE`" if not st.get("data_lost") else "")
    if not args.wait:
        console.print(f"rebuilding {_target(rb)}: {_progress_line(rb)}", highlight=False)
        return 0
    return _wait(sock, rb)


def _why_no_rebuild(st: dict[str, Any]) -> str:
    missing = st.get("missing", [])
    rb = st.get("rebuild")
    if st.get("data_lost"):
        return (f"members {', '.join(map(str, missing))} are missing: more than the array survives, nothing to rebuild "
                "from (their blocks are lost)")
    stopped = f"; the last rebuild stopped: {rb['error']}" if rb and rb.get("state") == "stopped" else ""
    return f"member {', '.join(map(str, missing))} is failed and there is no spare to rebuild onto{stopped}"


def _wait(sock: Path, rb: dict[str, Any]) -> int:
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

    from vraid.fuse import control
    from vraid.cli.common import console

    target = _target(rb)
    with Progress(
        TextColumn(f"rebuilding {target}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[speed]}"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    ) as bar:
        task = bar.add_task("rebuild", total=rb["stripes"], completed=rb["stripe"], speed="")
        while True:
            st = control.request(sock, "status")["status"]
            rb = st.get("rebuild") or {}
            bar.update(task, completed=rb.get("stripe", 0), total=rb.get("stripes", 1), speed=f"{rb.get('speed_mb_s', 0):.1f} MB/s")
            if rb.get("state") != "running":
                break
            time.sleep(0.2)
    if rb.get("state") == "done" and not st.get("degraded"):
        console.print(f"rebuild done: {target}; the array is not degraded", highlight=False)
        return 0
    if rb.get("state") == "done":  # another member failed meanwhile
        console.print(f"rebuild of {target} done, but the array is degraded again (members {st.get('missing')})", highlight=False)
        return 1
    raise VraidError(f"the rebuild of {target} stopped: {rb.get('error') or 'unknown reason'}", "see `vraid status` and DIR/vraid.log")


# -- check ------------------------------------------------------------------------
def _add_check(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="scrub: read every stripe and count parity mismatches (--repair rewrites parity)",
        description="Read every stripe of a RAID-1, 4, 5, 6 or 10 array and count the check blocks that are not "
                    "what the data makes of them: the XOR (P), on RAID-6 md's Q syndrome, each reported on its own, "
                    "or the mirror copies that differ from their data strip, and say on which member (like md's "
                    "check and mismatch_cnt). On a mountpoint the running daemon "
                    "does it while the image stays in use; on an unmounted array directory it runs here.",
        epilog=f"exit status: 0 no mismatch left, {EXIT_MISMATCHES} mismatches found and not repaired, "
               "1 error. See docs/crash-and-scrub.md.",
    )
    p.add_argument("target", type=Path, help="a vraid mountpoint, or an unmounted array directory")
    p.add_argument("--repair", action="store_true", help="rewrite the parity of every mismatching block from its data")
    p.add_argument("--json", action="store_true", help="print the result as JSON (no progress bar)")
    p.set_defaults(func=cmd_check)


def cmd_check(args) -> int:
    from vraid.fuse import control, mountinfo
    from vraid.ondisk.assemble import assemble

    target = Path(args.target)
    mountinfo.refuse_dead(target)
    if not target.exists():
        raise VraidError(f"{target} does not exist", "give a vraid mountpoint or an array directory")
    m = mountinfo.mount_of_mountpoint(target)
    if m is not None:
        asm = assemble(m.source)
        if not asm.geometry.redundancy.parity_columns:
            return _no_parity(args, m.source)
        return _check_mounted(args, control.socket_path(asm.directory, asm.uuid), m.source)
    if mountinfo.is_mountpoint(target):
        raise VraidError(f"{target} is a mountpoint, but not of vraid", "give a vraid mountpoint or an array directory")
    asm = assemble(target)
    dead = mountinfo.dead_mount_of_array(target)
    if dead is not None:
        raise mountinfo.dead_mount_error(dead.mountpoint)
    existing = mountinfo.mount_of_array(target)
    if existing is not None or control.alive(control.socket_path(asm.directory, asm.uuid)):
        where = existing.mountpoint if existing is not None else "a running daemon"
        raise MountError(f"{target} is mounted at {where}: it cannot be checked behind the daemon's back",
                         f"check the mount instead: `vraid check {where}`")
    if not asm.geometry.redundancy.parity_columns:
        return _no_parity(args, target)
    if asm.failed:
        raise VraidError(f"{target} is degraded (member {', '.join(map(str, sorted(asm.failed)))} missing or failed): "
                         "parity cannot be checked without every member",
                         "add a spare (`vraid add`), mount so it is rebuilt, then check")
    if args.repair and not asm.was_clean:
        raise VraidError(f"{target} was not shut down cleanly: its parity is not repaired by check",
                         "mount it once (the mount resyncs what the crash left), then check; or check without --repair")
    if not args.repair:  # reads only: the array directory stays untouched (no lock file)
        return _check_offline(args, asm)
    from vraid.ondisk.lock import ArrayLock

    with ArrayLock.acquire(asm.directory, what="repair"):  # no mount may start while it writes
        return _check_offline(args, asm)


def _no_parity(args, where: Path) -> int:
    text = f"{where}: RAID-0 has no parity, so there is nothing to check"
    if args.json:
        print(json.dumps({"checked": False, "level": 0, "reason": "RAID-0 has no parity"}))
    else:
        _console().print(text, highlight=False)
    return 0


def _check_mounted(args, sock: Path, directory: Path) -> int:
    from vraid.fuse import control

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

    from vraid.engine.build import EngineConfig, open_engine
    from vraid.engine.raid.scrub import ScrubProgress, scrub_array

    g = asm.geometry
    asm.open_stores()
    prog = ScrubProgress(total=g.stripes, repair=args.repair)
    try:
        with _bar(args, g.stripes) as update:
            async def main() -> None:
                async with open_engine(EngineConfig(g, stores=tuple(asm.stores))) as engine:
                    array = engine.array
                    await scrub_array(array.raid, repair=args.repair, progress=prog, notify=lambda p: update(p.to_dict()))
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
        by_check = prog.get("by_check") or {}
        if len(by_check) > 1:  # RAID-6: which check column disagrees
            console.print("disagreeing: " + ", ".join(f"{name} {k}" for name, k in by_check.items()), highlight=False)
        if prog["stripes"]:
            shown = ", ".join(map(str, prog["stripes"][:20])) + (" ..." if prog["mismatched_stripes"] > 20 else "")
            console.print(f"stripes with mismatches: {shown}", highlight=False)
        members = prog.get("check_members") or {}
        if members:
            shown = ", ".join(f"member {m}: {n} block{'s' if n != 1 else ''}" for m, n in sorted(members.items(), key=lambda i: int(i[0])))
            console.print(f"check blocks (parity or copies) that differ from their data: {shown}", highlight=False)
        if prog["repair"] and prog["repaired"]:
            console.print(f"repaired: rewrote {prog['repaired']} parity blocks from their data", highlight=False)
        elif left:
            hint = ("the array was not shut down cleanly: mount it and the resync fixes these"
                    if dirty else f"`vraid check {args.target} --repair` rewrites their parity from the data")
            console.print(f"hint: {hint}", highlight=False)
    return EXIT_MISMATCHES if left else 0


def _console():
    from vraid.cli.common import console

    return console
