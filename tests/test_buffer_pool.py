"""The whole-stripe buffers write-through writes reuse (vraid.engine.raid.stripe.BufferPool)."""

from __future__ import annotations

import numpy as np
import pytest
import trio

from vraid.backends.faulty import FaultSpec, FaultyStore
from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.core.mapping import StaticMapping
from vraid.engine.raid.stripe import BufferPool
from vraid.engine.build import EngineConfig

from support import running

BS = 4096


def test_a_buffer_given_back_is_handed_out_again_with_its_own_temp_memory():
    g = Geometry(5, 5, 8, BS, 4 * BS)
    pool = BufferPool(StaticMapping(g), limit=1)
    a = pool.take(3)
    assert a.stripe == 3 and a.data.shape == (4, 4, BS) and a.columns == g.columns(3)
    temp = a._temp()
    assert temp is a._temp_store and temp.shape == a.data.shape
    a.temp = None  # what execute does once the parity is done
    pool.give(a)
    b = pool.take(7)  # the same memory, labelled for another stripe
    assert b.data is a.data and b.checks is a.checks and b._temp() is temp
    assert b.stripe == 7 and b.columns == g.columns(7)
    c = pool.take(1)  # none free: a new one
    assert c.data is not a.data
    pool.give(b)
    pool.give(c)  # beyond the limit: dropped
    assert len(pool._free) == 1


def test_write_through_on_reused_buffers_keeps_every_stripe_right():
    """Writes of every size and alignment, one after another and concurrently, through
    the pooled buffers: what is read back is what was written, and parity checks."""
    g = Geometry(5, 5, 16, BS, 4 * BS)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(5)]
    rng = np.random.default_rng(7)
    model = bytearray(g.capacity)

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            for _ in range(60):
                off = int(rng.integers(0, g.capacity - 1))
                n = int(rng.integers(1, min(3 * g.stripe_data_bytes, g.capacity - off) + 1))
                data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
                model[off : off + n] = data
                await array.write(off, data)
            async with trio.open_nursery() as nursery:  # concurrent writes to distinct stripes
                for s in range(0, 16, 2):
                    data = bytes([s]) * g.stripe_data_bytes
                    model[s * g.stripe_data_bytes : (s + 1) * g.stripe_data_bytes] = data
                    nursery.start_soon(array.write, s * g.stripe_data_bytes, data)
            assert await array.read(0, g.capacity) == bytes(model)

    trio.run(main)
    raw = [np.frombuffer(s.read_sync(g.data_offset, g.member_size - g.data_offset), dtype=np.uint8) for s in stores]
    assert not np.bitwise_xor.reduce(raw).any()  # parity agrees with the data everywhere


def test_a_write_that_fails_does_not_give_its_buffer_back():
    """A member request may still point into the buffer of a failed write: it is not reused."""
    g = Geometry(0, 5, 8, BS, 4 * BS)  # RAID-0: a failed member fails the write
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(5)]
    stores[2] = FaultyStore(stores[2], FaultSpec(fail_after=0))

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            free = len(array.raid.buffers._free)
            with pytest.raises(Exception):
                await array.write(0, b"x" * g.stripe_data_bytes)
            assert len(array.raid.buffers._free) == free

    trio.run(main)
