"""Member flushes of file stores: only members written since their last flush are synced,
a flush covers every write that returned before it, and failed members are left alone."""

from __future__ import annotations

import os
import threading

import pytest
import trio

from vraid.backends.file import FileStore
from vraid.core.geometry import Geometry
from vraid.engine.array import open_array

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
        async with open_array(g, stores) as array:
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
        async with open_array(g, stores) as array:
            await array.flush()
            synced.clear()
            assert array.fail_member(1, "test: pulled")
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
        async with open_array(g, stores) as array:
            await array.write(0, bytes(range(256)) * 64)
            power.dead = True  # the power is gone: every member's flush fails
            with pytest.raises(MemberIOError):
                await array.flush()
            assert not array.redundancy.survives(len(array.health.missing_roles))

    trio.run(main)
