"""``--nvram FILE``: an emulated battery-backed write cache (a controller's NVS).

A hardware RAID controller acknowledges a write once the data sits in its
battery-backed RAM, and after a crash it writes that RAM out to the disks
before it serves anything. Here the "RAM" is a file: the write-back cache
puts every dirty block into a slot when the host writes it, clears the slot
once the block has been destaged, and the next mount replays whatever is
still there, then resets it.

What survives what
------------------
* **The daemon dies** (``kill -9``, a crash): every ``put()`` and ``clear()``
  that *returned* survives. Their bytes were written (``pwrite``) into the
  kernel's page cache, which outlives the process (the kernel writes them to
  the file in its own time). A ``put()`` cut short leaves a *torn* record:
  its checksum fails, replay ignores it, and the slot still holds what it
  held before (see "Frames"). A ``clear()`` cut short leaves the slot either
  cleared or as it was.
* **The machine dies** (power loss, kernel panic): only what ``sync()``
  covered survives. ``sync()`` is one ``fdatasync`` of the file; the cache
  calls it for every fsync of the image, so an fsync is the promise, as with
  a real disk. After a power loss
  each slot shows the state the last completed ``sync()`` saw, or a later
  one: never garbage, never an older record, never a cleared one come back.

This assumes the device writes a page (at least a 512-byte sector) either
entirely or not at all, which is what every checksum-less file system assumes
too; anything less is caught by the CRCs, at the cost of the records hit.

The file's frames and the slot bookkeeping over them are told in
:mod:`backends.nvram_frames`; the on-file format (header, frame table, CRCs) in
:mod:`backends.nvram_format`.

Threads: ``put`` and ``clear`` come from one thread (the trio thread);
``sync`` may run in another one meanwhile (the cache runs it through
``trio.to_thread``, or on its own thread when there is little to write out:
``unsynced_bytes``, vraid.engine.members.inline_sync) and does not hold the GIL during
the fdatasync.

Stores and syncs
----------------
Every store is a ``pwrite`` on the file descriptor; the file is mapped read-only,
for the table scan and replay at open. Until 2026-11-24 the stores went through a
writable shared mapping and ``sync()`` was an ``msync``: the writeback of pages
dirtied through a mapping costs far more on this machine (10 random pages: 15 ms
through the mapping, 0.6 ms written with ``pwrite``, each then synced with ``fdatasync``),
which made every fsync of a cached image slower than on a write-through one
(docs/performance.md). Frames are handed out in ascending order from a wrapping
cursor (:class:`backends.nvram_frames.FreeFrames`), so consecutive puts fill consecutive pages.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import threading
import time
import uuid as uuidlib
import zlib
from typing import Any, Sequence
from pathlib import Path

import numpy as np

from .nvram_format import ENTRY, ENTRY_KEY, ENTRY_SIZE, HEADER_SIZE, RECORD, ZERO_ENTRY
from .nvram_format import NvramError, allocate_file, default_spare, layout, new_header
from .nvram_format import parse_header, parse_uuid, scan_table
from .nvram_frames import FreeFrames, SlotFrames, frame_runs

_crc32 = zlib.crc32


class Nvram(SlotFrames):
    """An NVRAM file, mapped. Make one with :meth:`create` or :meth:`open`."""

    # -- making and opening ---------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        *,
        slots: int,
        block_size: int,
        array_uuid: str,
        spare: int | None = None,
        force: bool = False,
    ) -> "Nvram":
        """Make a new, empty NVRAM file and open it.

        ``spare`` frames beyond ``slots`` let rewritten slots keep their
        anchor until the next sync (default ``max(8, slots // 8)``).

        Raises:
            NvramError: the file exists (and ``force`` is not set), the sizes
                are impossible or the disk is full.
        """
        path = Path(path)
        if not _is_int(slots) or not 1 <= slots < 2**31:
            raise NvramError(f"NVRAM slot count {slots!r} is impossible", "give at least one slot")
        if not _is_int(block_size) or not 1 <= block_size < 2**31:
            raise NvramError(f"NVRAM block size {block_size!r} is impossible", "use the array's block size")
        spare = default_spare(slots) if spare is None else spare
        if not _is_int(spare) or not 1 <= spare < 2**31:
            raise NvramError(f"NVRAM spare frame count {spare!r} is impossible", "give at least one spare frame")
        uid = parse_uuid(array_uuid)
        exists = NvramError(
            f"NVRAM file {path} already exists",
            "open it instead; remove it first (or pass force=True) only if its dirty blocks are not needed",
        )
        if path.exists() and not force:
            raise exists
        frames = slots + spare
        _table, _data, size = layout(block_size, frames)
        head = new_header(uid, block_size, slots, frames, time.time())
        allocate_file(path, head, size, force, exists)
        return cls.open(path, array_uuid=array_uuid, block_size=block_size)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, array_uuid: str, block_size: int) -> "Nvram":
        """Open the NVRAM file of array ``array_uuid``, locked against other processes.

        It may hold the records of a mount that crashed: :meth:`replay`
        returns them. Opening drops torn and superseded entries and syncs.

        Raises:
            NvramError: missing, not an NVRAM file, damaged header, truncated,
                made for another array or block size, or in use.
        """
        return cls(Path(path), array_uuid, block_size)

    def __init__(self, path: Path, array_uuid: str, block_size: int) -> None:
        self.path = path
        self.name = str(path)
        self._mm: mmap.mmap | None = None
        self._fd = -1
        want = parse_uuid(array_uuid)
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            raise NvramError(f"NVRAM file {path} does not exist", "check the path (vraid creates the file only when none exists)") from None
        except OSError as exc:
            raise NvramError(f"cannot open NVRAM file {path}: {exc.strerror}", "check the path and its permissions") from exc
        try:
            self._attach(want, block_size)
        except BaseException:
            self._detach()
            raise

    def _attach(self, want: uuidlib.UUID, block_size: int) -> None:
        path, fd = self.path, self._fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise NvramError(
                f"NVRAM file {path} is in use by another process",
                "is the array still mounted? unmount it first; two mounts must never share an NVRAM file",
            ) from None
        actual = os.fstat(fd).st_size
        h = parse_header(path, os.pread(fd, HEADER_SIZE, 0), actual, want, block_size)
        self._bs, self._slots, self._frames = h.block_size, h.slots, h.frames
        self._table_off, self._data_off, self._size = h.table, h.data, h.size
        self.array_uuid = str(h.uuid)
        self.created = h.created
        # read-only: every store is a pwrite (see "Stores and syncs" in the module docstring)
        self._mm = mmap.mmap(fd, h.size, mmap.MAP_SHARED, mmap.PROT_READ)
        self._mu = threading.Lock()  # the bookkeeping; held for a whole put / clear
        self._sync_lock = threading.Lock()  # one sync at a time
        self.syncs = 0
        self.forced_syncs = 0
        self._rebuild()

    def _rebuild(self) -> None:
        """Bookkeeping from the file: each slot keeps only its newest valid entry."""
        newest, drop, top = self._scan()
        fd, toff = self._fd, self._table_off
        for f in drop:
            os.pwrite(fd, ZERO_ENTRY, toff + f * ENTRY_SIZE)
        self._reset_state()
        self._seq = top
        for slot, (seq, f, _block, kind) in newest.items():
            self._fseq[f] = seq
            self._held[slot].append(f)
            self._anchor[slot] = f
            if kind == RECORD:
                self._live[slot] = True
                self._used += 1
            else:
                self._tombs.add(f)
                self._touched.add(slot)  # the sync below makes it unnecessary, then frees it
        self._free = FreeFrames(self._frames, (f for f in range(self._frames) if self._fseq[f] == 0))
        self._lo, self._hi = 0, self._frames - 1  # what a killed daemon left in the page cache: durable from now on
        self.sync()

    # -- the data path -------------------------------------------------------------------
    def put(self, slot: int, block: int, data: bytes | bytearray | memoryview | np.ndarray) -> None:
        """Hold ``data``, one block (array block number ``block``), in ``slot``.

        Survives the process dying once this returns, a power loss once a
        later :meth:`sync` has returned.
        """
        view = self._record_view(slot, block, data)
        mu = self._mu
        mu.acquire()
        try:
            fd = self._open_fd()
            free = self._free
            if not free:
                self._forced_sync()
            f = free.pop()
            try:
                os.pwrite(fd, view, self._data_off + f * self._bs)  # the data first ...
            except OSError:
                free.append(f)
                raise
            seq = self._seq = self._seq + 1
            crc = _crc32(view, _crc32(ENTRY_KEY.pack(seq, block, slot, RECORD)))
            os.pwrite(fd, ENTRY.pack(seq, block, slot, crc, RECORD), self._table_off + f * ENTRY_SIZE)  # ... the entry last
            self._recorded(slot, f, seq)
        finally:
            mu.release()

    def put_many(self, items: Sequence[tuple[int, int, Any]]) -> None:
        """:meth:`put` of each ``(slot, block, data)``, with the same guarantees per record,
        in fewer system calls: the data of a run of consecutive frames is one ``pwritev``,
        then the entries of the run one ``pwrite`` (all data before any entry), then the
        entries of the frames the batch gave back are zeroed, one ``pwrite`` per run of
        consecutive frames (after every new entry: a kill in between leaves both records of
        a slot, and replay takes the newer). The slots must differ. Falls back to one
        :meth:`put` after another when the free frames would run out (a put then syncs by
        itself) or a slot repeats."""
        items = list(items)
        n = len(items)
        if n < 2 or len({slot for slot, _, _ in items}) < n or n > len(self._free):
            for slot, block, data in items:
                self.put(slot, block, data)
            return
        bs = self._bs
        record_view = self._record_view
        views = [record_view(slot, block, data) for slot, block, data in items]
        with self._mu:
            fd = self._open_fd()
            free = self._free  # only puts (this thread) take frames: still enough
            frames = free.take(n)
            runs = frame_runs(frames)
            try:
                for a, b in runs:  # the data first ...
                    os.pwritev(fd, views[a:b], self._data_off + frames[a] * bs)
            except OSError:
                for f in frames:
                    free.append(f)
                raise
            seq0 = self._seq
            self._seq = seq0 + n
            pack, key, crc32 = ENTRY.pack, ENTRY_KEY.pack, _crc32
            entries = [pack(seq, block, slot, crc32(view, crc32(key(seq, block, slot, RECORD))), RECORD)
                       for seq, (slot, block, _), view in zip(range(seq0 + 1, seq0 + n + 1), items, views)]
            toff = self._table_off
            for a, b in runs:  # ... the entries next
                os.pwrite(fd, b"".join(entries[a:b]), toff + frames[a] * ENTRY_SIZE)
            gone: list[int] = []  # older records given back: zeroed below, after every new entry
            recorded = self._recorded
            for (slot, _, _), f, seq in zip(items, frames, range(seq0 + 1, seq0 + n + 1)):
                recorded(slot, f, seq, gone)
            if gone:
                gone.sort()
                for a, b in frame_runs(gone):
                    os.pwrite(fd, bytes(ENTRY_SIZE * (b - a)), toff + gone[a] * ENTRY_SIZE)
                fseq = self._fseq
                for f in gone:
                    fseq[f] = 0
                    free.append(f)
                if gone[0] < self._lo:
                    self._lo = gone[0]
                if gone[-1] > self._hi:
                    self._hi = gone[-1]

    def _record_view(self, slot: int, block: int, data: Any) -> memoryview:
        """``data`` as the bytes of one record for ``slot`` and ``block``; IndexError or
        ValueError, before anything is taken or written, if any of them is unfit."""
        if not 0 <= slot < self._slots:
            raise IndexError(f"NVRAM slot {slot} outside 0..{self._slots - 1}")
        if block < 0:
            raise ValueError(f"block number {block} is negative")
        try:
            view = memoryview(data)
        except TypeError as exc:
            raise ValueError(f"NVRAM put needs one contiguous block of {self._bs} bytes ({exc})") from None
        if view.nbytes != self._bs or not view.contiguous:
            raise ValueError(f"NVRAM put needs one contiguous block of {self._bs} bytes "
                             f"({view.nbytes} bytes{'' if view.contiguous else ', not contiguous'})")
        return view

    def _open_fd(self) -> int:
        """The file descriptor (with ``_mu`` held); ValueError once closed."""
        if self._fd < 0:
            raise ValueError(f"NVRAM file {self.path} is closed")
        return self._fd

    def clear(self, slot: int) -> None:
        """Empty ``slot`` (its block was destaged). Clearing an empty slot does nothing."""
        if not 0 <= slot < self._slots:
            raise IndexError(f"NVRAM slot {slot} outside 0..{self._slots - 1}")
        with self._mu:
            self._clear(slot)

    def sync(self) -> None:
        """Return once every put and clear made before the call is on disk.

        One ``fdatasync`` covers the frames changed since the previous sync (nothing
        to do when none changed). Safe to call from another thread while
        ``put``/``clear`` go on.
        """
        with self._sync_lock:
            with self._mu:
                if self._mm is None:
                    raise ValueError(f"NVRAM file {self.path} is closed")
                lo, hi = self._lo, self._hi
                if lo > hi:
                    return
                touched, self._touched = self._touched, set()
                self._lo, self._hi = self._frames, -1
                unsynced, self._unsynced = self._unsynced, 0
                snap = []
                for slot in touched:
                    held = self._held[slot]
                    if held:
                        f = held[-1]
                        snap.append((slot, f, self._fseq[f]))
                        self._pending[f] = self._fseq[f]
            try:
                self._persist(self._table_off + lo * ENTRY_SIZE, self._data_off + (hi + 1) * self._bs)
            except OSError as exc:
                with self._mu:  # nothing became durable: the next sync covers all of it again
                    self._pending.clear()
                    self._touched |= touched
                    self._lo, self._hi = min(self._lo, lo), max(self._hi, hi)
                    self._unsynced += unsynced
                raise NvramError(f"fdatasync of NVRAM file {self.path} failed: {exc.strerror}", "check the disk it lives on") from exc
            with self._mu:
                self._pending.clear()
                fseq = self._fseq
                for slot, f, seq in snap:
                    if fseq[f] != seq:  # cleared, or a newer tombstone, meanwhile
                        continue
                    held = self._held[slot]
                    if f in self._tombs:  # the clear is durable, and so is every older zeroed entry
                        self._tombs.discard(f)
                        self._anchor[slot] = -1
                        held.remove(f)
                        self._release(f)
                    else:
                        self._anchor[slot] = f
                        if len(held) > 1:
                            self._trim(slot, held)
                self.syncs += 1

    @property
    def unsynced_bytes(self) -> int | None:
        """About what a :meth:`sync` now has to write out: the bytes of the records put
        since the last sync began (the table entries besides them are not counted). None
        while a sync runs in another thread: a sync now would wait for it."""
        if self._sync_lock.locked():
            return None
        return self._unsynced

    def used(self) -> int:
        """Slots holding a block."""
        return self._used

    @property
    def slots(self) -> int:
        return self._slots

    @property
    def frames(self) -> int:
        return self._frames

    @property
    def block_size(self) -> int:
        return self._bs

    @property
    def size(self) -> int:
        """Bytes of the file."""
        return self._size

    def where(self, slot: int) -> tuple[int, int] | None:
        """File offsets (table entry, data) of the slot's block, or None if the slot is empty."""
        if not 0 <= slot < self._slots:
            raise IndexError(f"NVRAM slot {slot} outside 0..{self._slots - 1}")
        with self._mu:
            if not self._live[slot]:
                return None
            f = self._held[slot][-1]
            return self._table_off + f * ENTRY_SIZE, self._data_off + f * self._bs

    # -- recovery -------------------------------------------------------------------------
    def replay(self) -> list[tuple[int, bytes]]:
        """The blocks held: (block, data), newest record per block, oldest first.

        After a crash these are the dirty blocks to write to the array before
        it serves anything; once they are on the members (flushed), call
        :meth:`reset`.
        """
        with self._mu:
            if self._mm is None:
                raise ValueError(f"NVRAM file {self.path} is closed")
            newest, _drop, _top = self._scan()
            best: dict[int, tuple[int, int]] = {}
            for seq, f, block, kind in newest.values():
                if kind == RECORD and (block not in best or best[block][0] < seq):
                    best[block] = (seq, f)
            bs, doff = self._bs, self._data_off
            return [(block, self._mm[doff + f * bs : doff + (f + 1) * bs]) for block, (seq, f) in sorted(best.items(), key=lambda kv: kv[1][0])]

    def reset(self) -> None:
        """Empty every slot and sync: nothing is replayed any more, even after a power loss."""
        with self._mu:
            if self._mm is None:
                raise ValueError(f"NVRAM file {self.path} is closed")
            for slot in range(self._slots):
                self._clear(slot)
        self.sync()

    def close(self) -> None:
        """Sync what changed, unmap and unlock the file. Idempotent."""
        if self._mm is None:
            return
        try:
            self.sync()
        finally:
            with self._sync_lock, self._mu:
                self._detach()

    def __enter__(self) -> "Nvram":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._mm is None else f"{self._used}/{self._slots} slots used"
        return f"<Nvram {self.path}: {state}>"

    # -- internals ---------------------------------------------------------------------------
    def _detach(self) -> None:
        """Unmap and close without syncing (what ``kill -9`` does to the mapping)."""
        if self._mm is not None:
            self._mm.close()
            self._mm = None
        if self._fd >= 0:
            os.close(self._fd)  # also drops the flock
            self._fd = -1

    def _scan(self) -> tuple[dict[int, tuple[int, int, int, int]], list[int], int]:
        """Read the table: ({slot: (seq, frame, block, kind)} of each slot's newest
        valid entry, frames with an entry that is not such an entry, highest seq)."""
        mm, bs, doff = self._mm, self._bs, self._data_off
        return scan_table(self._mm, self._table_off, self._data_off, self._bs, self._frames, self._slots)

    def _persist(self, start: int, end: int) -> None:
        """Make bytes ``start``..``end`` of the file durable: one ``fdatasync`` (which
        covers the whole file, a superset; the range is what the tests' disk model records)."""
        os.fdatasync(self._fd)

def _is_int(n: object) -> bool:
    return isinstance(n, int) and not isinstance(n, bool)
