"""``file`` store: pread/pwrite on a regular (sparse) file.

Requests run inline on the trio thread: on this machine a member file lives in
the page cache and a pread or pwrite of a strip costs microseconds, far less
than handing it to a thread (FUSE-NOTES item 8: 250-300 us per
``trio.to_thread`` call). Only ``flush`` (fsync, which waits for the device)
goes to a worker thread.
"""

from __future__ import annotations

import os

import trio

from .base import Store, check_range


class FileStore(Store):
    instant = True

    def __init__(self, path: str | os.PathLike[str], *, writable: bool = True) -> None:
        self.path = os.fspath(path)
        self.name = self.path
        self._fd = os.open(self.path, (os.O_RDWR if writable else os.O_RDONLY) | os.O_CLOEXEC)
        self._size = os.fstat(self._fd).st_size

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
        return self.read_sync(offset, length)

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        check_range(self, offset, len(data))
        _pwrite_all(self._fd, data, offset)

    async def flush(self) -> None:
        await trio.to_thread.run_sync(os.fsync, self._fd)

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


def _pwrite_all(fd: int, data: bytes | bytearray | memoryview, offset: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n
