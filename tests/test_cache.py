"""The write-back cache: organisations, orders, DDIRTY, misses, metrics (virtual time)."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from vraid.engine.build import EngineConfig
from vraid.policies.cache import organisation
from vraid.policies.order import destage_order

from support import members_image, memory_stores, run_virtual, running, slow_stores, small_geometry, write_cache

K = 1024


@pytest.mark.parametrize(
    "org, expected",
    [("pbg", [1, 0, 3, 5]), ("stripe", [0, 1])],
)
def test_fig6_lrw_lists(org, expected):
    """Seed 000 Fig. 6: writes <17, 1, 9, 0, 11, 25> on 5 disks with 4-block strips.

    The geometry follows from the text: 17 and 25 both belong to PBG5, which
    holds for PBG = stripe * u + row with 4 data strips of u = 4 blocks.
    """
    g = small_geometry()
    o, lrw = organisation(org, g), destage_order("lrw")
    for b in (17, 1, 9, 0, 11, 25):
        a = g.locate(b)
        key = next(o.units(a.stripe, a.row, a.row)).key
        (lrw.written if key in lrw.keys() else lrw.dirtied)(key)
    assert lrw.keys() == expected


def test_orders_fifo_lru_cscan():
    fifo, lru, cscan = destage_order("fifo"), destage_order("lru"), destage_order("cscan")
    for order in (fifo, lru, cscan):
        for key in (5, 1, 9):
            order.dirtied(key)
        order.written(5)
        order.read(1)
    assert fifo.keys() == [5, 1, 9]
    assert lru.keys() == [9, 5, 1]
    assert cscan.next() == 1
    cscan.removed(1)
    cscan.dirtied(0)
    assert cscan.keys() == [5, 9, 0]  # ascending from the last destaged (1), then wrap


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_writes_are_absorbed_then_destaged_on_flush(org):
    g = small_geometry()

    async def main():
        stores = memory_stores(g)
        cfg = write_cache(org, 64 * 4 * K * 4, destage="hlwm:high=1.0,low=0.9")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            data = bytes(range(256)) * 64  # 16 KiB
            await a.write(8 * K, data)
            assert sum(d.stats.writes for d in a.members.disks) == 0  # only in the cache
            assert await a.read(8 * K, len(data)) == data
            assert a.cache.metrics.read_hit_blocks == 4
            assert members_image(g, stores)[8 * K : 8 * K + len(data)] != data
            await a.flush()
            assert members_image(g, stores)[8 * K : 8 * K + len(data)] == data
            assert a.cache.metrics.destages_finished >= 1
            assert not a.cache.dirty_keys

    run_virtual(main)


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_ddirty_write_during_destage_is_kept_apart_and_not_lost(org):
    """Seed 003 section 3.2: data written while its unit is destaged goes to DDIRTY entries."""
    g = small_geometry()

    async def main():
        stores = slow_stores(g, 0.01)
        cfg = write_cache(org, 1 << 20, destage="hlwm:high=1.0,low=0.9")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            cache = a.cache
            await a.write(0, b"A" * 4096)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(cache.destage_one)
                await trio.sleep(0.005)  # the destage is now reading/writing the members
                unit = next(iter(cache.units.values()))
                assert unit.destaging
                await a.write(0, b"B" * 4096)  # same block: DDIRTY
                assert unit.shadow_state is not None and unit.shadow_state[0, 0] == 2
                assert await a.read(0, 4096) == b"B" * 4096  # the newest data is served
            # the destage wrote A; B is now the unit's dirty data
            assert unit.shadow is None and unit.state[0, 0] == 2
            assert members_image(g, stores)[:4096] == b"A" * 4096
            await a.flush()
            assert members_image(g, stores)[:4096] == b"B" * 4096
            data_writes = [w for w in stores[g.data_disk(0, 0)].writes if w[0] == g.member_offset(0)]
            assert len(data_writes) == 2  # A once, B once: nothing written twice, nothing lost

    run_virtual(main)


def test_write_cache_miss_waits_for_a_destage():
    g = small_geometry()

    async def main():
        stores = slow_stores(g, 0.001)
        unit = g.stripe_data_bytes
        cfg = write_cache("stripe", 2 * unit, destage="hlwm:high=1.0,low=0.99")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            cache = a.cache
            assert cache.capacity == 2
            await a.write(0, b"x" * 4096)
            await a.write(unit, b"y" * 4096)
            assert cache.metrics.write_misses == 0
            t0 = trio.current_time()
            await a.write(2 * unit, b"z" * 4096)  # no free unit, none clean: must wait
            assert cache.metrics.write_misses == 1
            assert trio.current_time() > t0
            assert cache.metrics.destages_finished >= 1
            await a.flush()
            image = members_image(g, stores)
            assert image[:4096] == b"x" * 4096 and image[unit : unit + 4096] == b"y" * 4096
            assert image[2 * unit : 2 * unit + 4096] == b"z" * 4096

    run_virtual(main)


def test_overwrite_and_read_hit_ratios():
    g = small_geometry()

    async def main():
        cfg = write_cache("pbg", 1 << 20, destage="hlwm:high=1.0,low=0.9")
        async with running(EngineConfig(g, memory_stores(g), **cfg)) as a:
            await a.write(0, b"1" * 8192)  # 2 write hits
            await a.write(4096, b"2" * 8192)  # 1 overwrite, 1 hit
            await a.read(0, 4 * 4096)  # 3 hits, 1 miss
            m = a.cache.metrics.to_dict()
            assert (m["write_blocks"], m["write_hits"], m["overwrites"]) == (4, 3, 1)
            assert m["overwrite_ratio"] == 0.25
            assert (m["read_blocks"], m["read_hit_blocks"]) == (4, 3)
            await a.read(0, 4 * 4096)  # the miss filled a clean block: all hits now
            assert a.cache.metrics.read_hit_blocks == 7

    run_virtual(main)


def test_scheduler_destages_in_the_background_between_the_marks():
    g = small_geometry(stripes=32)

    async def main():
        cfg = write_cache("stripe", 10 * g.stripe_data_bytes, destage="hlwm:high=0.5,low=0.2")
        async with running(EngineConfig(g, slow_stores(g, 0.001), **cfg)) as a:
            cache = a.cache
            for s in range(6):
                await a.write(s * g.stripe_data_bytes, b"d" * 4096)
            await trio.sleep(1.0)
            assert len(cache.dirty_keys) <= 2  # destaged down to the low mark
            assert cache.metrics.destages_finished >= 4

    run_virtual(main)


class _Counting:
    """A destage scheduler that counts its calls (wrapping ``inner``)."""

    def __init__(self, inner, on_counts: bool) -> None:
        self.inner, self.calls = inner, 0
        self.decides_on_counts = on_counts
        self.name = inner.name

    def decide(self, state):
        self.calls += 1
        return self.inner.decide(state)

    def describe(self):
        return self.inner.describe()


@pytest.mark.parametrize("on_counts", [True, False])
def test_quiet_overwrites_skip_the_decision_only_for_a_count_based_scheduler(on_counts):
    """With ``quiet_overwrites`` (a mount), an overwrite of dirty blocks does not call a
    scheduler that decides on counts alone; one that does not say so is called after every
    write, as in the simulator."""
    from vraid.policies.destage import load_scheduler

    g = small_geometry()

    async def main():
        cfg = write_cache("stripe", 64 * 4 * K * 4, destage="hlwm:high=1.0,low=0.9")
        async with running(EngineConfig(g, memory_stores(g), **cfg)) as a:
            counting = _Counting(load_scheduler("hlwm:high=1.0,low=0.9"), on_counts)
            a.cache.set_scheduler(counting)
            a.cache.quiet_overwrites = True
            await trio.testing.wait_all_tasks_blocked()
            await a.write(0, b"a" * 4 * K)  # a new dirty unit: decided
            await trio.testing.wait_all_tasks_blocked()
            after_first = counting.calls
            for _ in range(5):  # overwrites of the same dirty block
                await a.write(0, b"b" * 4 * K)
                await trio.testing.wait_all_tasks_blocked()
            assert after_first >= 1
            assert counting.calls - after_first == (0 if on_counts else 5)
            before = counting.calls
            await a.write(g.stripe_data_bytes, b"c" * 4 * K)  # another unit: decided again
            await trio.testing.wait_all_tasks_blocked()
            assert counting.calls > before and len(a.cache.dirty_keys) == 2
            assert await a.read(0, 4 * K) == b"b" * 4 * K

    run_virtual(main)
