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

On-file format (little-endian, version 1)
-----------------------------------------
::

    offset 0            header, 4096 bytes
    offset 4096         frame table: frames x 32-byte entries, zero padded to 4 KiB
    offset data_offset  data area: frames x block_size bytes, frame f at
                        data_offset + f * block_size (data_offset is 4 KiB aligned)

    file size = data_offset + frames * block_size exactly; allocated up front
    (posix_fallocate), so a full disk cannot fail a put

Header (written once, by ``create``)::

    0    8s   magic "VRAIDNV\\0"
    8    u16  version (1)
    10   u16  table entry size (32)
    12   u32  flags (0)
    16   16s  uuid of the array the NVRAM belongs to
    32   u32  block size
    36   u32  slots (the caller's slot numbers are 0 .. slots-1)
    40   u32  frames (slots + spare)
    44   u32  reserved (0)
    48   u64  table offset (4096)
    56   u64  data offset
    64   u64  file size
    72   f64  creation time (unix seconds)
    80   ...  zeros
    508  u32  CRC-32 of bytes 0 .. 507 (the header lives in one 512-byte sector)
    512  ...  zeros up to 4096

Frame table entry (frame f at 4096 + 32 * f)::

    0   u64  seq    0 if the frame is free; otherwise the entry's sequence
                    number, one more than the previous entry's
    8   u64  block  the array's logical block number (0 in a tombstone)
    16  u32  slot   the caller's slot number
    20  u32  crc    CRC-32 of pack("<QQIH", seq, block, slot, kind), followed,
                    in a record, by the frame's block_size data bytes
    24  u16  kind   1: record (the frame's data is the block), 2: tombstone
    26  6x   zeros

An entry is *valid* when seq != 0, kind is 1 or 2, slot < slots and the CRC
matches. ``put()`` copies the data first and writes the entry last. Replay
takes, per slot, its valid entry with the highest seq, drops slots whose
entry is a tombstone, keeps, per block, the newest of the remaining records
(the cache can briefly hold one block in two slots: a unit being destaged
and its shadow) and returns them ordered by seq.

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
cursor (:class:`FreeFrames`), so consecutive puts fill consecutive pages.
"""

from __future__ import annotations

import errno
import fcntl
import mmap
import os
import struct
import threading
import time
import uuid as uuidlib
import zlib
from typing import Any, Sequence
from pathlib import Path

import numpy as np

from vraid.errors import VraidError

MAGIC = b"VRAIDNV\x00"
VERSION = 1
HEADER_SIZE = 4096
HEADER_CRC_AT = 508
ENTRY_SIZE = 32
ALIGN = 4096  # alignment of the table and of the data area
RECORD, TOMBSTONE = 1, 2

_HEAD = struct.Struct("<8sHHI16sIIIIQQQd")
_HCRC = struct.Struct("<I")
_ENTRY = struct.Struct("<QQIIH6x")
_KEY = struct.Struct("<QQIH")  # what an entry's CRC covers before the data
_ZERO_ENTRY = bytes(ENTRY_SIZE)
_TABLE = np.dtype([("seq", "<u8"), ("block", "<u8"), ("slot", "<u4"), ("crc", "<u4"), ("kind", "<u2"), ("pad", "V6")])
_crc32 = zlib.crc32


class NvramError(VraidError):
    """The NVRAM file is missing, damaged, in use or belongs to another array."""


def layout(block_size: int, frames: int) -> tuple[int, int, int]:
    """(table offset, data offset, file size) of an NVRAM file."""
    data = HEADER_SIZE + -(-frames * ENTRY_SIZE // ALIGN) * ALIGN
    return HEADER_SIZE, data, data + frames * block_size


def default_spare(slots: int) -> int:
    return max(8, slots // 8)


class Nvram:
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
        uid = _parse_uuid(array_uuid)
        exists = NvramError(
            f"NVRAM file {path} already exists",
            "open it instead; remove it first (or pass force=True) only if its dirty blocks are not needed",
        )
        if path.exists() and not force:
            raise exists
        frames = slots + spare
        table, data, size = layout(block_size, frames)
        head = _HEAD.pack(MAGIC, VERSION, ENTRY_SIZE, 0, uid.bytes, block_size, slots, frames, 0, table, data, size, time.time())
        head = head.ljust(HEADER_CRC_AT, b"\0")
        head = (head + _HCRC.pack(_crc32(head))).ljust(HEADER_SIZE, b"\0")
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            try:
                os.posix_fallocate(fd, 0, size)
            except OSError as exc:
                if exc.errno == errno.ENOSPC:
                    raise NvramError(f"no room for NVRAM file {path} ({size} bytes)", "free some space, or use a smaller cache") from exc
                os.ftruncate(fd, size)  # no preallocation on this file system: a sparse file still works
            os.pwrite(fd, head, 0)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            os.unlink(tmp)
            raise
        os.close(fd)
        try:
            if force:
                os.replace(tmp, path)
            else:
                try:
                    os.link(tmp, path)  # fails if the path appeared meanwhile: never clobbers
                except FileExistsError:
                    raise exists from None
                except OSError:  # a file system without hard links
                    if path.exists():
                        raise exists from None
                    os.rename(tmp, path)
        finally:
            if tmp.exists():
                os.unlink(tmp)
        _fsync_dir(path.parent)
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
        want = _parse_uuid(array_uuid)
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
        raw = os.pread(fd, HEADER_SIZE, 0)
        if raw[:8] != MAGIC:
            raise NvramError(
                f"{path} is not a vraid NVRAM file (no NVRAM magic)",
                "check the --nvram path; vraid creates a new NVRAM file only where no file exists",
            )
        if len(raw) < HEADER_SIZE:
            raise NvramError(
                f"NVRAM file {path} is truncated: {actual} bytes, less than its header",
                "its dirty blocks are lost: remove it and mount with a new NVRAM file (the array then resyncs)",
            )
        body = raw[:HEADER_CRC_AT]
        if _crc32(body) != _HCRC.unpack_from(raw, HEADER_CRC_AT)[0]:
            raise NvramError(
                f"NVRAM file {path}: header checksum mismatch (the header is corrupted)",
                "its dirty blocks cannot be trusted: remove it and mount with a new NVRAM file (the array then resyncs)",
            )
        (_, version, entry, _flags, uid, fbs, slots, frames, _, table, data, size, ctime) = _HEAD.unpack_from(body)
        if version != VERSION:
            raise NvramError(f"NVRAM file {path} has format version {version}; this vraid reads version {VERSION}", "use a matching vraid")
        have = uuidlib.UUID(bytes=uid)
        if have != want:
            raise NvramError(
                f"NVRAM file {path} belongs to array {have}, not to this array ({want})",
                f"it may hold dirty blocks of array {have}: mount that array with it to replay them. "
                f"Give this array its own file (--nvram OTHER_FILE); delete {path} only if array {have} is gone",
            )
        if fbs != block_size:
            raise NvramError(
                f"NVRAM file {path} holds {fbs}-byte blocks, but the array uses {block_size}-byte blocks",
                "it was made for another geometry: give the array a new NVRAM file",
            )
        if entry != ENTRY_SIZE or not 1 <= slots < frames or (table, data, size) != layout(fbs, frames):
            raise NvramError(
                f"NVRAM file {path}: inconsistent header (slots {slots}, frames {frames}, table at {table}, "
                f"data at {data}, size {size})",
                "the file is damaged: remove it and mount with a new NVRAM file (the array then resyncs)",
            )
        if actual != size:
            raise NvramError(
                f"NVRAM file {path} is {'truncated' if actual < size else 'longer than its header says'}: "
                f"{actual} bytes, expected {size}",
                "the file was cut short or altered: remove it and mount with a new NVRAM file "
                "(the dirty blocks it held are lost; the array then resyncs)",
            )
        self._bs, self._slots, self._frames = fbs, slots, frames
        self._table_off, self._data_off, self._size = table, data, size
        self.array_uuid = str(have)
        self.created = ctime
        # read-only: every store is a pwrite (see "Stores and syncs" in the module docstring)
        self._mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
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
            os.pwrite(fd, _ZERO_ENTRY, toff + f * ENTRY_SIZE)
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
            crc = _crc32(view, _crc32(_KEY.pack(seq, block, slot, RECORD)))
            os.pwrite(fd, _ENTRY.pack(seq, block, slot, crc, RECORD), self._table_off + f * ENTRY_SIZE)  # ... the entry last
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
            runs = _runs(frames)
            try:
                for a, b in runs:  # the data first ...
                    os.pwritev(fd, views[a:b], self._data_off + frames[a] * bs)
            except OSError:
                for f in frames:
                    free.append(f)
                raise
            seq0 = self._seq
            self._seq = seq0 + n
            pack, key, crc32 = _ENTRY.pack, _KEY.pack, _crc32
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
                for a, b in _runs(gone):
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

    def clear(self, slot: int) -> None:
        """Empty ``slot`` (its block was destaged). Clearing an empty slot does nothing."""
        if not 0 <= slot < self._slots:
            raise IndexError(f"NVRAM slot {slot} outside 0..{self._slots - 1}")
        with self._mu:
            self._clear(slot)

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
        os.pwrite(self._fd, _ENTRY.pack(seq, 0, slot, _crc32(_KEY.pack(seq, 0, slot, TOMBSTONE)), TOMBSTONE),
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
        os.pwrite(self._fd, _ZERO_ENTRY, off)
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

    def _scan(self) -> tuple[dict[int, tuple[int, int, int, int]], list[int], int]:
        """Read the table: ({slot: (seq, frame, block, kind)} of each slot's newest
        valid entry, frames with an entry that is not such an entry, highest seq)."""
        mm, bs, doff = self._mm, self._bs, self._data_off
        table = np.frombuffer(mm[self._table_off : self._table_off + self._frames * ENTRY_SIZE], dtype=_TABLE)
        top = int(table["seq"].max())
        used = np.flatnonzero(table["seq"])
        rows = table[used]
        newest: dict[int, tuple[int, int, int, int]] = {}
        drop: list[int] = []
        for f, seq, block, slot, crc, kind in zip(
            used.tolist(), *(rows[k].tolist() for k in ("seq", "block", "slot", "crc", "kind"))
        ):
            key = _crc32(_KEY.pack(seq, block, slot, kind))
            if kind == RECORD:
                ok = _crc32(mm[doff + f * bs : doff + (f + 1) * bs], key) == crc
            else:
                ok = kind == TOMBSTONE and key == crc
            if not ok or slot >= self._slots:
                drop.append(f)  # torn or damaged
                continue
            old = newest.get(slot)
            if old is None or old[0] < seq:
                if old is not None:
                    drop.append(old[1])
                newest[slot] = (seq, f, block, kind)
            else:
                drop.append(f)
        return newest, drop, top

    def _persist(self, start: int, end: int) -> None:
        """Make bytes ``start``..``end`` of the file durable: one ``fdatasync`` (which
        covers the whole file, a superset; the range is what the tests' disk model records)."""
        os.fdatasync(self._fd)


def _runs(frames: list[int]) -> list[tuple[int, int]]:
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


def _is_int(n: object) -> bool:
    return isinstance(n, int) and not isinstance(n, bool)


def _parse_uuid(text: str) -> uuidlib.UUID:
    try:
        return uuidlib.UUID(str(text))
    except ValueError:
        raise NvramError(f"{text!r} is not an array uuid", "pass the array's uuid (vraid status shows it)") from None


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
