"""RAID-4, RAID-1 and RAID-10 (issue 32): md's placements as vectors, the mirror scheme's
arithmetic, the plans each level makes, balanced mirror reads, degraded survival by *which*
members are missing, rebuild and scrub. docs/levels.md says what each level does."""

from __future__ import annotations

import numpy as np
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from portal import ArrayPortal
from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.core.redundancy import LAYOUT_NAMES, Mirror, NearMirror, Raid4, for_level
from vraid.core.rxw import Plan, parse_z
from vraid.engine.raid.degraded import degraded_plan
from vraid.engine.raid.scrub import scrub_array
from vraid.errors import GeometryError, LostData

K = 1024


def _g(level: int, ndisks: int, layout: str | None = None, stripes: int = 8, strip: int = 8 * K) -> Geometry:
    return Geometry(level, ndisks, stripes, 4 * K, strip, layout, data_offset=4 * K)


def _rand(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


# -- placement: md's layouts as vectors (member of each data strip, then of each check strip) --
@pytest.mark.parametrize("level, ndisks, layout, stripe0, stripe1", [
    # md raid4 ALGORITHM_PARITY_N (its default): data on 0..n-2, parity on the last member, every stripe
    (4, 4, "parity-last", (0, 1, 2, 3), (0, 1, 2, 3)),
    (4, 3, "parity-last", (0, 1, 2), (0, 1, 2)),
    # ALGORITHM_PARITY_0: parity on member 0, data on 1..n-1
    (4, 4, "parity-first", (1, 2, 3, 0), (1, 2, 3, 0)),
    # raid1: the one data strip on member 0, copies on the others
    (1, 2, "mirror", (0, 1), (0, 1)),
    (1, 3, "mirror", (0, 1, 2), (0, 1, 2)),
    # raid10 near-2: chunk k of a row on members 2k and 2k+1 (data columns, then their copies)
    (10, 4, "near-2", (0, 2, 1, 3), (0, 2, 1, 3)),
    (10, 6, "near-2", (0, 2, 4, 1, 3, 5), (0, 2, 4, 1, 3, 5)),
])
def test_md_placements(level, ndisks, layout, stripe0, stripe1):
    g = _g(level, ndisks, layout)
    assert g.columns(0) == stripe0 and g.columns(1) == stripe1 and g.columns(7) == stripe0
    assert g.layout == layout


def test_logical_blocks_of_a_near_2_array_sit_on_adjacent_pairs():
    """md's raid10 n2 on 4 members with 8K chunks of two 4K blocks: chunk c on members
    2c mod 4 and 2c+1 mod 4, in row c // 2."""
    g = _g(10, 4, "near-2")
    where = {}
    for block in range(8):
        a = g.locate(block)
        k = a.strip
        where[block] = (a.stripe, g.columns(a.stripe)[k], g.columns(a.stripe)[g.data_disks + k], a.row)
    assert where == {0: (0, 0, 1, 0), 1: (0, 0, 1, 1), 2: (0, 2, 3, 0), 3: (0, 2, 3, 1),
                     4: (1, 0, 1, 0), 5: (1, 0, 1, 1), 6: (1, 2, 3, 0), 7: (1, 2, 3, 1)}


def test_each_level_has_its_defaults_and_refuses_what_it_cannot_run():
    assert [_g(lv, n).layout for lv, n in ((0, 3), (1, 2), (4, 3), (5, 3), (10, 4))] == [
        "left-symmetric", "mirror", "parity-last", "left-symmetric", "near-2"]
    assert (_g(1, 3).capacity, _g(10, 6).capacity, _g(4, 4).capacity) == (8 * 8 * K, 3 * 8 * 8 * K, 3 * 8 * 8 * K)
    odd = _g(10, 5)  # md's near-2 on an odd count: a stripe is md's period of two rows (test_raid10_odd.py)
    assert (odd.depth, odd.data_disks, odd.capacity, odd.member_size) == (2, 5, 5 * 8 * 8 * K, 4 * K + 2 * 8 * 8 * K)
    with pytest.raises(GeometryError, match="at least 2"):
        _g(1, 1)
    with pytest.raises(GeometryError, match="unknown RAID-4 layout"):
        _g(4, 4, "left-symmetric")
    assert set(LAYOUT_NAMES) >= {"parity-last", "parity-first", "mirror", "near-2"}


def test_schemes_by_member_count():
    r1, r10 = for_level(1, 4), for_level(10, 6)
    assert isinstance(r1, Mirror) and (r1.parity_columns, r1.tolerates, r1.data_columns(4)) == (3, 3, 1)
    assert isinstance(r10, NearMirror) and (r10.parity_columns, r10.tolerates, r10.data_columns(6)) == (3, 1, 3)
    assert isinstance(for_level(4), Raid4) and for_level(4, 9) is for_level(4)
    assert r1.coverage(1) == ((0,), (0,), (0,)) and r10.coverage(3) == ((0,), (1,), (2,))
    assert r1.copies(0) == (0, 1, 2) and r10.copies(2) == (2,)
    assert for_level(5).coverage(4) is None and for_level(5).copies(0) == ()
    # survival by which columns: RAID-10 (columns d0 d1 d2 c0 c1 c2) loses one of each pair
    assert r10.survives_columns({0, 4, 5}) and not r10.survives_columns({1, 4})
    assert r1.survives_columns({0, 1, 2}) and not r1.survives_columns({0, 1, 2, 3})
    g = _g(10, 6)
    assert g.survives_members({0, 3, 5}) and not g.survives_members({2, 3})
    assert _g(5, 4).survives_members({2}) and not _g(5, 4).survives_members({0, 2})


# -- the mirror arithmetic ----------------------------------------------------------------
@given(data=arrays(np.uint8, (3, 4, 16)), gone=st.sets(st.integers(0, 5), max_size=3))
def test_near_mirror_generate_reconstruct_verify(data, gone):
    r = for_level(10, 6)
    checks = r.generate(data)
    assert np.array_equal(checks, data)
    assert not r.verify(data, checks).any()
    if r.survives_columns(gone):
        d, c = data.copy(), checks.copy()
        for j in gone:
            (d if j < 3 else c)[j % 3] = 0xAA
        r.reconstruct(d, c, sorted(gone))
        assert np.array_equal(d, data) and np.array_equal(c, checks)
    else:
        with pytest.raises(ValueError):
            r.reconstruct(data.copy(), checks.copy(), sorted(gone))


def test_mirror_update_and_which_copy_differs():
    r = for_level(1, 3)
    data = np.frombuffer(_rand(1, 2 * 16), np.uint8).reshape(1, 2, 16).copy()
    checks = r.generate(data)
    new = data.copy()
    new[0, 1] ^= 0xFF
    r.update(checks[:, 1], data[:, 1], new[:, 1], (0,))
    assert np.array_equal(checks, r.generate(new))
    checks[1, 0, 3] ^= 1  # the second copy's row 0 differs
    assert r.disagree(new, checks).tolist() == [[False, False], [True, False]]


# -- plans ----------------------------------------------------------------------------------
def _plan(g: Geometry, z: str) -> Plan:
    r = g.redundancy
    return Plan.build(0, parse_z(z), g.columns(0), checks=r.parity_columns, covers=r.coverage(g.data_disks))


def test_raid1_writes_every_copy_and_reads_nothing():
    g = _g(1, 3)
    for z in ("D,E", "D,D", "E,D"):
        plan = _plan(g, z)
        assert not [r for r in plan.requests if r.op == "read"]
        written = {(g.columns(0)[r.column], r.first_row, r.rows) for r in plan.requests}
        rows = [i for i, row in enumerate(parse_z(z)) if "D" in row]
        assert written == {(d, i, 1) for d in range(3) for i in rows} or (len(rows) == 2 and written == {(d, 0, 2) for d in range(3)})


def test_raid10_writes_only_the_pairs_written():
    g = _g(10, 6)
    plan = _plan(g, "DEE,EEE")  # one block of data column 0: member 0 and its copy on member 1
    assert [(g.columns(0)[r.column], r.op, r.first_row, r.rows) for r in plan.requests] == [(0, "write", 0, 1), (1, "write", 0, 1)]
    plan = _plan(g, "DCD,EDE")  # columns 0 and 2 in row 0, column 1 in row 1
    assert not [r for r in plan.requests if r.op == "read"]
    assert sorted((g.columns(0)[r.column], r.first_row) for r in plan.requests) == [(0, 0), (1, 0), (2, 1), (3, 1), (4, 0), (5, 0)]
    assert plan.cycles() == ["full", "full"]


def test_raid4_plans_as_raid5_with_a_fixed_parity_member():
    g4, g5 = _g(4, 5), _g(5, 5)
    for z in ("DEEE", "DDEE", "DDDE", "DCCE,EEED"):
        p4, p5 = _plan(g4, z), _plan(g5, z)
        assert p4.basic == p5.basic and p4.requests == p5.requests
    assert {g4.parity_disk(s) for s in range(8)} == {4}


def test_degraded_raid10_writes_the_surviving_copy_and_refuses_a_lost_pair():
    g = _g(10, 4)
    z = parse_z("DE")
    plan = degraded_plan(0, z, g.columns(0), {0}, checks=2, covers=g.redundancy.coverage(2))
    assert [(g.columns(0)[r.column], r.op) for r in plan.requests] == [(1, "write")]
    plan = degraded_plan(0, parse_z("ED"), g.columns(0), {0, 1}, checks=2, covers=g.redundancy.coverage(2))
    assert [(g.columns(0)[r.column], r.op) for r in plan.requests] == [(2, "write"), (3, "write")]
    with pytest.raises(LostData):
        degraded_plan(0, z, g.columns(0), {0, 1}, checks=2, covers=g.redundancy.coverage(2))


# -- the engine -----------------------------------------------------------------------------
def _member_reads(p: ArrayPortal) -> list[int]:
    return [m["reads"] for m in p.status()["members"]]


def test_a_sequential_read_stays_on_one_mirror_and_concurrent_reads_spread():
    g = _g(1, 2, stripes=64)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(2)]
    image = _rand(3, g.capacity)
    with ArrayPortal(g, stores, disk_model="hdd:st373454lc") as p:
        p.write(0, image)
        before = _member_reads(p)
        for s in range(16):
            assert p.read(s * g.strip_size, g.strip_size) == image[s * g.strip_size : (s + 1) * g.strip_size]
        seq = [a - b for a, b in zip(_member_reads(p), before)]
        assert sorted(seq) == [0, 16], seq  # md: a sequential read keeps its disk
        before = _member_reads(p)
        got = {}

        async def many():
            async def one(s):
                got[s] = await p.array.read(s * g.strip_size, g.strip_size)

            async with trio.open_nursery() as n:
                for s in range(20, 60, 3):
                    n.start_soon(one, s)

        p.call(many)
        assert all(got[s] == image[s * g.strip_size : (s + 1) * g.strip_size] for s in got)
        spread = [a - b for a, b in zip(_member_reads(p), before)]
        assert min(spread) >= 4, spread  # the least busy mirror serves: both work


@pytest.mark.parametrize("level, ndisks, lost", [(1, 3, (0, 2)), (10, 4, (0, 3)), (10, 6, (1, 2, 4)), (4, 4, (3,)),
                                                 (10, 3, (1,)), (10, 5, (0, 2)), (10, 5, (4, 1))])
def test_degraded_reads_and_writes_up_to_the_tolerance_then_rebuild(level, ndisks, lost):
    g = _g(level, ndisks)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(ndisks)]
    model = bytearray(_rand(5, g.capacity))
    with ArrayPortal(g, stores) as p:
        p.write(0, bytes(model))
        for d in lost:
            p.call_sync(p.array.raid.fail_member, d, "test")
        assert not p.status()["data_lost"]
        assert p.read(0, g.capacity) == bytes(model)
        new = _rand(6, 3 * g.strip_size + 100)
        p.write(5000, new)
        model[5000 : 5000 + len(new)] = new
        assert p.read(0, g.capacity) == bytes(model)
        spares = [MemoryStore(g.member_size, f"spare{i}") for i in range(len(lost))]

        async def rebuild():
            for s in spares:
                p.array.raid.add_spare(s)
            while p.array.raid.rebuild is not None or p.array.health.failed:
                await trio.sleep(0.01)

        p.call(rebuild)
        assert not p.array.health.degraded
        assert p.read(0, g.capacity) == bytes(model)
        p.flush()

        async def check():
            return await scrub_array(p.array.raid)

        assert p.call(check).mismatches == 0


def test_losing_a_whole_pair_is_lost_data_but_the_other_pairs_read():
    g = _g(10, 4)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(4)]
    model = _rand(8, g.capacity)
    with ArrayPortal(g, stores) as p:
        p.write(0, model)
        for d in (2, 3):  # data column 1 and its copy
            p.call_sync(p.array.raid.fail_member, d, "test")
        assert p.status()["data_lost"]
        assert p.read(0, g.strip_size) == model[: g.strip_size]  # column 0 of stripe 0
        with pytest.raises(Exception, match="missing"):
            p.read(g.strip_size, 10)


def test_scrub_names_the_copy_that_differs_and_repair_copies_the_primary():
    g = _g(1, 3)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(3)]
    model = _rand(9, g.capacity)
    with ArrayPortal(g, stores) as p:
        p.write(0, model)
        p.flush()
        stores[2].write_sync(g.member_offset(3, 1), b"\x01" * 10)  # copy on member 2, stripe 3 row 1

        async def check(repair):
            return await scrub_array(p.array.raid, repair=repair)

        prog = p.call(check, False)
        assert (prog.mismatches, prog.stripes, prog.check_members) == (1, [3], {"2": 1})
        prog = p.call(check, True)
        assert prog.repaired == 1 and p.call(check, False).mismatches == 0
        assert stores[2].read_sync(g.data_offset, g.stripes * g.strip_size) == model


def test_a_mirror_rebuild_reads_one_copy():
    r1, r10 = for_level(1, 4), for_level(10, 6)
    assert r1.rebuild_sources({0}, 4) == [1] and r1.rebuild_sources({2}, 4) == [0]
    assert r1.rebuild_sources({0, 1}, 4) == [2]  # data and its first copy gone: the next copy
    assert r10.rebuild_sources({1, 5}, 6) == [2, 4]  # data 1 from its copy (column 4), copy 2 (column 5) from data 2
    assert for_level(5).rebuild_sources({2}, 4) == [0, 1, 3]


def test_ct_and_a_stripe_directory_are_refused_on_mirrors():
    from vraid.engine.config import EngineConfig
    from vraid.errors import VraidError

    g = _g(10, 4)
    with pytest.raises(VraidError, match="copies"):
        EngineConfig(g, policies={"ct": "msc"}).check()
    with pytest.raises(VraidError, match="placement"):
        EngineConfig(g, policies={"placement": "multibuffer"}).check()
    EngineConfig(_g(4, 4), policies={"ct": "msc"}).check()  # RAID-4's check column is parity: the CT applies
