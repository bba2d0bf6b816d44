"""Whole stripes written around the write-back cache (``WriteBackCache.bypass_whole_stripes``,
set by the mount daemon): a host write's whole stripes that the cache holds nothing of go to
the members as full-stripe writes; everything else is absorbed as before, and nothing a read
returns, a flush promises or a replay after a kill puts back is ever older than the last write."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
import trio

from vraid.backends.nvram import Nvram
from vraid.errors import MemberIOError
from vraid.engine.build import EngineConfig

from support import members_image, run_virtual, running, slow_stores, small_geometry, write_cache

K = 1024


def _data(tag: int, n: int) -> bytes:
    return np.random.default_rng(tag).integers(0, 256, n, dtype=np.uint8).tobytes()


def _nvram(tmp_path, g) -> Nvram:
    """An NVRAM file with room for eight stripes' blocks."""
    return Nvram.create(tmp_path / "nv.bin", slots=8 * g.stripe_data_bytes // g.block_size, block_size=g.block_size,
                        array_uuid=str(uuid.uuid4()))


def _cfg(org: str, g) -> dict:
    return write_cache(org, 4 * g.stripe_data_bytes, destage="hlwm:high=1.0,low=0.99")  # no destage by itself


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_whole_stripes_the_cache_holds_nothing_of_go_to_the_members(org):
    g = small_geometry()
    sd = g.stripe_data_bytes

    async def main():
        stores = slow_stores(g)
        async with running(EngineConfig(g, stores, **_cfg(org, g))) as a:
            a.cache.bypass_whole_stripes = True
            data = _data(1, 2 * sd + 3 * 4 * K)  # two whole stripes and three blocks of a third
            await a.write(sd, data)
            assert a.cache.bypassed_stripes == 2
            assert {u.span.stripe for u in a.cache.units.values()} == {3}  # only the partial stripe is cached
            assert members_image(g, stores)[sd : 3 * sd] == data[: 2 * sd]  # parity with it: a full-stripe write
            assert await a.read(sd, len(data)) == data
            assert a.cache.status().bypassed_stripes == 2
            await a.flush()
            assert members_image(g, stores)[sd : sd + len(data)] == data

    run_virtual(main)


def test_off_by_default_every_write_is_absorbed():
    g = small_geometry()

    async def main():
        async with running(EngineConfig(g, slow_stores(g), **_cfg("stripe", g))) as a:
            await a.write(0, _data(1, g.stripe_data_bytes))
            assert a.cache.bypassed_stripes == 0 and len(a.cache.dirty_keys) == 1
            assert "bypassed_stripes" not in a.cache.status().as_dict()  # a simulation's status stays as it was

    run_virtual(main)


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_a_stripe_with_dirty_blocks_is_absorbed_and_one_with_clean_blocks_drops_them(org):
    g = small_geometry()
    sd = g.stripe_data_bytes

    async def main():
        stores = slow_stores(g)
        async with running(EngineConfig(g, stores, **_cfg(org, g))) as a:
            cache = a.cache
            cache.bypass_whole_stripes = True
            await a.write(100, b"d" * 10)  # stripe 0: a dirty unit
            new = _data(2, sd)
            await a.write(0, new)
            assert cache.bypassed_stripes == 0 and await a.read(0, sd) == new  # merged in the cache
            await a.flush()
            await cache.drain()
            assert cache.units and not cache.dirty_keys  # clean units of stripe 0 remain
            newer = _data(3, sd)
            await a.write(0, newer)
            assert cache.bypassed_stripes == 1 and not cache.units  # the stale clean copies are gone
            assert await a.read(0, sd) == newer
            assert members_image(g, stores)[:sd] == newer

    run_virtual(main)


def test_a_stripe_whose_journal_records_await_release_is_absorbed(tmp_path):
    """A destaged stripe's NVRAM records are cleared only after the members are flushed; a
    replay after a kill would put them over a bypass's newer blocks, so no bypass until then."""
    g = small_geometry()
    sd = g.stripe_data_bytes
    nv = _nvram(tmp_path, g)

    async def main():
        async with running(EngineConfig(g, slow_stores(g), **_cfg("stripe", g), journal=nv)) as a:
            cache = a.cache
            cache.bypass_whole_stripes = True
            await a.write(0, b"x" * 4 * K)
            await cache.destage_one()
            assert cache._pending_stripes == {0: 1}
            for key in list(cache.clean):  # evicted: nothing of stripe 0 in the cache but the record
                cache.units.pop(key)
                cache._forget_stripe(0)
            cache.clean.clear()
            await a.write(0, _data(4, sd))
            assert cache.bypassed_stripes == 0 and cache.dirty_keys  # absorbed, journaled anew
            await cache._settle()
            assert cache._pending_stripes == {}
            await cache.drain()
            await cache._settle()
            await a.write(sd, _data(5, sd))
            assert cache.bypassed_stripes == 1

    run_virtual(main)
    nv.close()


def test_a_flush_with_nvram_flushes_the_members_after_a_bypass(tmp_path):
    g = small_geometry()
    sd = g.stripe_data_bytes
    nv = _nvram(tmp_path, g)

    async def main():
        stores = slow_stores(g)
        async with running(EngineConfig(g, stores, **_cfg("stripe", g), journal=nv)) as a:
            a.cache.bypass_whole_stripes = True
            await a.write(4 * K, b"y" * 4 * K)
            await a.flush()  # only the NVRAM: nothing went to the members
            assert sum(s.flushes for s in stores) == 0
            await a.write(sd, _data(6, sd))
            await a.flush()
            assert all(s.flushes == 1 for s in stores)
            await a.flush()  # nothing new around the cache
            assert all(s.flushes == 1 for s in stores)

    run_virtual(main)
    nv.close()


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_reads_and_writes_during_a_bypass_never_leave_older_bytes_in_the_cache(org):
    """A read of the stripe while its bypass is on the members must not fill the cache with
    what it read (it may be the old bytes); a write to it waits for the bypass, then wins."""
    g = small_geometry()
    sd = g.stripe_data_bytes

    async def main():
        stores = slow_stores(g)
        async with running(EngineConfig(g, stores, **_cfg(org, g))) as a:
            cache = a.cache
            cache.bypass_whole_stripes = True
            old = _data(7, sd)
            await a.raid.write(0, old)
            new = _data(8, sd)
            got = {}
            async with trio.open_nursery() as nursery:
                nursery.start_soon(a.write, 0, new)
                await trio.sleep(0.001)
                assert 0 in cache._bypassing

                async def read():
                    got["read"] = await a.read(0, sd)

                nursery.start_soon(read)
                await trio.sleep(0.001)
                nursery.start_soon(a.write, 8 * K, b"w" * 4 * K)
            bs = g.block_size  # a read racing a write: each block old or new
            assert all(got["read"][i : i + bs] in (old[i : i + bs], new[i : i + bs]) for i in range(0, sd, bs))
            expect = bytearray(new)
            expect[8 * K : 12 * K] = b"w" * 4 * K
            assert await a.read(0, sd) == bytes(expect)
            await a.flush()
            assert members_image(g, stores)[:sd] == bytes(expect)

    run_virtual(main)


def test_a_bypass_the_members_refuse_is_absorbed_instead():
    g = small_geometry()
    sd = g.stripe_data_bytes

    async def main():
        stores = slow_stores(g)
        async with running(EngineConfig(g, stores, **_cfg("stripe", g))) as a:
            cache = a.cache
            cache.bypass_whole_stripes = True
            original = cache.target.write_unit

            async def failing(*args, **kwargs):
                raise MemberIOError(1, "refused the write")

            cache.target.write_unit = cache.target.write_stripe = failing  # (the bypass uses write_stripe)
            data = _data(9, sd)
            await a.write(0, data)
            assert cache.bypassed_stripes == 0 and cache.dirty_keys and not cache._bypassing
            cache.target.write_unit = original
            del cache.target.write_stripe
            assert await a.read(0, sd) == data
            await a.flush()
            assert members_image(g, stores)[:sd] == data

    run_virtual(main)


def test_two_flushes_at_once_both_wait_for_the_members_after_a_bypass(tmp_path):
    """The second of two concurrent fsyncs must not return before the members are flushed
    just because the first one is already flushing them."""
    g = small_geometry()
    sd = g.stripe_data_bytes
    nv = _nvram(tmp_path, g)

    async def main():
        stores = slow_stores(g)
        async with running(EngineConfig(g, stores, **_cfg("stripe", g), journal=nv)) as a:
            a.cache.bypass_whole_stripes = True
            await a.write(0, _data(10, sd))
            flush = a.cache.target.flush
            done = []

            async def slow_flush():
                await trio.sleep(1.0)
                await flush()
                done.append(trio.current_time())

            a.cache.target.flush = slow_flush
            returned = []

            async def fsync():
                await a.flush()
                returned.append(trio.current_time())

            async with trio.open_nursery() as nursery:
                nursery.start_soon(fsync)
                await trio.sleep(0.1)
                nursery.start_soon(fsync)
            assert done and all(t >= done[0] for t in returned), (done, returned)

    run_virtual(main)
    nv.close()
