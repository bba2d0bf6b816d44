"""The FUSE frontend: one directory holding exactly one regular file, the image.

This is the only module that speaks errno. The controller raises domain
errors; here they become ``FUSEError``: a write past the end is ENOSPC, a
member failure EIO, and anything unexpected is logged with its traceback and
answered with EIO rather than ending the mount under a live loop device.

What a loop device's backing file needs (FUSE-NOTES): fsync must be
implemented (an ENOSYS answer is remembered by the kernel and every later
fsync would silently succeed); ``keep_cache=False`` so the kernel never shows
stale pages after data changes behind it; the file never changes size, so
truncate, chmod and chown fail with EPERM.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import time
from typing import TYPE_CHECKING

import pyfuse3

from vraid.errors import MemberIOError, OutOfRange, VraidError

if TYPE_CHECKING:
    from vraid.engine.host.array import Array
    from vraid.sim.trace import TraceWriter

log = logging.getLogger(__name__)

ROOT = pyfuse3.ROOT_INODE
IMAGE = ROOT + 1


class ImageFS(pyfuse3.Operations):
    """pyfuse3 operations exposing ``array`` as the file ``image_name``."""

    def __init__(self, array: "Array", image_name: str = "disk.img", *, trace: "TraceWriter | None" = None) -> None:
        super().__init__()
        self.array = array
        self.name = image_name.encode()
        self.trace = trace
        self.uid, self.gid = os.getuid(), os.getgid()
        now = time.time_ns()
        self.times = {ROOT: [now, now, now], IMAGE: [now, now, now]}  # atime, mtime, ctime
        self.internal_errors = 0
        self.open_handles = 0

    # -- names and attributes --------------------------------------------------
    async def lookup(self, parent_inode, name, ctx=None):
        if parent_inode == ROOT and name == self.name:
            return await self.getattr(IMAGE)
        if parent_inode == ROOT and name in (b".", b".."):
            return await self.getattr(ROOT)
        raise pyfuse3.FUSEError(errno.ENOENT)

    async def getattr(self, inode, ctx=None):
        entry = pyfuse3.EntryAttributes()
        if inode == ROOT:
            entry.st_mode = stat.S_IFDIR | 0o755
            entry.st_nlink = 2
            entry.st_size = 0
        elif inode == IMAGE:
            entry.st_mode = stat.S_IFREG | 0o644
            entry.st_nlink = 1
            entry.st_size = self.array.capacity
        else:
            raise pyfuse3.FUSEError(errno.ENOENT)
        entry.st_ino = inode
        entry.st_uid, entry.st_gid = self.uid, self.gid
        entry.st_blksize = self.array.geometry.block_size
        entry.st_blocks = -(-entry.st_size // 512)
        entry.st_atime_ns, entry.st_mtime_ns, entry.st_ctime_ns = self.times[inode]
        entry.attr_timeout = 1
        entry.entry_timeout = 1
        return entry

    async def setattr(self, inode, attr, fields, fh, ctx):
        if fields.update_size:
            if inode == IMAGE and attr.st_size == self.array.capacity:
                return await self.getattr(inode)  # O_TRUNC-free no-op resize
            raise pyfuse3.FUSEError(errno.EPERM)
        if fields.update_mode or fields.update_uid or fields.update_gid:
            raise pyfuse3.FUSEError(errno.EPERM)
        times = self.times.get(inode)
        if times is None:
            raise pyfuse3.FUSEError(errno.ENOENT)
        if fields.update_atime:
            times[0] = attr.st_atime_ns
        if fields.update_mtime:
            times[1] = attr.st_mtime_ns
        if fields.update_ctime:
            times[2] = attr.st_ctime_ns
        return await self.getattr(inode)

    async def statfs(self, ctx):
        s = pyfuse3.StatvfsData()
        g = self.array.geometry
        s.f_bsize = s.f_frsize = g.block_size
        s.f_blocks = g.capacity // g.block_size
        s.f_bfree = s.f_bavail = 0
        s.f_files, s.f_ffree, s.f_favail = 2, 0, 0
        s.f_namemax = 255
        return s

    # -- the directory -----------------------------------------------------------
    async def opendir(self, inode, ctx):
        if inode != ROOT:
            raise pyfuse3.FUSEError(errno.ENOTDIR)
        return inode

    async def readdir(self, fh, start_id, token):
        if start_id < 1:
            pyfuse3.readdir_reply(token, self.name, await self.getattr(IMAGE), 1)

    async def releasedir(self, fh):
        return None

    # -- the image -----------------------------------------------------------
    async def open(self, inode, flags, ctx):
        if inode != IMAGE:
            raise pyfuse3.FUSEError(errno.EISDIR if inode == ROOT else errno.ENOENT)
        if flags & os.O_TRUNC:
            raise pyfuse3.FUSEError(errno.EPERM)
        self.open_handles += 1
        return pyfuse3.FileInfo(fh=inode, keep_cache=False, direct_io=False)

    async def read(self, fh, off, size):
        if self.trace is not None:
            self.trace.record(self.array.clock.now(), "R", off, size)
        try:
            return await self.array.read(off, size)
        except Exception as exc:  # noqa: BLE001 - the FUSE boundary
            raise self._errno(exc, "read", off, size) from exc

    async def write(self, fh, off, buf):
        capacity = self.array.capacity
        if off >= capacity:
            raise pyfuse3.FUSEError(errno.ENOSPC)
        if off + len(buf) > capacity:  # a short write; the rest gets ENOSPC
            buf = memoryview(buf)[: capacity - off]
        if self.trace is not None:
            self.trace.record(self.array.clock.now(), "W", off, len(buf))
        try:
            await self.array.write(off, buf)
        except Exception as exc:  # noqa: BLE001 - the FUSE boundary
            raise self._errno(exc, "write", off, len(buf)) from exc
        self.times[IMAGE][1] = self.times[IMAGE][2] = time.time_ns()
        return len(buf)

    async def fsync(self, fh, datasync):
        if self.trace is not None:
            self.trace.record(self.array.clock.now(), "F", 0, 0)
        try:
            await self.array.flush()
        except Exception as exc:  # noqa: BLE001 - the FUSE boundary
            raise self._errno(exc, "fsync", 0, 0) from exc

    async def flush(self, fh):
        # close(): nothing to do for durability (fsync is the barrier), but it
        # must not answer ENOSYS.
        return None

    async def release(self, fh):
        self.open_handles -= 1

    # No extended attributes. ENOSYS (not ENODATA) makes the kernel stop asking (its
    # no_xattr flag): otherwise every write() is preceded by a getxattr of
    # "security.capability" (the kernel checks for privileges to drop), a second FUSE
    # request per write that halved the random-write rate (docs/performance.md).
    async def _no_xattr(self, *args, **kwargs):
        raise pyfuse3.FUSEError(errno.ENOSYS)

    getxattr = listxattr = setxattr = removexattr = _no_xattr

    # Everything that would change the directory is refused.
    async def _refuse(self, *args, **kwargs):
        raise pyfuse3.FUSEError(errno.EPERM)

    create = mkdir = mknod = symlink = link = unlink = rmdir = rename = _refuse

    def _errno(self, exc: Exception, op: str, off: int, size: int) -> pyfuse3.FUSEError:
        if isinstance(exc, OutOfRange):
            return pyfuse3.FUSEError(errno.ENOSPC)
        if isinstance(exc, MemberIOError):
            log.error("%s at %d+%d: %s", op, off, size, exc)
            return pyfuse3.FUSEError(errno.EIO)
        if isinstance(exc, VraidError):
            log.error("%s at %d+%d: %s", op, off, size, exc)
            return pyfuse3.FUSEError(errno.EIO)
        self.internal_errors += 1
        log.exception("internal error in %s at %d+%d", op, off, size)
        return pyfuse3.FUSEError(errno.EIO)
