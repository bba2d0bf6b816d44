"""The stripe directory's durable form: a checkpoint and a journal of steps, with CRCs.

A remapped array cannot be read without its directory (seed 004 section 2.1), so the
directory is kept where the members keep their superblock: in each member's reserved
area (the engine's job, next session). This module is the format, as pure functions:

* a **checkpoint** (:func:`encode_checkpoint` / :func:`decode_checkpoint`): the whole
  directory, little-endian, ``MAGIC``, a header (shape, ``seq`` = steps applied), the
  tables, and a CRC-32 of all of it at the end. A checkpoint whose CRC or shape does not
  match is refused (:class:`DirectoryFormatError`), never half-read.
* a **journal** of records (:func:`encode_step`), appended after each step's I/O and
  before the step is acknowledged. One record::

      u16 length of what follows up to the CRC | u64 seq | u8 type | payload | u32 CRC-32

  The CRC covers length, seq, type and payload. :func:`decode_journal` reads records
  until the first that is short (torn by a power cut mid-append), fails its CRC, or
  does not continue the sequence; everything before it is the durable point.
* :func:`recover` = the checkpoint, then every journal record with ``seq`` above the
  checkpoint's, in order: the directory as of the last record that reached the disk
  whole. A checkpoint may be written at any time (it records ``seq``); the records it
  covers are skipped on replay, so the journal can be cut after a checkpoint.

Recovery thus finds every acknowledged mapping as long as a step is acknowledged only
after its record is durable.
"""

from __future__ import annotations

import re
import struct
import zlib

import numpy as np

from .directory import NOWHERE, Dirty, Forget, Release, Step, StripeDirectory, StripeWrite, Swap
from .geometry import Geometry

MAGIC = b"VRAIDDIR"
VERSION = 1
_HEAD = struct.Struct("<8sHHIIIHBxQ")  # magic, version, ndisks, stripes, strips, hot, next_parity, migrate, seq
_REC_HEAD = struct.Struct("<HQB")  # length, seq, type
_CRC = struct.Struct("<I")
#: the first byte that is not zero (records_after skips the zeroed rest of a journal area)
_NONZERO = re.compile(rb"[^\x00]")
_T_DIRTY, _T_WRITE, _T_SWAP, _T_RELEASE, _T_FORGET = 1, 2, 3, 4, 5
_KINDS = {"LW": 0, "PW": 1}
_KIND_NAMES = {v: k for k, v in _KINDS.items()}


class DirectoryFormatError(ValueError):
    """A checkpoint that cannot be used (bad magic, version, shape or CRC)."""


# -- checkpoint ------------------------------------------------------------------------------
def encode_checkpoint(d: StripeDirectory) -> bytes:
    """The whole directory as bytes (see the module docstring)."""
    g = d.geometry
    head = _HEAD.pack(MAGIC, VERSION, g.ndisks, g.stripes, d.strips, d.hot, d.next_parity, int(d.migrate), d.seq)
    loc = np.array(d.loc, dtype="<i4").reshape(-1)
    body = b"".join([
        head,
        loc.tobytes(),
        np.array(d.homes, dtype="<i2").tobytes(),
        np.array(d.state, dtype="u1").tobytes(),
        np.array(d.owner, dtype="<i4").tobytes(),
        np.array(d.parity, dtype="u1").tobytes(),
    ])
    return body + _CRC.pack(zlib.crc32(body))


def checkpoint_size(geometry: Geometry, strips: int) -> int:
    """Bytes of a checkpoint of this shape (the reserved area must hold it)."""
    n, s = geometry.ndisks, geometry.stripes
    return _HEAD.size + strips * 8 + strips * 2 + s * n + s * n * 4 + s + _CRC.size


def decode_checkpoint(data: bytes, geometry: Geometry) -> StripeDirectory:
    """The directory ``data`` holds, for an array of ``geometry``.

    Raises:
        DirectoryFormatError: wrong magic or version, another shape, short data or a bad CRC.
    """
    if len(data) < _HEAD.size + _CRC.size:
        raise DirectoryFormatError("directory checkpoint is truncated")
    magic, version, n, s, strips, hot, next_parity, migrate, seq = _HEAD.unpack_from(data)
    if magic != MAGIC:
        raise DirectoryFormatError("no directory checkpoint here (bad magic)")
    if version != VERSION:
        raise DirectoryFormatError(f"directory checkpoint version {version}; this vraid reads {VERSION}")
    if (n, s) != (geometry.ndisks, geometry.stripes):
        raise DirectoryFormatError(f"directory checkpoint is for {n} disks x {s} stripes, "
                                   f"the array has {geometry.ndisks} x {geometry.stripes}")
    size = checkpoint_size(geometry, strips)
    if len(data) < size:
        raise DirectoryFormatError("directory checkpoint is truncated")
    body, (crc,) = data[: size - _CRC.size], _CRC.unpack_from(data, size - _CRC.size)
    if zlib.crc32(body) != crc:
        raise DirectoryFormatError("directory checkpoint fails its CRC")
    d = StripeDirectory(geometry, strips, hot=hot, migrate=bool(migrate))
    pos = _HEAD.size

    def take(dtype: str, count: int) -> np.ndarray:
        nonlocal pos
        a = np.frombuffer(body, dtype=dtype, count=count, offset=pos)
        pos += a.nbytes
        return a

    loc = take("<i4", 2 * strips).reshape(-1, 2)
    d.loc = [(int(a), int(b)) for a, b in loc]
    d.loc = [NOWHERE if a < 0 else (a, b) for a, b in d.loc]
    d.homes = take("<i2", strips).astype(int).tolist()
    d.state = take("u1", s * n).reshape(s, n).astype(int).tolist()
    d.owner = take("<i4", s * n).reshape(s, n).astype(int).tolist()
    d.parity = take("u1", s).astype(int).tolist()
    d.next_parity, d.seq = next_parity, seq
    d._index()
    return d


# -- journal ---------------------------------------------------------------------------------
def encode_step(seq: int, step: Step) -> bytes:
    """One journal record for ``step``, the ``seq``-th step since the directory was made."""
    if isinstance(step, Dirty):
        kind, payload = _T_DIRTY, struct.pack("<I", step.strip)
    elif isinstance(step, StripeWrite):
        kind = _T_WRITE
        payload = struct.pack("<BIHH", _KINDS[step.kind], step.stripe, step.parity, len(step.slots)) + b"".join(
            struct.pack("<HI", m, L) for m, L in step.slots)
    elif isinstance(step, Swap):
        kind, payload = _T_SWAP, struct.pack("<IHI", step.stripe, step.member, step.partner)
    elif isinstance(step, Release):
        kind, payload = _T_RELEASE, struct.pack("<I", step.stripe)
    elif isinstance(step, Forget):
        kind, payload = _T_FORGET, struct.pack("<IH", step.stripe, step.member)
    else:
        raise TypeError(f"not a directory step: {step!r}")
    head = _REC_HEAD.pack(_REC_HEAD.size - 2 + len(payload), seq, kind)
    return head + payload + _CRC.pack(zlib.crc32(head + payload))


def _decode_payload(kind: int, p: bytes) -> Step:
    if kind == _T_DIRTY:
        return Dirty(*struct.unpack("<I", p))
    if kind == _T_WRITE:
        k, stripe, parity, count = struct.unpack_from("<BIHH", p)
        slots = tuple(struct.unpack_from("<HI", p, 9 + 6 * i) for i in range(count))
        if 9 + 6 * count != len(p):
            raise ValueError("stripe write record has the wrong length")
        return StripeWrite(_KIND_NAMES[k], stripe, parity, slots)
    if kind == _T_SWAP:
        return Swap(*struct.unpack("<IHI", p))
    if kind == _T_RELEASE:
        return Release(*struct.unpack("<I", p))
    if kind == _T_FORGET:
        return Forget(*struct.unpack("<IH", p))
    raise ValueError(f"unknown record type {kind}")


def decode_journal(data: bytes, after: int = 0) -> tuple[list[tuple[int, Step]], int, bool]:
    """``(records, end, torn)``: the whole records of ``data`` in order as ``(seq, step)``
    (those with seq <= ``after`` included, for the caller to skip), the byte offset where
    the durable journal ends, and whether anything follows it (a torn or corrupt record)."""
    out: list[tuple[int, Step]] = []
    pos, last = 0, None
    while pos + _REC_HEAD.size <= len(data):
        length, seq, kind = _REC_HEAD.unpack_from(data, pos)
        end = pos + 2 + length
        if length < _REC_HEAD.size - 2 or end + _CRC.size > len(data):
            break
        (crc,) = _CRC.unpack_from(data, end)
        if zlib.crc32(data[pos:end]) != crc or (last is not None and seq != last + 1):
            break
        try:
            step = _decode_payload(kind, data[pos + _REC_HEAD.size:end])
        except (ValueError, KeyError, struct.error):
            break
        out.append((seq, step))
        last, pos = seq, end + _CRC.size
    return out, pos, pos != len(data)


def recover(checkpoint: bytes, journal: bytes, geometry: Geometry) -> StripeDirectory:
    """The directory as of the last whole journal record after ``checkpoint``.

    Raises:
        DirectoryFormatError: a bad checkpoint, or a journal that skips steps after it.
    """
    d = decode_checkpoint(checkpoint, geometry)
    records, _end, _torn = decode_journal(journal)
    for seq, step in records:
        if seq <= d.seq:
            continue
        if seq != d.seq + 1:
            raise DirectoryFormatError(f"directory journal starts at step {seq}, the checkpoint is at step {d.seq}")
        d.apply(step)
    return d


def records_after(data: bytes, start: int, after: int) -> list[tuple[int, Step]]:
    """Whole records anywhere in ``data[start:]`` numbered above ``after`` (each with a good
    CRC), found by trying every byte offset: what a journal that stops at ``start`` (a bad
    record) still holds beyond the damage. Records of an older journal (before the last
    checkpoint) are numbered at most the checkpoint's sequence number and are not returned."""
    out: list[tuple[int, Step]] = []
    pos = start
    while pos + _REC_HEAD.size + _CRC.size <= len(data):
        if not data[pos] and not data[pos + 1]:  # a length of 0 starts no record: skip the zeros
            nonzero = _NONZERO.search(data, pos + 2)
            if nonzero is None:
                break
            pos = nonzero.start() - 1  # the length's high byte may be the first nonzero one
            continue
        length, seq, kind = _REC_HEAD.unpack_from(data, pos)
        end = pos + 2 + length
        if seq > after and length >= _REC_HEAD.size - 2 and end + _CRC.size <= len(data):
            (crc,) = _CRC.unpack_from(data, end)
            if zlib.crc32(data[pos:end]) == crc:
                try:
                    out.append((seq, _decode_payload(kind, data[pos + _REC_HEAD.size:end])))
                    pos = end + _CRC.size
                    continue
                except (ValueError, KeyError, struct.error):
                    pass
        pos += 1
    return out
