"""What the kernel knows: vraid mounts in /proc/mounts, loop devices on an image."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

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
    target = Path(os.path.realpath(mountpoint))
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
