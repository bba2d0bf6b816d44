"""The write-back cache: organisations, orders, DDIRTY, misses, metrics (virtual time)."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from vraid.engine.chain import CacheConfig, open_array
from vraid.backends.base import StoreWrapper
from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.policies.cache import organisation
from vraid.policies.order import destage_order

K = 1024


def _run(fn, *args):
    return trio.run(fn, *args, clock=trio.testing.MockClock(autojump_threshold=0))


class SlowStore(StoreWrapper):
    """Every request takes ``delay`` seconds of (virtual) time."""

    def __init__(self, inner, delay: float) -> None:
        super().__init__(inner)
        self.delay = delay
        self.writes: list[tuple[int, int]] = []

    async def read(self, offset, length):
        await trio.sleep(self.delay)
        return await self.inner.read(offset, length)

    async def write(self, offset, data):
        await trio.sleep(self.delay)
        self.writes.append((offset, len(data)))
        await self.inner.write(offset, data)


def _geometry(stripes: int = 8, strip: int = 16 * K) -> Geometry:
    return Geometry(level=5, ndisks=5, stripes=stripes, block_size=4 * K, strip_size=strip, data_offset=64 * K)


@pytest.mark.parametrize(
    "org, expected",
    [("pbg", [1, 0, 3, 5]), ("stripe", [0, 1])],
)
def test_fig6_lrw_lists(org, expected):
    """Seed 000 Fig. 6: writes <17, 1, 9, 0, 11, 25> on 5 disks with 4-block strips.

    The geometry follows from the text: 17 and 25 both belong to PBG5, which
    holds for PBG = stripe * u + row with 4 data strips of u = 4 blocks.
    """
    g = _geometry()
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


def _stores(g, delay=0.0):
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(g.ndisks)]
    return [SlowStore(s, delay) for s in stores] if delay else stores


def _members_image(g, stores) -> bytes:
    """The array's data read straight from the members."""
    out = bytearray()
    for s in range(g.stripes):
        for k in range(g.data_disks):
            inner = stores[g.data_disk(s, k)]
            inner = getattr(inner, "inner", inner)
            out += inner.read_sync(g.member_offset(s), g.strip_size)
    return bytes(out)


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_writes_are_absorbed_then_destaged_on_flush(org):
    g = _geometry()

    async def main():
        stores = _stores(g)
        cfg = CacheConfig(org, size=64 * 4 * K * 4, destage="hlwm:high=1.0,low=0.9")
        async with open_array(g, stores, cache=cfg) as a:
            data = bytes(range(256)) * 64  # 16 KiB
            await a.write(8 * K, data)
            assert sum(d.stats.writes for d in a.members.disks) == 0  # only in the cache
            assert await a.read(8 * K, len(data)) == data
            assert a.cache.metrics.read_hit_blocks == 4
            assert _members_image(g, stores)[8 * K : 8 * K + len(data)] != data
            await a.flush()
            assert _members_image(g, stores)[8 * K : 8 * K + len(data)] == data
            assert a.cache.metrics.destages_finished >= 1
            assert not a.cache.dirty_keys

    _run(main)


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_ddirty_write_during_destage_is_kept_apart_and_not_lost(org):
    """Seed 003 section 3.2: data written while its unit is destaged goes to DDIRTY entries."""
    g = _geometry()

    async def main():
        stores = _stores(g, delay=0.01)
        cfg = CacheConfig(org, size=1 << 20, destage="hlwm:high=1.0,low=0.9")
        async with open_array(g, stores, cache=cfg) as a:
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
            assert _members_image(g, stores)[:4096] == b"A" * 4096
            await a.flush()
            assert _members_image(g, stores)[:4096] == b"B" * 4096
            data_writes = [w for w in stores[g.data_disk(0, 0)].writes if w[0] == g.member_offset(0)]
            assert len(data_writes) == 2  # A once, B once: nothing written twice, nothing lost

    _run(main)


def test_write_cache_miss_waits_for_a_destage():
    g = _geometry()

    async def main():
        stores = _stores(g, delay=0.001)
        unit = g.stripe_data_bytes
        cfg = CacheConfig("stripe", size=2 * unit, destage="hlwm:high=1.0,low=0.99")
        async with open_array(g, stores, cache=cfg) as a:
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
            image = _members_image(g, stores)
            assert image[:4096] == b"x" * 4096 and image[unit : unit + 4096] == b"y" * 4096
            assert image[2 * unit : 2 * unit + 4096] == b"z" * 4096

    _run(main)


def test_overwrite_and_read_hit_ratios():
    g = _geometry()

    async def main():
        cfg = CacheConfig("pbg", size=1 << 20, destage="hlwm:high=1.0,low=0.9")
        async with open_array(g, _stores(g), cache=cfg) as a:
            await a.write(0, b"1" * 8192)  # 2 write hits
            await a.write(4096, b"2" * 8192)  # 1 overwrite, 1 hit
            await a.read(0, 4 * 4096)  # 3 hits, 1 miss
            m = a.cache.metrics.to_dict()
            assert (m["write_blocks"], m["write_hits"], m["overwrites"]) == (4, 3, 1)
            assert m["overwrite_ratio"] == 0.25
            assert (m["read_blocks"], m["read_hit_blocks"]) == (4, 3)
            await a.read(0, 4 * 4096)  # the miss filled a clean block: all hits now
            assert a.cache.metrics.read_hit_blocks == 7

    _run(main)


def test_scheduler_destages_in_the_background_between_the_marks():
    g = _geometry(stripes=32)

    async def main():
        cfg = CacheConfig("stripe", size=10 * g.stripe_data_bytes, destage="hlwm:high=0.5,low=0.2")
        async with open_array(g, _stores(g, delay=0.001), cache=cfg) as a:
            cache = a.cache
            for s in range(6):
                await a.write(s * g.stripe_data_bytes, b"d" * 4096)
            await trio.sleep(1.0)
            assert len(cache.dirty_keys) <= 2  # destaged down to the low mark
            assert cache.metrics.destages_finished >= 4

    _run(main)


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

    g = _geometry()

    async def main():
        cfg = CacheConfig("stripe", size=64 * 4 * K * 4, destage="hlwm:high=1.0,low=0.9")
        async with open_array(g, _stores(g), cache=cfg) as a:
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

    _run(main)
