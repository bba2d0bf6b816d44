"""Member and log files whose syncs never leave the trio thread: model machines replay exactly.

A :class:`~vraid.testing.session.Session` runs the engine in virtual time and returns from a
call only once every task waits, with trio's order of same-instant tasks seeded, so the same
calls do the same thing every time. A :class:`~vraid.backends.file.FileStore` breaks that:
its ``flush`` (``fdatasync``) and ``write_durable`` (``RWF_DSYNC``, the write-intent bitmap's
set writes) run in a worker thread. trio counts a task waiting for a thread as blocked, so
the mock clock jumps ahead and other tasks run while the sync is still in progress, and the
task resumes whenever the thread happens to finish in wall time; a call may even return with
the sync still running. Which member request comes first, and so where a power cut a given
number of requests ahead falls, then changed from run to run: hypothesis found a failure
and could not replay it ("flaky", issue 33).

:func:`inline_syncs` puts every file store of an assembled array behind
:class:`InlineSyncFile`, which syncs on the calling thread (``FileStore.flush_inline``; a
durable write is a write and such a sync). The file's contents and what a sync promises are
unchanged; only where the wait happens moves. The crash machines (the log disk's,
:mod:`vraid.testing.log_machine`; the RAID layer's and the placement's,
:mod:`vraid.testing.crash_machine`, :mod:`vraid.testing.placed_crash_machine`) open their
stores through it.
"""

from __future__ import annotations

from vraid.backends.base import Store, StoreWrapper
from vraid.backends.file import FileStore


class InlineSyncFile(StoreWrapper):
    """``inner`` (a member or log file) with its syncs on the calling thread (module docstring)."""

    sync_reads = True
    sync_writes = True

    def __init__(self, inner: FileStore) -> None:
        super().__init__(inner)
        self.instant = inner.instant

    @property
    def durable_writes(self) -> bool:  # type: ignore[override]
        return self.inner.durable_writes  # the engine chooses as it would on the file itself

    async def read(self, offset: int, length: int) -> bytes:
        return self.inner.read_sync(offset, length)

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        self.inner.write_now(offset, data)

    def write_now(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        self.inner.write_now(offset, data)

    async def write_durable(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Durable when it returns, as ``RWF_DSYNC`` promises: the write, then a sync of the file."""
        self.inner.write_now(offset, data)
        self.inner.flush_inline()

    async def flush(self) -> None:
        self.inner.flush_inline()

    def prefetch(self, offset: int, length: int) -> None:
        self.inner.prefetch(offset, length)


def inline_syncs(stores: list[Store]) -> list[Store]:
    """``stores`` with every :class:`FileStore` behind an :class:`InlineSyncFile` (a missing
    member's placeholder stays as it is)."""
    return [InlineSyncFile(s) if isinstance(s, FileStore) else s for s in stores]
