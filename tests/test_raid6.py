"""RAID-6 on the engine: md's P and Q on the members, reads and writes with any two
members missing (every pair kind: P+Q, P+data, Q+data, two data), rebuild of two
members onto spares one after the other, scrub telling P from Q.

The member stores are checked with vraid.testing.raid6_oracle, a slow reference that
shares no code with vraid.core.pq.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import trio

from portal import ArrayPortal
from vraid.testing.raid6_oracle import bad_stripes, image_of, md_stripe, member_areas
from vraid.backends.memory import MemoryStore
from vraid.core.geometry import LAYOUTS, Geometry
from vraid.engine.raid.scrub import scrub_array
from vraid.errors import LostData

K = 1024


def _geometry(n: int, layout: str, stripes: int = 8) -> Geometry:
    return Geometry(6, n, stripes, 4 * K, 8 * K, layout, data_offset=4 * K)


def _rand(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _areas(g: Geometry, stores) -> np.ndarray:
    return member_areas([s.read_sync(0, g.member_size) for s in stores], g.data_offset, g.stripes, g.strip_size)


async def _fail(array, disk):
    return array.raid.fail_member(disk, "failed by the test")


def _random_io(p, g, model: bytearray, seed: int, count: int = 25) -> None:
    rng = np.random.default_rng(seed)
    for i in range(count):  # aligned, unaligned, sub-block, several stripes
        off = int(rng.integers(0, g.capacity - 1))
        n = int(rng.integers(1, min(g.capacity - off, 2 * g.stripe_data_bytes) + 1))
        data = _rand(seed * 100 + i, n)
        p.write(off, data)
        model[off: off + n] = data
        off = int(rng.integers(0, g.capacity - 1))
        n = int(rng.integers(1, g.stripe_data_bytes + 1))
        assert p.read(off, n) == bytes(model[off: off + n])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("n", [4, 6])
def test_members_hold_mds_p_and_q(layout, n):
    g = _geometry(n, layout)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(n)]
    model = bytearray(_rand(1, g.capacity))
    with ArrayPortal(g, stores) as p:
        p.write(0, bytes(model))
        _random_io(p, g, model, n)
        p.flush()
    areas = _areas(g, stores)
    assert bad_stripes(areas, layout) == []
    assert image_of(areas, layout) == bytes(model)


def _pair_kind(g: Geometry, pair, stripe: int = 0) -> str:
    p, q, _ = md_stripe(g.layout, g.ndisks, stripe)
    names = sorted("P" if d == p else "Q" if d == q else "D" for d in pair)
    return "+".join(names)


@pytest.mark.parametrize("layout", ["left-symmetric", "right-asymmetric"])
def test_any_two_members_missing_read_and_write(layout):
    n = 5
    g = _geometry(n, layout)
    kinds = set()
    for pair in itertools.combinations(range(n), 2):
        kinds.add(_pair_kind(g, pair))
        stores = [MemoryStore(g.member_size, f"m{i}") for i in range(n)]
        model = bytearray(_rand(sum(pair), g.capacity))
        with ArrayPortal(g, stores) as p:
            p.write(0, bytes(model))
            for d in pair:
                p.call(_fail, p.array, d)
            assert p.read(0, g.capacity) == bytes(model)
            _random_io(p, g, model, 7 + sum(pair))
            assert p.read(0, g.capacity) == bytes(model)
            p.flush()
        # the survivors' blocks are the model's where they hold data; P and Q where they
        # survive agree with the model's data (the missing members rebuilt from the model)
        areas = _areas(g, stores)
        for s in range(g.stripes):
            pm, qm, data = md_stripe(layout, n, s)
            for k, m in enumerate(data):
                if m not in pair:
                    lo = (s * g.data_disks + k) * g.strip_size
                    assert areas[m, s].tobytes() == bytes(model[lo: lo + g.strip_size])
        full = areas.copy()
        for s in range(g.stripes):
            for k, m in enumerate(md_stripe(layout, n, s)[2]):
                lo = (s * g.data_disks + k) * g.strip_size
                full[m, s] = np.frombuffer(bytes(model[lo: lo + g.strip_size]), dtype=np.uint8)
        wrong = [(s, c) for s, c in bad_stripes(full, layout)
                 if (md_stripe(layout, n, s)[0] if c == "P" else md_stripe(layout, n, s)[1]) not in pair]
        assert wrong == []
    assert kinds == {"P+Q", "D+P", "D+Q", "D+D"}


def test_a_third_missing_member_loses_data():
    g = _geometry(5, "left-symmetric")
    stores = [MemoryStore(g.member_size) for _ in range(5)]
    with ArrayPortal(g, stores) as p:
        p.write(0, _rand(3, g.capacity))
        for d in (0, 1, 2):
            p.call(_fail, p.array, d)
        with pytest.raises(Exception) as info:
            p.read(0, g.capacity)
        assert isinstance(info.value, LostData) or "missing" in str(info.value)


def test_two_rebuilds_one_after_the_other():
    n = 6
    g = _geometry(n, "left-symmetric", stripes=12)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(n)]
    spares = [MemoryStore(g.member_size, f"spare{i}") for i in range(2)]
    model = bytearray(_rand(5, g.capacity))
    rebuilt = []
    with ArrayPortal(g, stores) as p:
        a = p.array
        a.raid.on_rebuilt = lambda role, name: rebuilt.append((role, name))
        p.write(0, bytes(model))
        p.call(_fail, a, 1)
        p.call(_fail, a, 4)
        _random_io(p, g, model, 11, count=10)

        async def add_and_wait():
            for s in spares:
                a.raid.add_spare(s)
            while a.raid.rebuild is not None or a.raid.health.failed:
                await trio.sleep(0.001)

        p.call(add_and_wait)
        st = a.status()
        assert st["degraded"] is False and rebuilt == [(1, "spare0"), (4, "spare1")]
        assert p.read(0, g.capacity) == bytes(model)
        p.flush()
    new = list(stores)
    new[1], new[4] = spares
    areas = _areas(g, new)
    assert bad_stripes(areas, g.layout) == []
    assert image_of(areas, g.layout) == bytes(model)


@pytest.mark.parametrize("layout", ["left-symmetric", "left-asymmetric"])
def test_scrub_tells_p_from_q(layout):
    g = _geometry(5, layout)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(5)]
    with ArrayPortal(g, stores) as p:
        p.write(0, _rand(9, g.capacity))
        p.flush()
        prog = p.call(scrub_array, p.array.raid)
        assert prog.mismatches == 0 and prog.by_check == {}
        pm, _, _ = md_stripe(layout, 5, 2)
        _, qm, _ = md_stripe(layout, 5, 5)
        stores[pm].write_sync(g.member_offset(2, 1), b"\x01")  # P of stripe 2, row 1
        stores[qm].write_sync(g.member_offset(5, 0), b"\x02")  # Q of stripe 5, row 0
        prog = p.call(scrub_array, p.array.raid)
        assert prog.mismatches == 2 and prog.stripes == [2, 5] and prog.by_check == {"P": 1, "Q": 1}
        prog = p.call(lambda: scrub_array(p.array.raid, repair=True))
        assert prog.repaired == 2
        prog = p.call(scrub_array, p.array.raid)
        assert prog.mismatches == 0
    assert bad_stripes(_areas(g, stores), layout) == []


@pytest.mark.parametrize("setup", [
    {"policies": {"ct": "msc"}},
    {"cache": "stripe", "size": 3},
    {"cache": "pbg", "size": 2, "ct": "msc"},
], ids=["ct", "stripe-cache", "pbg-cache-ct"])
def test_caches_and_the_contiguity_transform_keep_mds_p_and_q(setup):
    """The write-back caches and MSC-CT treat both check columns as parity columns: after a
    drain every member holds md's P and Q of the model."""
    from support import write_cache

    g = _geometry(6, "left-asymmetric", stripes=10)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(6)]
    model = bytearray(g.capacity)
    if "cache" in setup:
        extra = {"ct": setup["ct"]} if "ct" in setup else {}
        opts = write_cache(setup["cache"], setup["size"] * g.stripe_data_bytes, **extra)
    else:
        opts = dict(setup)
    with ArrayPortal(g, stores, **opts) as p:
        _random_io(p, g, model, 21, count=40)
        assert p.read(0, g.capacity) == bytes(model)
        p.flush()
        p.call(p.array.shutdown)
    areas = _areas(g, stores)
    assert bad_stripes(areas, g.layout) == []
    assert image_of(areas, g.layout) == bytes(model)


def test_a_write_onto_one_of_two_missing_data_members_rebuilds_the_other_first():
    """Two data members of stripe 0 missing; a one-block write to the first: the row's block
    on the second is empty in Z and must be rebuilt from P and Q before the RCW."""
    g = _geometry(5, "left-symmetric")
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(5)]
    model = bytearray(_rand(2, g.capacity))
    with ArrayPortal(g, stores) as p:
        p.write(0, bytes(model))
        d0, d1, _ = g.data_disks_of(0)
        p.call(_fail, p.array, d0)
        p.call(_fail, p.array, d1)
        block = _rand(3, g.block_size)
        p.write(0, block)  # strip 0 (missing), row 0; strip 1 row 0 (missing) is not written
        model[0: g.block_size] = block
        assert p.read(0, g.stripe_data_bytes) == bytes(model[: g.stripe_data_bytes])
        p.flush()
    full = _areas(g, stores)
    pm, qm, data = md_stripe(g.layout, 5, 0)
    for k, m in enumerate(data):  # the two lost strips as the model has them: P and Q must agree
        full[m, 0] = np.frombuffer(bytes(model[k * g.strip_size: (k + 1) * g.strip_size]), dtype=np.uint8)
    assert [e for e in bad_stripes(full[:, :1], g.layout)] == []


@pytest.mark.parametrize("layout", LAYOUTS)
def test_vraid_layout_draws_p_and_q_where_md_puts_them(layout, capsys):
    from vraid.cli.main import main

    assert main(["layout", "--level", "6", "--disks", "5", "--strip", "4K", "--stripes", "5", "--layout", layout]) == 0
    out = capsys.readouterr().out
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]
    rows = [r for r in rows if len(r) == 7]
    assert len(rows) == 5
    for s, row in enumerate(rows):
        p, q, data = md_stripe(layout, 5, s)
        cells = row[2:]
        assert cells[p] == "P" and cells[q] == "Q"
        assert [int(cells[m]) for m in data] == [3 * s + k for k in range(3)]
