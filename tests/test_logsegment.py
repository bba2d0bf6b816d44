"""The log disk's on-disk format (vraid.ondisk.logsegment) and the medium's scan (vraid.engine.log.medium)."""

from __future__ import annotations

import pytest
import trio

from vraid.backends.memory import MemoryStore
from vraid.engine.log.medium import LogMedium, format_stores
from vraid.errors import VraidError
from vraid.ondisk.logsegment import LogFormatError, LogLayout, LogSuperblock, SegmentHeader, data_crc, parse_kind

UUID = "12345678-1234-4234-8234-123456789abc"
BS = 4096


def test_header_round_trip_and_corruption_is_detected():
    h = SegmentHeader(UUID, 42, 40, (7, 9, 1000), 0xDEADBEEF)
    raw = bytearray(h.pack(BS))
    assert len(raw) == BS and SegmentHeader.unpack(raw, BS) == h
    raw[100] ^= 1
    assert SegmentHeader.unpack(raw, BS) is None
    assert SegmentHeader.unpack(bytes(BS), BS) is None  # never written


def test_superblock_round_trip_and_checks():
    sb = LogSuperblock(UUID, "mcd", 1, 2, BS, 15, 100, tail=77)
    assert LogSuperblock.unpack(sb.pack(), BS) == sb
    with pytest.raises(LogFormatError):
        LogSuperblock.unpack(bytes(BS), BS)
    bad = bytearray(sb.pack())
    bad[30] ^= 1
    with pytest.raises(LogFormatError, match="checksum"):
        LogSuperblock.unpack(bytes(bad), BS)


def test_a_segment_is_one_64k_request_and_placement_is_round_robin():
    lay = LogLayout.for_size("mcd", 2, BS, 1 << 20)
    assert lay.segment_bytes == 64 << 10 and lay.segment_blocks == 15
    assert lay.place(0)[0] == (0,) and lay.place(1)[0] == (1,) and lay.place(2) == ((0,), lay.place(0)[1] + lay.segment_bytes)
    assert lay.place(lay.capacity) == lay.place(0)  # the log wraps
    m = LogLayout.for_size("mirrored", 2, BS, 1 << 20)
    assert m.place(5)[0] == (0, 1) and m.capacity == m.slots


def test_parse_kind():
    assert parse_kind("scd") == ("scd", 1) and parse_kind("mcd:3") == ("mcd", 3)
    assert parse_kind("mirrored") == ("mirrored", 2) and parse_kind("per-disk") == ("per-disk", 0)
    for bad in ("mcd:1", "mcd:x", "raid", "scd:2"):
        with pytest.raises(VraidError):
            parse_kind(bad)


def _medium(kind="scd", n=1, size=(8 * 64 + 4) << 10):
    stores = [MemoryStore(size, name=f"log{i}") for i in range(n)]
    lay = LogLayout.for_size(kind, n, BS, size)
    format_stores(stores, lay, UUID)
    return LogMedium(stores, lay, UUID), stores


def _append(medium, seq, blocks, fill):
    data = bytes([fill]) * (BS * len(blocks))
    trio.run(medium.write_segment, seq, SegmentHeader(UUID, seq, 0, tuple(blocks), data_crc(data)), data)


def test_scan_walks_from_the_tail_and_stops_at_a_torn_segment():
    m, stores = _medium()
    for seq in range(4):
        _append(m, seq, [seq, 100 + seq], seq + 1)
    scan = m.scan_sync()
    assert [s for s, _, _ in scan.segments] == [0, 1, 2, 3] and scan.highest == 3
    _, off = m.layout.place(2)
    stores[0].write_sync(off + 2 * BS, b"\xff" * BS)  # tear segment 2's data
    scan = m.scan_sync()
    assert [s for s, _, _ in scan.segments] == [0, 1] and "torn" in scan.stopped
    assert scan.highest == 3  # segment 3 is intact but after the tear: numbering must go past it


def test_scan_stops_at_a_stale_segment_and_starts_at_the_durable_tail():
    m, stores = _medium()
    cap = m.layout.capacity
    for seq in range(cap):
        _append(m, seq, [seq], 1)
    trio.run(m.checkpoint, 3)
    _append(m, cap, [1], 2)  # reuses slot 0
    scan = m.scan_sync()
    assert scan.tail == 3 and [s for s, _, _ in scan.segments] == list(range(3, cap + 1))
    m2, _ = _medium()
    _append(m2, 0, [1], 1)
    _append(m2, 2, [1], 1)  # 1 was never written: 2 is not reached
    assert [s for s, _, _ in m2.scan_sync().segments] == [0]


def test_mirrored_survives_one_copy():
    m, stores = _medium("mirrored", 2)
    _append(m, 0, [5], 9)
    _, off = m.layout.place(0)
    stores[0].write_sync(off, bytes(BS))  # one copy's header gone
    assert [s for s, _, _ in m.scan_sync().segments] == [0]


def test_another_arrays_log_is_refused():
    m, stores = _medium()
    other = LogMedium(stores, m.layout, "87654321-1234-4234-8234-123456789abc")
    with pytest.raises(VraidError, match="belongs to array"):
        other.check_sync()
