"""The write-intent bitmap: chunk mapping, set before write, lazy clear, persistence, resync set."""

from __future__ import annotations

import trio
import trio.testing
import pytest

from vraid.ondisk.bitmap import PARAM, WriteIntentBitmap, area, check_chunk, default_chunk
from vraid.errors import VraidError
from vraid.core.geometry import RESERVED, Geometry
from vraid.engine.host.recovery import recover
from vraid.engine.build import EngineConfig

from support import memory_stores, running, small_geometry

K = 1024


def _on_disk(g: Geometry, chunk: int, stores) -> set[int]:
    return WriteIntentBitmap(g, chunk).load_sync(stores)


def test_chunk_mapping_and_area():
    g = small_geometry(ndisks=4, stripes=100, data_offset=RESERVED)
    b = WriteIntentBitmap(g, 8)
    assert b.nbits == 13  # 100 stripes, 8 per bit, the last chunk short
    assert b.chunk_of(0) == 0 and b.chunk_of(7) == 0 and b.chunk_of(8) == 1 and b.chunk_of(99) == 12
    assert b.stripes_of([12]) == [96, 97, 98, 99]
    assert b.stripes_of([1, 0]) == list(range(16))
    offset, room = area(g)
    assert offset == 4096 and offset + room == g.data_offset
    # the default: 4 MiB of data per bit (3 data strips of 16K = 48K a stripe -> 85 stripes)
    assert default_chunk(g) == (4 << 20) // (48 * K)
    # no room between superblock and data: no bitmap
    assert default_chunk(Geometry(5, 4, 10, 4 * K, 4 * K, data_offset=4 * K)) == 0
    with pytest.raises(VraidError, match="no room"):
        check_chunk(Geometry(5, 4, 10, 4 * K, 4 * K, data_offset=4 * K), 1)
    with pytest.raises(VraidError, match="not positive"):
        check_chunk(g, 0)


def test_bit_is_durable_on_every_member_before_the_write_and_cleared_lazily():
    g = small_geometry(ndisks=4, stripes=64, data_offset=RESERVED)
    stores = memory_stores(g)
    seen_before_write: list[set[int]] = []

    async def main():
        bitmap = WriteIntentBitmap(g, 4, interval=5.0)
        async with running(EngineConfig(g, stores, intent=bitmap)) as array:
            # a write to stripe 9 (chunk 2): during the member writes the bit is on disk
            def spy(store):  # write_now: what the store's write calls, and what the members call
                original = store.write_now  # when they run a request with no await

                def spying_write(offset, data):
                    if offset >= g.data_offset:
                        seen_before_write.append(_on_disk(g, 4, stores))
                    original(offset, data)

                return spying_write

            for store in stores:
                store.write_now = spy(store)
            await array.write(9 * g.stripe_data_bytes + 100, b"x" * 5000)
            for store in stores:
                del store.write_now
            assert all(2 in s for s in seen_before_write) and seen_before_write
            assert _on_disk(g, 4, stores) == {2}
            assert bitmap.stats.set_writes == 1
            # a second write to the same chunk costs no bitmap write
            await array.write(10 * g.stripe_data_bytes, b"y" * 4096)
            assert bitmap.stats.set_writes == 1 and bitmap.stats.hits == 1
            # not idle long enough yet: still set
            await trio.sleep(4.0)
            assert _on_disk(g, 4, stores) == {2}
            # after a sweep (flush, then clear): gone
            await trio.sleep(7.0)
            assert _on_disk(g, 4, stores) == set()
            assert bitmap.stats.bits_cleared == 1 and bitmap.stats.flushes >= 1

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_concurrent_writers_share_one_bitmap_write():
    g = small_geometry(ndisks=4, stripes=64, data_offset=RESERVED)
    stores = memory_stores(g)

    async def main():
        bitmap = WriteIntentBitmap(g, 1)
        async with running(EngineConfig(g, stores, intent=bitmap)) as array:
            async with trio.open_nursery() as n:
                for s in range(0, 40, 4):
                    n.start_soon(array.write, s * g.stripe_data_bytes, b"z" * 4096)
            assert _on_disk(g, 1, stores) == set(range(0, 40, 4))
            assert bitmap.stats.bits_set == 10
            assert bitmap.stats.set_writes < 10  # batched
            await array.shutdown()  # flush, then every idle bit is cleared
            assert _on_disk(g, 1, stores) == set()

    trio.run(main)


def test_bits_persist_across_a_crash_and_name_the_stripes_to_resync():
    g = small_geometry(ndisks=4, stripes=64, data_offset=RESERVED)
    stores = memory_stores(g)

    async def crashed():
        bitmap = WriteIntentBitmap(g, 4)
        async with running(EngineConfig(g, stores, intent=bitmap)) as array:
            await array.write(5 * g.stripe_data_bytes, b"a" * 4096)
            await array.write(33 * g.stripe_data_bytes, b"b" * 4096)
        # left without shutdown: the bits stay set

    trio.run(crashed)
    # break the parity of stripe 33 behind the array's back, as a torn write would
    p = g.parity_disk(33)
    stores[p].write_sync(g.member_offset(33), b"\xff" * 4096)

    async def remount():
        bitmap = WriteIntentBitmap(g, 4)
        chunks = bitmap.load_sync(stores)
        assert chunks == {1, 8}
        async with running(EngineConfig(g, stores, intent=bitmap)) as array:
            report = await recover(array, was_clean=False, bitmap_chunks=chunks)
            assert report.stripes == 8 and "2 dirty chunks" in report.message()
            assert array.raid.intent.set_chunks() == []
        assert _on_disk(g, 4, stores) == set()
        from vraid.engine.raid.scrub import scrub_array

        async with running(EngineConfig(g, stores)) as array:
            assert (await scrub_array(array.raid)).mismatches == 0

    trio.run(remount)


def test_without_a_bitmap_a_dirty_array_resyncs_everything():
    g = small_geometry(ndisks=4, stripes=12, data_offset=RESERVED)
    stores = memory_stores(g)

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            report = await recover(array, was_clean=False, bitmap_chunks=None)
        assert report.stripes == 12 and "whole array" in report.message()
        async with running(EngineConfig(g, stores)) as array:
            report = await recover(array, was_clean=True, bitmap_chunks=None)
        assert report.stripes == 0 and report.message() == ""

    trio.run(main)


def test_a_failed_write_keeps_its_bit_until_a_resync():
    g = small_geometry(ndisks=4, stripes=64, data_offset=RESERVED)
    stores = memory_stores(g)

    async def main():
        bitmap = WriteIntentBitmap(g, 2)
        async with running(EngineConfig(g, stores, intent=bitmap)) as array:
            await bitmap.begin(6)
            bitmap.end(6, ok=False)
            await array.members.flush()
            assert await bitmap.clean() == 0 and _on_disk(g, 2, stores) == {3}
            await array.raid.resync(range(6, 8))
            assert await bitmap.clean() == 1 and _on_disk(g, 2, stores) == set()

    trio.run(main)


def test_create_records_the_chunk_in_the_superblock(tmp_path):
    from vraid.ondisk.assemble import assemble
    from vraid.ondisk.create import create

    g = Geometry.for_disk_size(level=5, ndisks=3, disk_size=8 << 20, strip_size=16 * K)
    create(tmp_path / "a", g, 8 << 20)
    asm = assemble(tmp_path / "a")
    assert asm.superblocks[0].params[PARAM] == default_chunk(g)
    create(tmp_path / "b", g, 8 << 20, bitmap_chunk=0)
    assert assemble(tmp_path / "b").superblocks[1].params[PARAM] == 0


def _file_stores(g: Geometry, directory) -> list:
    from vraid.backends.file import FileStore

    return [FileStore.create(directory / f"m{i}.img", g.member_size) for i in range(g.ndisks)]


def test_a_set_write_on_member_files_is_durable_without_flushing_the_members(tmp_path, monkeypatch):
    """Member files make the bitmap page alone durable (RWF_DSYNC): setting a bit never
    fsyncs a member, which would also write out every data page it holds dirty."""
    from vraid.backends.file import FileStore

    if not FileStore.durable_writes:
        pytest.skip("no RWF_DSYNC on this system")
    g = small_geometry(ndisks=4, stripes=64, data_offset=RESERVED)
    stores = _file_stores(g, tmp_path)
    flushes: list[str] = []
    durable: list[tuple[str, int]] = []
    original_flush, original_durable = FileStore.flush, FileStore.write_durable

    async def counting_flush(self):
        flushes.append(self.name)
        await original_flush(self)

    async def counting_durable(self, offset, data):
        durable.append((self.name, offset))
        await original_durable(self, offset, data)

    monkeypatch.setattr(FileStore, "flush", counting_flush)
    monkeypatch.setattr(FileStore, "write_durable", counting_durable)

    async def main():
        bitmap = WriteIntentBitmap(g, 4)
        async with running(EngineConfig(g, stores, intent=bitmap)) as array:
            await array.write(0, b"a" * 8192)  # chunk 0
            await array.write(9 * g.stripe_data_bytes, b"b" * 4096)  # chunk 2
            assert bitmap.stats.set_writes == 2 and bitmap.stats.bits_set == 2
            assert flushes == []  # no member flushed to set a bit
            assert sorted(durable) == sorted((s.name, bitmap.offset) for s in stores for _ in range(2))
            assert _on_disk(g, 4, [FileStore(s.path) for s in stores]) == {0, 2}  # on the files themselves
            assert await array.read(9 * g.stripe_data_bytes, 4096) == b"b" * 4096

    trio.run(main)
    for s in stores:
        s.close()


def test_a_member_without_durable_writes_makes_a_set_write_write_then_flush():
    g = small_geometry(ndisks=4, stripes=64, data_offset=RESERVED)
    stores = memory_stores(g)
    flushed: list[str] = []
    for store in stores:
        original = store.flush

        async def flush(original=original, name=store.name):
            flushed.append(name)
            await original()

        store.flush = flush

    async def main():
        bitmap = WriteIntentBitmap(g, 4)
        async with running(EngineConfig(g, stores, intent=bitmap)) as array:
            await array.write(0, b"c" * 4096)
            assert sorted(flushed) == sorted(s.name for s in stores)  # the old way: every member flushed
            assert _on_disk(g, 4, stores) == {0}

    trio.run(main)
