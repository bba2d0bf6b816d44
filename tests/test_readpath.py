"""The read path: the clean-block read cache, the prefetch hook, and never a stale block.

:class:`NextStrip` is a test prefetch policy (the simplest striping-aware
read-ahead: after a read, fetch the whole next strip). The races run in
virtual time over members that take a while per request, so a host write
reliably lands while a prefetch of the same block is in flight.
"""

from __future__ import annotations

import numpy as np
import pytest
import trio
import trio.testing

from vraid.engine.read.readpath import ReadCache, _runs
from vraid.errors import VraidError
from vraid.policies.prefetch import CHOICES, PREFETCHERS, HostRead, NoPrefetch, PrefetchPolicy, load_prefetch
from vraid.engine.build import EngineConfig

from support import run_virtual, running, slow_stores, small_geometry, write_cache

K = 1024
BS = 4 * K


class NextStrip(PrefetchPolicy):
    """After each host read, read the strip after the last block read."""

    name = "next-strip"

    def __init__(self, geometry) -> None:
        super().__init__(geometry)
        self.seen: list[HostRead] = []

    def after_read(self, read: HostRead):
        self.seen.append(read)
        u = self.geometry.u
        nxt = (read.first + read.count - 1) // u + 1
        return [(nxt * u, u)]


def _data(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


async def settle(array) -> None:
    """Destage everything, then drop the write cache's (clean) units: reads go below it."""
    if array.cache is not None:
        await array.shutdown()
        assert not array.cache.dirty_keys
        array.cache.units.clear()
        array.cache.clean.clear()


def fresh(array, model: bytes | bytearray) -> None:
    """Every block the read cache holds has the model's (the host's newest) bytes; blocks
    past the model's end were never written (zero)."""
    rc = array.reads.read_cache
    bs = array.geometry.block_size
    for block, data in rc._blocks.items():
        want = bytes(model[block * bs : (block + 1) * bs]).ljust(bs, b"\0")
        assert data == want, f"read cache holds a stale block {block}"


# -- ReadCache on its own ----------------------------------------------------------------
def test_read_cache_lru_and_bound():
    rc = ReadCache(3 * 8, 8)
    assert rc.capacity == 3
    f = rc.begin([1, 2, 3])
    for b in (1, 2, 3):
        assert rc.fill(f, b, bytes([b]) * 8)
    rc.end(f)
    assert rc.get(1) == b"\x01" * 8  # 1 is now the most recently used
    f = rc.begin([4])
    rc.fill(f, 4, b"\x04" * 8)
    rc.end(f)
    assert 2 not in rc and {1, 3, 4} == set(rc._blocks)
    assert rc.used == 24 <= rc.size
    assert rc.metrics.evictions == 1
    assert rc.get(2) is None
    assert (rc.metrics.lookups, rc.metrics.hits) == (2, 1)
    with pytest.raises(VraidError, match="cannot hold one"):
        ReadCache(7, 8)


def test_read_cache_refuses_a_fill_invalidated_in_flight():
    rc = ReadCache(64, 8)
    early = rc.begin([5, 6], prefetch=True)
    rc.invalidate(5, 1)  # the host writes block 5 while it is being fetched
    late = rc.begin([5])  # a fetch that started after the write
    assert not rc.fill(early, 5, b"old" + bytes(5))
    assert rc.fill(early, 6, b"\x06" * 8)
    assert rc.metrics.stale_drops == 1
    assert rc.fill(late, 5, b"new" + bytes(5))
    rc.end(early)
    rc.end(late)
    rc.end(late)  # idempotent
    assert rc.get(5) == b"new" + bytes(5)
    assert rc.get(6) == b"\x06" * 8 and rc.metrics.prefetch_hits == 1
    assert rc._fetching == {} and rc._stamp == {}  # no bookkeeping left behind
    rc.invalidate(0, 100)
    assert len(rc) == 0 and rc.metrics.invalidations == 2


def test_runs():
    assert _runs([]) == []
    assert _runs([1, 2, 3, 7, 9, 10]) == [(1, 3), (7, 1), (9, 2)]


def test_prefetch_family():
    assert CHOICES == ("none", "msp", "seqp", "saseqp") and PREFETCHERS["none"] is NoPrefetch
    p = load_prefetch("none")
    assert isinstance(p, NoPrefetch) and p.after_read(HostRead(0, 1, 1, 0, 0.0)) == ()
    with pytest.raises(VraidError, match="unknown prefetch policy"):
        load_prefetch("fancy")
    with pytest.raises(VraidError, match="takes no parameters"):
        load_prefetch("none:x=1")


# -- the read path in an array ------------------------------------------------------------
def test_defaults_leave_the_read_path_as_it_was():
    g = small_geometry(ndisks=4, strip=4 * BS)

    async def main():
        async with running(EngineConfig(g, slow_stores(g, 0))) as array:
            assert array.reads.read_cache is None and isinstance(array.reads.prefetch, NoPrefetch)
            assert not array.reads.prefetching and "reads" not in array.status()
            with pytest.raises(VraidError, match="needs a read cache"):
                async with running(EngineConfig(g, slow_stores(g, 0), instances={"prefetch": NextStrip(g)})):
                    pass

    run_virtual(main)


@pytest.mark.parametrize("cache", ["none", "stripe", "pbg"])
def test_prefetched_strip_is_a_hit_and_does_not_delay_the_host(cache):
    g = small_geometry(ndisks=4, strip=4 * BS)
    stores = slow_stores(g, 0.01)
    strip = g.strip_size

    async def main():
        policy = NextStrip(g)
        kw = {} if cache == "none" else write_cache(cache, 4 * g.stripe_data_bytes)
        async with running(EngineConfig(g, stores, read_cache_size=64 * BS, **kw, instances={"prefetch": policy})) as array:
            model = _data(1, 2 * g.stripe_data_bytes)
            await array.write(0, model)
            await settle(array)
            rc = array.reads.read_cache
            reads = sum(s.reads for s in stores)
            t0 = trio.current_time()
            assert await array.read(0, strip) == model[:strip]
            took = trio.current_time() - t0
            assert took == pytest.approx(0.01)  # one member read: the prefetch runs beside it
            assert policy.seen[-1].first == 0 and policy.seen[-1].count == g.u
            assert policy.seen[-1].misses == g.u and policy.seen[-1].prefetch_hits == 0
            await trio.sleep(0.1)  # the prefetch of strip 1 (advised on arrival) completes
            reads += 1  # the host read's own
            assert sum(s.reads for s in stores) == reads + 1
            hits = rc.metrics.hits
            assert await array.read(strip, strip) == model[strip : 2 * strip]
            assert rc.metrics.hits == hits + g.u and rc.metrics.prefetch_hits == g.u
            assert policy.seen[-1].misses == 0 and policy.seen[-1].prefetch_hits == g.u
            assert sum(s.reads for s in stores) == reads + 1  # served without the members
            fresh(array, model)
            assert array.status()["reads"]["prefetched"] >= g.u

    run_virtual(main)


@pytest.mark.parametrize("cache", ["none", "stripe", "pbg"])
def test_a_write_racing_a_prefetch_is_never_served_stale(cache):
    g = small_geometry(ndisks=4, strip=4 * BS)
    stores = slow_stores(g, 0.01)
    strip = g.strip_size

    async def main():
        kw = {} if cache == "none" else write_cache(cache, 2 * g.stripe_data_bytes, destage="hlwm:high=0.5,low=0.1")
        async with running(EngineConfig(g, stores, read_cache_size=64 * BS, **kw, instances={"prefetch": NextStrip(g)})) as array:
            model = bytearray(_data(2, 3 * g.stripe_data_bytes))
            await array.write(0, bytes(model))
            await settle(array)
            rc = array.reads.read_cache
            for step in range(6):
                pos = step * strip
                await array.read(pos, strip)  # prefetch of the next strip starts
                await trio.sleep(0.003)  # ... and is in flight at the members
                new = _data(100 + step, BS)
                at = pos + strip + (step % g.u) * BS
                await array.write(at, new)  # the host writes a block being prefetched
                model[at : at + BS] = new
                await trio.sleep(0.1)  # every fetch and destage in flight ends
                fresh(array, model)
                assert await array.read(pos + strip, strip) == bytes(model[pos + strip : pos + 2 * strip])
            assert rc.metrics.stale_drops + rc.metrics.invalidations > 0
            await settle(array)  # also once everything is destaged and the write cache empty
            assert await array.read(0, len(model)) == bytes(model)
            fresh(array, model)

    run_virtual(main)


@pytest.mark.parametrize("org", ["stripe", "pbg"])
def test_dirty_blocks_are_not_prefetched_and_ddirty_writes_invalidate(org):
    """A block dirty in the write cache is on the members in its old version: no prefetch
    of it may fill the read cache, and a write during its destage (DDIRTY) invalidates."""
    g = small_geometry(ndisks=4, strip=4 * BS)
    stores = slow_stores(g, 0.01)
    strip = g.strip_size

    async def main():
        cfg = write_cache(org, 4 * g.stripe_data_bytes, destage="hlwm:high=0.99,low=0.98")
        async with running(EngineConfig(g, stores, **cfg, read_cache_size=64 * BS, instances={"prefetch": NextStrip(g)})) as array:
            model = bytearray(_data(3, 2 * g.stripe_data_bytes))
            await array.write(0, bytes(model))
            await settle(array)
            array.cache.pause()
            new = _data(4, BS)
            await array.write(strip, new)  # block u is dirty now; the members hold the old one
            model[strip : strip + BS] = new
            await array.read(0, strip)  # NextStrip asks for strip 1
            await trio.sleep(0.1)
            rc = array.reads.read_cache
            assert g.u not in rc and all(b in rc for b in range(g.u + 1, 2 * g.u))
            fresh(array, model)
            # DDIRTY: the host writes block u again while its unit is being destaged
            # block 0 (strip 0, row 0) shares the dirty unit with block u (strip 1, row 0) in both
            # organisations, and the host read put it in the read cache
            assert 0 in rc
            async with trio.open_nursery() as nursery:
                nursery.start_soon(array.cache.destage_one)
                await trio.sleep(0.005)
                unit = next(iter(array.cache.units.values()))
                assert unit.destaging
                newer = _data(5, BS)
                await array.write(0, newer)  # into the unit's shadow (DDIRTY)
                assert unit.shadow_state is not None and unit.shadow_state[0, 0] == 2
                model[0:BS] = newer
            assert 0 not in rc
            assert await array.read(0, BS) == newer
            fresh(array, model)
            array.cache.resume()
            await array.shutdown()
            assert await array.read(0, len(model)) == bytes(model)
            fresh(array, model)

    run_virtual(main)


@pytest.mark.parametrize("cache", ["none", "stripe"])
def test_a_host_read_waits_for_the_prefetch_in_flight_instead_of_reading_twice(cache):
    g = small_geometry(ndisks=4, strip=4 * BS)
    stores = slow_stores(g, 0.01)
    strip = g.strip_size

    async def main():
        kw = {} if cache == "none" else write_cache(cache, 4 * g.stripe_data_bytes)
        async with running(EngineConfig(g, stores, read_cache_size=64 * BS, **kw, instances={"prefetch": NextStrip(g)})) as array:
            model = bytearray(_data(6, 2 * g.stripe_data_bytes))
            await array.write(0, bytes(model))
            await settle(array)
            rc, stats = array.reads.read_cache, array.reads.stats
            reads = sum(s.reads for s in stores)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(array.read, 0, strip)  # the prefetch of strip 1 starts on its arrival
                await trio.sleep(0.004)  # ... and is at the members
                t0 = trio.current_time()
                assert await array.read(strip, strip) == bytes(model[strip : 2 * strip])
                assert trio.current_time() - t0 == pytest.approx(0.006)  # the rest of the prefetch, no more
            assert stats.prefetch_waits == 1 and rc.metrics.prefetch_hits == g.u
            # strip 0 (host), strip 1 (prefetch, not read again), strip 2 (prefetch advised on arrival)
            assert sum(s.reads for s in stores) == reads + 3
            # a write while a host read waits for the prefetch: the fill is refused, the read
            # goes to the members, and afterwards only the new bytes are served
            await trio.sleep(0.1)
            await array.read(2 * strip, strip)  # prefetch of strip 3
            async with trio.open_nursery() as nursery:
                nursery.start_soon(array.read, 3 * strip, strip)
                await trio.sleep(0.002)
                new = _data(7, BS)
                await array.write(3 * strip, new)
                model[3 * strip : 3 * strip + BS] = new
            await trio.sleep(0.1)
            fresh(array, model)
            assert await array.read(3 * strip, strip) == bytes(model[3 * strip : 4 * strip])

    run_virtual(main)


class OwnAndNext(NextStrip):
    """Advises the host read's own blocks and the strip after them (as MSP's first stripe does)."""

    def after_read(self, read: HostRead):
        self.seen.append(read)
        return [(read.first, read.count + self.geometry.u)]


@pytest.mark.parametrize("cache", ["none", "stripe"])
def test_advice_on_arrival_never_prefetches_the_host_reads_own_blocks(cache):
    """The policy is asked before the read's member reads: what it advises of the read's own
    blocks is left out (the read fetches them at HOST priority and never waits on them), and
    the peek that fills HostRead counts no lookup."""
    g = small_geometry(ndisks=4, strip=4 * BS)
    stores = slow_stores(g, 0.01)
    strip = g.strip_size

    async def main():
        policy = OwnAndNext(g)
        kw = {} if cache == "none" else write_cache(cache, 4 * g.stripe_data_bytes)
        async with running(EngineConfig(g, stores, read_cache_size=64 * BS, **kw, instances={"prefetch": policy})) as array:
            model = _data(8, 2 * g.stripe_data_bytes)
            await array.write(0, model)
            await settle(array)
            rc, stats = array.reads.read_cache, array.reads.stats
            reads = sum(s.reads for s in stores)
            t0 = trio.current_time()
            assert await array.read(0, strip) == model[:strip]
            assert trio.current_time() - t0 == pytest.approx(0.01)  # its own member read, not queued behind a prefetch
            assert stats.prefetch_waits == 0
            assert policy.seen[-1].misses == g.u and policy.seen[-1].prefetch_hits == 0
            assert rc.metrics.lookups == g.u  # the host's own lookups: the arrival peek counted none
            await trio.sleep(0.1)
            assert sum(s.reads for s in stores) == reads + 2  # the host's strip 0, the prefetch of strip 1
            assert rc.metrics.fills == g.u and rc.metrics.prefetched == g.u  # strip 0 filled by the host only
            assert await array.read(strip, strip) == model[strip : 2 * strip]
            assert policy.seen[-1].misses == 0 and policy.seen[-1].prefetch_hits == g.u

    run_virtual(main)
