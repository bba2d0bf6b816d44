"""The destage target seam: the write-back cache over a fake target, and a chained target.

The cache knows only the :class:`vraid.engine.layer.Target` protocol. Here it
runs over a recording target that keeps the image in a bytearray (no RAID at
all), and over a buffering target that holds what the cache destages and
forwards it to the next target later (seed 002's level-1 / level-2 destage),
the next target being the real RAID planner of an array.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import trio
import trio.testing

from vraid.core.mapping import StaticMapping
from vraid.core.geometry import Geometry
from vraid.backends.memory import MemoryStore
from vraid.engine.cache import WriteBackCache
from vraid.engine.clock import TrioClock
from vraid.engine.events import EventBus
from vraid.engine.members.request import DESTAGE, HOST
from vraid.engine.raid.stripe import StripeBuffer
from vraid.engine.layer import Layer as Target
from vraid.engine.raid.layer import RaidLayer
from vraid.policies.cache import organisation
from vraid.policies.destage import load_scheduler
from vraid.policies.order import destage_order
from vraid.engine.build import EngineConfig

from support import running, small_geometry

K = 1024
ROOT = Path(__file__).resolve().parent.parent


def _run(fn, *args):
    return trio.run(fn, *args, clock=trio.testing.MockClock(autojump_threshold=0))


def _block_of(g: Geometry, buf: StripeBuffer, k: int, r: int) -> int:
    return buf.stripe * g.data_disks * g.u + k * g.u + buf.row0 + r


class RecordingTarget:
    """A target over a plain bytearray image; records every call."""

    def __init__(self, g: Geometry) -> None:
        self.geometry = g
        self.mapping = StaticMapping(g)
        self.clock = TrioClock()
        self.events = EventBus()
        self.image = bytearray(g.capacity)
        self.writes: list[tuple[int, int, tuple, int]] = []  # (stripe, row0, z, priority)
        self.reads: list[tuple[int, int, int]] = []
        self.block_reads: list[tuple[int, list, int]] = []
        self.flushes = 0

    async def write_unit(self, buf, z, *, priority=DESTAGE, cause=None):
        await trio.sleep(0.001)  # a destage takes time: writes meanwhile go to the shadow
        self.writes.append((buf.stripe, buf.row0, tuple(map(tuple, z)), priority))
        bs = self.geometry.block_size
        for i, row in enumerate(z):
            for k, state in enumerate(row):
                if state == "D":
                    b = _block_of(self.geometry, buf, k, i)
                    self.image[b * bs : (b + 1) * bs] = buf.data[k, i].tobytes()
        return frozenset()

    async def read_blocks(self, buf, cells, *, priority=HOST):
        cells = list(cells)
        self.block_reads.append((buf.stripe, cells, priority))
        bs = self.geometry.block_size
        for k, r in cells:
            b = _block_of(self.geometry, buf, k, r)
            buf.data[k, r] = np.frombuffer(self.image, dtype=np.uint8)[b * bs : (b + 1) * bs]

    def read_now(self, offset, length, *, priority=HOST):
        return None  # every read is recorded through read()

    async def read(self, offset, length, *, priority=HOST):
        self.reads.append((offset, length, priority))
        return bytes(self.image[offset : offset + length])

    async def flush(self):
        self.flushes += 1


class BufferTarget:
    """A chained target: takes destaged units into its own buffer (level 1) and
    forwards them to ``next`` when told to (level 2). Reads see its newer copies."""

    def __init__(self, next_target: Target) -> None:
        self.next = next_target
        self.geometry = next_target.geometry
        self.mapping = next_target.mapping
        self.clock = next_target.clock
        self.events = next_target.events
        self.blocks: dict[int, bytes] = {}  # logical block -> newest bytes held here
        self.flushes = 0

    async def write_unit(self, buf, z, *, priority=DESTAGE, cause=None):
        for i, row in enumerate(z):
            for k, state in enumerate(row):
                if state == "D":
                    self.blocks[_block_of(self.geometry, buf, k, i)] = buf.data[k, i].tobytes()
        return frozenset()

    def _overlay(self, first_block: int, data: bytearray) -> None:
        bs = self.geometry.block_size
        for i in range(len(data) // bs):
            held = self.blocks.get(first_block + i)
            if held is not None:
                data[i * bs : (i + 1) * bs] = held

    def read_now(self, offset, length, *, priority=HOST):
        return None  # it overlays its own blocks in read()

    async def read(self, offset, length, *, priority=HOST):
        bs = self.geometry.block_size
        first, end = offset // bs * bs, -(-(offset + length) // bs) * bs
        data = bytearray(await self.next.read(first, end - first, priority=priority))
        self._overlay(first // bs, data)
        return bytes(data[offset - first : offset - first + length])

    async def read_blocks(self, buf, cells, *, priority=HOST):
        cells = list(cells)
        await self.next.read_blocks(buf, cells, priority=priority)
        for k, r in cells:
            held = self.blocks.get(_block_of(self.geometry, buf, k, r))
            if held is not None:
                buf.data[k, r] = np.frombuffer(held, dtype=np.uint8)

    async def flush(self):
        # this buffer is not durable: flush forwards everything, then flushes the next target
        self.flushes += 1
        await self.forward()
        await self.next.flush()

    async def forward(self, *, priority=DESTAGE) -> int:
        """Level-2 destage: every held block to the next target, one call per stripe."""
        g = self.geometry
        per_stripe = g.data_disks * g.u
        by_stripe: dict[int, dict[int, bytes]] = {}
        for b, data in self.blocks.items():
            by_stripe.setdefault(b // per_stripe, {})[b % per_stripe] = data
        for stripe, held in sorted(by_stripe.items()):
            buf = StripeBuffer(g, stripe)
            z = [["E"] * g.data_disks for _ in range(g.u)]
            for within, data in held.items():
                k, r = divmod(within, g.u)
                buf.data[k, r] = np.frombuffer(data, dtype=np.uint8)
                z[r][k] = "D"
            await self.next.write_unit(buf, tuple(map(tuple, z)), priority=priority)
        n = len(self.blocks)
        self.blocks.clear()
        return n


def _cache(target, org="stripe", size_units=3, scheduler="hlwm:high=0.9,low=0.5"):
    g = target.geometry
    o = organisation(org, g)
    return WriteBackCache(target, o, destage_order("lrw"), load_scheduler(scheduler), size_units * o.unit_blocks() * g.block_size)


def _data(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def test_cache_module_does_not_import_the_array():
    tree = ast.parse("\n".join(p.read_text() for p in sorted((ROOT / "vraid/engine/cache").glob("*.py"))))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.add(("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    assert names, "no imports found: the check reads the wrong file"
    assert not {n for n in names if n.endswith("array") or n.endswith(".array")}, names


def test_cache_destages_to_a_recording_target():
    g = small_geometry(ndisks=4, stripes=6)

    async def main():
        target = RecordingTarget(g)
        cache = _cache(target)
        bs = g.block_size
        async with trio.open_nursery() as nursery:
            await nursery.start(cache.run)
            cache.pause()
            a = _data(1, 2 * bs)
            await cache.write(3 * bs, a)  # blocks 3, 4 of stripe 0: strip 0 row 3, strip 1 row 0
            assert await cache.read(3 * bs, 2 * bs) == a  # a hit: the target is not read
            assert target.reads == []
            assert await cache.destage_one()
            (stripe, row0, z, priority), = target.writes
            assert (stripe, row0, priority) == (0, 0, DESTAGE)
            assert z[3][0] == "D" and z[0][1] == "D"
            assert sum(row.count("D") for row in z) == 2
            assert bytes(target.image[3 * bs : 5 * bs]) == a
            # a miss goes to the target; a sub-block write fills its block from it first
            target.image[40 * bs : 41 * bs] = b"\x07" * bs
            await cache.write(40 * bs + 10, b"xyz")
            (_, cells, prio), = target.block_reads
            assert prio == HOST and len(cells) == 1
            want = bytearray(b"\x07" * bs)
            want[10:13] = b"xyz"
            assert await cache.read(40 * bs, bs) == bytes(want)
            assert await cache.read(60 * bs, bs) == bytes(bs)
            assert target.reads and target.reads[-1][2] == HOST
            # fsync of a volatile cache: everything to the target, then the target flushed
            cache.resume()
            await cache.flush()
            assert target.flushes == 1
            assert bytes(target.image[40 * bs : 41 * bs]) == bytes(want)
            assert [e.kind for e in target.events.history].count("destage") >= 2
            nursery.cancel_scope.cancel()

    _run(main)


def test_writes_during_a_destage_reach_the_target_after_it():
    """DDIRTY through the target seam: a write while the unit is at the target is kept and destaged next."""
    g = small_geometry(ndisks=4, stripes=6)

    async def main():
        target = RecordingTarget(g)
        cache = _cache(target)
        bs = g.block_size
        async with trio.open_nursery() as nursery:
            await nursery.start(cache.run)
            cache.pause()
            await cache.write(0, b"\x01" * bs)
            nursery.start_soon(cache.destage_one)
            await trio.sleep(0.0005)  # the destage is at the target now
            await cache.write(0, b"\x02" * bs)
            await trio.sleep(0.01)
            assert bytes(target.image[:bs]) == b"\x01" * bs
            assert await cache.read(0, bs) == b"\x02" * bs
            assert await cache.destage_one()
            assert bytes(target.image[:bs]) == b"\x02" * bs
            assert len(target.writes) == 2
            nursery.cancel_scope.cancel()

    _run(main)


def test_chained_target_buffers_and_forwards_to_the_raid_planner():
    """cache -> BufferTarget (level 1) -> the RAID layer of a real array (level 2)."""
    g = small_geometry(ndisks=4, stripes=6)
    stores = [MemoryStore(g.member_size) for _ in range(g.ndisks)]

    async def main():
        async with running(EngineConfig(g, stores)) as array:  # write-through array: its target is the planner
            assert isinstance(array.writer, RaidLayer)
            chain = BufferTarget(array.raid)
            cache = _cache(chain, org="pbg", size_units=4)
            bs = g.block_size
            old = _data(7, 6 * bs)
            await array.write(10 * bs, old)  # on the members before the cache is involved
            new = _data(8, 3 * bs)
            async with trio.open_nursery() as nursery:
                await nursery.start(cache.run)
                cache.pause()
                await cache.write(11 * bs, new)
                while await cache.destage_one():
                    pass
                # level 1 done: the buffer holds the blocks, the members still the old ones
                assert len(chain.blocks) == 3
                assert await array.raid.read(11 * bs, 3 * bs) == old[bs : 4 * bs]
                # reads below the cache see the chain's newest copy
                assert await chain.read(10 * bs, 6 * bs) == old[:bs] + new + old[4 * bs :]
                assert await cache.read(10 * bs, 6 * bs) == old[:bs] + new + old[4 * bs :]
                plans = array.metrics.plans
                assert await chain.forward() == 3  # level 2: through the RAID planner
                assert array.metrics.plans > plans
                assert chain.blocks == {}
                assert await array.raid.read(10 * bs, 6 * bs) == old[:bs] + new + old[4 * bs :]
                await cache.write(0, b"\x05" * bs)
                cache.resume()
                await cache.flush()  # volatile cache over a volatile buffer: flush goes to the end
                assert chain.flushes == 1
                assert await array.raid.read(0, bs) == b"\x05" * bs
                nursery.cancel_scope.cancel()
        # parity is right after the chain's level-2 destage
        for s in range(g.stripes):
            strips = [st.read_sync(g.data_offset + s * g.strip_size, g.strip_size) for st in stores]
            x = np.bitwise_xor.reduce(np.stack([np.frombuffer(b, dtype=np.uint8) for b in strips]), axis=0)
            assert not x.any(), f"stripe {s}: parity wrong"

    _run(main)


def test_raid_target_reports_the_blocks_a_plan_read():
    """An RCW destage reads E blocks into the unit: the target says which, the cache marks them C."""
    g = small_geometry(ndisks=4, stripes=6)
    stores = [MemoryStore(g.member_size) for _ in range(g.ndisks)]

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            bs = g.block_size
            await array.write(0, _data(3, g.stripe_data_bytes))
            buf = StripeBuffer(g, 0, row0=0, rows=1)
            # one PBG of 3 data blocks, 2 dirty: RCW reads the third (r) to compute parity
            z = (("D", "D", "E"),)
            buf.data[0, 0] = 1
            buf.data[1, 0] = 2
            filled = await array.raid.write_unit(buf, z, priority=DESTAGE)
            assert filled == {(2, 0)}
            assert buf.data[2, 0].tobytes() == (await array.raid.read(2 * g.u * bs, bs))

    _run(main)
