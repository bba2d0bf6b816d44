"""The mapping seam (vraid.core.mapping): StaticMapping against the geometry, and the engine through it.

Part 1 holds StaticMapping to the geometry's arithmetic for the four md
layouts and RAID-0, and checks the contract of the module docstring: block
<-> (stripe, k, row) <-> member offset round trips, extents that cover a
host range exactly, consecutive rows and stripes on every member.

Part 2 runs the engine on a mapping that is not the geometry's: a miniature
stripe directory that stores logical stripe ``L`` in physical stripe
``S-1-L``. If any piece of the engine (array, cache, NVRAM numbering,
degraded reads, rebuild, scrub, resync) still did its own layout
arithmetic, the data would land in the wrong place or come back wrong.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from portal import ArrayPortal
from vraid.backends.memory import MemoryStore
from vraid.core.geometry import LAYOUTS, BlockAddress, Extent, Geometry
from vraid.core.mapping import StaticMapping, mapping_of
from vraid.core.redundancy import NONE, XOR
from vraid.engine.chain import CacheConfig
from vraid.engine.raid.stripe import StripeBuffer

K = 1024

SHAPES = [(5, n, layout) for n in (3, 4, 5, 7) for layout in LAYOUTS] + [(0, n, "left-symmetric") for n in (1, 2, 4)]


def _geometry(level: int, ndisks: int, layout: str, *, strip: int = 16 * K, stripes: int = 11) -> Geometry:
    return Geometry(level, ndisks, stripes, 4 * K, strip, layout, data_offset=8 * K)


def _id(shape) -> str:
    level, n, layout = shape
    return f"raid{level}-{n}-{layout}" if level else f"raid0-{n}"


# -- part 1: StaticMapping is the geometry ------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES, ids=_id)
def test_static_mapping_agrees_with_the_geometry(shape):
    g = _geometry(*shape)
    m = StaticMapping(g)
    assert m.geometry is g and m.stripes == g.stripes and m.capacity == g.capacity
    assert m.redundancy is (XOR if g.level == 5 else NONE)
    for s in range(2 * g.ndisks + 1):
        assert m.columns(s) == g.columns(s)
        assert [m.data_disk(s, k) for k in range(g.data_disks)] == list(g.data_disks_of(s))
        p = g.parity_disk(s)
        assert m.parity_disks(s) == (() if p is None else (p,))
        for row in range(g.u):
            assert m.member_offset(s, row) == g.member_offset(s, row)
    for b in range(0, g.blocks, 7):
        assert m.locate(b) == g.locate(b)
    assert list(m.extents(5, g.capacity - 9)) == list(g.extents(5, g.capacity - 9))


@pytest.mark.parametrize("shape", SHAPES, ids=_id)
def test_columns_are_data_in_order_then_parity(shape):
    g = _geometry(*shape)
    m = StaticMapping(g)
    for s in range(3 * g.ndisks):
        cols = m.columns(s)
        assert len(set(cols)) == len(cols) == g.data_disks + m.redundancy.parity_columns
        assert cols[: g.data_disks] == tuple(m.data_disk(s, k) for k in range(g.data_disks))
        assert cols[g.data_disks :] == m.parity_disks(s)


@pytest.mark.parametrize("shape", SHAPES, ids=_id)
def test_every_block_round_trips_and_the_members_are_covered_once(shape):
    """block -> (stripe, k, row) -> block, and every member row of the data area is
    exactly one block or the parity of its stripe."""
    g = _geometry(*shape)
    m = StaticMapping(g)
    bs = g.block_size
    seen: dict[tuple[int, int], int] = {}
    for b in range(g.blocks):
        a = m.locate(b)
        assert m.block_of(a.stripe, a.strip, a.row) == b
        assert a.disk == m.data_disk(a.stripe, a.strip)
        offset = m.member_offset(a.stripe, a.row)
        assert offset == g.data_offset + a.member_block * bs
        assert (a.disk, offset) not in seen
        seen[(a.disk, offset)] = b
    for s in range(m.stripes):
        for p in m.parity_disks(s):
            for row in range(g.u):
                assert (p, m.member_offset(s, row)) not in seen
                seen[(p, m.member_offset(s, row))] = -1
    assert len(seen) == g.ndisks * m.stripes * g.u  # nothing left over, nothing twice


@pytest.mark.parametrize("shape", SHAPES, ids=_id)
def test_every_stripe_cell_round_trips(shape):
    g = _geometry(*shape)
    m = StaticMapping(g)
    for s, k, row in itertools.product(range(m.stripes), range(g.data_disks), range(g.u)):
        a = m.locate(m.block_of(s, k, row))
        assert (a.stripe, a.strip, a.row) == (s, k, row)


@pytest.mark.parametrize("shape", SHAPES, ids=_id)
def test_rows_and_stripes_are_consecutive_on_every_member(shape):
    g = _geometry(*shape)
    m = StaticMapping(g)
    for s in range(m.stripes - 1):
        assert m.member_offset(s + 1) == m.member_offset(s) + g.strip_size
        assert all(m.member_offset(s, r) == m.member_offset(s) + r * g.block_size for r in range(g.u))


@st.composite
def _ranges(draw):
    level, n, layout = draw(st.sampled_from(SHAPES))
    strip = draw(st.sampled_from([4 * K, 8 * K, 32 * K]))
    g = _geometry(level, n, layout, strip=strip, stripes=draw(st.integers(1, 9)))
    offset = draw(st.integers(0, g.capacity - 1))
    length = draw(st.integers(0, g.capacity - offset))
    return g, offset, length


@given(_ranges())
def test_extents_cover_the_range_exactly(case):
    g, offset, length = case
    m = StaticMapping(g)
    exts = list(m.extents(offset, length))
    assert sum(e.length for e in exts) == length
    pos = 0
    for e in exts:
        assert isinstance(e, Extent) and e.length > 0
        assert e.host_offset == pos  # in host order, no gap, no overlap
        assert 0 <= e.start and e.start + e.length <= g.stripe_data_bytes
        assert 0 <= e.stripe < m.stripes
        for byte in {e.start, e.start + e.length - 1}:  # both ends land where locate says
            host = offset + e.host_offset + byte - e.start
            a = m.locate(host // g.block_size)
            assert a.stripe == e.stripe
            assert a.strip * g.u + a.row == byte // g.block_size
        pos += e.length
    assert len(exts) == len({e.stripe for e in exts})  # a static layout: one piece per stripe


def test_mapping_of_wraps_a_geometry_and_keeps_a_mapping():
    g = _geometry(5, 4, "left-symmetric")
    m = mapping_of(g)
    assert isinstance(m, StaticMapping) and m.geometry is g
    assert mapping_of(m) is m


# -- part 2: the engine goes through the mapping -------------------------------------------
class ReversedStripes(StaticMapping):
    """A fixed stripe directory: logical stripe L lives in physical stripe S-1-L.

    Every stripe number it hands out is physical; the physical layout of a
    stripe (columns, parity rotation, offsets) is the geometry's.
    """

    def _flip(self, stripe: int) -> int:
        return self.geometry.stripes - 1 - stripe

    def extents(self, offset, length):
        for e in self.geometry.extents(offset, length):
            yield Extent(self._flip(e.stripe), e.start, e.length, e.host_offset)

    def locate(self, block):
        g = self.geometry
        a = g.locate(block)
        s = self._flip(a.stripe)
        return BlockAddress(s, a.strip, a.row, g.data_disk(s, a.strip), s * g.u + a.row)

    def block_of(self, stripe, k, row):
        return super().block_of(self._flip(stripe), k, row)


def _rand(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _image_from_members(m: ReversedStripes, stores) -> bytes:
    """The host image read from the member stores through the reversed directory,
    without the engine: logical stripe L's strip k is on member data_disk(S-1-L, k)."""
    g = m.geometry
    out = bytearray()
    for logical in range(g.stripes):
        s = g.stripes - 1 - logical
        for k in range(g.data_disks):
            out += stores[m.data_disk(s, k)].read_sync(m.member_offset(s), g.strip_size)
    return bytes(out)


def _parity_errors(m: ReversedStripes, stores) -> int:
    g = m.geometry
    bad = 0
    for s in range(g.stripes):
        rows = np.stack([
            np.frombuffer(stores[d].read_sync(m.member_offset(s), g.strip_size), dtype=np.uint8).reshape(g.u, -1)
            for d in m.columns(s)
        ])
        bad += int(np.count_nonzero(m.redundancy.verify(rows[: g.data_disks], rows[g.data_disks :])))
    return bad


def test_reversed_reference_is_a_different_layout():
    g = _geometry(5, 4, "left-symmetric", stripes=6)
    m = ReversedStripes(g)
    assert m.locate(0).stripe == g.stripes - 1 and g.locate(0).stripe == 0
    for b in range(g.blocks):
        a = m.locate(b)
        assert m.block_of(a.stripe, a.strip, a.row) == b


@pytest.mark.parametrize("cache", ["none", "stripe", "pbg"])
@pytest.mark.parametrize("layout", ["left-symmetric", "right-asymmetric"])
def test_writes_land_where_the_mapping_says(cache, layout):
    g = _geometry(5, 4, layout, stripes=8)
    m = ReversedStripes(g)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(g.ndisks)]
    model = bytearray(g.capacity)
    rng = np.random.default_rng(5)
    cfg = CacheConfig(cache, size=3 * g.stripe_data_bytes, destage="hlwm:high=0.5,low=0.2")
    with ArrayPortal(g, stores, mapping=m, cache=cfg) as p:
        assert p.array.mapping is m
        for i in range(30):
            off = int(rng.integers(0, g.capacity - 1))
            n = int(rng.integers(1, min(g.capacity - off, 3 * g.stripe_data_bytes) + 1))
            data = _rand(i, n)
            p.write(off, data)
            model[off : off + n] = data
        assert p.read(0, g.capacity) == bytes(model)
        p.call(p.array.shutdown)
    assert _image_from_members(m, stores) == bytes(model)
    assert _parity_errors(m, stores) == 0


def test_degraded_reads_rebuild_and_scrub_go_through_the_mapping():
    from vraid.engine.raid.scrub import scrub_array

    g = _geometry(5, 4, "left-symmetric", stripes=8)
    m = ReversedStripes(g)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(g.ndisks)]
    spare = MemoryStore(g.member_size, "spare")
    model = _rand(1, g.capacity)
    with ArrayPortal(g, stores, mapping=m) as p:
        a = p.array
        p.write(0, model)

        async def fail():
            a.raid.fail_member(2, "failed by the test")

        p.call(fail)
        assert p.read(0, g.capacity) == model  # member 2's blocks reconstructed, in the right stripes
        p.write(3 * K, b"x" * 20 * K)  # a degraded write
        model = model[: 3 * K] + b"x" * 20 * K + model[23 * K :]

        async def rebuild():
            a.raid.add_spare(spare)
            while a.raid.rebuild is not None:
                await trio.sleep(0.001)
            return a.raid.last_rebuild

        assert p.call(rebuild)["state"] == "done"
        assert p.read(0, g.capacity) == model
        prog = p.call(scrub_array, a.raid)
        assert prog.mismatches == 0 and prog.done == m.stripes
    members = [stores[0], stores[1], spare, stores[3]]
    assert _image_from_members(m, members) == model
    assert _parity_errors(m, members) == 0


def test_nvram_numbers_blocks_logically_and_recovery_replays_them(tmp_path):
    """The cache's NVRAM records carry logical block numbers (mapping.block_of), and
    recovery writes them back where the mapping puts them and resyncs those stripes."""
    from vraid.engine.host.recovery import recover

    g = _geometry(5, 4, "left-symmetric", stripes=8)
    m = ReversedStripes(g)
    bs = g.block_size
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(g.ndisks)]
    base = _rand(2, g.capacity)
    cfg = CacheConfig("stripe", size=g.capacity, destage="hlwm:high=1.0,low=0.9")
    nv_path = tmp_path / "nvram.bin"  # the engine makes it (vraid.engine.build)
    update = {5 * K: b"a" * 9 * K, g.capacity - 30 * K: b"b" * 17 * K}
    with ArrayPortal(g, stores, mapping=m) as p:  # write-through: the members hold ``base``
        p.write(0, base)
    model = bytearray(base)
    with ArrayPortal(g, stores, mapping=m, cache=cfg, nvram=nv_path) as p:
        async def pause():
            p.array.cache.pause()  # nothing is destaged: the updates live in the cache and NVRAM only

        p.call(pause)
        for off, data in update.items():
            p.write(off, data)
            model[off : off + len(data)] = data
        replay = p.engine.nvram.replay()
        # the portal closes without shutdown(): a crash, as far as the members know
    assert _image_from_members(m, stores) == base
    assert replay and all(bytes(data) == bytes(model[b * bs : (b + 1) * bs]) for b, data in replay)
    with ArrayPortal(g, stores, mapping=m) as p:
        report = p.call(lambda: recover(p.array, was_clean=False, bitmap_chunks=set(), replay=replay))
        assert report.stripes == len({m.locate(b).stripe for b, _ in replay})
        assert p.read(0, g.capacity) == bytes(model)
    assert _image_from_members(m, stores) == bytes(model)
    assert _parity_errors(m, stores) == 0


def test_stripe_buffers_place_columns_by_the_mapping():
    g = _geometry(5, 5, "right-symmetric")
    m = ReversedStripes(g)
    buf = StripeBuffer(m, 3)
    assert buf.mapping is m and buf.columns == m.columns(3)
    req = buf.request(4, "write", 1, 2)
    assert req.disk == m.parity_disks(3)[0] and req.offset == m.member_offset(3, 1)
    assert StripeBuffer(g, 3).mapping.geometry is g  # a bare geometry: its static mapping
