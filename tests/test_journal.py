"""The journal seam: one contract, two implementations (NVRAM file, in-memory fake).

The same contract tests run on :class:`vraid.engine.cache.journal.NvramJournal` and on
:class:`MemoryJournal`, a fake that keeps records in a dict and models
durability (what ``sync`` covered survives a crash, nothing else), the way a
log-disk journal would be checked. Then the cache and recovery are run over
the fake: they use the journal interface only.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import trio
import trio.testing

from vraid.backends.memory import MemoryStore
from vraid.backends.nvram import Nvram
from vraid.backends.nvram_format import NvramError
from vraid.backends.base import StoreWrapper
from vraid.engine.cache.journal import NvramJournal, as_journal
from vraid.engine.host.recovery import recover
from vraid.engine.build import EngineConfig

from support import run_virtual, running, small_geometry, write_cache

K = 1024
BS = 512
UUID = "00000000-0000-4000-8000-00000000000a"


class MemoryJournal:
    """A journal in a dict: handles are sequence numbers; ``crash()`` keeps what was synced."""

    name = "memory"

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._seq = itertools.count(1)
        self.live: dict[int, tuple[int, bytes]] = {}  # handle -> (block, data)
        self.durable: dict[int, tuple[int, bytes]] = {}
        self.syncs = 0

    @property
    def capacity(self) -> int:
        return self._capacity

    def available(self) -> int:
        return self._capacity - len(self.live)

    def put(self, block, data, replaces=None):
        if replaces is not None:
            del self.live[replaces]
        elif not self.available():
            raise RuntimeError("journal full")
        h = next(self._seq)
        self.live[h] = (block, bytes(np.asarray(data, dtype=np.uint8).tobytes() if isinstance(data, np.ndarray) else data))
        return h

    async def sync(self):
        await trio.sleep(0)
        self.durable = dict(self.live)
        self.syncs += 1

    def clear(self, handle):
        del self.live[handle]

    def replay(self):
        newest: dict[int, tuple[int, bytes]] = {}
        for h, (block, data) in sorted(self.live.items()):
            newest[block] = (h, data)
        return [(b, d) for b, (h, d) in sorted(newest.items(), key=lambda kv: kv[1][0])]

    async def reset(self):
        self.live.clear()
        self.durable.clear()

    def crash(self) -> "MemoryJournal":
        """The journal a new mount finds after a power loss."""
        j = MemoryJournal(self._capacity)
        j._seq = self._seq
        j.live = dict(self.durable)
        j.durable = dict(self.durable)
        return j


@pytest.fixture(params=["nvram", "memory"])
def make(request, tmp_path: Path):
    """make(capacity) -> (journal, crash) where crash() gives the journal a new mount finds
    after the process dies once everything was synced."""
    opened: list[Nvram] = []

    def build(capacity: int):
        if request.param == "memory":
            j = MemoryJournal(capacity)
            return j, j.crash
        path = tmp_path / f"nv{len(opened)}"
        nv = Nvram.create(path, slots=capacity, block_size=BS, array_uuid=UUID)
        opened.append(nv)

        def crash():
            nv._detach()  # kill -9: no sync, the mapping dropped
            again = Nvram.open(path, array_uuid=UUID, block_size=BS)
            opened.append(again)
            return NvramJournal(again)

        return NvramJournal(nv), crash

    yield build
    for nv in opened:
        nv.close()


def _block(tag: int) -> bytes:
    return bytes([tag]) * BS


def test_contract_put_replay_newest_last(make):
    j, _ = make(8)
    assert j.capacity == 8 and j.available() == 8
    a = j.put(5, _block(1))
    j.put(6, _block(2))
    assert j.available() == 6
    c = j.put(5, _block(3), a)  # rewrite of block 5: supersedes its record
    assert j.available() == 6
    assert j.replay() == [(6, _block(2)), (5, _block(3))]
    j.put(5, _block(4))  # a second record of block 5 (a unit's shadow while it is destaged)
    assert j.available() == 5
    assert j.replay() == [(6, _block(2)), (5, _block(4))]
    j.clear(c)
    assert j.replay() == [(6, _block(2)), (5, _block(4))]
    assert j.available() == 6


def test_contract_clear_and_reset(make):
    j, _ = make(4)
    hs = [j.put(b, _block(b)) for b in (1, 2, 3, 4)]
    assert j.available() == 0
    j.clear(hs[1])
    assert [b for b, _ in j.replay()] == [1, 3, 4]
    assert j.available() == 1
    run_virtual(j.reset)
    assert j.replay() == [] and j.available() == 4
    h = j.put(9, _block(9))  # usable again after a reset
    assert j.replay() == [(9, _block(9))]
    j.clear(h)


def test_contract_synced_records_survive_a_crash(make):
    j, crash = make(6)
    j.put(10, _block(1))
    h = j.put(11, _block(2))
    j.put(12, _block(3))
    j.clear(h)
    j.put(10, _block(4))
    run_virtual(j.sync)
    again = crash()
    assert again.replay() == [(12, _block(3)), (10, _block(4))]
    run_virtual(again.reset)
    assert again.replay() == []


def test_contract_numpy_rows_are_accepted(make):
    j, _ = make(2)
    row = np.full(BS, 7, dtype=np.uint8)
    j.put(3, row)
    assert j.replay() == [(3, bytes(row))]


def test_as_journal():
    assert as_journal() is None
    j = MemoryJournal(1)
    assert as_journal(j) is j
    with pytest.raises(ValueError):
        as_journal(j, nvram=object())


def test_cache_and_recovery_run_over_any_journal():
    """A cache with the fake journal: fsync syncs the journal (no destage); after a
    crash, recovery replays the journal through the members and empties it."""
    g = small_geometry(ndisks=4, block=BS, strip=4 * BS, data_offset=4 * K)
    stores = [MemoryStore(g.member_size) for _ in range(g.ndisks)]
    cfg = write_cache("stripe", 4 * g.stripe_data_bytes, destage="hlwm:high=0.99,low=0.98")
    journal = MemoryJournal(64)
    data = np.random.default_rng(3).integers(0, 256, 5 * BS, dtype=np.uint8).tobytes()

    async def first_mount():
        async with running(EngineConfig(g, stores, **cfg, journal=journal)) as array:
            assert array.cache.journal is journal
            array.cache.pause()
            await array.write(3 * BS + 100, data)  # unaligned: 6 blocks dirty
            await array.flush()
            assert journal.syncs == 1
            assert array.cache.metrics.destages_started == 0
            assert len(journal.durable) == 6
            assert await array.raid.read(3 * BS + 100, len(data)) != data
            # the process dies here: no shutdown, nothing destaged

    run_virtual(first_mount)
    found = journal.crash()
    assert [b for b, _ in found.replay()] == [3, 4, 5, 6, 7, 8]

    async def second_mount():
        async with running(EngineConfig(g, stores, **cfg, journal=found)) as array:
            report = await recover(array, was_clean=True, bitmap_chunks=None, journal=found)
            assert report.replayed_blocks == 6
            assert found.replay() == []
            assert await array.read(3 * BS + 100, len(data)) == data
            assert await array.raid.read(3 * BS + 100, len(data)) == data

    run_virtual(second_mount)


class FlushLog(StoreWrapper):
    """Records each member flush in a log shared with the journal."""

    def __init__(self, inner, log: list[str]) -> None:
        super().__init__(inner)
        self.log = log

    async def flush(self):
        self.log.append("flush")
        await self.inner.flush()


class LoggingJournal(MemoryJournal):
    def __init__(self, capacity: int, log: list[str]) -> None:
        super().__init__(capacity)
        self.log = log

    def clear(self, handle):
        self.log.append("clear")
        super().clear(handle)


def test_destaged_records_are_cleared_only_after_the_members_are_flushed():
    """Until the members are flushed a power loss could lose a destaged block: its record stays."""
    g = small_geometry(ndisks=4, block=BS, strip=4 * BS, data_offset=4 * K)
    events: list[str] = []
    stores = [FlushLog(MemoryStore(g.member_size), events) for _ in range(g.ndisks)]
    cfg = write_cache("pbg", 8 * g.data_disks * BS, destage="hlwm:high=0.99,low=0.98")
    journal = LoggingJournal(8, events)  # a settle after every destage (capacity // 8 == 1)

    async def main():
        async with running(EngineConfig(g, stores, **cfg, journal=journal)) as array:
            cache = array.cache
            cache.pause()
            await array.write(0, b"\x01" * BS)
            await array.write(BS * g.u, b"\x02" * BS)  # another strip, same PBG row
            assert len(journal.live) == 2 and events == []
            assert await cache.destage_one()
            assert journal.live == {}
            assert events.index("clear") > events.index("flush")
            assert events.count("clear") == 2
            await array.write(2 * BS * g.u, b"\x03" * BS)
            await array.shutdown()
            assert journal.replay() == []

    run_virtual(main)


# -- short syncs on the trio thread ------------------------------------------------------------
def test_nvram_counts_the_record_bytes_a_sync_has_to_write_out(tmp_path: Path, monkeypatch):
    import os
    import uuid

    nv = Nvram.create(tmp_path / "nv", slots=8, block_size=512, array_uuid=str(uuid.uuid4()))
    try:
        assert nv.unsynced_bytes == 0
        nv.put(0, 10, bytes(512))
        nv.put(0, 10, bytes(512))  # a rewrite is another record to write out
        nv.put_many([(1, 11, bytes(512)), (2, 12, bytes(512))])
        assert nv.unsynced_bytes == 4 * 512
        real = os.fdatasync

        def failing(fd):
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(os, "fdatasync", failing)
        with pytest.raises(NvramError):
            nv.sync()
        assert nv.unsynced_bytes == 4 * 512  # nothing became durable
        monkeypatch.setattr(os, "fdatasync", real)
        nv.sync()
        assert nv.unsynced_bytes == 0
        with nv._sync_lock:  # a sync running in another thread
            assert nv.unsynced_bytes is None
    finally:
        nv.close()


def test_a_short_nvram_sync_runs_on_the_trio_thread_and_a_long_one_in_a_worker(tmp_path: Path, monkeypatch):
    import threading
    import uuid

    from vraid.engine.members import inline_sync

    nv = Nvram.create(tmp_path / "nv", slots=8, block_size=512, array_uuid=str(uuid.uuid4()))
    j = NvramJournal(nv)
    threads: list[bool] = []
    real, main = nv.sync, threading.get_ident()

    def recording():
        threads.append(threading.get_ident() == main)
        real()

    nv.sync = recording

    async def go():
        j.put(1, bytes(512))
        await j.sync()
        monkeypatch.setattr(inline_sync, "INLINE_SYNC_BYTES", 511)
        j.put(2, bytes(512))
        await j.sync()

    try:
        trio.run(go)
        assert threads == [True, False]
        assert nv.unsynced_bytes == 0
        assert sorted(block for block, _ in j.replay()) == [1, 2]
    finally:
        nv.close()
