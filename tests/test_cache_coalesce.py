"""Coalesced destages (``WriteBackCache.coalesce``, set by the mount daemon): adjacent
dirty PBGs of one stripe are destaged as one write, and nothing is lost or written twice."""

from __future__ import annotations

import random

import pytest
import trio
from vraid.engine.build import EngineConfig

from support import members_image, random_writes, memory_stores, run_virtual, running, slow_stores, small_geometry, write_cache


K = 1024


def _parity_ok(g, stores) -> bool:
    """Every stripe's parity strip is the XOR of its data strips, on the members."""
    import numpy as np

    def strip(disk: int, s: int) -> np.ndarray:
        inner = getattr(stores[disk], "inner", stores[disk])
        return np.frombuffer(inner.read_sync(g.member_offset(s), g.strip_size), dtype=np.uint8)

    for s in range(g.stripes):
        acc = np.zeros(g.strip_size, dtype=np.uint8)
        for k in range(g.data_disks):
            acc ^= strip(g.data_disk(s, k), s)
        if not np.array_equal(acc, strip(g.parity_disk(s), s)):
            return False
    return True


@pytest.mark.parametrize("coalesce", [False, True])
def test_sequential_pbg_write_destages_whole_stripes(coalesce):
    g = small_geometry()  # 4 data strips of 16 KiB: 4 rows, 64 KiB of data per stripe

    async def main():
        stores = memory_stores(g)
        cfg = write_cache("pbg", 1 << 20, destage="hlwm:high=1.0,low=0.9")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            a.cache.coalesce = coalesce
            data = bytes(random.Random(1).randbytes(2 * g.stripe_data_bytes))
            await a.write(0, data)
            await a.flush()
            assert members_image(g, stores)[: len(data)] == data
            m = a.cache.metrics
            assert m.destages_finished == 2 * g.u  # every PBG counted as destaged
            writes = sum(d.stats.writes for d in a.members.disks)
            # one request per member and stripe when coalesced, one per member and row when not
            assert writes == (2 * g.ndisks if coalesce else 2 * g.u * g.ndisks)
            assert not a.cache.dirty_keys and a.cache.in_flight == 0
            assert _parity_ok(g, stores)

    run_virtual(main)


def test_coalesced_destage_with_writes_during_it_loses_nothing():
    """Random writes, some landing in PBGs of a group being destaged (their shadows)."""
    g = small_geometry()

    async def main():
        stores = slow_stores(g, 0.001)
        cfg = write_cache("pbg", 1 << 20, destage="hlwm:high=0.3,low=0.1")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            a.cache.coalesce = True
            model = await random_writes(a, g.capacity, 7)  # destages run, and writes hit them mid-way
            assert await a.read(0, g.capacity) == bytes(model)
            await a.flush()
            assert members_image(g, stores) == bytes(model)
            assert _parity_ok(g, stores)
            assert a.cache.in_flight == 0

    run_virtual(main)


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_read_miss_without_fill_allocates_nothing_and_reads_right(org):
    """``fill_misses = False`` (the mount's setting): a read miss leaves the cache as it was."""
    g = small_geometry()

    async def main():
        stores = memory_stores(g)
        cfg = write_cache(org, 1 << 20, destage="hlwm:high=1.0,low=0.9")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            rng = random.Random(3)
            image = rng.randbytes(g.capacity)
            await a.write(0, image)
            await a.flush()
            a.cache.fill_misses = False
            for key in list(a.cache.clean):  # evict everything clean
                a.cache.units.pop(key)
                a.cache._forget_stripe(a.cache.geometry.stripes and key // (g.u if org == "pbg" else 1))
            a.cache.clean.clear()
            assert not a.cache.units and not a.cache._per_stripe
            assert await a.read(5000, 70000) == image[5000:75000]
            assert not a.cache.units  # nothing allocated by the miss
            await a.write(16 * K + 100, b"x" * 50)  # one cached unit; the read mixes hits and misses
            expect = image[: 16 * K + 100] + b"x" * 50 + image[16 * K + 150 :]
            assert await a.read(0, 3 * g.stripe_data_bytes) == expect[: 3 * g.stripe_data_bytes]
            assert len(a.cache.units) == 1

    run_virtual(main)
