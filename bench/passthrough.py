"""A minimal one-file pyfuse3 + trio filesystem: the benchmark's baseline.

It exposes exactly one regular file, ``disk.img`` (inode 2 in the root, inode
1), whose bytes are those of a regular backing file. Every request is served
inline with ``os.pread``/``os.pwrite`` on the trio thread, without worker
threads, so it measures what one FUSE daemon costs before any RAID logic is
added. The FUSE options and ``open()`` reply match those of vraid's mount so
that the two are compared like for like.

Usage::

    python bench/passthrough.py BACKING_FILE MOUNTPOINT

It runs in the foreground until the mount is unmounted (``fusermount3 -u``)
or the process receives SIGTERM or SIGINT, and prints nothing on success.
"""

from __future__ import annotations

import ctypes
import errno
import faulthandler
import os
import signal
import stat
import sys

import pyfuse3
import trio

faulthandler.enable()

ROOT_INODE = pyfuse3.ROOT_INODE
IMAGE_INODE = 2
IMAGE_NAME = b"disk.img"
PR_SET_IO_FLUSHER = 57


def mark_io_flusher() -> None:
    """Mark this process an I/O flusher so memory reclaim cannot deadlock on it.

    A daemon that serves the backing file of a local loop device must not be
    throttled by the writeback it is itself needed for. Needs root; failure is
    ignored because the benchmark still works, only less safely.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class PassthroughOperations(pyfuse3.Operations):
    """FUSE handlers for one fixed-size image file backed by a regular file."""

    def __init__(self, backing_fd: int) -> None:
        super().__init__()
        self._fd = backing_fd
        self._size = os.fstat(backing_fd).st_size

    # --- attributes and names -------------------------------------------------

    def _attr(self, inode: int) -> pyfuse3.EntryAttributes:
        """Build the attributes of the root directory or of the image."""
        backing = os.fstat(self._fd)
        attr = pyfuse3.EntryAttributes()
        attr.st_ino = inode
        attr.st_uid = backing.st_uid
        attr.st_gid = backing.st_gid
        attr.st_atime_ns = backing.st_atime_ns
        attr.st_mtime_ns = backing.st_mtime_ns
        attr.st_ctime_ns = backing.st_ctime_ns
        attr.attr_timeout = 1.0
        attr.entry_timeout = 1.0
        if inode == ROOT_INODE:
            attr.st_mode = stat.S_IFDIR | 0o755
            attr.st_nlink = 2
            attr.st_size = 0
        else:
            attr.st_mode = stat.S_IFREG | 0o644
            attr.st_nlink = 1
            attr.st_size = self._size
            attr.st_blksize = 4096
            attr.st_blocks = (self._size + 511) // 512
        return attr

    @staticmethod
    def _check_inode(inode: int) -> None:
        if inode not in (ROOT_INODE, IMAGE_INODE):
            raise pyfuse3.FUSEError(errno.ENOENT)

    async def lookup(
        self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext
    ) -> pyfuse3.EntryAttributes:
        if parent_inode != ROOT_INODE:
            raise pyfuse3.FUSEError(errno.ENOTDIR)
        if name == b".":
            return self._attr(ROOT_INODE)
        if name == IMAGE_NAME:
            return self._attr(IMAGE_INODE)
        raise pyfuse3.FUSEError(errno.ENOENT)

    async def getattr(
        self, inode: int, ctx: pyfuse3.RequestContext
    ) -> pyfuse3.EntryAttributes:
        self._check_inode(inode)
        return self._attr(inode)

    async def setattr(
        self,
        inode: int,
        attr: pyfuse3.EntryAttributes,
        fields: pyfuse3.SetattrFields,
        fh: int | None,
        ctx: pyfuse3.RequestContext,
    ) -> pyfuse3.EntryAttributes:
        """Accept time-only changes (touch); refuse size, mode and owner changes."""
        self._check_inode(inode)
        if fields.update_size or fields.update_mode or fields.update_uid or fields.update_gid:
            raise pyfuse3.FUSEError(errno.EPERM)
        if inode == IMAGE_INODE and (fields.update_atime or fields.update_mtime):
            current = os.fstat(self._fd)
            atime = attr.st_atime_ns if fields.update_atime else current.st_atime_ns
            mtime = attr.st_mtime_ns if fields.update_mtime else current.st_mtime_ns
            os.utime(self._fd, ns=(atime, mtime))
        return self._attr(inode)

    async def statfs(self, ctx: pyfuse3.RequestContext) -> pyfuse3.StatvfsData:
        data = pyfuse3.StatvfsData()
        data.f_bsize = 4096
        data.f_frsize = 4096
        data.f_blocks = self._size // 4096
        data.f_bfree = 0
        data.f_bavail = 0
        data.f_files = 2
        data.f_ffree = 0
        data.f_favail = 0
        data.f_namemax = 255
        return data

    # --- the directory --------------------------------------------------------

    async def opendir(self, inode: int, ctx: pyfuse3.RequestContext) -> int:
        if inode != ROOT_INODE:
            raise pyfuse3.FUSEError(errno.ENOTDIR)
        return inode

    async def readdir(self, fh: int, start_id: int, token: pyfuse3.ReaddirToken) -> None:
        """List the one entry; its next-offset is 1, so a resumed listing is empty."""
        if start_id == 0:
            pyfuse3.readdir_reply(token, IMAGE_NAME, self._attr(IMAGE_INODE), 1)

    async def releasedir(self, fh: int) -> None:
        return None

    # --- the image ------------------------------------------------------------

    async def open(
        self, inode: int, flags: int, ctx: pyfuse3.RequestContext
    ) -> pyfuse3.FileInfo:
        if inode == ROOT_INODE:
            raise pyfuse3.FUSEError(errno.EISDIR)
        self._check_inode(inode)
        return pyfuse3.FileInfo(fh=inode, keep_cache=False, direct_io=False)

    async def read(self, fh: int, off: int, size: int) -> bytes:
        if off >= self._size:
            return b""
        try:
            return os.pread(self._fd, min(size, self._size - off), off)
        except OSError as exc:
            raise pyfuse3.FUSEError(exc.errno or errno.EIO) from exc

    async def write(self, fh: int, off: int, buf: bytes) -> int:
        """Write inside the image; never grow it (a short write at the end, like a disk)."""
        if off >= self._size:
            raise pyfuse3.FUSEError(errno.ENOSPC)
        data = memoryview(buf)[: self._size - off]
        try:
            return os.pwrite(self._fd, data, off)
        except OSError as exc:
            raise pyfuse3.FUSEError(exc.errno or errno.EIO) from exc

    async def fsync(self, fh: int, datasync: bool) -> None:
        """Make the backing file durable; never ENOSYS (the kernel would stop asking)."""
        try:
            if datasync:
                os.fdatasync(self._fd)
            else:
                os.fsync(self._fd)
        except OSError as exc:
            raise pyfuse3.FUSEError(exc.errno or errno.EIO) from exc

    async def flush(self, fh: int) -> None:
        return None

    async def release(self, fh: int) -> None:
        return None


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_early_stop: list[int] = []


def _remember_signal(signum: int, frame: object) -> None:
    """Note a stop signal that arrives before trio listens for it."""
    _early_stop.append(signum)


async def _stop_on_signal(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """End ``pyfuse3.main()`` at the first SIGTERM/SIGINT (or at once if one came early)."""
    with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
        task_status.started()
        if not _early_stop:
            async for _ in signals:
                break
    pyfuse3.terminate()


async def serve() -> None:
    """Run the FUSE loop until unmounted, or until a stop signal ends it."""
    async with trio.open_nursery() as nursery:
        await nursery.start(_stop_on_signal)
        await pyfuse3.main()
        nursery.cancel_scope.cancel()


def main(argv: list[str] | None = None) -> int:
    """Mount ``disk.img`` backed by ``BACKING_FILE`` at ``MOUNTPOINT`` and serve it."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: passthrough.py BACKING_FILE MOUNTPOINT", file=sys.stderr)
        return 2
    backing, mountpoint = args
    for signum in STOP_SIGNALS:  # until trio takes over, so the mount is never orphaned
        signal.signal(signum, _remember_signal)
    mark_io_flusher()
    fd = os.open(backing, os.O_RDWR)
    try:
        options = set(pyfuse3.default_options) | {"fsname=passthrough", "subtype=passthrough"}
        pyfuse3.init(PassthroughOperations(fd), mountpoint, options)
        try:
            trio.run(serve)
        except BaseException:
            pyfuse3.close(unmount=False)
            raise
        pyfuse3.close(unmount=True)
    finally:
        os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
