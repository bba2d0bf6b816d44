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

from .errors import MountError, VraidError


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register these subcommands on the ``vraid`` parser."""
    add_failure_commands(sub)


# -- fail, add, rebuild ------------------------------------------------------------------------
def add_failure_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fail", help="fail a member of a RAID-5 array (mounted or not): it runs degraded, a spare takes over")
    p.add_argument("target", type=Path, help="a mountpoint or an array directory")
    p.add_argument("disk", help="the member: its index (0..N-1) or its file name")
    p.add_argument("--force", action="store_true", help="fail it even though another member is missing (two failures: their blocks are lost)")
    p.set_defaults(func=cmd_fail)

    p = sub.add_parser("add", help="add a spare member file to a RAID-5 array; a failed member is rebuilt onto it")
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
    from . import control, mountinfo
    from .assemble import assemble
    from .config import ArrayConfig

    target = Path(target)
    m = mountinfo.mount_of_mountpoint(target) if target.exists() else None
    directory = m.source if m else target
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
    from . import control, failure
    from .assemble import assemble
    from .cli import console

    directory, sock = _locate(args.target)
    if sock is not None:
        answer = control.request(sock, "fail", disk=args.disk, force=args.force)
        st = answer["status"]
        console.print(f"member {answer['disk']} ({answer['store']}) failed; the array runs degraded", highlight=False)
        _print_state(st)
        return 0
    asm = assemble(directory)
    for note in asm.notes:
        console.print(note, highlight=False)
    role = failure.resolve_disk(asm, args.disk)
    failure.check_can_fail(asm, role, force=args.force)
    path = asm.paths[role]
    failure.fail_offline(asm, role)
    console.print(
        f"member {role} ({path.name if path else 'missing'}) recorded as failed in the superblocks of the others "
        f"(events {asm.events}); the array will run degraded"
        + (", and rebuild onto a spare," if asm.spares else "") + " at the next mount",
        highlight=False,
    )
    return 0


def cmd_add(args) -> int:
    from . import control, failure
    from .assemble import assemble
    from .cli import console

    directory, sock = _locate(args.target)
    path = args.file if args.file.is_absolute() or args.file.parent != Path(".") else directory / args.file
    if sock is not None:
        answer = control.request(sock, "add", file=str(Path(path).resolve()))
        console.print(f"added spare {answer['path']}", highlight=False)
        _print_state(answer["status"])
        return 0
    asm = assemble(directory)
    if asm.geometry.level != 5:
        raise VraidError("RAID-0 has no redundancy: a spare would never be used", "spares are for RAID-5")
    added = failure.add_spare(asm, Path(path))
    tail = f"; member {min(asm.failed)} is rebuilt onto a spare at the next mount" if asm.failed else ""
    console.print(f"added spare {added.name} to {directory} ({len(asm.spares)} spare(s)){tail}", highlight=False)
    return 0


def _print_state(st: dict[str, Any]) -> None:
    from .cli import console

    rb = st.get("rebuild")
    if rb and rb.get("state") == "running":
        console.print(f"rebuilding member {rb['role']} onto {rb['spare']}: {_progress_line(rb)}", highlight=False)
    elif st.get("degraded"):
        console.print(f"degraded: member(s) {', '.join(map(str, st.get('missing', [])))} missing; "
                      + ("add a spare with `vraid add` to rebuild" if not st.get("spares") else "a spare is waiting"), highlight=False)


def _progress_line(rb: dict[str, Any]) -> str:
    eta = rb.get("eta_seconds")
    limit = f", limit {rb['rate_limit_mb_s']:.0f} MB/s" if rb.get("rate_limit_mb_s") else ""
    return (
        f"{100 * rb['progress']:.1f}% (stripe {rb['stripe']}/{rb['stripes']}), {rb['speed_mb_s']:.1f} MB/s{limit}"
        + (f", about {eta:.0f} s left" if eta is not None else "")
    )


def cmd_rebuild(args) -> int:
    from . import control
    from .cli import console

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
        raise VraidError(_why_no_rebuild(st), "add a spare with `vraid add MOUNTPOINT FILE`" if len(st.get("missing", [])) < 2 else "")
    if not args.wait:
        console.print(f"rebuilding member {rb['role']} onto {rb['spare']}: {_progress_line(rb)}", highlight=False)
        return 0
    return _wait(sock, rb)


def _why_no_rebuild(st: dict[str, Any]) -> str:
    missing = st.get("missing", [])
    rb = st.get("rebuild")
    if len(missing) > 1:
        return f"members {', '.join(map(str, missing))} are missing: RAID-5 cannot rebuild two (their blocks are lost)"
    stopped = f"; the last rebuild stopped: {rb['error']}" if rb and rb.get("state") == "stopped" else ""
    return f"member {', '.join(map(str, missing))} is failed and there is no spare to rebuild onto{stopped}"


def _wait(sock: Path, rb: dict[str, Any]) -> int:
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

    from . import control
    from .cli import console

    role = rb["role"]
    with Progress(
        TextColumn(f"rebuilding member {role} onto {Path(rb['spare']).name}"),
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
        console.print(f"rebuild done: member {role} is {rb['spare']}; the array is not degraded", highlight=False)
        return 0
    if rb.get("state") == "done":  # another member failed meanwhile
        console.print(f"rebuild of member {role} done, but the array is degraded again (members {st.get('missing')})", highlight=False)
        return 1
    raise VraidError(f"the rebuild of member {role} stopped: {rb.get('error') or 'unknown reason'}", "see `vraid status` and DIR/vraid.log")
