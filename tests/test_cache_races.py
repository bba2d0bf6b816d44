"""Interleavings of host writes, destages and fsync in the write-back cache (virtual time).

Every test drives one interleaving on purpose: member reads and writes are held
at gates until the test releases them, so a write is caught at an await of
``WriteBackCache._absorb`` (the partial-block fill, the wait for room) while
destages end and start, units are evicted, or an fsync drains the cache. The
invariant is the one fsync promises: after ``await array.flush()`` every write
acknowledged before the call is on the members (read here straight from the
member stores, under the cache).
"""

from __future__ import annotations

import random

import pytest
import trio
import trio.testing

from vraid.backends.base import StoreWrapper
from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig

from support import running, small_geometry, write_cache

K = 1024
BS = 4 * K
#: destages only when asked (destage_one), when a write waits for room, or an fsync drains
MANUAL = "hlwm:high=1.0,low=0.99"


def _run(fn, *args):
    async def bounded():
        with trio.fail_after(60):  # virtual seconds: a stuck interleaving fails instead of hanging
            await fn(*args)

    trio.run(bounded, clock=trio.testing.MockClock(autojump_threshold=0))


class Gate:
    """Holds the member requests it caught until :meth:`release`."""

    def __init__(self, op: str, disk: int | None, offset: int | None) -> None:
        self.op, self.disk, self.offset = op, disk, offset
        self.caught = 0
        self.reached = trio.Event()
        self._open = trio.Event()

    def matches(self, op: str, disk: int, offset: int, length: int) -> bool:
        return op == self.op and self.disk in (None, disk) and (
            self.offset is None or offset <= self.offset < offset + length)

    def release(self) -> None:
        self._open.set()

    async def hold(self) -> None:
        self.caught += 1
        self.reached.set()
        await self._open.wait()


class GatedStore(StoreWrapper):
    """A member whose requests take ``delay`` (virtual) seconds and may be held by gates.

    A read gate catches one read (the first that matches); a write gate catches
    every write until released."""

    def __init__(self, inner: MemoryStore, disk: int, gates: list[Gate], delay: float = 1e-4) -> None:
        super().__init__(inner)
        self.disk = disk
        self.gates = gates
        self.delay = delay

    async def _pass(self, op: str, offset: int, length: int) -> None:
        await trio.sleep(self.delay)
        for gate in list(self.gates):
            if gate.matches(op, self.disk, offset, length):
                if op == "read":
                    self.gates.remove(gate)  # one read each
                await gate.hold()
                if op == "write" and gate in self.gates:
                    self.gates.remove(gate)
                return

    async def read(self, offset, length):
        await self._pass("read", offset, length)
        return await self.inner.read(offset, length)

    async def write(self, offset, data):
        await self._pass("write", offset, len(data))
        await self.inner.write(offset, data)


class Rig:
    """An array with a write-back cache on gated memory members."""

    def __init__(self, g: Geometry, org: str, units: int) -> None:
        self.g = g
        self.gates: list[Gate] = []
        self.inner = [MemoryStore(g.member_size, f"m{i}") for i in range(g.ndisks)]
        self.stores = [GatedStore(s, i, self.gates) for i, s in enumerate(self.inner)]
        unit = {"pbg": g.data_disks * BS, "stripe": g.stripe_data_bytes}[org]
        self.cfg = write_cache(org, units * unit, destage=MANUAL)

    def hold_read(self, block: int) -> Gate:
        """The next member read of host block ``block`` waits for the gate."""
        a = self.g.locate(block)
        gate = Gate("read", a.disk, self.g.member_offset(a.stripe, a.row))
        self.gates.append(gate)
        return gate

    def hold_writes(self) -> Gate:
        gate = Gate("write", None, None)
        self.gates.append(gate)
        return gate

    def on_members(self, offset: int, length: int) -> bytes:
        """The host bytes ``offset .. offset+length`` as the member stores hold them."""
        g = self.g
        out = bytearray()
        for b in range(offset // BS, -(-(offset + length) // BS)):
            a = g.locate(b)
            out += self.inner[a.disk].read_sync(g.member_offset(a.stripe, a.row), BS)
        head = offset - offset // BS * BS
        return bytes(out[head : head + length])


def _bound_destages(cache, limit: int = 500) -> None:
    """Fail once ``cache`` started ``limit`` destages: a unit that stays dirty after every
    destage (its dirty data lost) is destaged again and again without any member I/O,
    and virtual time would never reach a deadline."""
    destage = cache._destage

    async def counted(unit):
        if cache.metrics.destages_started >= limit:
            raise AssertionError(f"{limit} destages: unit {unit.span.key} stays dirty after every destage")
        await destage(unit)

    cache._destage = counted


async def _until(cond, limit: float = 10.0) -> None:
    with trio.fail_after(limit):
        while not cond():
            await trio.sleep(1e-4)


async def _flush(array, limit: float = 10.0) -> None:
    """fsync; a drain that never ends (virtual time) fails the test instead of hanging it."""
    with trio.fail_after(limit):
        await array.flush()


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_a_partial_write_whose_destage_ended_and_another_began_during_its_fill_is_not_lost(org):
    """A sub-block write to a unit being destaged goes to the shadow (DDIRTY) and first
    reads the rest of its block. While that read waits, the destage ends (the shadow
    goes back to the pool) and the next destage of the unit begins. The write must
    not land in the old shadow: it would be lost, and the unit would stay dirty forever
    (its shadow write sequence number is never merged), so fsync would never return."""
    g = small_geometry()
    rig = Rig(g, org, units=8)

    async def main():
        async with running(EngineConfig(g, rig.stores, **rig.cfg)) as a:
            cache = a.cache
            _bound_destages(cache)
            await a.write(0, b"A" * BS)  # block 0: data strip 0, row 0
            unit = cache.units[next(iter(cache.dirty_keys))]
            writes = rig.hold_writes()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(cache.destage_one)  # destage 1, held at its member writes
                await writes.reached.wait()
                assert unit.destaging
                fill = rig.hold_read(4)  # block 4: data strip 1, row 0 (the same PBG / stripe)
                nursery.start_soon(a.write, 4 * BS + 100, b"p" * 50)  # acknowledged when this returns
                await fill.reached.wait()
                assert unit.shadow is not None
                writes.release()
                await _until(lambda: not unit.destaging)  # destage 1 ended: its shadow is pooled
                await a.write(0, b"B" * BS)
                writes = rig.hold_writes()
                nursery.start_soon(cache.destage_one)  # destage 2 of the same unit
                await writes.reached.wait()
                assert unit.destaging
                fill.release()  # the partial write goes on, during destage 2
                await trio.sleep(0.01)
                writes.release()
            await _flush(a)
            assert rig.on_members(0, BS) == b"B" * BS
            assert rig.on_members(4 * BS + 100, 50) == b"p" * 50
            assert not cache.dirty_keys

    _run(main)


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_a_partial_write_whose_unit_was_evicted_during_its_fill_is_not_lost(org):
    """A sub-block write allocates a unit and waits for the rest of its block. Meanwhile
    another write dirties the unit, a destage cleans it, and other writes evict it (its
    buffer goes to the next unit). The partial write must not land in the evicted unit."""
    g = small_geometry()
    rig = Rig(g, org, units=2)
    span = {"pbg": BS, "stripe": g.stripe_data_bytes}[org]  # host bytes from one unit to the next (block 0's row)

    async def main():
        async with running(EngineConfig(g, rig.stores, **rig.cfg)) as a:
            cache = a.cache
            _bound_destages(cache)
            fill = rig.hold_read(4)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(a.write, 4 * BS + 100, b"p" * 50)
                await fill.reached.wait()
                await a.write(0, b"A" * BS)  # the same unit, block 0
                assert await cache.destage_one()
                assert not cache.dirty_keys  # clean now, so it may be evicted
                await a.write(span, b"C" * BS)  # a second unit
                await a.write(2 * span, b"D" * BS)  # a third: the first is evicted
                fill.release()
                await trio.sleep(0.01)
            await _flush(a)
            assert rig.on_members(4 * BS + 100, 50) == b"p" * 50
            assert rig.on_members(0, BS) == b"A" * BS
            assert rig.on_members(span, BS) == b"C" * BS and rig.on_members(2 * span, BS) == b"D" * BS
            assert await a.read(0, 3 * span) == rig.on_members(0, 3 * span)

    _run(main)


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_two_partial_writes_filling_the_same_block_keep_both(org):
    """Two sub-block writes to different bytes of one empty block both read the rest of
    the block. The second read ends after the first write was absorbed: it must not
    overwrite the first write's bytes with the members' old ones."""
    g = small_geometry()
    rig = Rig(g, org, units=8)

    async def main():
        async with running(EngineConfig(g, rig.stores, **rig.cfg)) as a:
            _bound_destages(a.cache)
            first, second = rig.hold_read(4), rig.hold_read(4)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(a.write, 4 * BS + 100, b"1" * 50)
                await first.reached.wait()
                nursery.start_soon(a.write, 4 * BS + 300, b"2" * 50)
                await trio.sleep(0.001)  # its read is queued behind the first one on that member
                first.release()
                await second.reached.wait()
                await trio.sleep(0.01)  # the first write is absorbed meanwhile
                assert first.caught == second.caught == 1
                second.release()
            assert await a.read(4 * BS, BS) == bytes(100) + b"1" * 50 + bytes(150) + b"2" * 50 + bytes(BS - 350)
            await _flush(a)
            assert rig.on_members(4 * BS, BS) == bytes(100) + b"1" * 50 + bytes(150) + b"2" * 50 + bytes(BS - 350)

    _run(main)


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_fsync_while_an_earlier_write_waits_for_room_covers_every_acknowledged_write(org):
    """The cache is full of dirty units; a write waits for room (a write cache miss). An
    fsync issued meanwhile (its ``upto`` counts the waiting write's sequence number)
    returns once every write acknowledged before it is on the members, and the waiting
    write, acknowledged later, is on them after the next fsync."""
    g = small_geometry()
    rig = Rig(g, org, units=2)
    span = {"pbg": BS, "stripe": g.stripe_data_bytes}[org]

    async def main():
        async with running(EngineConfig(g, rig.stores, **rig.cfg)) as a:
            cache = a.cache
            await a.write(0, b"A" * BS)
            await a.write(span, b"B" * BS)
            writes = rig.hold_writes()  # no destage can finish yet
            done = trio.Event()

            async def waiting_write():
                await a.write(2 * span, b"C" * BS)
                done.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(waiting_write)
                await _until(lambda: cache.waiters == 1)
                await a.write(span + 100, b"b" * 50)  # an overwrite: acknowledged at once
                nursery.start_soon(_flush, a)
                await trio.sleep(0.01)
                writes.release()
                await done.wait()
            assert rig.on_members(0, BS) == b"A" * BS
            assert rig.on_members(span, BS) == b"B" * 100 + b"b" * 50 + b"B" * (BS - 150)
            await _flush(a)
            assert rig.on_members(2 * span, BS) == b"C" * BS

    _run(main)


@pytest.mark.parametrize("org", ["pbg", "stripe"])
@pytest.mark.parametrize("seed", range(6))
def test_random_interleavings_of_partial_writes_destages_evictions_and_fsyncs(org, seed):
    """Writers of whole and partial blocks (overlapping ones, on few blocks and few cache
    units, so that fills, destages, DDIRTY writes and evictions interleave), a reader and
    fsyncs on members that take random time: after each fsync every byte whose last
    write was acknowledged before it is on the members as written, and at the end the
    members hold exactly what the host wrote."""
    import numpy as np

    g = small_geometry(stripes=4)
    rng = random.Random(seed)
    inner = [MemoryStore(g.member_size, f"m{i}") for i in range(g.ndisks)]

    class Jittery(StoreWrapper):
        async def read(self, offset, length):
            await trio.sleep(rng.random() * 1e-3)
            return await self.inner.read(offset, length)

        async def write(self, offset, data):
            await trio.sleep(rng.random() * 1e-3)
            await self.inner.write(offset, data)

    stores = [Jittery(s) for s in inner]
    unit = g.data_disks * BS if org == "pbg" else g.stripe_data_bytes
    cfg = write_cache(org, 3 * unit, destage="hlwm:high=0.7,low=0.3")
    blocks = [0, 1, 4, 5, 8, 13, 16, 17, 20, 21, 24, 29]  # stripe 0 (rows 0-1 of each strip), stripe 1
    model = np.zeros(len(blocks) * BS, dtype=np.uint8)  # the host's view, in the order of blocks
    started: list[tuple[int, int, int]] = []  # (write number, start, end) in model positions
    acked: set[int] = set()

    def on_members() -> np.ndarray:
        out = bytearray()
        for b in blocks:
            a = g.locate(b)
            out += inner[a.disk].read_sync(g.member_offset(a.stripe, a.row), BS)
        return np.frombuffer(bytes(out), dtype=np.uint8)

    async def writer(me: int, array) -> None:
        for n in range(30):
            i = rng.randrange(len(blocks))
            start = rng.choice([0, rng.randrange(BS)])
            length = rng.choice([BS - start, rng.randint(1, BS - start)])
            number = me * 30 + n
            value = number % 250 + 1  # each write its own byte value
            pos = i * BS + start
            started.append((number, pos, pos + length))
            await array.write(blocks[i] * BS + start, bytes([value]) * length)
            model[pos : pos + length] = value
            acked.add(number)
            if rng.random() < 0.25:
                promised = model.copy()
                unsettled = {w for w, _, _ in started if w not in acked}
                seen = len(started)
                await _flush(array)
                have = on_members()
                mask = np.ones(len(model), dtype=bool)  # bytes the promise covers
                for w, lo, hi in started:
                    if w in unsettled or started.index((w, lo, hi)) >= seen:
                        mask[lo:hi] = False
                bad = np.flatnonzero((have != promised) & mask)
                assert not len(bad), f"{org} seed {seed}: {len(bad)} bytes lost a write an fsync covered, first at {bad[0]}"
            await trio.sleep(rng.random() * 2e-3)

    async def reader(array) -> None:
        while True:
            b = rng.choice(blocks)
            await array.read(b * BS, rng.choice([BS, 2 * BS]))
            await trio.sleep(rng.random() * 2e-3)

    async def main():
        async with running(EngineConfig(g, stores, **cfg)) as a:
            async with trio.open_nursery() as outer:
                outer.start_soon(reader, a)
                async with trio.open_nursery() as nursery:
                    for me in range(3):
                        nursery.start_soon(writer, me, a)
                await _flush(a)
                assert (on_members() == model).all()
                host = np.frombuffer(b"".join([await a.read(b * BS, BS) for b in blocks]), dtype=np.uint8)
                assert (host == model).all()
                outer.cancel_scope.cancel()

    _run(main)
