"""What the kernel knows: vraid mounts in /proc/mounts, loop devices on an image."""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path

from vraid.errors import MountError

FSNAME_PREFIX = "vraid:"
FSTYPE = "fuse.vraid"


@dataclass(frozen=True)
class VraidMount:
    source: Path  # the array directory
    mountpoint: Path


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def vraid_mounts() -> list[VraidMount]:
    out = []
    with open("/proc/self/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] == FSTYPE and parts[0].startswith(FSNAME_PREFIX):
                out.append(VraidMount(Path(_unescape(parts[0])[len(FSNAME_PREFIX) :]), Path(_unescape(parts[1]))))
    return out


def mount_of_mountpoint(mountpoint: Path) -> VraidMount | None:
    target = _absolute(mountpoint) if is_dead(mountpoint) else Path(os.path.realpath(mountpoint))
    for m in vraid_mounts():
        if m.mountpoint == target:
            return m
    return None


def mount_of_array(directory: Path) -> VraidMount | None:
    target = Path(os.path.realpath(directory))
    for m in vraid_mounts():
        if m.source == target:
            return m
    return None


def is_dead(path: Path) -> bool:
    """Whether ``path`` is a FUSE mount whose daemon is gone (stat fails with ENOTCONN,
    "Transport endpoint is not connected", e.g. after the daemon was killed with -9)."""
    try:
        os.statvfs(path)  # never answered from the kernel's attribute cache, unlike stat
    except OSError as exc:
        return exc.errno == errno.ENOTCONN
    return False


def _absolute(path: Path) -> Path:
    """``path`` made absolute without touching ``path`` itself (a dead mount cannot be
    stat'ed): its parent is resolved, its own name kept."""
    path = Path(os.path.abspath(path))
    return Path(os.path.realpath(path.parent)) / path.name if path.name else path


def dead_mount_error(path: Path) -> MountError:
    """What happened at a dead mount ``path``, and what to do about it."""
    where = _absolute(path)
    array = next((m.source for m in vraid_mounts() if m.mountpoint == where), None)
    of = f" of the array {array}" if array is not None else ""
    return MountError(
        f"{where} is a dead vraid mount{of}: its daemon is gone (Transport endpoint is not connected); "
        "the array was not shut down cleanly",
        f"run `vraid umount {where}` (or `fusermount3 -u {where}`), then mount the array again to recover: "
        "the mount resyncs what the crash left",
    )


def refuse_dead(path: Path) -> None:
    """Raise :func:`dead_mount_error` when ``path`` is a dead FUSE mount."""
    if is_dead(path):
        raise dead_mount_error(path)


def dead_mount_of_array(directory: Path) -> VraidMount | None:
    """The mount of the array in ``directory`` if it is dead (its daemon gone), else None."""
    m = mount_of_array(directory)
    return m if m is not None and is_dead(m.mountpoint) else None


def is_mountpoint(path: Path) -> bool:
    target = os.path.realpath(path)
    with open("/proc/self/mounts") as f:
        return any(_unescape(line.split()[1]) == target for line in f if len(line.split()) > 1)


def loop_devices_of(image: Path, *, resolve: bool = True) -> list[str]:
    """Loop devices whose backing file is ``image`` (e.g. ["/dev/loop3"]).

    The daemon must pass ``resolve=False`` with an already resolved path:
    resolving a path inside its own mount would send a FUSE request to
    itself while it waits, and deadlock.
    """
    target = os.path.realpath(image) if resolve else os.fspath(image)
    found = []
    base = Path("/sys/block")
    if not base.exists():
        return found
    for dev in sorted(base.glob("loop*")):
        try:
            backing = (dev / "loop" / "backing_file").read_text().strip()
        except OSError:
            continue
        if backing.endswith(" (deleted)"):
            backing = backing[: -len(" (deleted)")]
        if backing == target:
            found.append(f"/dev/{dev.name}")
    return found
