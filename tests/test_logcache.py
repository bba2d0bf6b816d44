"""The log cache (seed 002, vraid.engine.log.cache) in virtual time: durability of fsync,
reads from the newest copy, the two destage levels, the chain below a write-back cache,
cache-disk failures, and the settings that are refused."""

from __future__ import annotations

import numpy as np
import pytest

from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.engine.log.slots import IN_CACHE_DISK, IN_RAM_BUFFER
from vraid.errors import VraidError
from vraid.testing.session import Session

K = 1024
G = Geometry.for_disk_size(level=5, ndisks=4, disk_size=(1 << 20) + 48 * 16 * K, strip_size=16 * K)
LOG = 640 * K + 4 * K  # 10 segments per store
KINDS = ["scd", "mcd:2", "mirrored", "per-disk"]


def _data(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _stores(kind: str):
    extra = LOG if kind == "per-disk" else 0
    members = [MemoryStore(G.member_size + extra, name=f"disk{i}") for i in range(G.ndisks)]
    n = {"scd": 1, "mcd:2": 2, "mirrored": 2}.get(kind, 0)
    logs = [MemoryStore(LOG, name=f"log{i}") for i in range(n)] if n else None
    return members, logs


def _config(kind, members, logs, **kw):
    return EngineConfig(G, stores=members, log=kind, log_size=LOG, log_stores=logs, log_ram=128 * K, bitmap_chunk=4, **kw)


@pytest.mark.parametrize("kind", KINDS)
def test_fsynced_writes_survive_a_crash_and_a_clean_remount_replays_nothing(kind):
    members, logs = _stores(kind)
    s = Session(_config(kind, members, logs, log_fresh=True, log_timer=1e9))
    synced = _data(1, 300 * K)
    s.write(0, synced)
    s.flush()
    s.write(400 * K, _data(2, 50 * K))  # acknowledged, never fsynced: may or may not survive
    s.close()  # the crash: nothing shut down, the RAM buffer is gone
    s = Session(_config(kind, members, logs, was_clean=False))
    assert s.engine.report.replayed_blocks > 0 and "log disk" in s.engine.report.message()
    assert s.read(0, len(synced)) == synced
    s.shutdown()
    s.close()
    s = Session(_config(kind, members, logs))
    assert s.engine.report.replayed_blocks == 0
    assert s.read(0, len(synced)) == synced
    s.close()


def test_reads_come_from_ram_then_log_then_data_disks():
    members, logs = _stores("scd")
    s = Session(_config("scd", members, logs, log_fresh=True, log_timer=1e9, log_destage="idle:idle=1000s,high=1.0"))
    lc = s.array.log
    block = _data(3, 4 * K)
    s.write(8 * K, block)
    assert lc.table.state(2) is IN_RAM_BUFFER
    assert s.read(8 * K, 4 * K) == block and lc.metrics.ram_hits == 1
    s.call(lc.level1, "test")
    assert lc.table.state(2) is IN_CACHE_DISK
    assert members[0].read_sync(G.data_offset, 4 * K) == bytes(4 * K)  # not on the data disks yet
    assert s.read(8 * K, 4 * K) == block and lc.metrics.log_hits == 1
    assert s.call(lc.level2_one, "test") == 1
    assert lc.table.lookup(2) is None  # IN_DATA_DISK, then the entry was recycled
    assert s.read(8 * K, 4 * K) == block
    assert s.array.raid.read is not None and s.call(s.array.raid.read, 8 * K, 4 * K) == block
    s.close()


def test_level2_waits_for_host_idle_time():
    members, logs = _stores("scd")
    s = Session(_config("scd", members, logs, log_fresh=True, log_destage="idle:idle=1s,high=0.95"))
    s.write(0, _data(4, 64 * K))
    s.flush()
    lc = s.array.log
    assert lc.metrics.level1_blocks >= 16 and lc.metrics.level2_destages == 0
    s.advance(0.5)
    assert lc.metrics.level2_destages == 0  # the host was busy half a second ago
    s.advance(1.0)
    assert lc.metrics.level2_destages >= 1 and lc.head == lc.tail  # idle: the log drained
    s.close()


def test_partial_block_writes_merge_with_the_newest_copy():
    members, logs = _stores("mcd:2")
    s = Session(_config("mcd:2", members, logs, log_fresh=True))
    model = bytearray(G.capacity)
    for i, (off, n) in enumerate([(100, 5000), (4000, 300), (12345, 70000), (0, 1), (8191, 2)]):
        d = _data(10 + i, n)
        s.write(off, d)
        model[off:off + n] = d
        if i == 2:
            s.call(s.array.log.level1, "test")
    assert s.read(0, 100 * K) == bytes(model[: 100 * K])
    s.close()


def test_the_log_below_a_write_back_cache():
    members, logs = _stores("scd")
    s = Session(_config("scd", members, logs, log_fresh=True, policies={"cache": "pbg"}, cache_size=256 * K))
    d = _data(5, 200 * K)
    s.write(0, d)
    s.flush()  # the cache drains into the log (level 1 below it), the log is flushed
    st = s.status()
    assert st["cache"]["organisation"] == "pbg" and st["log"]["level1_blocks"] > 0
    assert s.read(0, len(d)) == d
    s.close()
    s = Session(_config("scd", members, logs, was_clean=False, policies={"cache": "pbg"}, cache_size=256 * K))
    assert s.read(0, len(d)) == d
    s.close()


class _Dying(MemoryStore):
    """A log store that fails every request once ``dead`` is set."""

    dead = False

    async def write(self, offset, data):
        if self.dead:
            raise OSError(5, f"{self.name}: dead")
        await super().write(offset, data)

    async def read(self, offset, length):
        if self.dead:
            raise OSError(5, f"{self.name}: dead")
        return await super().read(offset, length)


def test_mirrored_keeps_running_on_one_copy():
    members = [MemoryStore(G.member_size, name=f"disk{i}") for i in range(G.ndisks)]
    logs = [_Dying(LOG, name="log0"), _Dying(LOG, name="log1")]
    s = Session(_config("mirrored", members, logs, log_fresh=True, log_destage="idle:idle=1000s,high=1.0"))
    a = _data(6, 100 * K)
    s.write(0, a)
    s.flush()
    logs[0].dead = True
    b = _data(7, 100 * K)
    s.write(100 * K, b)
    s.flush()
    st = s.status()["log"]
    assert st["failed"] == ["log0"] and st["lost_blocks"] == 0 and "mirror copy failed" in st["message"]
    assert s.read(0, 200 * K) == a + b
    s.close()
    s = Session(_config("mirrored", members, logs, was_clean=False))  # log1's copy replays
    assert s.read(0, 200 * K) == a + b
    s.close()


def test_scd_failure_loses_only_what_was_not_destaged_and_says_so():
    members = [MemoryStore(G.member_size, name=f"disk{i}") for i in range(G.ndisks)]
    logs = [_Dying(LOG, name="log0")]
    s = Session(_config("scd", members, logs, log_fresh=True, log_destage="idle:idle=1000s,high=1.0"))
    a = _data(8, 60 * K)
    s.write(0, a)
    s.flush()
    while s.call(s.array.log.level2_one, "test"):
        pass  # a is on the data disks
    b = _data(9, 60 * K)
    s.write(100 * K, b)
    s.flush()  # b only in the log
    logs[0].dead = True
    c = _data(10, 8 * K)
    s.write(200 * K, c)
    s.flush()  # level 1 fails: c goes straight to the data disks
    st = s.status()["log"]
    assert st["failed"] and st["lost_blocks"] == 15 and "lost" in st["message"]
    assert s.read(0, len(a)) == a and s.read(200 * K, len(c)) == c
    s.close()


def test_refused_combinations(tmp_path):
    with pytest.raises(VraidError, match="two journals"):
        EngineConfig(G, log="scd", policies={"cache": "pbg"}, nvram=tmp_path / "nv").check()
    with pytest.raises(VraidError, match="unknown log"):
        EngineConfig(G, log="raid1").check()
    with pytest.raises(VraidError, match="--log-size 64K is below 132K"):  # the log family's schema
        EngineConfig(G, log="scd", log_size=64 * K).check()
    with pytest.raises(VraidError, match="mcd: disks=1 is below 2"):
        EngineConfig(G, log="mcd:1").check()


def test_sim_json_has_a_log_block_only_with_a_log():
    from vraid.sim.simulator import SimConfig, run_sim

    base = dict(disks=4, disk_size=8 << 20, requests=300, workload="random-write")
    plain = run_sim(SimConfig(**base)).to_dict()
    assert "log" not in plain["metrics"] and "log" not in plain["config"]
    logged = run_sim(SimConfig(**base, log="mcd:2", log_size="1M")).to_dict()
    lb = logged["metrics"]["log"]
    assert logged["config"]["log"] == "mcd:2" and lb["kind"] == "mcd" and len(lb["store_busy_seconds"]) == 2
    assert lb["host_write_blocks"] == 300 and lb["level2_blocks"] > 0 and all(b > 0 for b in lb["store_busy_seconds"])
    # writes are acknowledged from the RAM buffer: far faster than RAID-5's small-write penalty
    assert logged["metrics"]["mean_response_ms"] < plain["metrics"]["mean_response_ms"] / 5


def test_per_disk_log_of_a_degraded_array_runs_without_the_missing_members_region():
    members, _ = _stores("per-disk")
    s = Session(_config("per-disk", members, None, log_fresh=True))
    d = _data(11, 100 * K)
    s.write(0, d)
    s.shutdown()
    s.close()
    s = Session(_config("per-disk", members, None, failed=(2,)))  # clean, but member 2 is gone
    assert s.read(0, len(d)) == d
    e = _data(12, 200 * K)
    s.write(0, e)
    s.flush()  # a segment for member 2's region cannot be written: the buffer goes through
    assert s.read(0, len(e)) == e
    st = s.status()["log"]
    assert st["failed"] is not None and "lost" in st["message"]
    s.close()
