"""The log disk's on-disk format (vraid.ondisk.logsegment) and the medium's scan (vraid.engine.log.medium)."""

from __future__ import annotations

import pytest
import trio

from vraid.backends.memory import MemoryStore
from vraid.engine.log.medium import LogDamaged, LogMedium, format_stores
from vraid.errors import VraidError
from vraid.ondisk.logsegment import LogFormatError, LogLayout, LogSuperblock, SegmentHeader, data_crc
from vraid.policies import registry
from vraid.policies.log import LogConfiguration, SingleCacheDisk, layout

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


def test_the_log_family_gives_each_configuration_its_layout():
    """The log disk is a registry family (vraid.policies.log): spec -> (on-disk kind, stores)."""
    assert layout("scd", 5) == ("scd", 1) and layout("mcd:3", 5) == ("mcd", 3) and layout("MCD:disks=4", 5) == ("mcd", 4)
    assert layout("mirrored", 5) == ("mirrored", 2) and layout("per-disk", 5) == ("per-disk", 5)
    # N of mcd is a parameter with a schema default, written out in the spec the superblocks record
    assert registry.parse("log", "mcd").text == "mcd:2" and registry.parse("log", "mcd:disks=3").text == "mcd:3"
    for bad, said in (("mcd:1", "disks=1 is below 2"), ("mcd:300", "disks=300 is above 256"),
                      ("mcd:x", "is not a whole number"), ("raid", "unknown log disk"), ("scd:2", "takes no parameters")):
        with pytest.raises(VraidError, match=said):
            layout(bad, 5)


class _Triple(SingleCacheDisk):
    def stores(self, members):
        return 3


class _Raises(SingleCacheDisk):
    def stores(self, members):
        raise RuntimeError("boom")


class _Unknown(SingleCacheDisk):
    kind = "raid6"


@pytest.mark.parametrize("cls, said", [(_Triple, "does not fit a scd log"), (_Raises, "stores.. failed: RuntimeError: boom"),
                                       (_Unknown, "kind 'raid6' is not a log layout")])
def test_a_configuration_that_answers_wrongly_is_refused_before_anything_is_made(cls, said):
    assert issubclass(cls, LogConfiguration)
    with pytest.raises(VraidError, match=said):
        layout(f"{__name__}:{cls.__name__}", 4)


def test_log_size_is_a_setting_with_a_range():
    assert registry.setting_value("log_size", "1M") == 1 << 20 and registry.setting_value("log_size") == 16 << 20
    for bad, said in (("0", "--log-size 0 is below 132K"), ("64K", "--log-size 64K is below 132K"), ("x", "is not a size")):
        with pytest.raises(VraidError, match=said):
            registry.setting_value("log_size", bad)


def _medium(kind="scd", n=1, size=(8 * 64 + 4) << 10):
    stores = [MemoryStore(size, name=f"log{i}") for i in range(n)]
    lay = LogLayout.for_size(kind, n, BS, size)
    format_stores(stores, lay, UUID)
    return LogMedium(stores, lay, UUID), stores


def _append(medium, seq, blocks, fill, flushed=None):
    """Segment ``seq``; by default every earlier one was flushed before it (an fsync each)."""
    data = bytes([fill]) * (BS * len(blocks))
    header = SegmentHeader(UUID, seq, 0, tuple(blocks), data_crc(data), seq if flushed is None else flushed)
    trio.run(medium.write_segment, seq, header, data)


def test_scan_walks_from_the_tail_and_a_torn_tail_is_a_normal_end():
    m, stores = _medium()
    for seq in range(4):
        _append(m, seq, [seq, 100 + seq], seq + 1)
    scan = m.scan_sync()
    assert [s for s, _, _ in scan.segments] == [0, 1, 2, 3] and scan.highest == 3
    _, off = m.layout.place(3)
    stores[0].write_sync(off + 2 * BS, b"\xff" * BS)  # tear the last segment's data: the last append was cut
    scan = m.scan_sync()
    assert [s for s, _, _ in scan.segments] == [0, 1, 2] and "torn" in scan.stopped and not scan.lost
    assert scan.highest == 3  # numbering must go past the torn one


def test_damage_in_the_middle_is_refused_and_forced_replays_every_intact_segment():
    m, stores = _medium()
    for seq in range(5):
        _append(m, seq, [seq, 100 + seq], seq + 1)
    _, off = m.layout.place(2)
    stores[0].write_sync(off + 2 * BS, b"\xff" * BS)  # 16 bytes would do: segment 2's data CRC fails
    with pytest.raises(LogDamaged) as exc:
        m.scan_sync()
    text = str(exc.value)
    assert "segments 2 of 0-4" in text and "torn (data CRC)" in text and "up to sequence number 4" in text
    assert "2 acknowledged" in text and "--force" in text
    scan = m.scan_sync(force=True)
    assert [s for s, _, _ in scan.segments] == [0, 1, 3, 4]
    assert scan.lost == [(2, "torn (data CRC)", 2)] and scan.lost_blocks == 2
    assert "log segments 2 were damaged" in scan.loss_message() and "2 acknowledged blocks" in scan.loss_message()
    # a header gone too: its blocks are unknown, a whole segment's worth is at stake
    stores[0].write_sync(m.layout.place(3)[1], bytes(BS))
    scan = m.scan_sync(force=True)
    assert [s for s, _, _ in scan.segments] == [0, 1, 4] and scan.lost_blocks == 2 + m.layout.segment_blocks


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
    _append(m2, 2, [1], 1)  # 1 was never written, 2 is: a hole in the middle, not a torn tail
    with pytest.raises(LogDamaged, match="segments 1 of 0-2"):
        m2.scan_sync()


def test_mcd_a_torn_last_batch_is_normal_damage_on_one_log_is_refused():
    m, stores = _medium("mcd", 2)
    for seq in range(6):
        _append(m, seq, [seq], 1, flushed=min(seq, 4))  # 4 and 5 written at once
    stores[0].write_sync(m.layout.place(4)[1], bytes(BS))  # the last batch (4 on log0, 5 on log1) was cut
    assert [s for s, _, _ in m.scan_sync().segments] == [0, 1, 2, 3]
    stores[1].write_sync(m.layout.place(1)[1], bytes(BS))  # and log1 lost segment 1: 2, 3 follow intact
    with pytest.raises(LogDamaged, match="segments 1, 4 of 0-5|segments 1 of 0-3"):
        m.scan_sync()
    assert [s for s, _, _ in m.scan_sync(force=True).segments][:3] == [0, 2, 3]


def test_a_hole_among_segments_never_flushed_is_a_torn_tail():
    m, stores = _medium()
    for seq in range(5):
        _append(m, seq, [seq], 1, flushed=min(seq, 2))  # 2, 3, 4 written, no fsync since
    stores[0].write_sync(m.layout.place(3)[1], bytes(BS))  # the power cut kept 4 but not 3
    scan = m.scan_sync()
    assert [s for s, _, _ in scan.segments] == [0, 1, 2] and not scan.lost


def test_header_flushed_field_round_trips_and_old_headers_read_as_zero():
    h = SegmentHeader(UUID, 9, 3, (1, 2), 7, flushed=8)
    assert SegmentHeader.unpack(h.pack(BS), BS) == h
    assert SegmentHeader.unpack(SegmentHeader(UUID, 9, 3, (1, 2), 7).pack(BS), BS).flushed == 0


def test_mirrored_both_copies_damaged_is_refused():
    m, stores = _medium("mirrored", 2)
    for seq in range(3):
        _append(m, seq, [seq], 1)
    off = m.layout.place(1)[1]
    stores[0].write_sync(off, bytes(BS))
    assert [s for s, _, _ in m.scan_sync().segments] == [0, 1, 2]  # the other copy serves
    stores[1].write_sync(off + BS, b"\xff" * BS)
    with pytest.raises(LogDamaged, match="segments 1 of 0-2"):
        m.scan_sync()


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
