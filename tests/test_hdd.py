"""The hdd timing model (backends/hdd.py) and the model specs (backends/models.py).

Everything runs in virtual time: ``trio.run(fn, clock=MockClock(autojump_threshold=0))``
around a MemoryStore-backed model, so elapsed trio time is modelled disk time.
"""

from __future__ import annotations

import random

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.table import Table

from vraid.backends.hdd import HddModel
from vraid.backends.hdd_params import HddParams
from vraid.backends.memory import MemoryStore
from vraid.backends.models import PRESETS, ModelSpec, describe_presets, disk_preset, parse_model, wrap
from vraid.backends.ssd import SsdModel
from vraid.engine.clock import TrioClock
from vraid.errors import VraidError

BLOCK = 4096
SECTOR = 512


def run(fn, *args):
    return trio.run(fn, *args, clock=trio.testing.MockClock(autojump_threshold=0))


def model(spec: str, size: int = 64 << 20, clock=None) -> HddModel:
    m = wrap(MemoryStore(size), spec, clock or TrioClock())
    assert isinstance(m, HddModel)
    return m


# ---------------------------------------------------------------------- mechanics
@pytest.mark.parametrize("spec", ["hdd:st373454lc,read_ahead=track", "hdd:dnes-318350", "hdd:st32151n"])
def test_sequential_whole_tracks_cost_one_revolution_plus_switch(spec):
    async def main():
        m = model(spec)
        zone = m.geometry.zones[0]
        spt = zone.spt
        await m.read((spt - 1) * SECTOR, SECTOR)  # head at the end of track 0
        expected = 0.0
        missed = m.stats.missed_rotations
        t0 = trio.current_time()
        for track in range(1, 25):
            await m.read(track * spt * SECTOR, spt * SECTOR)
            switch = zone.cyl_switch_time if track % m.params.heads == 0 else zone.head_switch_time
            expected += m.revolution + switch
        elapsed = trio.current_time() - t0
        assert elapsed == pytest.approx(expected, rel=0.01)
        assert m.stats.missed_rotations == missed

    run(main)


def test_without_read_ahead_each_track_misses_a_revolution():
    """Seed 000 I-C: the disk of Fig. 9(a) (ST373454LC) does not read ahead; the
    next command arrives after the next track's first sector has passed."""

    async def main():
        m = model("hdd:st373454lc")
        spt = m.geometry.zones[0].spt
        await m.read((spt - 1) * SECTOR, SECTOR)
        t0 = trio.current_time()
        for track in range(1, 9):
            await m.read(track * spt * SECTOR, spt * SECTOR)
        per_track = (trio.current_time() - t0) / 8
        assert per_track > 1.7 * m.revolution
        assert m.stats.stream_hits == 0

    run(main)


@pytest.mark.parametrize("spec", ["hdd:st373454lc", "hdd:dnes-318350,read_ahead=off", "hdd:st52160n,read_ahead=off"])
def test_random_single_block_reads_average_seek_plus_half_revolution(spec):
    async def main():
        m = model(spec, 128 << 20)
        rng = random.Random(7)
        nblocks = m.size // BLOCK
        for _ in range(2000):
            await m.read(rng.randrange(nblocks) * BLOCK, BLOCK)
        mean = m.stats.busy_seconds / m.stats.requests
        transfer = (BLOCK // SECTOR) * m.geometry.mean_sector_time
        expected = m.params.avg_seek + m.revolution / 2 + transfer
        assert mean == pytest.approx(expected, rel=0.05)

    run(main)


def test_write_seek_average_is_the_presets():
    async def main():
        m = model("hdd:st373454lc", 128 << 20)
        rng = random.Random(3)
        nblocks = m.size // BLOCK
        for _ in range(3000):
            await m.write(rng.randrange(nblocks) * BLOCK, b"\1" * BLOCK)
        # seeks of zero cylinders count as zero, as in the calibration
        assert m.stats.seek_seconds / m.stats.writes == pytest.approx(4.1e-3, rel=0.05)
        assert m.seek.mean_write == pytest.approx(4.1e-3, rel=1e-6)
        assert m.seek.mean_read == pytest.approx(3.6e-3, rel=1e-6)

    run(main)


@pytest.mark.parametrize("stroke, rel", [("partition", 1e-6), ("full", 0.05)])
def test_seek_curve_shape(stroke, rel):
    """Pinned at track-to-track and full stroke; over the few cylinders of a small
    full-stroke member the average can need a scaled curve (then within 5 %)."""
    m = model(f"hdd:st373454lc,stroke={stroke}")
    s = m.seek
    ncyl = len(m.geometry.cylinder_weights(m.geometry.disk_sectors))
    assert s.time(0) == 0.0
    assert s.time(1) == pytest.approx(m.params.track_seek, rel=rel)
    assert s.time(ncyl - 1) == pytest.approx(m.params.full_seek, rel=rel)
    step = max(1, ncyl // 500)
    times = [s.time(d) for d in range(1, ncyl, step)]
    assert all(b >= a for a, b in zip(times, times[1:]))  # monotone
    assert s.time(5, write=True) > s.time(5)
    assert s.mean_read == pytest.approx(m.params.avg_seek, rel=1e-6)


def test_partition_stroke_short_seeks():
    """A small member at the start of a big disk (stroke=partition) seeks little."""

    async def main():
        m = model("hdd:st373454lc,stroke=partition", 64 << 20)
        rng = random.Random(5)
        for _ in range(500):
            await m.read(rng.randrange(m.size // BLOCK) * BLOCK, BLOCK)
        assert m.stats.seek_seconds / m.stats.reads < 0.3 * m.params.avg_seek
        assert m.geometry.cylinders > 40_000  # the whole 73 GB disk is modelled

    run(main)


def test_platter_angle_follows_clock_time():
    """Idle time turns the platter: the rotational wait of the same read depends
    on when it arrives, exactly as (target angle - now * rpm/60) mod 1."""

    async def main():
        m = model("hdd:st373454lc,cache=0")  # no buffer: every read goes to the platter
        lba = 3 * m.geometry.zones[0].spt + 100  # track 3, same cylinder as the read below
        await m.read(lba * SECTOR, SECTOR)  # head on the track
        rev = m.revolution
        for idle in (0.0001, 0.0013, 0.0029, 0.0377):
            await trio.sleep(idle)
            now = trio.current_time()
            await m.read(lba * SECTOR, SECTOR)  # the same sector again, no read-ahead
            t = now + m.params.overhead
            wait = ((m.geometry.angle(lba) - t / rev) % 1.0) * rev
            sector = m.geometry.zones[0].sector_time
            expected = m.params.overhead + wait + sector + SECTOR / (m.params.bus_rate * 1e6)
            assert trio.current_time() - now == pytest.approx(expected, abs=1e-9)

    run(main)


# ---------------------------------------------------------------------- seed 000, Fig. 1, Fig. 2, eq. (1)
async def _stride_then_flush(spec: str, stride: int, span: int = 512, start: int = 1000, one_request=False):
    m = model(spec)
    await trio.sleep(0.0123)
    t0 = trio.current_time()
    if one_request:
        await m.write(start * BLOCK, b"\7" * (span * BLOCK))
    else:
        for b in range(0, span, stride):
            await m.write((start + b) * BLOCK, b"\7" * BLOCK)
    await m.flush()
    return trio.current_time() - t0, m


def test_stride2_writes_miss_rotations_with_write_on_arrival_not_with_write_cache():
    """Fig. 1 shape: stride-2 writes over a span take far longer than the
    contiguous write of the span (what the merging member queue, or the
    contiguity transform, hands the disk) with write-on-arrival, and about as
    long with the on-board write-back cache."""
    t_c, _ = run(_stride_then_flush, "hdd:st373454lc", 1, 512, 1000, True)
    t_d, m = run(_stride_then_flush, "hdd:st373454lc", 2)
    assert t_d > 5 * t_c
    assert m.stats.missed_rotations >= 0.95 * 256  # nearly every request (Fig. 2)
    # eq. (1): t_d = t_c + t_r * N_r
    assert t_d == pytest.approx(t_c + m.revolution * m.stats.missed_rotations, rel=0.05)

    t_c_wb, _ = run(_stride_then_flush, "hdd:st373454lc,write_cache=on", 1, 512, 1000, True)
    t_d_wb, m_wb = run(_stride_then_flush, "hdd:st373454lc,write_cache=on", 2)
    assert t_d_wb < 1.35 * t_c_wb
    assert m_wb.stats.missed_rotations <= 3
    assert m_wb.stats.destages >= 1


def test_wider_strides_stop_missing_rotations():
    """The missing point needs overhead + transfer > the gap under the head
    (seed 000 I-C); wide enough strides do not miss: S_w^max emerges (Fig. 9)."""
    t_c, _ = run(_stride_then_flush, "hdd:st373454lc", 1, 512, 1000, True)
    norm = {}
    for s in (2, 3, 4, 8, 16):
        t, _ = run(_stride_then_flush, "hdd:st373454lc", s)
        norm[s] = t / t_c
    assert norm[2] > 5 and norm[3] > 5
    assert norm[4] < 1.2 and norm[8] < 1.2 and norm[16] < 1.2


def test_contiguous_single_block_writes_one_at_a_time_also_wait_a_revolution():
    """Documented behaviour: with write-on-arrival and one command at a time,
    even contiguous 4 KiB writes lose a revolution each (the next command comes
    after its sector passed); merged requests do not."""

    async def main():
        m = model("hdd:st373454lc")
        for b in range(64):
            await m.write((2000 + b) * BLOCK, bytes(BLOCK))
        assert m.stats.missed_rotations >= 60
        assert m.stats.busy_seconds > 60 * m.revolution

    run(main)


def test_write_cache_completes_at_bus_transfer_and_flush_waits_for_media():
    async def main():
        m = model("hdd:st373454lc,write_cache=on")
        t0 = trio.current_time()
        await m.write(5000 * BLOCK, bytes(BLOCK))
        assert trio.current_time() - t0 == pytest.approx(m.params.overhead + BLOCK / (m.params.bus_rate * 1e6))
        t1 = trio.current_time()
        await m.flush()
        assert trio.current_time() - t1 > 0.5e-3  # seek + rotation + transfer were still due
        assert m.stats.destages == 1

    run(main)


def test_write_cache_full_waits_for_destage():
    async def main():
        m = model("hdd:st373454lc,write_cache=on,cache=64K")
        rng = random.Random(1)
        t0 = trio.current_time()
        for _ in range(200):  # random writes far beyond 16 cached blocks
            await m.write(rng.randrange(m.size // BLOCK) * BLOCK, bytes(BLOCK))
        per_write = (trio.current_time() - t0) / 200
        assert per_write > 3e-3  # bounded by the media, not the bus
        assert m._dirty <= m.params.cache_size // SECTOR

    run(main)


def test_read_ahead_serves_the_next_blocks():
    async def main():
        m = model("hdd:dnes-318350")
        await m.read(0, BLOCK)
        t0 = trio.current_time()
        await trio.sleep(0.004)  # let the stream read on
        t1 = trio.current_time()
        await m.read(BLOCK, BLOCK)
        assert m.stats.stream_hits == 1
        assert trio.current_time() - t1 == pytest.approx(m.params.overhead + BLOCK / (m.params.bus_rate * 1e6))
        assert t1 > t0

    run(main)


# ---------------------------------------------------------------------- data, determinism, clocks
_ops = st.lists(
    st.tuples(st.booleans(), st.integers(0, (1 << 20) - 1), st.integers(1, 20_000), st.integers(0, 255)),
    min_size=1, max_size=25,
)


@settings(max_examples=40, deadline=None)
@given(ops=_ops, spec=st.sampled_from(["hdd:st373454lc", "hdd:dnes-318350,write_cache=on",
                                       "hdd:st32151n,read_ahead=segment,write_cache=on"]))
def test_data_reads_back_identically(ops, spec):
    size = 1 << 20

    async def main():
        m = model(spec, size)
        shadow = bytearray(size)
        for is_write, off, length, fill in ops:
            length = min(length, size - off)
            if is_write:
                data = bytes([fill]) * length
                await m.write(off, data)
                shadow[off : off + length] = data
            else:
                assert await m.read(off, length) == bytes(shadow[off : off + length])
        await m.flush()
        assert await m.read(0, size) == bytes(shadow)

    run(main)


def _workload_times(spec: str) -> list[float]:
    async def main():
        m = model(spec)
        rng = random.Random(11)
        out = []
        for _ in range(300):
            b = rng.randrange(m.size // BLOCK)
            n = rng.choice((1, 1, 2, 16))
            if rng.random() < 0.5:
                await m.write(b * BLOCK, bytes(min(n, m.size // BLOCK - b) * BLOCK))
            else:
                await m.read(b * BLOCK, min(n, m.size // BLOCK - b) * BLOCK)
            out.append(trio.current_time())
        return out

    return run(main)


@pytest.mark.parametrize("spec", ["hdd:st373454lc", "hdd:st39175fc,write_cache=on,read_ahead=segment"])
def test_deterministic(spec):
    assert _workload_times(spec) == _workload_times(spec)


def test_scaled_clock_keeps_model_time():
    """TrioClock(scale) sleeps scale x model time; the model reads now()/scale,
    so the modelled service times do not change."""

    async def main(scale):
        m = model("hdd:st373454lc", clock=TrioClock(scale))
        rng = random.Random(2)
        for _ in range(50):
            await m.read(rng.randrange(m.size // BLOCK) * BLOCK, BLOCK)
        return m.stats.busy_seconds, trio.current_time()

    busy1, t1 = run(main, 1.0)
    busy2, t2 = run(main, 0.25)
    assert busy1 == pytest.approx(busy2, rel=1e-9)
    assert t2 == pytest.approx(0.25 * t1, rel=1e-6)


def test_concurrent_callers_are_served_one_at_a_time():
    async def main():
        m = model("hdd:st373454lc")
        async with trio.open_nursery() as nursery:
            for b in range(8):
                nursery.start_soon(m.read, b * 1_000_000 // BLOCK * BLOCK, BLOCK)
        assert m.stats.requests == 8
        assert trio.current_time() == pytest.approx(m.stats.busy_seconds)

    run(main)


# ---------------------------------------------------------------------- presets and specs
def test_presets_carry_the_seed_figures():
    p = PRESETS["st373454lc"]
    assert p.rpm == 15000 and 60 / p.rpm == pytest.approx(4e-3)  # seed 000 I-C: 4 ms revolution
    assert p.avg_write_seek == pytest.approx(4.1e-3)  # seed 000 I-C
    d = PRESETS["dnes-318350"]  # seed 002 Table 1
    assert (d.rpm, d.avg_seek, d.rate_inner, d.rate_outer, d.cache_size) == (7200, 7e-3, 12.7, 20.2, 2 << 20)
    assert 30 / d.rpm == pytest.approx(4.17e-3, abs=0.01e-3)  # the table's latency: half a revolution
    for name in ("91020d6", "st52160n", "st32151n"):  # seed 002's 5,400 rpm disks
        assert PRESETS[name].rpm == 5400
        assert 30 / PRESETS[name].rpm == pytest.approx(5.55e-3, abs=0.02e-3)
    assert PRESETS["st39175fc"].rpm == 7200  # seed 003 section 4


@pytest.mark.parametrize(
    "text, kind, check",
    [
        ("none", "none", None),
        ("", "none", None),
        ("hdd", "hdd", lambda p: p.name == "st373454lc"),
        ("hdd:st373454lc", "hdd", lambda p: p.rpm == 15000 and not p.write_cache),
        ("st373454lc", "hdd", lambda p: p.rpm == 15000),
        ("hdd:st373454lc,write_cache=on", "hdd", lambda p: p.write_cache and p.rpm == 15000),
        ("hdd:rpm=7200,avg_seek=8ms,capacity=73G", "hdd",
         lambda p: p.rpm == 7200 and p.avg_seek == pytest.approx(8e-3) and p.capacity == 73 << 30),
        ("hdd:dnes-318350,avg_seek_ms=6.5,overhead=50us", "hdd",
         lambda p: p.avg_seek == pytest.approx(6.5e-3) and p.overhead == pytest.approx(50e-6)),
        ("hdd:st32151n,seek=12,read_ahead=segment,stroke=partition", "hdd",
         lambda p: p.avg_seek == pytest.approx(12e-3) and p.read_ahead == "segment" and p.stroke == "partition"),
        ("hdd:rate_outer=96MB/s,rate_inner=58,cache=8M,heads=4", "hdd",
         lambda p: p.rate_outer == 96 and p.cache_size == 8 << 20 and p.heads == 4),
        ("ssd", "ssd", lambda p: p.read == pytest.approx(50e-6)),
        ("ssd:read_us=80,channels=4,program=0.3ms", "ssd",
         lambda p: p.read == pytest.approx(80e-6) and p.channels == 4 and p.program == pytest.approx(3e-4)),
    ],
)
def test_parse_model_accepts(text, kind, check):
    spec = parse_model(text)
    assert spec.kind == kind
    if check:
        assert check(spec.params)
    assert parse_model(spec.text) == spec  # the canonical text parses back


@pytest.mark.parametrize(
    "text, named",
    [
        ("floppy", "floppy"),
        ("hdd:st999", "st999"),
        ("hdd:st373454lc,rpms=3", "rpms"),
        ("hdd:rpm=fast", "rpm"),
        ("hdd:avg_seek=8 parsecs", "avg_seek"),
        ("hdd:write_cache=maybe", "write_cache"),
        ("hdd:read_ahead=always", "read_ahead"),
        ("hdd:heads=0", "heads"),
        ("hdd:capacity=lots", "capacity"),
        ("hdd:st373454lc,rpm", "rpm"),
        ("ssd:st373454lc", "st373454lc"),
        ("ssd:seek=3ms", "seek"),
        ("hdd:rate_outer=10,rate_inner=20", "rate_inner"),
    ],
)
def test_parse_model_rejects(text, named):
    with pytest.raises(VraidError) as info:
        parse_model(text)
    assert named in info.value.message
    assert "presets" in info.value.hint  # lists the valid keys and presets


def test_wrap():
    store = MemoryStore(1 << 20)
    assert wrap(store, "none", TrioClock()) is store
    assert wrap(store, None, TrioClock()) is store
    assert isinstance(wrap(store, "hdd:st39175fc", TrioClock()), HddModel)
    assert isinstance(wrap(store, parse_model("ssd"), TrioClock()), SsdModel)
    assert isinstance(parse_model("hdd"), ModelSpec)


def test_describe_presets_and_table():
    rows = describe_presets()
    assert [r["name"] for r in rows] == list(PRESETS)
    assert all(r["source"] for r in rows)
    hdd = {r["name"]: r for r in rows if r["kind"] == "hdd"}
    assert hdd["st373454lc"]["revolution_ms"] == 4.0 and hdd["st373454lc"]["write_seek_ms"] == 4.1
    from vraid.tui.render import models_table

    table = models_table(rows)
    assert isinstance(table, Table) and table.row_count == len(PRESETS)


def test_disk_preset_names_an_unchanged_preset():
    assert disk_preset("hdd") == disk_preset("hdd:st373454lc") == disk_preset("st373454lc") == "st373454lc"
    assert disk_preset("hdd:dnes-318350,stroke=partition") == "dnes-318350"  # stroke places the member only
    assert disk_preset(parse_model("hdd:st39175fc")) == "st39175fc"
    assert disk_preset("ssd") == "ssd"
    for other in (None, "none", "hdd:rpm=5400", "hdd:st373454lc,write_cache=on", "ssd:read_us=80", "hdd:nope", "??"):
        assert disk_preset(other) is None, other


def test_every_hdd_preset_builds_and_serves():
    async def main():
        for name, p in PRESETS.items():
            if isinstance(p, HddParams):
                m = model(f"hdd:{name}", 8 << 20)
                await m.write(12345 * SECTOR, b"x" * 3000)
                assert await m.read(12345 * SECTOR, 3000) == b"x" * 3000
                assert m.stats.busy_seconds > 0

    run(main)
