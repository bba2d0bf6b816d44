"""``file`` store: pread/pwrite on a regular (sparse) file.

Requests run inline on the trio thread: on this machine a member file lives in
the page cache and a pread or pwrite of a strip costs microseconds, far less
than handing it to a thread (FUSE-NOTES item 8: 250-300 us per
``trio.to_thread`` call). Only ``flush`` (which waits for the device) goes to
a worker thread, and not even that when there is little to write out: the
member flush then calls ``flush_inline`` on the trio thread
(``vraid.engine.members.queues.Members._flush_inline``), and ``unsynced_bytes`` tells
it how much a sync would write out.

``flush`` syncs only a file written since its last completed flush: every
write adds its length to a byte counter, a flush notes the counter before it
syncs and records it as synced once the sync returned. A write that lands while a sync runs is
thus left for the next flush (a flush promises what was written before it was
issued), and a flush that finds nothing new returns at once. A fresh store
counts as written: what an earlier process left in the page cache is synced
by the first flush. The sync is ``fdatasync``, not ``fsync``: a member file
never changes size (``create`` sets it once; ``write`` checks the range), and
fdatasync writes the data and every piece of metadata needed to read it back
(block allocation of a sparse file's holes, size); what it leaves out are the
timestamps, which nothing reads. On ext4 that spares a journal commit per
flush when only the mtime changed.

With ``VRAID_FILE_THREADS=1`` in the daemon's environment a read first takes
what the page cache holds without blocking (``preadv`` with ``RWF_NOWAIT``,
inline) and hands only a miss to a worker thread (a bounded limiter per
member), so the loop serves other requests while the disk seeks. Measured on
a 2-core machine it loses to the inline path even at 16 requests in flight
(the thread hand-off costs more than the read it frees the loop from; see
docs/performance.md), so it is off by default.
"""

from __future__ import annotations

import os

import trio

from .base import Store, check_range


#: ``VRAID_FILE_THREADS=1``: reads the page cache cannot serve at once go to a worker
#: thread (see ``read``). Off by default: measured slower here (docs/performance.md,
#: "Member I/O off the event loop"), inline is the default.
THREADED_READS = os.environ.get("VRAID_FILE_THREADS", "0") == "1" and hasattr(os, "RWF_NOWAIT")
#: worker threads one member file may keep busy with reads at once
THREADS_PER_MEMBER = 4
_NOWAIT = getattr(os, "RWF_NOWAIT", 0)
_DSYNC = getattr(os, "RWF_DSYNC", 0)


class FileStore(Store):
    instant = True
    #: ``read`` is ``read_sync`` unless reads may go to worker threads; ``write`` is ``write_now``
    sync_reads = not THREADED_READS
    sync_writes = True
    _limiter: "trio.CapacityLimiter | None" = None

    def __init__(self, path: str | os.PathLike[str], *, writable: bool = True) -> None:
        self.path = os.fspath(path)
        self.name = self.path
        self._fd = os.open(self.path, (os.O_RDWR if writable else os.O_RDONLY) | os.O_CLOEXEC)
        self._size = os.fstat(self._fd).st_size
        #: bytes written so far and the count the last completed flush covered; they differ
        #: while something written is not yet known durable (see ``flush``). None until a
        #: flush has covered what an earlier process may have left unsynced in the page cache
        self._wbytes = 0
        self._sbytes: int | None = None

    @classmethod
    def create(cls, path: str | os.PathLike[str], size: int) -> "FileStore":
        """Make a new sparse file of ``size`` bytes, mode 0600 (fails if it exists): a
        member holds the raw array, readable by its owner only."""
        fd = os.open(os.fspath(path), os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)
        return cls(path)

    @property
    def size(self) -> int:
        return self._size

    async def read(self, offset: int, length: int) -> bytes:
        if not THREADED_READS:
            return self.read_sync(offset, length)
        check_range(self, offset, length)
        buf = bytearray(length)
        try:  # what the page cache holds, without blocking: inline (no thread hand-off)
            n = os.preadv(self._fd, [buf], offset, _NOWAIT)
        except BlockingIOError:
            n = 0
        if n == length:
            return bytes(buf)
        # a miss: the rest in a worker thread, so the loop serves other requests meanwhile
        limiter = self._limiter
        if limiter is None:
            limiter = self._limiter = trio.CapacityLimiter(THREADS_PER_MEMBER)
        rest = await trio.to_thread.run_sync(os.pread, self._fd, length - n, offset + n, limiter=limiter)
        if len(rest) < length - n:
            raise OSError(f"{self.path}: short read at {offset + n}")
        return bytes(buf[:n]) + rest if n else rest

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        self.write_now(offset, data)

    def write_now(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        check_range(self, offset, len(data))
        _pwrite_all(self._fd, data, offset)
        self._wbytes += len(data)

    @property
    def unsynced(self) -> bool:
        """True when something was written since the last completed flush began."""
        return self._wbytes != self._sbytes

    @property
    def unsynced_bytes(self) -> int | None:
        """Bytes written since the last completed flush began: about what a flush now has
        to write out (less if the kernel wrote some back meanwhile). None before the first
        flush, when an earlier process may have left any amount in the page cache."""
        return None if self._sbytes is None else self._wbytes - self._sbytes

    async def flush(self) -> None:
        """Make every write that returned before this call durable (fdatasync; see the
        module docstring for why that suffices), or return at once if there was none
        since the last completed flush began. The sync runs in a worker thread."""
        covers = self._wbytes
        if covers == self._sbytes:
            return
        await trio.to_thread.run_sync(os.fdatasync, self._fd)
        self._covered(covers)

    def flush_inline(self) -> None:
        """:meth:`flush` on the calling thread: blocks it until the sync returns. For a
        caller that knows the sync is short (``unsynced_bytes`` small): a worker thread's
        hand-off costs more than such a sync (vraid.engine.members.inline_sync)."""
        covers = self._wbytes
        if covers == self._sbytes:
            return
        os.fdatasync(self._fd)
        self._covered(covers)

    def _covered(self, covers: int) -> None:
        """A sync that began when ``covers`` bytes had been written returned."""
        if self._sbytes is None or covers > self._sbytes:  # flushes may overlap: never move backwards
            self._sbytes = covers

    #: ``RWF_DSYNC`` (Linux 4.7): a write that returns once its own bytes are durable
    durable_writes = _DSYNC != 0

    async def write_durable(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """``pwritev`` with ``RWF_DSYNC`` in a worker thread: durable when it returns, as
        ``O_DSYNC`` promises (the bytes and what is needed to read them back), and only
        this range is written out, not the rest of the member's dirty pages, which an
        ``fsync`` would wait for (the write-intent bitmap's set writes, docs/crash-and-scrub.md)."""
        if not _DSYNC:
            return await super().write_durable(offset, data)
        check_range(self, offset, len(data))
        await trio.to_thread.run_sync(_pwrite_all, self._fd, data, offset, _DSYNC)

    def prefetch(self, offset: int, length: int) -> None:
        """Start reading ahead (posix_fadvise WILLNEED) without waiting: when a
        batch runs inline, its reads on all members are then in flight at once."""
        os.posix_fadvise(self._fd, offset, length, os.POSIX_FADV_WILLNEED)

    def read_sync(self, offset: int, length: int) -> bytes:
        check_range(self, offset, length)
        data = os.pread(self._fd, length, offset)
        if len(data) < length:  # cannot happen on a regular file inside its size
            raise OSError(f"{self.path}: short read at {offset}")
        return data

    def write_sync(self, offset: int, data: bytes) -> None:
        check_range(self, offset, len(data))
        _pwrite_all(self._fd, data, offset)
        os.fsync(self._fd)

    def check(self) -> str | None:
        """What is wrong with the file under its open descriptor (deleted, truncated), if anything.

        An unlinked file keeps working through the descriptor, so requests alone
        would never notice that the member is gone."""
        try:
            st = os.fstat(self._fd)
        except OSError as exc:
            return f"{self.path}: {exc.strerror}"
        if st.st_nlink == 0:
            return f"{self.path} was deleted"
        if st.st_size < self._size:
            return f"{self.path} was truncated to {st.st_size} bytes"
        return None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _pwrite_all(fd: int, data: bytes | bytearray | memoryview, offset: int, flags: int = 0) -> None:
    view = memoryview(data)
    while view:
        n = os.pwritev(fd, [view], offset, flags) if flags else os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n
