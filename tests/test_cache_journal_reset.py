"""A shutdown empties the journal (``WriteBackCache.reset_journal``): the records that were
awaiting release go with it, so a later release (or one in flight) cannot clear the new
records that reuse their slots. Found by the NVRAM crash model with more examples: a block
written after a drain was missing from the replay after a kill."""

from __future__ import annotations

import uuid

import trio
import trio.testing

from vraid.backends.memory import MemoryStore
from vraid.backends.nvram import Nvram
from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig

from support import running, write_cache

K = 1024


def _destaged_and_awaiting_release(tmp_path, test) -> None:
    """Run ``test(array)`` on a stripe cache with NVRAM after one block was written and
    destaged, its record awaiting release (a flush of the members)."""
    g = Geometry(level=5, ndisks=5, stripes=8, block_size=4 * K, strip_size=16 * K, data_offset=64 * K)
    nv = Nvram.create(tmp_path / "nv.bin", slots=64, block_size=g.block_size, array_uuid=str(uuid.uuid4()))

    async def main():
        stores = [MemoryStore(g.member_size, f"m{i}") for i in range(g.ndisks)]
        cfg = write_cache("stripe", 4 * g.stripe_data_bytes, destage="hlwm:high=1.0,low=0.99")
        async with running(EngineConfig(g, stores, **cfg, journal=nv)) as a:
            await a.write(0, b"a" * 4 * K)
            await a.cache.destage_one()
            assert a.cache._pending_release
            await test(a)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    nv.close()


def test_records_put_after_a_shutdown_survive_the_releases_of_before(tmp_path):
    async def test(a):
        cache = a.cache
        await a.shutdown()  # the members flushed, the journal emptied
        assert not cache._pending_release and not cache._pending_stripes
        await a.write(4 * K, b"b" * 4 * K)  # a new record, in a slot the old one had
        await cache._settle()  # nothing stale left to release
        assert [(block, data[:1]) for block, data in cache.journal.replay()] == [(1, b"b")]

    _destaged_and_awaiting_release(tmp_path, test)


def test_a_release_in_flight_across_a_shutdown_clears_nothing(tmp_path):
    async def test(a):
        cache = a.cache
        gate = trio.Event()
        flush = cache.target.flush

        async def slow_flush():
            await gate.wait()
            await flush()

        cache.target.flush = slow_flush
        async with trio.open_nursery() as nursery:
            nursery.start_soon(cache._settle)  # holds the old record, waiting for the flush
            await trio.testing.wait_all_tasks_blocked()
            cache.target.flush = flush
            await a.shutdown()
            await a.write(4 * K, b"b" * 4 * K)
            gate.set()
        assert [(block, data[:1]) for block, data in cache.journal.replay()] == [(1, b"b")]

    _destaged_and_awaiting_release(tmp_path, test)
