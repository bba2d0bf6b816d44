"""Member flushes of file stores: only members written since their last flush are synced,
a flush covers every write that returned before it, and failed members are left alone."""

from __future__ import annotations

import os
import threading

import pytest
import trio

from vraid.backends.file import FileStore
from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig

from support import running

BS = 4096


@pytest.fixture
def synced(monkeypatch):
    """Every fdatasync of the test, as the list of descriptors it was called on."""
    calls: list[int] = []
    real = os.fdatasync

    def recording(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", recording)
    return calls


def test_a_flush_syncs_once_and_a_second_flush_with_nothing_new_syncs_nothing(tmp_path, synced):
    store = FileStore.create(tmp_path / "m0", 16 * BS)

    async def main():
        await store.flush()  # a fresh store counts as written
        assert synced == [store._fd] and not store.unsynced
        await store.flush()
        assert synced == [store._fd]
        await store.write(BS, b"x" * BS)
        assert store.unsynced
        await store.flush()
        assert synced == [store._fd, store._fd] and not store.unsynced

    try:
        trio.run(main)
        assert store.read_sync(BS, BS) == b"x" * BS
    finally:
        store.close()


def test_a_write_during_a_flush_is_left_for_the_next_flush(tmp_path, monkeypatch):
    store = FileStore.create(tmp_path / "m0", 16 * BS)
    inside, release = threading.Event(), threading.Event()
    calls: list[int] = []
    real = os.fdatasync

    def held(fd: int) -> None:  # the first sync waits until the test has written again
        calls.append(fd)
        if len(calls) == 1:
            inside.set()
            release.wait(10)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", held)

    async def main():
        await store.write(0, b"a" * BS)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(store.flush)
            await trio.to_thread.run_sync(inside.wait, 10)  # the flush is in its fdatasync
            await store.write(BS, b"b" * BS)  # lands while the sync runs: not covered by it
            release.set()
        assert store.unsynced  # the first flush did not claim the write it may have missed
        await store.flush()
        assert len(calls) == 2 and not store.unsynced

    try:
        trio.run(main)
    finally:
        release.set()
        store.close()


def _array_stores(tmp_path, n: int) -> tuple[Geometry, list[FileStore]]:
    g = Geometry(5, n, 8, BS, 4 * BS, data_offset=4 * BS)
    return g, [FileStore.create(tmp_path / f"m{i}", g.member_size) for i in range(n)]


def test_an_array_flush_syncs_only_the_members_a_write_touched(tmp_path, synced):
    g, stores = _array_stores(tmp_path, 4)
    fds = {s._fd: i for i, s in enumerate(stores)}

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            await array.flush()  # every member: fresh stores count as written
            assert sorted(fds[fd] for fd in synced) == [0, 1, 2, 3]
            synced.clear()
            await array.flush()  # nothing written since: no member synced
            assert synced == []
            await array.write(0, b"w" * BS)  # one data block of stripe 0: its member and the parity's
            assert synced == []  # writing syncs nothing by itself
            await array.flush()
            written = {g.data_disk(0, 0), g.parity_disk(0)}
            assert len(written) == 2
            assert sorted(fds[fd] for fd in synced) == sorted(written)  # each once, no other member

    try:
        trio.run(main)
    finally:
        for s in stores:
            s.close()


def test_a_failed_member_is_not_flushed(tmp_path, synced):
    g, stores = _array_stores(tmp_path, 4)
    fds = {s._fd: i for i, s in enumerate(stores)}

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            await array.flush()
            synced.clear()
            assert array.raid.fail_member(1, "test: pulled")
            await array.write(0, bytes(range(256)) * (g.stripe_data_bytes // 256))  # a whole stripe
            await array.flush()
            assert sorted(fds[fd] for fd in synced) == [0, 2, 3]
            assert await array.read(0, g.stripe_data_bytes) == bytes(range(256)) * (g.stripe_data_bytes // 256)

    try:
        trio.run(main)
    finally:
        for s in stores:
            s.close()


def test_a_flush_that_loses_more_members_than_raid5_survives_fails():
    """The power goes during a flush: every member fails. Retried without the failed
    members, the flush used to flush nothing and return: an fsync reported durable what
    only the lost members held (the placement power-cut machine found it). Now: EIO."""
    from vraid.backends.faulty import FaultyStore, PowerCut
    from vraid.backends.memory import MemoryStore
    from vraid.errors import MemberIOError

    g = Geometry(5, 4, 8, BS, BS)
    power = PowerCut(1 << 60)
    stores = [FaultyStore(MemoryStore(g.member_size), block_size=BS, power=power) for _ in range(4)]

    async def main() -> None:
        async with running(EngineConfig(g, stores)) as array:
            await array.write(0, bytes(range(256)) * 64)
            power.dead = True  # the power is gone: every member's flush fails
            with pytest.raises(MemberIOError):
                await array.flush()
            assert not array.redundancy.survives(len(array.health.missing_roles))

    trio.run(main)


# -- short flushes on the calling thread (Members._flush_inline) ------------------------------
@pytest.fixture
def sync_threads(monkeypatch):
    """Every fdatasync of the test as (descriptor, whether it ran on the test's own thread)."""
    calls: list[tuple[int, bool]] = []
    real, main = os.fdatasync, threading.get_ident()

    def recording(fd: int) -> None:
        calls.append((fd, threading.get_ident() == main))
        real(fd)

    monkeypatch.setattr(os, "fdatasync", recording)
    return calls


def test_unsynced_bytes_counts_what_a_flush_would_write_out(tmp_path):
    store = FileStore.create(tmp_path / "m0", 16 * BS)

    async def main():
        assert store.unsynced_bytes is None  # before the first flush: unknown
        await store.write(0, b"a" * BS)
        assert store.unsynced_bytes is None
        await store.flush()
        assert store.unsynced_bytes == 0
        await store.write(BS, b"b" * 100)
        await store.write(2 * BS, b"c" * BS)
        assert store.unsynced_bytes == BS + 100
        store.flush_inline()
        assert store.unsynced_bytes == 0 and not store.unsynced

    try:
        trio.run(main)
    finally:
        store.close()


def test_a_short_flush_syncs_on_the_trio_thread_and_a_long_or_first_one_in_threads(tmp_path, sync_threads, monkeypatch):
    from vraid.engine.members import inline_sync

    g, stores = _array_stores(tmp_path, 4)
    fds = {s._fd: i for i, s in enumerate(stores)}

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            await array.flush()  # the first flush: what an earlier process left is unknown
            assert sorted(fds[fd] for fd, _ in sync_threads) == [0, 1, 2, 3]
            assert not any(inline for _, inline in sync_threads)
            sync_threads.clear()
            await array.write(0, b"w" * BS)  # two members, 2 blocks to write out
            await array.flush()
            written = {g.data_disk(0, 0), g.parity_disk(0)}
            assert sorted(fds[fd] for fd, _ in sync_threads) == sorted(written)
            assert all(inline for _, inline in sync_threads)
            sync_threads.clear()
            monkeypatch.setattr(inline_sync, "INLINE_SYNC_BYTES", 2 * BS - 1)  # now one block short
            await array.write(0, b"v" * BS)
            await array.flush()
            assert sorted(fds[fd] for fd, _ in sync_threads) == sorted(written)
            assert not any(inline for _, inline in sync_threads)
            assert not any(s.unsynced for s in stores)

    try:
        trio.run(main)
        assert stores[g.data_disk(0, 0)].read_sync(g.data_offset, BS) == b"v" * BS
    finally:
        for s in stores:
            s.close()


def test_a_member_whose_short_flush_fails_is_named_and_the_others_are_still_synced(tmp_path, monkeypatch):
    from vraid.errors import MemberIOError

    g, stores = _array_stores(tmp_path, 4)
    real, calls = os.fdatasync, []
    bad = g.data_disk(0, 0)

    def failing(fd: int) -> None:
        calls.append(fd)
        if fd == stores[bad]._fd:
            raise OSError(5, "Input/output error")
        real(fd)

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            await array.flush()
            monkeypatch.setattr(os, "fdatasync", failing)
            await array.write(0, b"w" * BS)
            with pytest.raises(MemberIOError) as info:
                await array.members.flush()
            assert info.value.disks == [bad]
            assert array.members.disks[bad].stats.errors == 1
            parity = stores[g.parity_disk(0)]
            assert parity._fd in calls and not parity.unsynced  # synced despite the failure
            assert stores[bad].unsynced  # not claimed durable
            await array.flush()  # the array fails the member and goes on degraded
            assert array.health.degraded and bad in array.members.excluded

    try:
        trio.run(main)
    finally:
        for s in stores:
            s.close()
