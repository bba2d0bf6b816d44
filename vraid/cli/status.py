"""``vraid status``: ask the running mount, or read the superblocks when unmounted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vraid.fuse import control, mountinfo
from vraid.ondisk.assemble import assemble
from vraid.errors import MountError, VraidError


def gather(target: Path) -> dict[str, Any]:
    """Status of a mountpoint or an array directory."""
    target = Path(target)
    mountinfo.refuse_dead(target)
    m = mountinfo.mount_of_mountpoint(target) if target.exists() else None
    directory = m.source if m else target
    if m is None and not (target.is_dir() and any(target.iterdir())):
        if not target.exists():
            raise VraidError(f"{target} does not exist", "give a vraid mountpoint or an array directory")
    from vraid.ondisk.config import ArrayConfig

    config = ArrayConfig.load(directory) if Path(directory).is_dir() else None
    if config is not None and config.uuid:  # a running mount answers even when assembly would refuse now
        sock = control.socket_path(Path(directory), config.uuid)
        if control.alive(sock):
            try:
                return control.request(sock, "status")["status"]
            except MountError:
                pass
    try:
        asm = assemble(directory)
    except VraidError:
        if m is None and mountinfo.is_mountpoint(target):
            raise VraidError(f"{target} is a mountpoint, but not of vraid", "give a vraid mountpoint or array directory")
        raise
    sock = control.socket_path(asm.directory, asm.uuid)
    if control.alive(sock):
        try:
            return control.request(sock, "status")["status"]
        except MountError:
            pass
    if m is not None:
        raise MountError(f"{target} is mounted, but its daemon does not answer on {sock}", "check DIR/vraid.log")
    dead = mountinfo.dead_mount_of_array(asm.directory)
    notes = list(asm.notes)
    if dead is not None:
        notes.insert(0, f"the mount at {dead.mountpoint} is dead (its daemon is gone): run `vraid umount "
                     f"{dead.mountpoint}` (or `fusermount3 -u {dead.mountpoint}`), then mount again to recover")
    state = "not mounted, " if dead is None else f"dead mount at {dead.mountpoint} (daemon gone), "
    return {
        "geometry": asm.geometry.describe(),
        "directory": str(asm.directory.resolve()),
        "uuid": asm.uuid,
        "state": state + ("clean" if asm.was_clean else "dirty (not shut down cleanly)"),
        "members": [
            {"disk": role, "store": str(p) if p else "(missing)", "events": sb.events if sb else None,
             "state": "failed" if role in asm.failed else "active"} | ({"reason": asm.failed[role]} if role in asm.failed else {})
            for role, (p, sb) in enumerate(zip(asm.paths, asm.superblocks))
        ],
        "degraded": asm.degraded,
        "failed": sorted(asm.failed),
        "missing": sorted(asm.failed),
        "data_lost": not asm.geometry.survives_members(asm.failed),
        "spares": [{"store": str(p), "state": "spare"} for p in asm.spares],
        "notes": notes,
    } | ({"log": asm.log.to_param() | {"problem": asm.log_problem}} if asm.log is not None else {})
