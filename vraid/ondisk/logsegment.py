"""The on-disk format of a log disk (seed 002, VC-RAID, sec. 3.2 "Cache Disk Organization").

A log store (a cache disk: ``log0.img``, or the log region at the end of a member with
``--log per-disk``) is laid out in blocks of the array's block size:

* block 0, the **log superblock**: magic, version, array uuid, the configuration
  (``scd``/``mcd``/``mirrored``/``per-disk``), this store's index and the store count,
  blocks per segment, segment slots, and the **tail**: the oldest sequence number whose
  segment may still hold a block the data disks lack. A CRC-32 covers the block.
* then fixed **segment slots**. A segment is one append: a header block followed by up
  to :data:`SEGMENT_DATA_BLOCKS` data blocks, written as one request of at most 64 KiB
  (the paper's "large size (up to 64K)"). The header (the paper's cache disk header)
  holds magic, version, array uuid, the segment's **sequence number**, the tail when it
  was written, the logical block address of every data block, the CRC-32 of the data
  and a CRC-32 of the header itself.

Where a segment goes is a function of its sequence number (:meth:`LogLayout.place`):
round robin over the stores (``mcd``, ``per-disk``: segment ``s`` on store ``s mod N``),
both stores (``mirrored``), then slot ``(s div N) mod slots`` of the store. So at
recovery a segment found in a slot is *stale* unless its sequence number is the one that
slot should hold next, and *torn* unless both CRCs hold: the replay walks ``tail,
tail+1, ...`` and stops at the first segment that is either (vraid.engine.log.cache).

Like the paper, the headers are never read in normal operation: only at recovery.
"""

from __future__ import annotations

import struct
import uuid as uuidlib
import zlib
from dataclasses import dataclass

from vraid.errors import VraidError

SB_MAGIC = b"VRAIDLOG"
SEG_MAGIC = b"VRLOGSEG"
VERSION = 1
#: the paper's 64 KiB request: one header block and 15 data blocks of 4 KiB
SEGMENT_BYTES = 64 << 10

_SB = struct.Struct("<8sH16s10sHHIIQ")
_SEG = struct.Struct("<8sH16sQQII")
_ADDR = struct.Struct("<Q")
_CRC = struct.Struct("<I")


class LogFormatError(VraidError):
    """A log store's superblock is missing, corrupt or of another array."""


def segment_data_blocks(block_size: int) -> int:
    """Data blocks of one segment: the header block plus these make one 64 KiB request."""
    return max(1, SEGMENT_BYTES // block_size - 1)


@dataclass(frozen=True)
class LogSuperblock:
    """Block 0 of a log store."""

    array_uuid: str
    kind: str
    index: int
    count: int
    block_size: int
    segment_blocks: int  # data blocks per segment
    slots: int  # segment slots on this store
    tail: int = 0
    version: int = VERSION

    def pack(self) -> bytes:
        body = _SB.pack(SB_MAGIC, self.version, uuidlib.UUID(self.array_uuid).bytes, self.kind.encode().ljust(10, b"\0"),
                        self.index, self.count, self.segment_blocks, self.slots, self.tail)
        body = body.ljust(self.block_size - _CRC.size, b"\0")
        return body + _CRC.pack(zlib.crc32(body))

    @classmethod
    def unpack(cls, raw: bytes, block_size: int, where: str = "log store") -> "LogSuperblock":
        if len(raw) < block_size or raw[:8] != SB_MAGIC:
            raise LogFormatError(f"{where} has no vraid log superblock", "is it a log file made by vraid create --log?")
        body, (crc,) = raw[: block_size - _CRC.size], _CRC.unpack(raw[block_size - _CRC.size : block_size])
        if zlib.crc32(body) != crc:
            raise LogFormatError(f"{where}: log superblock checksum mismatch", "the log store is corrupted; see docs/log-disk.md")
        magic, version, uid, kind, index, count, seg, slots, tail = _SB.unpack_from(body)
        if version != VERSION:
            raise LogFormatError(f"{where}: log format version {version} is not supported", "use a matching vraid")
        return cls(str(uuidlib.UUID(bytes=uid)), kind.rstrip(b"\0").decode(), index, count, block_size, seg, slots, tail, version)

    def with_tail(self, tail: int) -> "LogSuperblock":
        return LogSuperblock(self.array_uuid, self.kind, self.index, self.count, self.block_size, self.segment_blocks,
                             self.slots, tail, self.version)


@dataclass(frozen=True)
class SegmentHeader:
    """The cache disk header of one segment (sec. 3.2: block index / array LBA pairs)."""

    array_uuid: str
    seq: int
    tail: int
    blocks: tuple[int, ...]  # logical block address of data block i of the segment
    data_crc: int
    #: every segment below this sequence number was on its store(s), flushed, when this one
    #: was written (0: not known; headers written before the field existed read as 0). A
    #: scan that meets a bad segment below it knows it was durable once: damage, not a torn tail
    flushed: int = 0

    def pack(self, block_size: int) -> bytes:
        body = _SEG.pack(SEG_MAGIC, VERSION, uuidlib.UUID(self.array_uuid).bytes, self.seq, self.tail,
                         len(self.blocks), self.data_crc)
        body += b"".join(_ADDR.pack(b) for b in self.blocks)
        body += _ADDR.pack(self.flushed)  # after the addresses, in what was padding: no version change
        body = body.ljust(block_size - _CRC.size, b"\0")
        return body + _CRC.pack(zlib.crc32(body))

    @classmethod
    def unpack(cls, raw: bytes | memoryview, block_size: int) -> "SegmentHeader | None":
        """The header in ``raw``, or None when it is no intact segment header (never
        written, torn, or garbage)."""
        raw = bytes(raw[:block_size])
        if len(raw) < block_size or raw[:8] != SEG_MAGIC:
            return None
        body, (crc,) = raw[: block_size - _CRC.size], _CRC.unpack(raw[block_size - _CRC.size :])
        if zlib.crc32(body) != crc:
            return None
        magic, version, uid, seq, tail, n, dcrc = _SEG.unpack_from(body)
        if version != VERSION or _SEG.size + n * _ADDR.size > len(body):
            return None
        blocks = tuple(_ADDR.unpack_from(body, _SEG.size + i * _ADDR.size)[0] for i in range(n))
        at = _SEG.size + n * _ADDR.size
        flushed = _ADDR.unpack_from(body, at)[0] if at + _ADDR.size <= len(body) else 0
        return cls(str(uuidlib.UUID(bytes=uid)), seq, tail, blocks, dcrc, flushed)


def data_crc(data: bytes | memoryview) -> int:
    return zlib.crc32(data)


@dataclass(frozen=True)
class LogLayout:
    """Where segment ``seq`` lives: which stores, which slot, which byte offset."""

    kind: str
    stores: int
    block_size: int
    segment_blocks: int
    slots: int  # segment slots per store

    @property
    def segment_bytes(self) -> int:
        return (1 + self.segment_blocks) * self.block_size

    @property
    def ways(self) -> int:
        """Stores segments are spread over (1 for scd and mirrored)."""
        return 1 if self.kind in ("scd", "mirrored") else self.stores

    @property
    def capacity(self) -> int:
        """Segments the log holds at once."""
        return self.ways * self.slots

    def place(self, seq: int) -> tuple[tuple[int, ...], int]:
        """(stores holding segment ``seq``, byte offset of its slot on them)."""
        w = self.ways
        slot = (seq // w) % self.slots
        stores = tuple(range(self.stores)) if self.kind == "mirrored" else (seq % w,)
        return stores, self.block_size * (1 + slot * (1 + self.segment_blocks))

    @classmethod
    def for_size(cls, kind: str, stores: int, block_size: int, store_bytes: int) -> "LogLayout":
        seg = segment_data_blocks(block_size)
        slots = (store_bytes - block_size) // ((1 + seg) * block_size)
        if slots < 2:
            raise VraidError(f"a log store of {store_bytes} bytes holds fewer than 2 segments of {(1 + seg) * block_size} bytes",
                             "give a larger --log-size, e.g. 16M")
        return cls(kind, stores, block_size, seg, slots)

