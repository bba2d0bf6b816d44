"""An fsync over a log of several stores whose flush fails on one of them (issue 33).

``mcd:N`` and ``per-disk`` keep each segment on one store only. The log's flush flushed
the stores one after another and gave up only when *every* store had failed: when one
store's flush returned and the next one's failed (a power cut between the two, or a log
disk dying), the fsync returned, though the segments written to the failed store since
its last flush were never durable. After the cut, recovery replayed up to the first of
them and stopped (a torn tail): fsynced blocks came back old. The log model machine found
it as "block N: not its fsynced value nor a later one" on volatile stores, and hypothesis
called it flaky because the stores' syncs ran in worker threads
(:mod:`vraid.testing.inline_files` made it replay). Now the flush fails (``LogFailed``,
EIO for the host) when a store fails holding segments not yet known durable, unless a
mirror copy holds them, and the log first rescues what the other stores hold.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from vraid.backends.memory import MemoryStore
from vraid.backends.volatile import VolatileStore
from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.engine.log.medium import LogFailed
from vraid.testing.log_machine import LogCrashMachine
from vraid.testing.session import Session

K = 1024
G = Geometry.for_disk_size(level=5, ndisks=4, disk_size=(1 << 20) + 48 * 16 * K, strip_size=16 * K)
LOG = 640 * K + 4 * K  # 10 segments per store


class _FlushFails(MemoryStore):
    """A log store whose flushes fail once ``dead`` is set (its writes still land)."""

    dead = False

    async def flush(self):
        if self.dead:
            raise OSError(5, f"{self.name}: flush failed")
        await super().flush()


def _data(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _session(kind: str, logs) -> Session:
    members = [MemoryStore(G.member_size, name=f"disk{i}") for i in range(G.ndisks)]
    return Session(EngineConfig(G, stores=members, log=kind, log_size=LOG, log_stores=logs, log_ram=256 * K,
                                bitmap_chunk=4, log_fresh=True, log_timer=1e9,
                                log_destage="idle:idle=1000s,high=1.0"))


def test_mcd_fsync_fails_when_a_store_holding_its_segments_fails_at_the_flush():
    logs = [_FlushFails(LOG, name="log0"), _FlushFails(LOG, name="log1")]
    s = _session("mcd:2", logs)
    d = _data(1, 100 * K)  # 25 blocks: segment 0 on log0, segment 1 on log1
    s.write(0, d)
    logs[1].dead = True
    with pytest.raises(LogFailed, match="10 blocks written since the last fsync were lost"):
        s.flush()  # before the fix: returned, with segment 1 never made durable
    st = s.status()["log"]
    assert st["failed"] == ["log1"] and st["lost_blocks"] == 10 and "lost" in st["message"]
    e = _data(2, 40 * K)
    s.write(200 * K, e)
    s.flush()  # the log has failed: writes go through to the data disks, and fsync says so once
    assert s.read(0, 15 * 4 * K) == d[: 60 * K]  # segment 0 (log0) was rescued to the data disks
    assert s.read(200 * K, len(e)) == e
    s.close()


def test_mcd_store_failing_with_nothing_unflushed_fails_no_fsync():
    logs = [_FlushFails(LOG, name="log0"), _FlushFails(LOG, name="log1")]
    s = _session("mcd:2", logs)
    d = _data(3, 100 * K)
    s.write(0, d)
    s.flush()
    logs[1].dead = True
    e = _data(4, 20 * K)  # 5 blocks: one segment, on log0
    s.write(200 * K, e)
    s.flush()  # log1 fails at its flush, but nothing this fsync covers was on it
    assert s.read(200 * K, len(e)) == e
    assert s.status()["log"]["failed"] == ["log1"]
    # what only log1 held (fsynced before it failed) is lost, counted and said, as with scd
    assert s.read(0, 60 * K) == d[: 60 * K]
    s.read(60 * K, 40 * K)
    st = s.status()["log"]
    assert st["lost_blocks"] == 10 and "lost" in st["message"]
    s.close()


def test_mirrored_fsync_stands_when_one_copy_fails_at_the_flush():
    logs = [_FlushFails(LOG, name="log0"), _FlushFails(LOG, name="log1")]
    s = _session("mirrored", logs)
    d = _data(5, 100 * K)
    s.write(0, d)
    logs[0].dead = True
    s.flush()  # log1's copy of every segment is durable
    st = s.status()["log"]
    assert st["failed"] == ["log0"] and st["lost_blocks"] == 0
    assert s.read(0, len(d)) == d
    s.close()


class _CutAtFlush(VolatileStore):
    """A log store that keeps only what was flushed (``drop`` is the power cut) and whose
    flushes fail once ``dead`` is set (the power failed at it)."""

    dead = False

    async def flush(self):
        if self.dead:
            raise OSError(5, f"{self.name}: power lost at a flush")
        await super().flush()


def test_mcd_checkpoint_never_moves_the_tail_past_a_copy_not_yet_flushed_on_another_store():
    """A block fsynced in segment 0 (log0), then rewritten once per segment until the log is
    full: each new copy supersedes the one before, so the tail may pass them all. The
    checkpoint before segment 20 wrote log0's superblock (tail 19) and flushed it before log1's
    flush, where the newest copy (segment 19) was still volatile; the power failed at that flush. Recovery
    started at 19, found nothing and the block read zeros (it was fsynced as v1). Now every
    store's segments are flushed before any superblock moves."""
    members = [MemoryStore(G.member_size, name=f"disk{i}") for i in range(G.ndisks)]
    inner = [MemoryStore(LOG, name=f"log{i}") for i in range(2)]
    logs = [_CutAtFlush(store) for store in inner]

    def config(stores, **kw):
        return EngineConfig(G, stores=members, log="mcd:2", log_size=LOG, log_stores=stores, log_ram=256 * K,
                            bitmap_chunk=4, log_timer=1e9, log_destage="idle:idle=1000s,high=1.0", **kw)

    s = Session(config(logs, log_fresh=True))
    v1 = _data(20, 4 * K)
    s.write(0, v1)
    s.flush()  # segment 0, on log0
    for i in range(20):  # segments 1..20, each with the block's newest copy, never fsynced
        if i == 19:
            logs[1].dead = True  # the log (20 slots) is full: segment 20's level 1 checkpoints first
        s.write(0, _data(100 + i, 4 * K))
        s.call(s.array.log.level1, "test")
    assert s.status()["log"]["durable_tail"] == 0, "no superblock may say tail 19 while segment 19 is volatile"
    s.close()
    for store in logs:
        store.drop()  # the power cut: log1's unflushed segments are gone
    s = Session(config(inner, was_clean=False))
    assert s.read(0, 4 * K) == v1  # the fsynced copy in segment 0 is replayed
    s.close()


class _Draws:
    """Hypothesis's ``data`` for a rule driven by hand: the given values, in order."""

    def __init__(self, *values):
        self.values = list(values)

    def draw(self, strategy, label=None):
        return self.values.pop(0)


@pytest.mark.parametrize("kind", ["mcd:2", "per-disk"])
def test_a_power_cut_between_two_log_stores_flushes_loses_nothing_fsynced(tmp_path, kind, caplog):
    """The model machine's reproduction: 18 blocks written (two segments, one per store),
    then an fsync, with the power cut after k requests (flushes counted), for every k up to
    the end of the fsync; the mount after each cut must find every fsynced block. Before
    the fix the cut at the second store's flush (k = 4 for mcd:2, 4 and 5 for per-disk)
    failed "block N: not its fsynced value nor a later one"."""
    caplog.set_level(logging.ERROR, logger="vraid.engine.log.medium")
    for k in range(12):
        m = LogCrashMachine(kind, tmp_path, volatile=True)
        try:
            m.crash(_Draws(k, 0, 18 * 4 * K, 1, None), "fsync")  # cut after k; write; fsync; no second cut
        finally:
            m.portal.close()
    assert any("power lost at a flush" in r.getMessage() for r in caplog.records), \
        "some cut should fall on a log store's flush"
