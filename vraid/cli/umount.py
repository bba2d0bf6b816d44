"""``vraid umount``: flush, mark clean, unmount, and wait for the daemon to finish.

Used by the ``umount`` command and by ``vraid demo`` (which must not import the command line
module that dispatches to it).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from vraid.errors import MountError


def unmount(mountpoint: Path, timeout: float = 300.0) -> str:
    """Unmount the vraid mount at ``mountpoint``; the line to print.

    Raises:
        MountError: when it is no vraid mount, a loop device still holds the image, the unmount
            fails, or the daemon is still flushing after ``timeout`` seconds.
    """
    from vraid.fuse import control, mountinfo
    from vraid.ondisk.config import ArrayConfig

    m = mountinfo.mount_of_mountpoint(mountpoint)
    if m is None:
        raise MountError(f"{mountpoint} is not a vraid mount", "see `grep fuse.vraid /proc/mounts` for the mounts there are")
    config = ArrayConfig.load(m.source)
    image = config.image if config else "disk.img"
    holders = mountinfo.loop_devices_of(m.mountpoint / image)
    if holders:
        raise MountError(
            f"{m.mountpoint / image} is still attached to {', '.join(holders)}",
            f"unmount the filesystem on {holders[0]} and run `losetup -d {holders[0]}` first",
        )
    pid = None
    try:
        uuid = config.uuid if config else ""
        pid = control.request(control.socket_path(m.source, uuid), "status")["status"]["pid"]
    except (MountError, KeyError):
        pass
    result = subprocess.run(["fusermount3", "-u", str(m.mountpoint)], capture_output=True, text=True)
    if result.returncode != 0:
        raise MountError(f"could not unmount {m.mountpoint}: {result.stderr.strip()}", "is a process still using the image? (see `fuser -vm`)")
    if pid is not None and not _wait_exit(pid, timeout):
        raise MountError(f"unmounted, but daemon {pid} is still flushing after {timeout:.0f} s", "wait, then check `vraid status`")
    return f"unmounted {m.mountpoint}; array {m.source} is clean"


def _wait_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ", 1)[1].startswith("Z"):
                    return True
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return True
        time.sleep(0.05)
    return False
