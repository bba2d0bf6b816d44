"""The frames of an NVRAM file (:mod:`backends.nvram`): which frame holds which slot's record.

Frames: why nothing is overwritten in place
-------------------------------------------
The caller numbers its slots, but a slot is not a fixed place in the file.
The file holds ``frames = slots + spare`` physical *frames*; a ``put()``
writes its record (a table entry + one block of data) into a *free* frame,
and the slot's older record is given back only afterwards. Rewriting in
place would destroy the previous, acknowledged, version whenever the rewrite
is torn: the process killed half way through the copy, or only some of the
pages reaching the disk before a power loss. Per slot, a frame is kept while
it is

* the slot's newest record (what a killed process must find),
* the slot's *anchor*: the newest record the last ``sync()`` made durable
  (what a power loss must find while newer records are not yet synced), or
* the record a ``sync()`` running in another thread is making durable.

A frame given back has its entry zeroed at once. ``clear()`` of a slot whose
anchor is durable writes a *tombstone* (a "slot cleared" entry with a new
sequence number) over the anchor's own entry: one 32-byte store, so the disk
holds either the anchor or the tombstone, and the tombstone outranks every
older entry of the slot that a power loss might leave behind (zeroed entries
not yet synced). The tombstone is itself kept until the next ``sync()``.
Normally a slot uses one frame, two while rewritten since the last sync. If
the free frames run out (more than ``spare`` slots rewritten between two
syncs while nearly all slots are in use), ``put()`` first runs a ``sync()``
itself, which leaves one frame per slot; ``forced_syncs`` counts these.

:class:`SlotFrames` keeps this bookkeeping (a mix-in of :class:`backends.nvram.Nvram`,
which owns the file and the locks); :class:`FreeFrames` hands out the free frames.
"""

from __future__ import annotations

import os
import zlib

from .nvram_format import ENTRY, ENTRY_KEY, ENTRY_SIZE, TOMBSTONE, ZERO_ENTRY

_crc32 = zlib.crc32


class SlotFrames:
    """Each slot's frames: its newest record, its anchor, what a running sync makes durable."""

    def _reset_state(self) -> None:
        self._fseq = [0] * self._frames  # seq of each frame's entry, 0 if free
        self._tombs: set[int] = set()  # frames holding a tombstone
        self._held: list[list[int]] = [[] for _ in range(self._slots)]  # each slot's frames, oldest first
        self._anchor = [-1] * self._slots  # frame of each slot's anchor (durable record or tombstone)
        self._live = [False] * self._slots  # the slot holds a block
        self._used = 0
        self._free = FreeFrames(self._frames)
        self._pending: dict[int, int] = {}  # frame -> seq, being made durable by a running sync
        self._touched: set[int] = set()  # slots changed since the last sync began
        self._lo, self._hi = self._frames, -1  # frames changed since the last sync began
        self._unsynced = 0  # record bytes put since the last sync began (see unsynced_bytes)

    def _recorded(self, slot: int, f: int, seq: int, gone: list[int] | None = None) -> None:
        """Bookkeeping once frame ``f`` holds ``slot``'s new record ``seq`` (with ``_mu`` held).
        ``gone``: where the common rewrite leaves the slot's older frame for the caller to
        zero and give back (:meth:`put_many`), instead of :meth:`_release` now."""
        self._fseq[f] = seq
        self._unsynced += self._bs
        held = self._held[slot]
        held.append(f)
        n = len(held)
        if not self._live[slot]:
            self._live[slot] = True
            self._used += 1
        if n == 2 and held[0] != self._anchor[slot] and not self._pending:
            old = held.pop(0)  # the common rewrite: the older record is not needed
            if gone is None or old in self._tombs:
                self._release(old)
            else:
                gone.append(old)
        elif n > 1:
            self._trim(slot, held)
        self._touched.add(slot)
        if f < self._lo:
            self._lo = f
        if f > self._hi:
            self._hi = f

    def _clear(self, slot: int) -> None:
        if not self._live[slot]:
            return
        self._live[slot] = False
        self._used -= 1
        held = self._held[slot]
        a = self._anchor[slot]
        if a < 0:  # nothing of this slot is durable: zeroing is enough; oldest first, so
            for f in held:  # a kill half way leaves the newest record, as if not cleared
                self._release(f)
            held.clear()
            return
        seq = self._seq = self._seq + 1  # the tombstone replaces the anchor's entry in one store
        os.pwrite(self._fd, ENTRY.pack(seq, 0, slot, _crc32(ENTRY_KEY.pack(seq, 0, slot, TOMBSTONE)), TOMBSTONE),
                  self._table_off + a * ENTRY_SIZE)
        self._fseq[a] = seq
        self._tombs.add(a)
        for f in held:
            if f != a:
                self._release(f)
        held[:] = [a]
        self._touched.add(slot)
        if a < self._lo:
            self._lo = a
        if a > self._hi:
            self._hi = a

    def _trim(self, slot: int, held: list[int]) -> None:
        """Give back the slot's frames that are neither newest, anchor nor being synced."""
        anchor, pending, fseq = self._anchor[slot], self._pending, self._fseq
        keep = []
        for f in held[:-1]:
            if f == anchor or (pending and pending.get(f) == fseq[f]):
                keep.append(f)
            else:
                self._release(f)
        keep.append(held[-1])
        held[:] = keep

    def _release(self, f: int) -> None:
        off = self._table_off + f * ENTRY_SIZE
        os.pwrite(self._fd, ZERO_ENTRY, off)
        self._fseq[f] = 0
        if self._tombs:
            self._tombs.discard(f)
        self._free.append(f)
        if f < self._lo:
            self._lo = f
        if f > self._hi:
            self._hi = f

    def _forced_sync(self) -> None:
        """No free frame (called with ``_mu`` held): a sync leaves one frame per used slot."""
        self.forced_syncs += 1
        self._mu.release()
        try:
            self.sync()
        finally:
            self._mu.acquire()
        if not self._free:  # cannot happen with spare >= 1 and one writer thread
            raise RuntimeError("NVRAM has no free frame even after a sync")


def frame_runs(frames: list[int]) -> list[tuple[int, int]]:
    """Index ranges [a, b) of ``frames`` whose frames are consecutive numbers."""
    runs, a = [], 0
    for i in range(1, len(frames)):
        if frames[i] != frames[i - 1] + 1:
            runs.append((a, i))
            a = i
    runs.append((a, len(frames)))
    return runs


class FreeFrames:
    """The free frames, handed out in ascending order from a cursor that wraps around.

    Consecutive puts take consecutive frames, so the records of one :meth:`Nvram.put_many`
    are usually one run of the file, written with one ``pwritev``, and what a ``sync()``
    writes back is contiguous runs rather than pages scattered over the file. (The LIFO
    free list this replaced scattered a random workload's records over the whole file;
    on its own, before the stores became pwrites, the new order gave dbench no
    measurable gain: docs/performance.md.)

    A list's interface as the tests use it: ``len``, truth, ``pop()``, ``append(frame)``,
    ``[-1]`` (the frame the next ``pop()`` gives) and iteration over the free frames.
    """

    __slots__ = ("_map", "_n", "_cursor")

    def __init__(self, frames: int, free=()) -> None:
        self._map = bytearray(frames)  # 1: free
        for f in free:
            self._map[f] = 1
        self._n = self._map.count(1)
        self._cursor = 0

    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def _next(self) -> int:
        f = self._map.find(1, self._cursor)
        if f < 0:
            f = self._map.find(1)
        if f < 0:
            raise IndexError("no free frame")
        return f

    def pop(self) -> int:
        f = self._next()
        self._map[f] = 0
        self._n -= 1
        self._cursor = f + 1
        return f

    def take(self, n: int) -> list[int]:
        """``n`` frames, as ``n`` pops give them (at least ``n`` must be free): the
        next ``n`` after the cursor in one step when they are all free."""
        c = self._cursor
        m = self._map
        if c + n <= len(m) and m.find(0, c, c + n) < 0:
            m[c : c + n] = bytes(n)
            self._n -= n
            self._cursor = c + n
            return list(range(c, c + n))
        return [self.pop() for _ in range(n)]

    def append(self, f: int) -> None:
        if self._map[f]:
            raise RuntimeError(f"NVRAM frame {f} given back twice")
        self._map[f] = 1
        self._n += 1

    def __getitem__(self, i: int) -> int:
        if i != -1:
            raise IndexError("only [-1], the next frame to be taken")
        return self._next()

    def __iter__(self):
        return (f for f, free in enumerate(self._map) if free)
