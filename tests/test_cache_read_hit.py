"""The write-back cache's read fast path (``WriteBackCache._strip_lookup``): a read inside one
data strip that the cache holds whole is served with one copy per unit, and on a mount one
it holds none of goes straight below.

It must give what the general path gives: the same bytes, the same hit counts and the same
order of units and cache contents afterwards, whether it serves the read or hands it back
(some blocks held, a shadow, a read across strips). Two arrays take the same writes and reads, one of them with
the fast path switched off, with trio's order of tasks made reproducible (the destager runs
beside them) as the simulator makes it.
"""

from __future__ import annotations

import random

import pytest
import trio

from vraid.sim.driver import deterministic_trio
from vraid.engine.build import EngineConfig

from support import SlowStore, memory_stores, run_virtual, running, small_geometry, write_cache

K = 1024


def _reads(g, rnd: random.Random, n: int) -> list[tuple[int, int]]:
    """Reads inside one strip (aligned or not), across strips and whole stripes."""
    out = []
    for _ in range(n):
        kind = rnd.randrange(4)
        if kind == 0:  # blocks of one strip
            strip = rnd.randrange(g.capacity // g.strip_size)
            b0 = rnd.randrange(g.u)
            out.append((strip * g.strip_size + b0 * g.block_size, rnd.randint(1, g.u - b0) * g.block_size))
        elif kind == 1:  # bytes inside one strip, unaligned
            at = rnd.randrange(g.capacity - 100)
            end = min(g.capacity, (at // g.strip_size + 1) * g.strip_size)
            out.append((at, rnd.randint(1, end - at)))
        elif kind == 2:  # across strips
            at = rnd.randrange(g.capacity - 3 * g.strip_size)
            out.append((at, rnd.randint(g.strip_size, 3 * g.strip_size)))
        else:  # a whole stripe
            out.append((rnd.randrange(g.stripes) * g.stripe_data_bytes, g.stripe_data_bytes))
    return out


@pytest.mark.parametrize("fill", [False, True], ids=["mount", "sim"])
@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_the_fast_path_serves_what_the_general_path_serves(org, fill):
    g = small_geometry(stripes=8, strip=16 * K)
    rnd = random.Random(7)
    writes = []
    for _ in range(60):
        at = rnd.randrange(g.capacity // g.block_size) * g.block_size + rnd.choice([0, 0, 512])
        writes.append((at, rnd.randbytes(rnd.choice([512, 4 * K, 8 * K, 12 * K]))))
    reads = _reads(g, rnd, 300)

    async def one(fast: bool):
        cfg = write_cache(org, g.stripe_data_bytes * 6, destage="hlwm:high=1.0,low=0.9")
        async with running(EngineConfig(g, memory_stores(g), **cfg)) as a:
            cache = a.cache
            cache.fill_misses = fill
            served = []
            if fast:
                inner = cache._strip_lookup
                cache._strip_lookup = lambda *args: served.append(inner(*args)) or served[-1]
            else:
                cache._strip_lookup = lambda *args: None
            got = []
            for i, (at, data) in enumerate(writes):
                await a.write(at, data[: g.capacity - at])
                if i % 10 == 9:
                    for at2, n in reads[i * 5 : i * 5 + 50]:
                        got.append(await a.read(at2, n))
            m = cache.metrics.to_dict()
            held = {key: (unit.state.tobytes(), unit.data.tobytes()) for key, unit in cache.units.items()}
            return got, (m["read_blocks"], m["read_hit_blocks"]), cache.order.keys(), list(cache.clean), held, served

    with deterministic_trio(1):
        fast = run_virtual(one, True)
    with deterministic_trio(1):
        slow = run_virtual(one, False)
    assert fast[0] == slow[0]
    assert fast[1:5] == slow[1:5]
    kinds = {None if s is None else s[0] for s in fast[5]}
    assert kinds == {None, True, False}  # every path ran: general, all held, none held


def test_a_read_of_a_block_written_during_its_destage_is_the_newest():
    """A unit with a shadow (DDIRTY) is left to the general path, which prefers the shadow."""
    g = small_geometry()

    async def main():
        stores = [SlowStore(s, 0.01) for s in memory_stores(g)]
        cfg = write_cache("pbg", 1 << 20, destage="hlwm:high=1.0,low=0.9")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            cache = a.cache
            await a.write(0, b"A" * 4096)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(cache.destage_one)
                await trio.sleep(0.005)
                await a.write(0, b"B" * 4096)
                unit = next(iter(cache.units.values()))
                assert unit.shadow_state is not None
                ext = next(iter(cache.mapping.extents(0, 4096)))
                assert cache._strip_lookup(ext, 1, cache._spans(ext.stripe, 0, 0)) is None
                assert await a.read(0, 4096) == b"B" * 4096
                assert await a.read(100, 50) == b"B" * 50

    run_virtual(main)


def test_a_read_miss_of_a_stripe_the_cache_holds_nothing_of_is_filled_in_a_simulation():
    """Without ``fill_misses`` (a mount) a miss is not kept; with it (a simulation) the
    second read of the same blocks hits, for a read inside one strip and across strips."""
    g = small_geometry()

    async def main(fill):
        cfg = write_cache("pbg", 1 << 20, destage="hlwm:high=1.0,low=0.9")
        async with running(EngineConfig(g, memory_stores(g), **cfg)) as a:
            a.cache.fill_misses = fill
            for at, n in ((5 * g.stripe_data_bytes + 4 * K, 8 * K), (2 * g.stripe_data_bytes - 4 * K, 12 * K)):
                before = a.cache.metrics.read_hit_blocks
                await a.read(at, n)
                await a.read(at, n)
                assert a.cache.metrics.read_hit_blocks - before == (n // (4 * K) if fill else 0)

    run_virtual(main, True)
    run_virtual(main, False)


def test_a_mount_reads_a_row_pbg_does_not_hold_from_below_in_a_stripe_it_holds_others_of():
    """On a mount (no fill), a read whose units are all absent goes below at once, even in a
    stripe the cache holds other rows of; the bytes are the members' and nothing is kept."""
    g = small_geometry()

    async def main():
        stores = memory_stores(g)
        cfg = write_cache("pbg", 1 << 20, destage="hlwm:high=1.0,low=0.9")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            cache = a.cache
            cache.serve_a_mount()
            await a.write(0, b"old!" * (g.stripe_data_bytes // 4))  # a whole stripe: around the cache
            assert not cache.units
            await a.write(0, b"new!" * 1024)  # row 0 of strip 0: one unit
            held = len(cache.units)
            row1 = 4 * K  # row 1 of strip 0: not held
            assert await a.read(row1, 4 * K) == b"old!" * 1024
            assert await a.read(row1 + 100, 200) == (b"old!" * 1024)[100:300]
            assert len(cache.units) == held and cache.metrics.read_hit_blocks == 0
            assert await a.read(0, 4 * K) == b"new!" * 1024 and cache.metrics.read_hit_blocks == 1

    run_virtual(main)


def test_the_one_extent_of_a_read_is_the_mappings():
    """A read or write inside one stripe's data skips the extent list on the static layout:
    the one extent it works out is the mapping's, and a range across stripes (or another
    layout) is left to the mapping."""
    g = small_geometry(stripes=8, strip=16 * K)

    async def main():
        async with running(EngineConfig(g, memory_stores(g), **write_cache("pbg", 1 << 20))) as a:
            cache = a.cache
            rnd = random.Random(3)
            bs = g.block_size
            for i in range(1000):
                first = rnd.randrange(g.capacity // bs) * bs
                end = first + rnd.randint(1, min(3 * g.u, g.capacity // bs - first // bs)) * bs
                if i % 2:  # a write's byte range need not be whole blocks
                    first += rnd.randrange(bs)
                    end = rnd.randint(first + 1, end)
                whole = list(cache.mapping.extents(first, end - first))
                got = cache._one_extent(first, end)
                if len(whole) == 1:
                    assert got == whole[0]
                else:
                    assert got is None
            cache._static = False  # a directory (placement) layout: always the mapping's list
            assert cache._one_extent(0, bs) is None

    run_virtual(main)
