"""Helpers for tests that mount: run the CLI, find the daemon, always clean up.

Cleanup order (FUSE-NOTES item 7): unmount filesystems on loop devices,
detach the loop devices and wait, unmount FUSE (lazily if it must), then stop
the daemon by its PID, which only this test started.
"""

from __future__ import annotations

import hashlib
import random
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

VRAID = [sys.executable, "-m", "vraid"]


def mount_skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root (mount, losetup)"
    if not os.path.exists("/dev/fuse"):
        return "needs /dev/fuse"
    if subprocess.run(["which", "fusermount3"], capture_output=True).returncode != 0:
        return "needs fusermount3 (apt install fuse3)"
    return None


requires_mount = pytest.mark.skipif(mount_skip_reason() is not None, reason=mount_skip_reason() or "")


def vraid(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    result = subprocess.run(VRAID + [str(a) for a in args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"vraid {' '.join(map(str, args))} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def is_mounted(path: Path) -> bool:
    target = os.path.realpath(path)
    with open("/proc/self/mounts") as f:
        return any(line.split()[1] == target for line in f)


def daemon_pid(mountpoint: Path) -> int:
    import json

    return json.loads(vraid("status", mountpoint, "--json").stdout)["pid"]


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs and is not a zombie; a read racing its exit (ESRCH) counts as gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return not f.read().split(") ", 1)[1].startswith("Z")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def wait_gone(pid: int, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def tree_hash(directory: Path) -> dict[str, tuple[str, int]]:
    """sha256 and mtime of every regular file below ``directory``: proof nothing changed."""
    out = {}
    for p in sorted(directory.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(directory))] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
    return out


def file_sums(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "lost+found" not in p.parts
    }


class Session:
    """Mounts made in one test, torn down in reverse whatever happens."""

    def __init__(self) -> None:
        self.fs_mounts: list[Path] = []
        self.loops: list[str] = []
        self.fuse_mounts: list[Path] = []
        self.pids: list[int] = []

    def mount(self, array: Path, mountpoint: Path, *extra: str) -> int:
        mountpoint.mkdir(parents=True, exist_ok=True)
        vraid("mount", array, mountpoint, *extra)
        self.fuse_mounts.append(mountpoint)
        pid = daemon_pid(mountpoint)
        self.pids.append(pid)
        return pid

    def umount(self, mountpoint: Path) -> None:
        pid = daemon_pid(mountpoint)
        vraid("umount", mountpoint)
        self.fuse_mounts.remove(mountpoint)
        assert wait_gone(pid), f"daemon {pid} still running after vraid umount"

    def losetup(self, image: Path) -> str:
        dev = run("losetup", "-f", "--show", image).stdout.strip()
        self.loops.append(dev)
        return dev

    def detach(self, dev: str) -> None:
        run("losetup", "-d", dev, check=False)
        backing = Path("/sys/block") / Path(dev).name / "loop" / "backing_file"
        deadline = time.monotonic() + 30
        while backing.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if dev in self.loops:
            self.loops.remove(dev)

    def mount_fs(self, dev: str, where: Path) -> None:
        where.mkdir(parents=True, exist_ok=True)
        run("mount", dev, where)
        self.fs_mounts.append(where)

    def umount_fs(self, where: Path) -> None:
        run("umount", where)
        self.fs_mounts.remove(where)

    def cleanup(self) -> None:
        """Tear everything down; each step is tried even when an earlier one failed."""
        for where in reversed(self.fs_mounts):
            _quietly(lambda: run("umount", where, check=False).returncode == 0 or run("umount", "-l", where, check=False))
        self.fs_mounts.clear()
        for dev in list(reversed(self.loops)):
            _quietly(lambda: self.detach(dev))
        self.loops.clear()
        for mnt in reversed(self.fuse_mounts):
            _quietly(lambda: is_mounted(mnt) and vraid("umount", mnt, check=False, timeout=60))
            if is_mounted(mnt):
                _quietly(lambda: run("fusermount3", "-u", "-z", mnt, check=False))
        self.fuse_mounts.clear()
        for pid in self.pids:
            if wait_gone(pid, 10):
                continue
            for sig in (signal.SIGTERM, signal.SIGKILL):
                _quietly(lambda: os.kill(pid, sig))
                if wait_gone(pid, 5):
                    break
        self.pids.clear()



def write_files(root: Path, rng: random.Random, tag: str, n: int, size: int) -> None:
    """``n`` files of 1..``size`` random bytes under ``root/tag`` (a new directory)."""
    d = root / tag
    d.mkdir()
    for i in range(n):
        (d / f"f{i:03d}").write_bytes(rng.randbytes(rng.randint(1, size)))


def settle(fs: Path, image: Path) -> None:
    """Everything ext4 wrote is on the members (a fsync of the image drains a cache too)."""
    run("sync", "-f", fs)
    fd = os.open(image, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def status_json(target: Path) -> dict:
    """``vraid status --json`` of a mountpoint or an array directory."""
    import json

    return json.loads(vraid("status", target, "--json").stdout)

def _quietly(step) -> None:
    try:
        step()
    except Exception as exc:  # noqa: BLE001 - cleanup must go on
        print(f"cleanup step failed: {exc!r}")
