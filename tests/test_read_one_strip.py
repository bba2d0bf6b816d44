"""A read inside one strip of a healthy array (``RaidLayer.read``) makes its one member
request directly: the same request the general path makes from the extents, and a member
that fails under it is failed and the read answered from the others."""

from __future__ import annotations

import random

import pytest
import trio

from vraid.backends.memory import MemoryStore
from vraid.core.geometry import LAYOUTS, RESERVED, Geometry

from test_small_write import FailingStore
from vraid.engine.build import EngineConfig, build_engine

from support import running

BS = 4096


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("ndisks", [3, 4, 5, 7])
def test_the_direct_request_is_the_one_the_extents_give(layout, ndisks):
    g = Geometry(5, ndisks, 20, BS, 16 * 1024, layout=layout, data_offset=RESERVED)
    array = build_engine(EngineConfig(g, [MemoryStore(g.member_size) for _ in range(ndisks)])).array  # not running
    mapping, strip = array.mapping, g.strip_size
    rng = random.Random(ndisks)
    for _ in range(500):
        first = rng.randrange(g.capacity // BS) * BS
        n = rng.randint(1, (strip - first % strip) // BS) * BS
        (ext,) = mapping.extents(first, n)
        (req,) = array.raid._read_requests(ext)
        stripe, k = divmod(first // strip, g.data_disks)
        assert (req.disk, req.offset, req.length) == (mapping.data_disk(stripe, k), mapping.member_offset(stripe) + first % strip, n)


def test_a_member_failing_under_a_one_strip_read_is_failed_and_the_read_reconstructed():
    g = Geometry(5, 5, 8, BS, 16 * 1024, data_offset=RESERVED)
    stores = [FailingStore(g.member_size) for _ in range(5)]
    data = bytes(range(256)) * (g.stripe_data_bytes // 256)

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            await array.write(0, data)
            disk = array.mapping.data_disk(0, 1)
            stores[disk].fail = "read"
            reads = array.members.disks[disk].stats.reads
            assert await array.read(g.strip_size + 100, 3000) == data[g.strip_size + 100 : g.strip_size + 3100]
            assert array.members.disks[disk].stats.errors == 1 and array.members.disks[disk].stats.reads == reads
            assert array.status()["members"][disk]["state"] == "failed"
            assert await array.read(0, len(data)) == data

    trio.run(main)


def test_unaligned_reads_inside_and_across_strips_read_back():
    g = Geometry(5, 5, 8, BS, 16 * 1024, data_offset=RESERVED)
    rng = random.Random(5)
    model = rng.randbytes(g.capacity)

    async def main():
        async with running(EngineConfig(g, [MemoryStore(g.member_size) for _ in range(5)])) as array:
            await array.write(0, model)
            for _ in range(400):
                off = rng.randrange(g.capacity)
                n = rng.randint(1, min(3 * g.strip_size, g.capacity - off))
                assert await array.read(off, n) == model[off : off + n]

    trio.run(main)


class FailingSyncStore(MemoryStore):
    """A memory member whose reads fail once ``fail`` says so, in ``read_sync`` (which its
    ``read`` calls): it keeps ``sync_reads``, so the direct read runs on it."""

    fail: str | None = None

    def read_sync(self, offset, length):
        if self.fail == "read":
            raise OSError(5, "injected read error")
        return super().read_sync(offset, length)


def test_a_store_that_overrides_read_is_never_read_directly():
    """``sync_reads`` is inherited only while ``read`` is: a store that puts faults or time
    into ``read`` (test_small_write's FailingStore) must be awaited, never bypassed."""
    assert MemoryStore.sync_reads and FailingSyncStore.sync_reads
    assert not FailingStore.sync_reads
