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
    """Unmount the vraid mount at ``mountpoint``; the lines to print (the array's state as
    its superblocks tell it afterwards; a dead mount, whose daemon is gone, is unmounted too).

    Raises:
        MountError: when it is no vraid mount, a loop device still holds the image, the unmount
            fails, or the daemon is still flushing after ``timeout`` seconds.
    """
    import math

    from vraid.errors import VraidError
    from vraid.fuse import control, mountinfo
    from vraid.ondisk.config import ArrayConfig

    if not math.isfinite(timeout) or timeout < 0:
        raise VraidError(f"--timeout {timeout} is not a number of seconds", "give 0 or more, e.g. --timeout 300")
    m = mountinfo.mount_of_mountpoint(mountpoint)
    if m is None:
        raise MountError(f"{mountpoint} is not a vraid mount", "see `grep fuse.vraid /proc/mounts` for the mounts there are")
    dead = mountinfo.is_dead(m.mountpoint)
    try:
        config = ArrayConfig.load(m.source)
    except VraidError:
        config = None
    image = config.image if config else "disk.img"
    holders = mountinfo.loop_devices_of(m.mountpoint / image, resolve=False)
    if holders:
        raise MountError(
            f"{m.mountpoint / image} is still attached to {', '.join(holders)}",
            f"unmount the filesystem on {holders[0]} and run `losetup -d {holders[0]}` first",
        )
    pid = None
    if not dead:
        try:
            uuid = config.uuid if config else ""
            pid = control.request(control.socket_path(m.source, uuid), "status")["status"]["pid"]
        except (MountError, KeyError, TypeError):
            pass
    result = subprocess.run(["fusermount3", "-u", str(m.mountpoint)], capture_output=True, text=True)
    if result.returncode != 0:
        raise MountError(f"could not unmount {m.mountpoint}: {result.stderr.strip()}", "is a process still using the image? (see `fuser -vm`)")
    if pid is not None and not _wait_exit(pid, timeout):
        raise MountError(f"unmounted, but daemon {pid} is still flushing after {timeout:.0f} s", "wait, then check `vraid status`")
    state = _array_state(m.source)
    if dead:
        msg = f"unmounted the dead mount {m.mountpoint} (its daemon was gone); array {m.source} is {state}"
        if state != "clean":
            msg += (f"\nhint: mount it again (`vraid mount {m.source} MOUNTPOINT`) to recover: the mount "
                    "replays NVRAM and resyncs the stripes the crash may have left inconsistent")
        return msg
    return f"unmounted {m.mountpoint}; array {m.source} is {state}"


def _array_state(directory: Path) -> str:
    """What the superblocks say now: "clean", or "dirty (...)"."""
    from vraid.errors import VraidError
    from vraid.ondisk.assemble import assemble

    try:
        asm = assemble(directory)
    except VraidError as exc:
        return f"in an unknown state ({exc.message}; see `vraid status {directory}`)"
    return "clean" if asm.was_clean else "dirty (not shut down cleanly)"


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
