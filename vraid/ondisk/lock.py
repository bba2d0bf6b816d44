"""One mount per array: an exclusive ``flock`` on ``DIR/vraid.lock``.

``vraid mount`` takes the lock after its checks and before anything in the
array directory changes; the daemon (the forked child, which inherits the
open file description) holds it for its whole life, and the kernel drops it
when the daemon exits, however it exits (kill -9 included). A second mount of
the same array, even one started in the same instant, fails to take it and
is refused naming the first mount's daemon pid and mountpoint, which the holder
writes into the file. Every holder writes who it is as soon as it has the lock,
in one ``pwrite`` of a fixed-size record, so a reader never finds the file
emptied by a rewrite. A mount that has not forked its daemon yet marks its
record ``starting``; a refused command that finds the file still empty, or a
record still starting (the holder took the lock an instant before), reads it
again for up to two seconds before it answers.

The file is also taken briefly by commands that change an unmounted array's
superblocks (``vraid fail``, ``vraid add``, ``vraid check --repair``), so none
of them races a mount that is starting.

Why flock and not the socket ping or ``/proc/mounts`` alone: both are checked
before the mount exists, so two mounts started together both passed them
(ISSUE-12 item 3). A flock is atomic and cannot outlive its holder.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

from vraid.errors import MountError

NAME = "vraid.lock"


class ArrayLock:
    """The exclusive lock of one array directory; ``release`` (or process exit) drops it."""

    def __init__(self, directory: Path, fd: int) -> None:
        self.directory = directory
        self.path = directory / NAME
        self.fd: int | None = fd

    @classmethod
    def acquire(cls, directory: Path, *, what: str = "mount", mountpoint: Path | str = "",
                starting: bool = False) -> "ArrayLock":
        """Take the lock without waiting, and claim it at once for this process (serving
        ``mountpoint``, if a mount; ``starting`` while its daemon is yet to be forked).

        Raises:
            MountError: when another process holds it (naming its pid and mountpoint),
                or the lock file cannot be opened.
        """
        directory = Path(directory).resolve()
        path = directory / NAME
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            raise MountError(f"cannot open the array lock {path}: {exc.strerror}",
                             "the array directory must be writable (are you root, or its owner?)") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                holder = _wait_for_claim(fd, holder)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise MountError(f"cannot lock {path}: {exc.strerror}", "is the array directory on a local filesystem?") from exc
            raise MountError(f"cannot {what} {directory}: {describe(holder)} holds it",
                             _hint(holder)) from None
        lock = cls(directory, fd)
        lock.claim(os.getpid(), mountpoint, starting=starting)  # at once, so that a refusal can name the holder
        return lock

    def claim(self, pid: int, mountpoint: Path | str = "", *, starting: bool = False) -> None:
        """Write who holds the lock (``pid`` and the mountpoint it serves; ``starting`` while
        the pid is not yet the daemon's), for a refused second mount.

        One ``pwrite`` of a record padded to :data:`RECORD` bytes replaces the last one
        whole: no truncate, so a concurrent reader never finds the file empty."""
        if self.fd is None:
            return
        text = f"pid={pid}\nmountpoint={mountpoint}\n" + ("starting=yes\n" if starting else "")
        data = text.encode().ljust(RECORD, b"\n")
        try:
            os.pwrite(self.fd, data, 0)
            os.ftruncate(self.fd, len(data))  # a no-op but after a record longer than RECORD
        except OSError:
            pass  # the lock is what matters; the text is only for the message

    def release(self) -> None:
        """Drop this process's hold (other holders of the same open file, e.g. a forked
        daemon, keep the lock)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> "ArrayLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def holder_of(directory: Path) -> dict[str, str] | None:
    """Who holds ``directory``'s lock now (``{"pid": ..., "mountpoint": ...}``), or None if nobody."""
    path = Path(directory) / NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return _read(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


#: how long a refused command waits for the holder to write who it is (it does so right after
#: taking the lock, and a mount again once its daemon is forked: a mount started in the same
#: instant otherwise finds the file still empty, or naming the process that forks the daemon)
CLAIM_WAIT = 2.0

#: the size of a claim record: every claim overwrites the whole of the last one (a path
#: longer than this makes a longer record; the next claim cuts the file back)
RECORD = 4096


def _wait_for_claim(fd: int, holder: dict[str, str]) -> dict[str, str]:
    """``holder``, or, while it names no pid yet or is still starting, the file read again
    until it is settled (at most :data:`CLAIM_WAIT` seconds): what the refusal names."""
    deadline = time.monotonic() + CLAIM_WAIT
    while (not holder.get("pid") or holder.get("starting")) and time.monotonic() < deadline:
        time.sleep(0.01)
        holder = _read(fd)
    return holder


def _read(fd: int) -> dict[str, str]:
    try:
        raw = os.pread(fd, 1 << 16, 0).decode(errors="replace")
    except OSError:
        return {}
    out = {}
    for line in raw.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def describe(holder: dict[str, str] | None) -> str:
    """"the mount at M (daemon pid P)", or what is known of the holder."""
    holder = holder or {}
    pid, where = holder.get("pid"), holder.get("mountpoint")
    if where and holder.get("starting"):
        return f"vraid process {pid or 'unknown'} (starting a mount at {where})"
    if where:
        return f"the mount at {where} (daemon pid {pid or 'unknown'})"
    if pid:
        return f"vraid process {pid}"
    return "another vraid process (starting up)"


def _hint(holder: dict[str, str]) -> str:
    where = holder.get("mountpoint")
    if where:
        return f"use that mount, or `vraid umount {where}` first"
    return "wait for it to finish, or use the mount it makes (see `grep fuse.vraid /proc/mounts`)"
