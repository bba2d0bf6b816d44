"""Controller-level SEQP/SASEQP (an extension of seed 001: the paper's windows on block
streams found by address): the window ramp, stream detection, strip alignment, and the
Fig. 3/4 counts when the stream is the paper's file."""

from __future__ import annotations

import pytest

from vraid.core.geometry import Geometry
from vraid.errors import VraidError
from vraid.policies.prefetch import HostRead, load_prefetch
from vraid.policies.prefetch.seqp import SaseqpPrefetch, SeqpPrefetch, init_size, next_size

BS = 4096


def fig1() -> Geometry:
    """Fig. 1's array: RAID-5 of five disks, four blocks per strip."""
    return Geometry(level=5, ndisks=5, stripes=16, block_size=BS, strip_size=4 * BS, data_offset=0)


def _read(block: int, count: int = 1) -> HostRead:
    return HostRead(block, count, count, 0, 0.0)


def _disk_requests(first: int, count: int, u: int) -> int:
    return (first + count - 1) // u - first // u + 1


@pytest.mark.parametrize("name, prefetches, requests", [("seqp", 7, 11), ("saseqp", 7, 7)])
def test_fig3_fig4_file_b16_to_b35(name, prefetches, requests):
    """The 20-block file at B16..B35 read block by block with windows ramping to four blocks:
    the first read and the prefetches are 7 requests; SEQP's make 11 disk requests (Fig. 3),
    SASEQP's 7 (Fig. 4). The controller sees no end of file: windows past B35 are cut there."""
    g = fig1()
    p = load_prefetch(f"{name}:max_kb=16", g)
    windows = [(16, 1)]  # the first read is a miss of its own
    for b in range(16, 36):
        for first, count in p.after_read(_read(b)):
            count = min(count, 36 - first)
            if count > 0:
                windows.append((first, count))
    covered = sorted(b for f, c in windows for b in range(f, f + c))
    assert covered == list(range(16, 36))  # every block once
    assert len(windows) == prefetches
    assert sum(_disk_requests(f, c, g.u) for f, c in windows) == requests
    if name == "saseqp":
        assert windows[2] == (19, 1)  # the third prefetch shrunk to one block (sec. 3)


def test_linux_ramp():
    assert [init_size(r, 32) for r in (1, 2, 4, 8, 16, 64)] == [4, 4, 8, 16, 32, 32]
    sizes = [4]
    while sizes[-1] < 32:
        sizes.append(next_size(sizes[-1], 32))
    assert sizes == [4, 8, 16, 32]  # x2 from max/16 = 2 blocks on
    assert [next_size(s, 256) for s in (2, 8, 16, 128, 256)] == [8, 32, 32, 256, 256]  # x4 below 16


def test_random_reads_read_nothing_ahead():
    p = SeqpPrefetch(fig1(), max_kb=64)
    for b in (40, 3, 50, 7, 20, 60, 11, 33):
        assert p.after_read(_read(b)) == []


def test_streams_are_found_by_address_and_interleave():
    g = Geometry(level=0, ndisks=4, stripes=64, block_size=BS, strip_size=8 * BS, data_offset=0)
    p = SeqpPrefetch(g, max_kb=64, streams=4)
    a, b = 0, 1000
    got = {"a": [], "b": []}
    for _ in range(12):
        got["a"] += p.after_read(_read(a, 2))
        got["b"] += p.after_read(_read(b, 2))
        a, b = a + 2, b + 2
    for key, base in (("a", 0), ("b", 1000)):
        starts = [f for f, _ in got[key]]
        assert starts and starts == sorted(starts) and all(base <= f < base + 200 for f in starts)
        assert max(c for _, c in got[key]) == 16  # the window reached max_kb
    assert p.state()["streams"] == 2


def test_saseqp_windows_never_cross_a_strip():
    g = Geometry(level=0, ndisks=5, stripes=64, block_size=BS, strip_size=32 * BS, data_offset=0)
    p = SaseqpPrefetch(g, max_kb=512)
    seen = []
    for k in range(200):
        seen += p.after_read(_read(5 + 3 * k, 3))
    assert seen and all(_disk_requests(f, c, g.u) == 1 for f, c in seen)
    starts = [f for f, _ in seen]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)


def test_parameters():
    g = fig1()
    assert load_prefetch("saseqp", g).describe() == "saseqp:max_kb=128,streams=32"
    with pytest.raises(VraidError, match="max_kb"):
        load_prefetch("seqp:max_kb=2", g)
