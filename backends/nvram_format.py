"""The on-file format of an NVRAM file (:mod:`backends.nvram`): header, frame table, data area.

What the file holds and how its pieces are checked (CRC-32), apart from what
:class:`backends.nvram.Nvram` does with it: making a new file (:func:`allocate_file`),
reading and checking the header (:func:`parse_header`), and reading the frame table
back (:func:`scan_table`, at open and in replay). Why records go to free frames rather
than over the old ones is told in :mod:`backends.nvram_frames`.

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
"""

from __future__ import annotations

import errno
import os
import struct
import uuid as uuidlib
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np

from vraid.errors import VraidError

MAGIC = b"VRAIDNV\x00"
VERSION = 1
HEADER_SIZE = 4096
HEADER_CRC_AT = 508
ENTRY_SIZE = 32
ALIGN = 4096  # alignment of the table and of the data area
RECORD, TOMBSTONE = 1, 2

HEADER = struct.Struct("<8sHHI16sIIIIQQQd")
HEADER_CRC = struct.Struct("<I")
ENTRY = struct.Struct("<QQIIH6x")
ENTRY_KEY = struct.Struct("<QQIH")  # what an entry's CRC covers before the data
ZERO_ENTRY = bytes(ENTRY_SIZE)
TABLE = np.dtype([("seq", "<u8"), ("block", "<u8"), ("slot", "<u4"), ("crc", "<u4"), ("kind", "<u2"), ("pad", "V6")])
_crc32 = zlib.crc32


class NvramError(VraidError):
    """The NVRAM file is missing, damaged, in use or belongs to another array."""


def layout(block_size: int, frames: int) -> tuple[int, int, int]:
    """(table offset, data offset, file size) of an NVRAM file."""
    data = HEADER_SIZE + -(-frames * ENTRY_SIZE // ALIGN) * ALIGN
    return HEADER_SIZE, data, data + frames * block_size


def default_spare(slots: int) -> int:
    return max(8, slots // 8)


class Header(NamedTuple):
    """What the header of an NVRAM file says (once :func:`parse_header` checked it)."""

    uuid: uuidlib.UUID
    block_size: int
    slots: int
    frames: int
    table: int
    data: int
    size: int
    created: float


def new_header(uid: uuidlib.UUID, block_size: int, slots: int, frames: int, created: float) -> bytes:
    """The header sector of a new file (padded to ``HEADER_SIZE``), its CRC at ``HEADER_CRC_AT``."""
    table, data, size = layout(block_size, frames)
    head = HEADER.pack(MAGIC, VERSION, ENTRY_SIZE, 0, uid.bytes, block_size, slots, frames, 0, table, data, size, created)
    head = head.ljust(HEADER_CRC_AT, b"\0")
    return (head + HEADER_CRC.pack(_crc32(head))).ljust(HEADER_SIZE, b"\0")


def allocate_file(path: Path, head: bytes, size: int, force: bool, exists: NvramError) -> None:
    """Put a new file of ``size`` bytes, allocated up front, with ``head`` at offset 0, at
    ``path``, durably: written under a temporary name, then linked into place (never over
    another file unless ``force``; ``exists`` is raised then)."""
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
    fsync_dir(path.parent)


def parse_header(path: Path, raw: bytes, actual: int, want: uuidlib.UUID, block_size: int) -> Header:
    """The header of the file at ``path`` (its first ``HEADER_SIZE`` bytes ``raw``, ``actual``
    bytes long), checked against the array ``want`` and its ``block_size``.

    Raises:
        NvramError: not an NVRAM file, truncated, damaged header, another version,
            another array or block size, or a size that is not the header's.
    """
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
    if _crc32(body) != HEADER_CRC.unpack_from(raw, HEADER_CRC_AT)[0]:
        raise NvramError(
            f"NVRAM file {path}: header checksum mismatch (the header is corrupted)",
            "its dirty blocks cannot be trusted: remove it and mount with a new NVRAM file (the array then resyncs)",
        )
    (_, version, entry, _flags, uid, fbs, slots, frames, _, table, data, size, ctime) = HEADER.unpack_from(body)
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
    return Header(have, fbs, slots, frames, table, data, size, ctime)


def scan_table(mm, table_off: int, data_off: int, bs: int, frames: int,
               slots: int) -> tuple[dict[int, tuple[int, int, int, int]], list[int], int]:
    """Read the frame table of the mapping ``mm``: ({slot: (seq, frame, block, kind)} of each
    slot's newest valid entry, frames with an entry that is not such an entry, highest seq)."""
    doff = data_off
    table = np.frombuffer(mm[table_off : table_off + frames * ENTRY_SIZE], dtype=TABLE)
    top = int(table["seq"].max())
    used = np.flatnonzero(table["seq"])
    rows = table[used]
    newest: dict[int, tuple[int, int, int, int]] = {}
    drop: list[int] = []
    for f, seq, block, slot, crc, kind in zip(
        used.tolist(), *(rows[k].tolist() for k in ("seq", "block", "slot", "crc", "kind"))
    ):
        key = _crc32(ENTRY_KEY.pack(seq, block, slot, kind))
        if kind == RECORD:
            ok = _crc32(mm[doff + f * bs : doff + (f + 1) * bs], key) == crc
        else:
            ok = kind == TOMBSTONE and key == crc
        if not ok or slot >= slots:
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


def parse_uuid(text: str) -> uuidlib.UUID:
    """``text`` as an array uuid; NvramError if it is none."""
    try:
        return uuidlib.UUID(str(text))
    except ValueError:
        raise NvramError(f"{text!r} is not an array uuid", "pass the array's uuid (vraid status shows it)") from None


def fsync_dir(path: Path) -> None:
    """Make the directory ``path`` durable (its new entries); nothing if it cannot be opened."""
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
