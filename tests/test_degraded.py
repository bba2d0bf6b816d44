"""Degraded RAID-5 on the controller: reconstruction, parity-keeping writes, two failures, rebuild.

Every check looks at the member stores directly and computes its own XOR,
independent of vraid.engine.raid.degraded.
"""

from __future__ import annotations

import errno

import numpy as np
import pytest
import trio

from portal import ArrayPortal
from vraid.engine.events import Cause, PlanEvent
from vraid.backends.base import StoreWrapper
from vraid.backends.memory import MemoryStore
from vraid.engine.raid.degraded import degraded_matrix, degraded_row
from vraid.errors import LostData, MemberIOError
from vraid.core.geometry import LAYOUTS, Geometry
from vraid.core.rxw import basic_row, parse_z
from vraid.engine.build import EngineConfig

from support import running, write_cache

K = 1024


def _geometry(ndisks: int, layout: str, strip: int = 8 * K, block: int = 4 * K, stripes: int = 10) -> Geometry:
    return Geometry(5, ndisks, stripes, block, strip, layout, data_offset=4 * K)


def _rand(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _areas(g: Geometry, stores) -> np.ndarray:
    """(disk, stripe, row, block) of every member's data area, read from the stores."""
    return np.stack([
        np.frombuffer(s.read_sync(g.data_offset, g.stripes * g.strip_size), dtype=np.uint8).reshape(g.stripes, g.u, g.block_size)
        for s in stores
    ])


def check_degraded(g: Geometry, stores, missing: int, model: bytes) -> None:
    """Survivors hold the model's data where the geometry says; the missing member's
    blocks, recomputed here as the XOR of the survivors, are the model's data too."""
    areas = _areas(g, stores)
    survivors = [d for d in range(g.ndisks) if d != missing]
    rebuilt = np.bitwise_xor.reduce(areas[survivors], axis=0)
    areas = areas.copy()
    areas[missing] = rebuilt
    image = np.empty((g.stripes, g.data_disks, g.u, g.block_size), dtype=np.uint8)
    for s in range(g.stripes):
        for k in range(g.data_disks):
            image[s, k] = areas[g.data_disk(s, k), s]
    got = image.reshape(-1)
    want = np.frombuffer(model, dtype=np.uint8)
    if not np.array_equal(got, want):
        at = int(np.flatnonzero(got != want)[0])
        raise AssertionError(f"members disagree with the model at logical byte {at} ({g.locate(at // g.block_size)})")


def check_parity(g: Geometry, stores) -> int:
    """Number of PBGs whose blocks do not XOR to zero."""
    pbg = np.bitwise_xor.reduce(_areas(g, stores), axis=0)
    return int(np.count_nonzero(pbg.reshape(g.stripes * g.u, -1).any(axis=1)))


async def _status(array):
    return array.status()


async def _fail(array, disk):
    return array.raid.fail_member(disk, "failed by the test")


# -- the matrix ----------------------------------------------------------------------------
def test_degraded_rows_never_touch_the_missing_column():
    for text in ("DEEE", "DDDD", "DCEE", "ECDE", "EEED", "CCCD"):
        (states,) = parse_z(text)
        for m in range(5):
            row = degraded_row(states, (m,))
            assert row is not None
            assert row[m] in ((), ("x",)), (text, m, row)
            if m == 4:  # parity missing: only the dirty data is written
                assert all(c == (("w",) if s == "D" else ()) for c, s in zip(row, states))
    (states,) = parse_z("DEEE")
    assert degraded_row(states, ()) == basic_row(states)
    assert degraded_row(states, (0, 1)) is None  # the dirty block and another are missing
    assert degraded_row(states, (1, 2)) is not None  # RMW: parity survives, the dirty block has a member
    assert degraded_row(states, (0, 4)) is None
    assert degraded_matrix(parse_z("DEEE,EEEE"), (0, 1)) is None


# -- reads and writes with one member missing, every layout and position ----------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("ndisks", [3, 5])
def test_every_failed_position_reads_and_writes(layout, ndisks):
    g = _geometry(ndisks, layout)
    for missing in range(ndisks):
        stores = [MemoryStore(g.member_size, f"m{i}") for i in range(ndisks)]
        model = bytearray(_rand(missing, g.capacity))
        with ArrayPortal(g, stores) as p:
            p.write(0, bytes(model))
            p.call(_fail, p.array, missing)
            assert p.read(0, g.capacity) == bytes(model)  # every block, the missing ones reconstructed
            rng = np.random.default_rng(ndisks * 10 + missing)
            for i in range(40):  # aligned, unaligned, sub-block, whole stripes
                off = int(rng.integers(0, g.capacity - 1))
                n = int(rng.integers(1, min(g.capacity - off, 3 * g.stripe_data_bytes) + 1))
                data = _rand(1000 + i, n)
                p.write(off, data)
                model[off : off + n] = data
                off = int(rng.integers(0, g.capacity - 1))
                n = int(rng.integers(1, 2 * g.stripe_data_bytes))
                assert p.read(off, n) == bytes(model[off : off + n])
            p.flush()
            st = p.call(_status, p.array)
            assert st["degraded"] and st["failed"] == [missing]
        check_degraded(g, stores, missing, bytes(model))


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_destages_from_the_cache_keep_parity_when_degraded(org):
    g = _geometry(4, "left-symmetric")
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(4)]
    model = bytearray(g.capacity)
    events = []
    with ArrayPortal(g, stores, **write_cache(org, 3 * g.stripe_data_bytes)) as p:
        p.array.events.subscribe(lambda ev: events.append(ev) if ev.kind == "plan" else None)
        p.call(_fail, p.array, 2)
        rng = np.random.default_rng(4)
        for i in range(60):
            off = int(rng.integers(0, g.capacity - 1))
            n = int(rng.integers(1, min(g.capacity - off, 2 * g.stripe_data_bytes) + 1))
            data = _rand(i, n)
            p.write(off, data)
            model[off : off + n] = data
        assert p.read(0, g.capacity) == bytes(model)
        p.call(p.array.shutdown)
    check_degraded(g, stores, 2, bytes(model))
    assert events and all(isinstance(e, PlanEvent) and e.degraded and 2 in e.missing for e in events)
    assert {e.cause for e in events} <= {Cause.HOST, Cause.DESTAGE}


# -- a member that fails by itself --------------------------------------------------------------
class Breakable(StoreWrapper):
    """A memory member that starts failing every request when told (a dead disk)."""

    instant = True

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.broken = False

    async def read(self, offset, length):
        if self.broken:
            raise OSError(errno.EIO, "medium error")
        return await self.inner.read(offset, length)

    async def write(self, offset, data):
        if self.broken:
            raise OSError(errno.EIO, "medium error")
        await self.inner.write(offset, data)


@pytest.mark.parametrize("cache", ["none", "stripe", "pbg"])
def test_a_failing_member_is_failed_and_the_request_retried(cache):
    g = _geometry(5, "left-symmetric")
    raw = [MemoryStore(g.member_size, f"m{i}") for i in range(5)]
    stores = [Breakable(s) for s in raw]
    model = bytearray(_rand(7, g.capacity))
    failures = []
    with ArrayPortal(g, stores, **write_cache(cache, 4 * g.stripe_data_bytes)) as p:
        p.array.raid.on_failure = lambda role, reason, spare: failures.append((role, reason))
        p.write(0, bytes(model))
        p.flush()
        stores[3].broken = True
        data = _rand(8, 3 * g.stripe_data_bytes + 100)  # dirty data in the cache meets the dead member
        p.write(5000, data)
        model[5000 : 5000 + len(data)] = data
        p.flush()
        assert p.read(0, g.capacity) == bytes(model)
        assert [r for r, _ in failures] == [3] and "medium error" in failures[0][1]
        st = p.call(_status, p.array)
        assert st["members"][3]["state"] == "failed" and st["failed"] == [3]
    check_degraded(g, raw, 3, bytes(model))


def test_raid0_member_error_is_eio_for_its_blocks_only():
    g = Geometry(0, 3, 8, 4 * K, 8 * K, data_offset=4 * K)
    stores = [Breakable(MemoryStore(g.member_size)) for _ in range(3)]
    with ArrayPortal(g, stores) as p:
        p.write(0, b"x" * g.capacity)
        stores[1].broken = True
        with pytest.raises(MemberIOError):
            p.read(g.strip_size, 10)  # strip 1 lives on member 1
        assert p.read(0, 10) == b"x" * 10
        assert p.call(_status, p.array)["degraded"] is False


# -- two failures -------------------------------------------------------------------------------
def test_two_failures_lose_only_the_missing_members_blocks():
    g = _geometry(5, "left-symmetric")
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(5)]
    model = _rand(9, g.capacity)
    with ArrayPortal(g, stores) as p:
        p.write(0, model)
        p.call(_fail, p.array, 1)
        p.call(_fail, p.array, 3)
        st = p.call(_status, p.array)
        assert st["missing"] == [1, 3] and st["data_lost"] is True
        bs = g.block_size
        for block in range(g.blocks):
            a = g.locate(block)
            if a.disk in (1, 3):
                with pytest.raises(LostData):
                    p.read(block * bs, bs)
            else:
                assert p.read(block * bs, bs) == model[block * bs : (block + 1) * bs]
        before = [s.read_sync(0, g.member_size) for s in stores]
        for block in range(g.blocks):
            a = g.locate(block)
            if a.disk in (1, 3):
                with pytest.raises(LostData):  # would need a lost member: refused, nothing written
                    p.write(block * bs, b"\xaa" * bs)
        assert [s.read_sync(0, g.member_size) for s in stores] == before
        # a block on a surviving member whose stripe keeps parity can still be written
        ok = next(b for b in range(g.blocks) if g.locate(b).disk not in (1, 3) and g.parity_disk(g.locate(b).stripe) not in (1, 3))
        p.write(ok * bs, b"\x55" * bs)
        assert p.read(ok * bs, bs) == b"\x55" * bs


# -- rebuild ------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
def test_rebuild_onto_a_spare_while_writing(layout):
    g = _geometry(4, layout, stripes=16)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(4)]
    spare = MemoryStore(g.member_size, "spare")
    model = bytearray(_rand(11, g.capacity))
    rebuilt = []
    with ArrayPortal(g, stores) as p:
        a = p.array
        a.raid.on_rebuilt = lambda role, name: rebuilt.append((role, name))
        p.write(0, bytes(model))
        p.call(_fail, a, 1)
        a.raid.rebuild_paused = True

        async def add():
            a.raid.add_spare(spare)

        p.call(add)
        assert p.call(_status, a)["members"][1]["state"] == "rebuilding"
        rng = np.random.default_rng(3)
        for step in range(g.stripes):
            p.call(a.raid.rebuild.step, 1)
            off = int(rng.integers(0, g.capacity - 1))
            n = int(rng.integers(1, min(g.capacity - off, g.stripe_data_bytes) + 1))
            data = _rand(step, n)
            p.write(off, data)
            model[off : off + n] = data
            assert p.read(0, g.capacity) == bytes(model)

        async def resume():
            a.raid.rebuild_paused = False
            a.raid.rebuild._wakeup.set()
            while a.raid.rebuild is not None:
                await trio.sleep(0.001)

        p.call(resume)
        st = p.call(_status, a)
        assert st["degraded"] is False and st["members"][1]["state"] == "active"
        assert st["rebuild"]["state"] == "done" and rebuilt == [(1, "spare")]
        assert a.members[1].store is spare
        assert p.read(0, g.capacity) == bytes(model)
    new = [stores[0], spare, stores[2], stores[3]]
    assert check_parity(g, new) == 0
    check_degraded(g, new, 1, bytes(model))


def test_rebuild_rate_limit_paces_on_the_clock():
    g = _geometry(3, "left-symmetric", stripes=8)
    stores = [MemoryStore(g.member_size) for _ in range(3)]

    async def main():

        async with running(EngineConfig(g, stores)) as a:
            await a.write(0, _rand(1, g.capacity))
            a.raid.set_rebuild_rate(g.strip_size * 4)  # 4 stripes per second
            t0 = trio.current_time()
            a.raid.fail_member(0, "test")
            a.raid.add_spare(MemoryStore(g.member_size, "spare"))
            while a.raid.rebuild is not None:
                await trio.sleep(0.01)
            return trio.current_time() - t0, a.raid.last_rebuild

    elapsed, last = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert last["state"] == "done" and elapsed == pytest.approx(2.0, abs=0.05)


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_two_failures_with_a_cache_refuse_writes_that_need_lost_members(org):
    g = _geometry(4, "left-symmetric")
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(4)]
    model = _rand(12, g.capacity)
    with ArrayPortal(g, stores, **write_cache(org, 3 * g.stripe_data_bytes)) as p:
        p.write(0, model)
        p.call(p.array.shutdown)
        p.call(_fail, p.array, 0)
        p.call(_fail, p.array, 1)
        bs = g.block_size
        lost = next(b for b in range(g.blocks) if g.locate(b).disk == 0)
        with pytest.raises(LostData):
            p.write(lost * bs, b"\x11" * 10)
        ok = next(b for b in range(g.blocks) if g.locate(b).disk not in (0, 1) and g.parity_disk(g.locate(b).stripe) not in (0, 1))
        p.write(ok * bs, b"\x22" * bs)
        p.call(p.array.shutdown)
        assert p.read(ok * bs, bs) == b"\x22" * bs


@pytest.mark.parametrize("cache", ["none", "stripe"])
def test_a_member_failing_under_the_bitmap_write_loses_no_data(cache):
    """The write-intent bit is written to every member before the data; when that
    bitmap write is what fails a member, the data of the plan has not been written
    yet: the array must retry degraded, not count the plan as done."""
    from vraid.backends.faulty import FaultSpec, FaultyStore
    from vraid.backends.memory import MemoryStore
    from vraid.backends.missing import MissingStore
    from vraid.ondisk.bitmap import WriteIntentBitmap
    from vraid.engine.clock import TrioClock
    from vraid.core.geometry import RESERVED, Geometry

    g = Geometry(5, 3, 8, 4096, 16 * 1024, data_offset=RESERVED)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(3)]
    stores[1] = FaultyStore(stores[1], FaultSpec(fail_after=0), clock=TrioClock(), block_size=4096,
                            data_offset=g.data_offset)  # its first request, the bitmap write, fails
    data = bytes(range(256)) * 16 * 6  # 6 blocks across the stripe

    async def main():
        cfg = write_cache(cache, 8 * g.stripe_data_bytes)
        async with running(EngineConfig(g, stores, intent=WriteIntentBitmap(g, 1), **cfg)) as array:
            await array.write(0, data)
            await array.flush()
            assert array.status()["members"][1]["state"] == "failed"
            assert await array.read(0, len(data)) == data
        # and on the surviving members themselves: data blocks, and parity reconstructing member 1
        async with running(EngineConfig(g, [stores[0], MissingStore(g.member_size), stores[2]], failed=[1])) as array:
            assert await array.read(0, len(data)) == data

    trio.run(main)

