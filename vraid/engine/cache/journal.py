"""The journal: where the write-back cache keeps a durable copy of its dirty blocks.

A write is acknowledged once it is in the write cache. Without a journal the
cache is volatile, so an fsync must destage; with one, every dirty block is
also :meth:`~Journal.put` into the journal when the host writes it, an fsync
only :meth:`~Journal.sync`\\ s, a destaged block's record is
:meth:`~Journal.clear`\\ ed once the members are flushed, and after a crash
the next mount writes :meth:`~Journal.replay` through to the members before
it serves anything (:mod:`vraid.engine.host.recovery`), then :meth:`~Journal.reset`\\ s.

Two media fit this interface:

* :class:`NvramJournal`, today's: the emulated battery-backed NVS of
  ``--nvram FILE`` (:mod:`vraid.backends.nvram`), a fixed table of slots in
  a file (written with pwrite, synced with fdatasync). A handle is a slot;
  :meth:`put` with ``replaces`` rewrites the slot in place (the file keeps the
  older record until the next sync).
* A log disk (seed 002, VC-RAID, section 3). What was built
  (:mod:`vraid.engine.log.cache`) is a chained destage target rather than a journal
  behind the write-back cache: the log *is* the cache's second level, so there is no
  separate put/clear per dirty block; it implements :meth:`replay` and :meth:`reset`
  for recovery (:mod:`vraid.engine.host.recovery`). The sketch this seam was shaped by:
  :meth:`put` appends a record
  (header with sequence number, block number and checksum, then the data) to
  the open segment in RAM and returns the record's position; :meth:`sync`
  writes the open segment to the log disk as one large transfer and flushes
  it; :meth:`clear` marks the record dead (logged as a tombstone in the next
  segment, so a replay does not resurrect it, and a segment whose records are
  all dead is free again); :meth:`replay` scans the segment headers, keeps the
  newest live record per block and returns them oldest first; ``available``
  is the room left in the log. ``replaces`` lets the log know the old record
  is dead once the new one is durable.

Synchronous ``put``/``clear`` (called on the trio thread between awaits, so a
cache update and its journal record are one atomic step) and an async
``sync``/``reset`` (the slow, durable part) are what both need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable, Protocol

import numpy as np
import trio

from vraid.engine.clock import Clock
from vraid.engine.members.inline_sync import InlineSyncRule

if TYPE_CHECKING:
    from vraid.backends.nvram import Nvram

Data = bytes | bytearray | memoryview | np.ndarray


class Journal(Protocol):
    """A durable record of dirty blocks (see the module docstring)."""

    #: a short name for status lines ("nvram", "logdisk")
    name: str

    @property
    def capacity(self) -> int:
        """How many blocks the journal can hold at once."""
        ...

    def available(self) -> int:
        """How many more :meth:`put` calls without ``replaces`` can succeed now."""
        ...

    def put(self, block: int, data: Data, replaces: Hashable | None = None) -> Hashable:
        """Record ``data`` as the newest copy of logical block ``block``; returns its handle.

        ``replaces``: the handle of this block's previous record, which the new
        one supersedes (the old handle is invalid afterwards). Durable only
        after the next :meth:`sync` (or earlier, as the medium allows).
        """
        ...

    def put_many(self, items: "list[tuple[int, Data, Hashable | None]]") -> list[Hashable]:
        """Optional: :meth:`put` of each ``(block, data, replaces)`` (distinct blocks); their
        handles in order. A medium may write them together (fewer system calls); each record
        has the guarantees of one :meth:`put`. The cache uses it when a journal has it."""
        ...

    async def sync(self) -> None:
        """Return once every put and clear made before the call is durable."""
        ...

    def clear(self, handle: Hashable) -> None:
        """The record ``handle`` is no longer needed (its block is on the members, flushed)."""
        ...

    def replay(self) -> list[tuple[int, bytes]]:
        """(block, data) of every record held, the newest per block, oldest first (newest last)."""
        ...

    async def reset(self) -> None:
        """Drop every record, durably: nothing is replayed any more."""
        ...


class NvramJournal:
    """:class:`Journal` over an NVRAM file (:class:`vraid.backends.nvram.Nvram`): handles are slots."""

    name = "nvram"

    def __init__(self, nvram: "Nvram", clock: Clock | None = None) -> None:
        self.nvram = nvram
        #: when a sync runs on the trio thread (``clock`` times those syncs; None: untimed)
        self.inline_sync = InlineSyncRule(clock)
        # the lowest slot first, as the cache always took them
        self._free: list[int] = list(range(nvram.slots - 1, -1, -1))

    @property
    def capacity(self) -> int:
        return self.nvram.slots

    def available(self) -> int:
        return len(self._free)

    def put(self, block: int, data: Data, replaces: Any = None) -> int:
        if replaces is not None:  # a rewrite: the slot stays the block's
            self.nvram.put(replaces, block, data)
            return replaces
        if not self._free:
            raise RuntimeError(f"NVRAM {self.nvram.path}: 1 slot(s) needed, 0 of {self.nvram.slots} free")
        slot = self._free.pop()
        try:
            self.nvram.put(slot, block, data)
        except BaseException:
            self._free.append(slot)  # nothing recorded
            raise
        return slot

    def put_many(self, items: list[tuple[int, Data, Any]]) -> list[int]:
        new = sum(1 for _, _, replaces in items if replaces is None)
        if new > len(self._free):
            raise RuntimeError(f"NVRAM {self.nvram.path}: {new} slot(s) needed, {len(self._free)} of "
                               f"{self.nvram.slots} free")
        slots = [self._free.pop() if replaces is None else replaces for _, _, replaces in items]
        try:
            self.nvram.put_many([(slot, block, data) for slot, (block, data, _) in zip(slots, items)])
        except BaseException:
            for slot, (_, _, replaces) in zip(reversed(slots), reversed(items)):
                if replaces is None:
                    self._free.append(slot)  # the batch recorded nothing (or its frames went back)
            raise
        return slots

    async def sync(self) -> None:
        """The NVRAM's sync, in a worker thread; on this thread when it has little to
        write out and such syncs have been short (:mod:`vraid.engine.members.inline_sync`)."""
        if self.inline_sync.inline(self.nvram.unsynced_bytes):
            self.inline_sync.run(self.nvram.sync)
            await trio.lowlevel.checkpoint()
        else:
            await trio.to_thread.run_sync(self.nvram.sync)

    def clear(self, handle: Any) -> None:
        self.nvram.clear(handle)
        self._free.append(handle)

    def replay(self) -> list[tuple[int, bytes]]:
        return [(block, bytes(data)) for block, data in self.nvram.replay()]

    async def reset(self) -> None:
        self.nvram.reset()
        self._free = list(range(self.nvram.slots - 1, -1, -1))

    def __repr__(self) -> str:
        return f"<NvramJournal {self.nvram!r}>"


def as_journal(journal: Any = None, nvram: "Nvram | None" = None, clock: Clock | None = None) -> Journal | None:
    """The journal to use given either a journal or (shorthand) an NVRAM file (its syncs
    timed on ``clock``); None: volatile."""
    if journal is not None and nvram is not None:
        raise ValueError("give a journal or an NVRAM file, not both")
    if nvram is not None:
        return NvramJournal(nvram, clock)
    return journal
