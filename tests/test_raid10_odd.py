"""RAID-10 near-2 on an odd member count (issue 32): md's byte layout on the member files,
which pairs of failures it survives, and the engine's degraded reads, writes, rebuild and
scrub on it. The md positions here are worked out from md's rule alone (chunk ``i`` in the
device slots ``2i`` and ``2i + 1``, slots numbered row by row over the members), not from
vraid's geometry."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import trio

from portal import ArrayPortal
from vraid.backends.file import FileStore
from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.core.redundancy import for_level
from vraid.engine.raid.scrub import scrub_array

K = 1024


def _g(ndisks: int, stripes: int = 6, strip: int = 8 * K) -> Geometry:
    return Geometry(10, ndisks, stripes, 4 * K, strip, "near-2", data_offset=4 * K)


def _rand(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def md_near2_places(chunk: int, ndisks: int) -> list[tuple[int, int]]:
    """(member, chunk row on that member) of chunk ``chunk``'s two copies under md's near-2:
    slot ``p`` is member ``p mod n`` in row ``p // n`` (drivers/md/raid10.c, near_copies = 2)."""
    return [(p % ndisks, p // ndisks) for p in (2 * chunk, 2 * chunk + 1)]


def test_the_rule_draws_md_s_picture_on_three_members():
    rows: dict[tuple[int, int], str] = {}
    for c, name in enumerate("ABCDEF"):
        for member, row in md_near2_places(c, 3):
            rows[(row, member)] = name
    assert ["".join(rows[(r, m)] for m in range(3)) for r in range(4)] == ["AAB", "BCC", "DDE", "EFF"]


@pytest.mark.parametrize("ndisks", [3, 5, 7])
def test_the_geometry_puts_every_chunk_and_its_copy_where_md_does(ndisks):
    g = _g(ndisks)
    assert (g.depth, g.data_disks, g.redundancy.parity_columns) == (2, ndisks, ndisks)
    for block in range(g.blocks):
        a = g.locate(block)
        chunk = block // g.u
        (m0, r0), (m1, r1) = md_near2_places(chunk, ndisks)
        copy = g.data_disks + g.redundancy.copies(a.strip)[0]
        assert (a.disk, a.member_block) == (m0, r0 * g.u + a.row)
        assert g.columns(a.stripe)[copy] == m1
        assert g.column_offset(a.stripe, copy, a.row) == g.data_offset + (r1 * g.u + a.row) * g.block_size
    assert g.member_size == g.data_offset + 2 * g.stripes * g.strip_size  # two chunk rows a stripe


@pytest.mark.parametrize("ndisks, cache", [(3, None), (5, None), (5, "pbg")])
def test_member_files_hold_md_s_near_2_layout_after_writes(tmp_path, ndisks, cache):
    """Writes through the engine (write-through, and a write-back cache), then the raw member
    files: chunk i's bytes at both of md's places, and nothing else in the data area."""
    from vraid.engine.chain import CacheConfig

    g = _g(ndisks)
    paths = [tmp_path / f"disk{i}" for i in range(ndisks)]
    stores = [FileStore.create(p, g.member_size) for p in paths]
    image = bytearray(_rand(1, g.capacity))
    extra = {"cache": CacheConfig("pbg", 16 * g.strip_size)} if cache else {}
    with ArrayPortal(g, stores, **extra) as p:
        p.write(0, bytes(image))
        for seed, (offset, n) in enumerate([(5000, 3 * g.strip_size + 77), (g.strip_size * ndisks - 4096, 8192), (123, 1)]):
            new = _rand(10 + seed, n)
            p.write(offset, new)
            image[offset : offset + n] = new
        p.flush()
    for s in stores:
        s.close()
    raw = [p.read_bytes() for p in paths]
    chunk = g.strip_size
    seen = [bytearray(g.member_data_bytes) for _ in range(ndisks)]
    for c in range(g.capacity // chunk):
        want = bytes(image[c * chunk : (c + 1) * chunk])
        for member, row in md_near2_places(c, ndisks):
            at = g.data_offset + row * chunk
            assert raw[member][at : at + chunk] == want, (c, member, row)
            seen[member][row * chunk : (row + 1) * chunk] = b"\x01" * chunk
    assert all(all(seen[m]) for m in range(ndisks))  # every chunk row of every member is some chunk's copy


@pytest.mark.parametrize("ndisks", [3, 5, 7, 9])
def test_it_survives_one_failure_and_two_that_are_not_neighbours(ndisks):
    """The two holders of a chunk are neighbours in slot order (m, m+1 mod n, the wrap included):
    two failures are survived exactly when they are not neighbours (never on 3 members)."""
    g = _g(ndisks)
    holders = {frozenset(m for m, _ in md_near2_places(c, ndisks)) for c in range(ndisks)}
    assert holders == {frozenset((m, (m + 1) % ndisks)) for m in range(ndisks)}
    assert all(g.survives_members({m}) for m in range(ndisks))
    for a, b in itertools.combinations(range(ndisks), 2):
        assert g.survives_members({a, b}) == (frozenset((a, b)) not in holders), (a, b)
    if ndisks >= 7:
        assert g.survives_members({0, 2, 4}) and not g.survives_members({0, 2, ndisks - 1})
    assert "not neighbours" in for_level(10, ndisks).survival_text()


def _scrub(p, repair=False):
    async def run():
        return await scrub_array(p.array.raid, repair=repair)

    return p.call(run)


def test_degraded_reads_and_writes_rebuild_and_scrub_on_five_members():
    g = _g(5)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(5)]
    model = bytearray(_rand(2, g.capacity))
    with ArrayPortal(g, stores) as p:
        p.write(0, bytes(model))
        p.call_sync(p.array.raid.fail_member, 1, "test")
        p.call_sync(p.array.raid.fail_member, 3, "test")  # not neighbours of 1: survived
        assert not p.status()["data_lost"]
        assert p.read(0, g.capacity) == bytes(model)
        new = _rand(3, 2 * g.stripe_data_bytes + 999)
        p.write(777, new)
        model[777 : 777 + len(new)] = new
        assert p.read(0, g.capacity) == bytes(model)
        p.call_sync(p.array.raid.fail_member, 2, "test")  # the neighbour of 1 and 3: chunks lost
        assert p.status()["data_lost"]
        with pytest.raises(Exception, match="missing"):
            p.read(0, g.capacity)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(5)]
    with ArrayPortal(g, stores) as p:
        p.write(0, bytes(model))
        p.call_sync(p.array.raid.fail_member, 4, "test")
        spare = MemoryStore(g.member_size, "spare")

        async def rebuild():
            p.array.raid.add_spare(spare)
            while p.array.raid.rebuild is not None or p.array.health.failed:
                await trio.sleep(0.01)

        p.call(rebuild)
        assert not p.array.health.degraded
        p.flush()
        # the spare holds member 4's two lanes of every stripe: md's slots 4 and 9 of each period
        for c in range(g.capacity // g.strip_size):
            for member, row in md_near2_places(c, 5):
                if member == 4:
                    at = g.data_offset + row * g.strip_size
                    assert spare.read_sync(at, g.strip_size) == bytes(model[c * g.strip_size : (c + 1) * g.strip_size])
        assert _scrub(p).mismatches == 0
        # a copy in the second lane differs: the scrub names its member, repair copies the primary
        chunk = 5 * 2 + 2  # stripe 2, data column 2: its copy is slot 2*12+1 = 25, member 0 row 5 (lane 1)
        (m0, r0), (m1, r1) = md_near2_places(chunk, 5)
        assert (m1, r1) == (0, 5)
        stores[0].write_sync(g.data_offset + r1 * g.strip_size + 4096, b"\xee" * 10)
        prog = _scrub(p)
        assert (prog.mismatches, prog.stripes, prog.check_members) == (1, [2], {"0": 1})
        assert _scrub(p, repair=True).repaired == 1 and _scrub(p).mismatches == 0
        assert p.read(0, g.capacity) == bytes(model)


def test_a_read_goes_to_either_copy_and_a_failed_holder_is_read_around():
    g = _g(3)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(3)]
    model = _rand(4, g.capacity)
    with ArrayPortal(g, stores) as p:
        p.write(0, model)
        for failed in (0, 2):  # chunk B is on members 2 (row 0) and 0 (row 1)
            p.call_sync(p.array.raid.fail_member, failed, "test")
            assert p.read(g.strip_size, g.strip_size) == model[g.strip_size : 2 * g.strip_size]
            assert p.read(0, g.capacity) == model
            spare = MemoryStore(g.member_size, f"spare{failed}")

            async def rebuild():
                p.array.raid.add_spare(spare)
                while p.array.raid.rebuild is not None or p.array.health.failed:
                    await trio.sleep(0.01)

            p.call(rebuild)
            assert p.read(0, g.capacity) == model
