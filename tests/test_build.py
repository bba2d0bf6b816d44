"""The composition root (vraid.engine.build): one EngineConfig, one engine, in every clock.

* the same config gives the same engine (member wrappers, policies, bitmap, NVRAM) and the
  same bytes on the members under the real clock and under a MockClock;
* a mount's config (EngineConfig.from_assembled) builds the engine the daemon serves,
  faults, timing model, bitmap and NVRAM included, without mounting;
* `vraid sim --nvram/--bitmap-chunk` run, deterministically, and change nothing by default;
* `vraid top --sim --fault` injects the fault (it used to be dropped);
* recovery after a crash runs through vraid.engine.host.recovery: NVRAM replay, bitmap resync.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
import trio
import trio.testing

from vraid.backends.faulty import FaultyStore
from vraid.backends.memory import MemoryStore
from vraid.backends.nvram import Nvram
from vraid.core.geometry import RESERVED, Geometry
from vraid.engine.build import EngineConfig, build_engine, open_engine
from vraid.engine.raid.scrub import scrub_array
from vraid.errors import VraidError
from vraid.testing.session import Session

K = 1024
G = Geometry.for_disk_size(level=5, ndisks=4, disk_size=RESERVED + 32 * 16 * K, strip_size=16 * K)


def _data(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _layers(store) -> list[str]:
    names = []
    while store is not None:
        names.append(type(store).__name__)
        store = getattr(store, "inner", None)
    return names


def _config(tmp_path: Path, name: str, **over) -> EngineConfig:
    settings = dict(policies={"cache": "stripe", "destage": "hlwm:high=0.8,low=0.4", "destage_order": "cscan",
                              "ct": "msc"},
                    cache_size=4 * G.stripe_data_bytes, nvram=tmp_path / f"{name}.nv", bitmap_chunk=2,
                    disk_model="ssd", faults=("disk3:latency=1ms,every=7",))
    return EngineConfig(G, **(settings | over))


async def _exercise(config: EngineConfig) -> tuple[dict, list[bytes], list[str]]:
    async with open_engine(config) as engine:
        array = engine.array
        for i in range(12):
            await array.write((i * 37 * K) % (G.capacity - 20 * K), _data(i, 20 * K))
        assert await array.read(0, 4 * K) is not None
        await array.shutdown()
        shape = {
            "members": [_layers(m) for m in engine.members],
            "cache": (array.cache.organisation.name, array.cache.order.name, array.cache.scheduler.spec),
            "ct": array.ct.spec,
            "bitmap": engine.bitmap.chunk,
            "nvram": engine.nvram.slots,
            "bits_set": engine.bitmap.stats.bits_set > 0,
        }
        contents = [s.read_sync(G.data_offset, G.member_size - G.data_offset) for s in engine.stores]
        return shape, contents, [d["state"] for d in array.status()["members"]]


def test_same_config_same_engine_in_real_and_virtual_time(tmp_path):
    real = trio.run(_exercise, _config(tmp_path, "real"))
    virtual = trio.run(_exercise, _config(tmp_path, "virtual"), clock=trio.testing.MockClock(autojump_threshold=0))
    assert real[0] == virtual[0]
    assert real[0]["members"] == [["SsdModel", "MemoryStore"]] * 3 + [["FaultyStore", "SsdModel", "MemoryStore"]]
    assert real[0]["cache"][:2] == ("stripe", "cscan") and real[0]["cache"][2].startswith("hlwm:high=0.8,low=0.4") and real[0]["ct"].startswith("msc")
    assert real[1] == virtual[1], "the same writes left different bytes on the members"
    assert real[2] == virtual[2] == ["active"] * 4


def test_checks_come_before_anything_opens(tmp_path):
    bad = [
        dict(policies={"cache": "lru"}),
        dict(policies={"colour": "red"}),
        dict(policies={"cache": "stripe"}, cache_size=1),
        dict(nvram=tmp_path / "x.nv"),  # NVRAM without a cache
        dict(faults=("disk9:eio=1-2",)),
        dict(disk_model="floppy"),
        dict(bitmap_chunk=1, geometry=Geometry(5, 3, 64, 4 * K, 4 * K, data_offset=4 * K)),  # no room
    ]
    for over in bad:
        geometry = over.pop("geometry", G)
        with pytest.raises(VraidError):
            build_engine(EngineConfig(geometry, **over))
    assert not (tmp_path / "x.nv").exists()


def test_mount_config_builds_the_served_engine(tmp_path):
    """The daemon's engine without a mount: member files behind the model and the faults,
    the bitmap the superblocks record, NVRAM made with the cache's slots."""
    from vraid.fuse.daemon import MountOptions, check_engine
    from vraid.ondisk.assemble import assemble
    from vraid.ondisk.create import create

    g = Geometry.for_disk_size(level=5, ndisks=3, disk_size=RESERVED + 64 * 16 * K, strip_size=16 * K)
    create(tmp_path / "arr", g, g.member_size, bitmap_chunk=4)
    asm = assemble(tmp_path / "arr")
    opts = MountOptions(cache="pbg", cache_size="1M", nvram=tmp_path / "nv", disk_model="hdd", time="real:0.5",
                        faults=("disk1:eio=5-6",), ct="msc", rebuild_rate=3.0)
    check_engine(asm, opts)
    with pytest.raises(VraidError, match="needs a write-back cache"):
        check_engine(asm, MountOptions(nvram=tmp_path / "nv"))
    asm.open_stores()
    try:
        engine = build_engine(EngineConfig.from_assembled(asm, opts))
        try:
            assert [_layers(m) for m in engine.members] == [
                ["HddModel", "FileStore"], ["FaultyStore", "HddModel", "FileStore"], ["HddModel", "FileStore"]]
            assert engine.model_clock.scale == 0.5
            assert engine.bitmap.chunk == 4 and engine.bitmap_chunks == set()
            assert engine.nvram.slots == 2 * (1 << 20) // g.block_size
            assert engine.array.cache.organisation.name == "pbg" and engine.array.ct.spec.startswith("msc")
            assert engine.array.raid.rebuild_rate == 3e6
            assert engine.config.uuid == asm.uuid and engine.config.was_clean
        finally:
            engine.close()
    finally:
        asm.close()


def test_crash_recovery_replays_nvram_and_resyncs_the_bitmap_chunks(tmp_path):
    """Write with destaging paused (the blocks are only in the cache and NVRAM), destage one
    unit, drop everything: the next engine replays NVRAM and resyncs the chunks whose bits
    are set, through vraid.engine.host.recovery, and nothing acknowledged is lost."""
    stores = tuple(MemoryStore(G.member_size, f"m{i}") for i in range(G.ndisks))
    config = EngineConfig(G, stores=stores, policies={"cache": "stripe"}, cache_size=8 * G.stripe_data_bytes,
                          nvram=tmp_path / "nv", bitmap_chunk=1)
    model = bytearray(G.capacity)
    s = Session(config)
    s.pause()
    for i, off in enumerate((0, 5 * G.stripe_data_bytes + 100, 9 * G.stripe_data_bytes)):
        data = _data(i, 3000)
        s.write(off, data)
        model[off : off + len(data)] = data
    assert s.step()  # one unit reaches the members (its bit is set before)
    assert s.engine.nvram.used() > 0
    s.close()  # a crash: no shutdown
    again = Session(EngineConfig(G, stores=stores, policies={"cache": "stripe"}, cache_size=8 * G.stripe_data_bytes,
                                 nvram=tmp_path / "nv", bitmap_chunk=1, was_clean=False))
    try:
        report = again.engine.report
        assert report.replayed_blocks > 0
        assert report.bitmap_chunks >= 1 and report.stripes >= report.bitmap_chunks
        assert "write-intent bitmap" in report.reason and "NVRAM" in report.reason
        assert again.engine.nvram.used() == 0
        assert again.read(0, G.capacity) == bytes(model)
        assert again.call(scrub_array, again.array.raid).mismatches == 0
    finally:
        again.close()


def test_sim_with_nvram_and_bitmap(tmp_path):
    from vraid.sim.simulator import SimConfig, run_sim

    base = dict(disk_size=8 << 20, strip=16 * K, requests=400, policies={"cache": "stripe", "cache_size": "1M"},
                disk_model="hdd:st373454lc")
    plain = run_sim(SimConfig(**base))
    assert "bitmap" not in plain.metrics and "nvram" not in plain.to_dict()["config"]
    cfg = SimConfig(**base, nvram=str(tmp_path / "sim.nv"), bitmap_chunk="256K")
    one, two = run_sim(cfg), run_sim(cfg)  # the second run replaces the first run's NVRAM file
    assert one.to_json() == two.to_json()
    m = one.metrics
    assert m["bitmap"]["set_writes"] > 0 and m["nvram_slots"] == 2 * (1 << 20) // 4096
    assert m["disk_write_requests"] > plain.metrics["disk_write_requests"]  # the bitmap's writes
    assert json.loads(one.to_json())["config"]["nvram"] == str(tmp_path / "sim.nv")
    with Nvram.open(tmp_path / "sim.nv", array_uuid=cfg.engine_config().uuid, block_size=4096) as nv:
        assert nv.replay() == []  # the drain emptied it


def test_sim_refuses_an_arrays_nvram_file(tmp_path):
    from vraid.sim.simulator import SimConfig, run_sim

    Nvram.create(tmp_path / "array.nv", slots=8, block_size=4096, array_uuid="12345678-1234-4234-8234-123456789abc").close()
    with pytest.raises(VraidError, match="belongs to array"):
        run_sim(SimConfig(disk_size=8 << 20, requests=10, policies={"cache": "stripe", "cache_size": "1M"},
                          nvram=str(tmp_path / "array.nv")))
    assert (tmp_path / "array.nv").exists()


def test_top_sim_injects_the_fault():
    """`vraid top --sim ... --fault SPEC` used to accept the fault and drop it."""
    from vraid.cli.top import _sim_config
    from vraid.tui.top import SimSource, sim_snapshots

    args = ["--disk-size", "8M", "--strip", "16K", "--requests", "300", "--disk-model", "none",
            "--fault", "disk1:fail-after=20", "--bitmap-chunk", "1M"]
    config = _sim_config(args)
    assert config.faults == ("disk1:fail-after=20",) and config.bitmap_chunk == "1M"
    _first, last = sim_snapshots(config)
    states = [m["state"] for m in last["members"]]
    assert states[1] == "failed" and states.count("failed") == 1
    src = SimSource(config, rate=1000.0)
    try:
        member = src.session.engine.members[1]
        assert isinstance(member, FaultyStore)
        deadline = time.monotonic() + 30
        while src.snapshot(10)["members"][1]["state"] != "failed":
            assert time.monotonic() < deadline, "the injected failure never came"
            time.sleep(0.02)
        assert member.injected["failed"] > 0
    finally:
        src.close()
