"""One host write's units absorbed in one pass (``WriteBackCache._absorb_now``, one journal
batch) leave exactly what absorbing them one by one through ``_absorb`` leaves; an NVRAM
``put_many`` that gives frames back replays right after a kill."""

from __future__ import annotations

import os
import uuid

import numpy as np
import pytest
import trio
import trio.testing

from vraid.backends.nvram import Nvram
from vraid.backends.nvram_format import ENTRY_SIZE
from vraid.engine.cache import WriteBackCache
from vraid.sim.driver import deterministic_trio
from vraid.engine.build import EngineConfig

from support import SlowStore, memory_stores, running, small_geometry, write_cache

K = 1024


def _data(tag: int, n: int) -> bytes:
    return np.random.default_rng(tag).integers(0, 256, n, dtype=np.uint8).tobytes()


def _snapshot(cache: WriteBackCache) -> dict:
    """Everything a write leaves in the cache and its journal (not where the NVRAM put the frames)."""
    units = {}
    for key, u in sorted(cache.units.items()):
        valid = u.state != 0
        units[key] = (u.span, u.state.tobytes(), u.data[valid].tobytes(), dict(u.slots), u.oldest, u.version,
                      None if u.shadow is None else (u.shadow_state.tobytes(), u.shadow[u.shadow_state != 0].tobytes(),
                                                     dict(u.shadow_slots), u.shadow_oldest))
    metrics = {k: v for k, v in cache.metrics.to_dict().items()}
    return {"units": units, "metrics": metrics, "order": cache.order.keys(), "clean": list(cache.clean),
            "dirty": sorted(cache.dirty_keys), "journal": cache.journal.replay(), "free": cache.journal.available()}


def _scenario(org: str, tmp, batched: bool, monkeypatch) -> tuple[list, bytes]:
    g = small_geometry()
    stripe = g.stripe_data_bytes  # 64 KiB
    if not batched:
        monkeypatch.setattr(WriteBackCache, "_absorb_now", lambda self, *a, **k: False)
    else:
        monkeypatch.undo()
    path = tmp / f"nv-{org}-{batched}.bin"
    nv = Nvram.create(path, slots=16 * stripe // g.block_size, block_size=g.block_size, array_uuid=str(uuid.uuid4()))
    snaps = []

    async def main():
        stores = [SlowStore(s, 0.01, slow_reads=False) for s in memory_stores(g)]
        cfg = write_cache(org, 8 * stripe, destage="hlwm:high=1.0,low=0.99")  # never full: no destage starts by itself
        async with running(EngineConfig(g, stores, **cfg, journal=nv)) as a:
            cache = a.cache
            await a.write(0, _data(1, 2 * stripe))  # two whole stripes
            snaps.append(_snapshot(cache))
            await a.write(stripe // 2, _data(2, stripe))  # half of one stripe, half of the next: overwrites
            snaps.append(_snapshot(cache))
            await a.write(2 * stripe + 1000, _data(3, stripe + 5000))  # sub-block ends: fills, then batch
            snaps.append(_snapshot(cache))
            await a.write(8 * K, _data(4, 3 * 4 * K))  # a few blocks of strips 0 and 1
            snaps.append(_snapshot(cache))
            # a destage in flight: the write's units of that stripe go to their shadows (DDIRTY); the
            # journal has room for all (a wait for room would let trio's unseeded scheduling in)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(cache.destage_one)
                await trio.sleep(0.005)  # the destage is writing the members now
                assert any(u.destaging for u in cache.units.values())
                await a.write(0, _data(5, 2 * stripe))
                snaps.append(_snapshot(cache))
            snaps.append(_snapshot(cache))
            image = await a.read(0, 4 * stripe)
            await a.flush()
            return image

    image = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    nv.close()
    return snaps, image


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_a_write_absorbed_in_one_pass_equals_unit_by_unit(org, tmp_path, monkeypatch):
    one_by_one, image1 = _scenario(org, tmp_path, False, monkeypatch)
    monkeypatch.undo()
    batched, image2 = _scenario(org, tmp_path, True, monkeypatch)
    assert len(batched) == len(one_by_one) == 6
    for i, (a, b) in enumerate(zip(batched, one_by_one)):
        assert a == b, f"state after step {i} differs"
    assert image1 == image2
    expect = bytearray(4 * 64 * K)  # what the writes put there, in order
    for off, tag, n in [(0, 1, 128 * K), (32 * K, 2, 64 * K), (128 * K + 1000, 3, 64 * K + 5000), (8 * K, 4, 12 * K),
                        (0, 5, 128 * K)]:
        expect[off : off + n] = _data(tag, n)
    assert image2 == bytes(expect)
    assert batched[0]["metrics"]["write_blocks"] == 32 and batched[0]["metrics"]["write_hits"] == 32
    assert any(u[6] is not None for u in batched[4]["units"].values())  # the DDIRTY step did use a shadow


def _block(tag: int, bs: int = 512) -> bytes:
    return bytes([tag % 256]) * bs


def test_put_many_rewrites_replay_after_a_kill(tmp_path):
    """Rewrites through put_many give their older frames back (zeroed in runs after the new
    entries); a kill (no sync, no close) then reopen replays the newest record of each slot,
    and the table holds one entry per live slot."""
    path = tmp_path / "nv"
    uid = str(uuid.uuid4())
    nv = Nvram.create(path, slots=16, block_size=512, array_uuid=uid, spare=8)
    nv.put_many([(s, 100 + s, _block(s)) for s in range(12)])
    nv.sync()  # anchors: the next rewrite keeps them
    nv.put_many([(s, 100 + s, _block(20 + s)) for s in range(12)])
    nv.put_many([(s, 100 + s, _block(40 + s)) for s in range(0, 12, 2)])  # frames given back, in runs
    nv.clear(3)
    nv._detach()  # kill -9: the page cache keeps what the pwrites stored
    with Nvram.open(path, array_uuid=uid, block_size=512) as again:
        got = dict(again.replay())
        assert got == {100 + s: _block(40 + s if s % 2 == 0 else 20 + s) for s in range(12) if s != 3}
        table = np.frombuffer(os.pread(again._fd, again.frames * ENTRY_SIZE, 4096), dtype="<u8").reshape(-1, 4)
        assert np.count_nonzero(table[:, 0]) == 11  # every superseded or cleared entry zeroed


def _block_writes(org: str, tmp, one_block: bool, monkeypatch) -> tuple[list, bytes]:
    """Single-block writes (aligned, and 4 KiB unaligned across two rows or strips), some while
    a destage is in flight, then a snapshot after each group; ``one_block``: _commit's
    shortcut for one whole block on or off."""
    monkeypatch.setattr(WriteBackCache, "_one_block", one_block)
    pinned = WriteBackCache._pin_target
    shadows = []

    def pin(self, unit, span):
        out = pinned(self, unit, span)
        shadows.append(out[0])
        return out

    monkeypatch.setattr(WriteBackCache, "_pin_target", pin)
    g = small_geometry()
    bs = g.block_size
    path = tmp / f"nv-blocks-{org}-{one_block}.bin"  # room for 48 blocks: writes wait for journal room too
    nv = Nvram.create(path, slots=48, block_size=bs, array_uuid=str(uuid.uuid4()))
    rng = np.random.default_rng(5)
    blocks = 4 * g.stripe_data_bytes // bs
    writes = []
    for i in range(60):
        at = int(rng.integers(0, blocks)) * bs
        if i % 3 == 2:
            at += int(rng.integers(1, bs))  # straddles the next block: another row (pbg) or strip
        writes.append((at, _data(100 + i, bs)))
    for b in range(blocks):  # during a destage: every block, so some go to the destaged unit's shadow ...
        writes.append((b * bs, _data(200 + b, bs)))
    for b in range(0, blocks, 5):  # ... then unaligned ones (their fills read the members)
        writes.append((b * bs + int(rng.integers(1, bs)), _data(400 + b, bs)))
    snaps = []

    async def main():
        stores = [SlowStore(s, 0.01, slow_reads=False) for s in memory_stores(g)]
        cfg = write_cache(org, 8 * g.stripe_data_bytes, destage="hlwm:high=1.0,low=0.99")
        async with running(EngineConfig(g, stores, **cfg, journal=nv)) as a:
            cache = a.cache
            for at, data in writes[:60]:
                await a.write(at, data)
            snaps.append(_snapshot(cache))
            async with trio.open_nursery() as nursery:  # the next writes of a destaged unit go to its shadow
                nursery.start_soon(cache.destage_one)
                await trio.sleep(0.005)
                for at, data in writes[60 : 60 + blocks]:
                    await a.write(at, data)
                snaps.append(_snapshot(cache))
                for at, data in writes[60 + blocks :]:
                    await a.write(at, data)
                snaps.append(_snapshot(cache))
            snaps.append(_snapshot(cache))
            image = await a.read(0, 4 * g.stripe_data_bytes)
            await a.flush()
            return image

    with deterministic_trio(3):  # sub-block writes read from the members: the order of tasks, reproducible
        image = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    nv.close()
    expect = bytearray(4 * g.stripe_data_bytes)
    for at, data in writes:
        expect[at : at + len(data)] = data[: len(expect) - at]
    assert image == bytes(expect)
    assert any(shadows)  # some writes did go to a destaged unit's shadow (DDIRTY)
    return snaps, image


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_the_one_block_commit_equals_the_general_steps(org, tmp_path, monkeypatch):
    general, image1 = _block_writes(org, tmp_path, False, monkeypatch)
    shortcut, image2 = _block_writes(org, tmp_path, True, monkeypatch)
    assert image1 == image2
    assert len(shortcut) == len(general) == 4
    for i, (a, b) in enumerate(zip(shortcut, general)):
        assert a == b, f"state after group {i} differs"
