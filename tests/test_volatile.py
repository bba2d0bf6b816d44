"""The volatile (power-cut) member: only what was flushed survives, reads see everything."""

from __future__ import annotations

import numpy as np
import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from vraid.backends.base import StoreWrapper
from vraid.backends.faulty import FaultyStore, parse_faults, wrap_faults
from vraid.backends.memory import MemoryStore
from vraid.backends.volatile import VolatileStore
from vraid.core.geometry import Geometry
from vraid.engine.clock import TrioClock
from vraid.engine.build import EngineConfig

from support import running, write_cache

BS = 4096
SIZE = 64 * BS


def _run(fn, *args):
    return trio.run(fn, *args, clock=trio.testing.MockClock(autojump_threshold=0))


def _pair(size: int = SIZE) -> tuple[MemoryStore, VolatileStore]:
    inner = MemoryStore(size)
    inner.write_sync(0, bytes(range(256)) * (size // 256))  # old contents, so a lost write shows
    return inner, VolatileStore(inner, block_size=BS)


def test_reads_see_unflushed_writes_and_the_inner_store_does_not():
    inner, store = _pair()
    old = inner.read_sync(0, SIZE)

    async def main():
        await store.write(3 * BS, b"a" * (2 * BS))
        assert await store.read(2 * BS, 4 * BS) == old[2 * BS : 3 * BS] + b"a" * (2 * BS) + old[5 * BS : 6 * BS]
        assert store.read_sync(3 * BS + 10, 5) == b"aaaaa"

    _run(main)
    assert inner.read_sync(0, SIZE) == old and store.dirty_blocks == 2


def test_flush_makes_writes_durable_and_a_drop_then_loses_nothing():
    inner, store = _pair()

    async def main():
        await store.write(0, b"x" * BS)
        await store.write(10 * BS, b"y" * (3 * BS))
        await store.flush()

    _run(main)
    assert store.dirty_blocks == 0 and store.drop() == 0
    assert inner.read_sync(0, BS) == b"x" * BS and inner.read_sync(10 * BS, 3 * BS) == b"y" * (3 * BS)
    assert store.stats["flushes"] == 1 and store.stats["written_back"] == 4


def test_a_drop_loses_exactly_the_writes_since_the_last_flush():
    inner, store = _pair()
    old = inner.read_sync(0, SIZE)

    async def main():
        await store.write(0, b"1" * (4 * BS))
        await store.flush()
        await store.write(2 * BS, b"2" * (4 * BS))  # overwrites two durable blocks, adds two
        await store.write(20 * BS, b"3" * BS)

    _run(main)
    assert store.drop() == 5
    assert store.read_sync(0, 6 * BS) == b"1" * (4 * BS) + old[4 * BS : 6 * BS]
    assert store.read_sync(20 * BS, BS) == old[20 * BS : 21 * BS]
    assert store.stats["dropped"] == 5


def test_overlapping_writes_the_newest_wins_in_the_layer_and_after_a_flush():
    inner, store = _pair()

    async def main():
        await store.write(0, b"a" * (4 * BS))
        await store.write(BS, b"b" * (2 * BS))
        await store.write(2 * BS, b"c" * (3 * BS))
        want = b"a" * BS + b"b" * BS + b"c" * (3 * BS)
        assert await store.read(0, 5 * BS) == want
        await store.flush()
        assert inner.read_sync(0, 5 * BS) == want

    _run(main)


def test_partial_block_writes_merge_with_what_the_block_holds():
    inner, store = _pair()
    old = inner.read_sync(0, SIZE)

    async def main():
        await store.write(BS + 100, b"p" * 50)  # inside one block
        await store.write(3 * BS - 7, b"q" * (BS + 14))  # the tail of one block, a whole one, the head of the next
        await store.write(BS + 120, b"r" * 10)  # over the first one, still unflushed

    _run(main)
    want = bytearray(old)
    want[BS + 100 : BS + 150] = b"p" * 50
    want[3 * BS - 7 : 4 * BS + 7] = b"q" * (BS + 14)
    want[BS + 120 : BS + 130] = b"r" * 10
    assert store.read_sync(0, SIZE) == bytes(want) and inner.read_sync(0, SIZE) == old
    assert store.dirty_blocks == 4  # blocks 1, 2, 3, 4

    _run(store.flush)
    assert inner.read_sync(0, SIZE) == bytes(want)


class _SlowWrites(StoreWrapper):
    """Writes that take a second of the (mock) clock: a flush can be overtaken."""

    async def write(self, offset, data):
        await trio.sleep(1)
        await self.inner.write(offset, data)


def test_a_write_during_a_flush_is_not_covered_by_it():
    inner = MemoryStore(SIZE)
    store = VolatileStore(_SlowWrites(inner), block_size=BS)

    async def main():
        await store.write(0, b"a" * BS)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(store.flush)
            await trio.sleep(0.5)  # the flush is writing block 0 back
            await store.write(0, b"b" * BS)
            await store.write(BS, b"c" * BS)
        assert await store.read(0, 2 * BS) == b"b" * BS + b"c" * BS

    _run(main)
    assert inner.read_sync(0, 2 * BS) == b"a" * BS + b"\0" * BS  # only what preceded the flush
    assert store.dirty_blocks == 2 and store.drop() == 2
    assert store.read_sync(0, BS) == b"a" * BS


def test_write_sync_writes_the_whole_layer_through():
    inner, store = _pair()

    async def main():
        await store.write(5 * BS, b"v" * BS)

    _run(main)
    store.write_sync(0, b"s" * 100)
    assert store.dirty_blocks == 0
    assert inner.read_sync(0, 100) == b"s" * 100 and inner.read_sync(5 * BS, BS) == b"v" * BS


@given(st.lists(st.one_of(
    st.tuples(st.just("write"), st.integers(0, SIZE - 1), st.integers(1, 3 * BS), st.integers(0, 255)),
    st.tuples(st.just("flush")),
    st.tuples(st.just("drop")),
), max_size=25))
def test_against_a_model_of_durable_and_current_bytes(ops):
    """Two byte arrays: what a read returns and what survives a power cut."""
    inner = MemoryStore(SIZE)
    store = VolatileStore(inner, block_size=BS)
    current, durable = bytearray(SIZE), bytearray(SIZE)

    async def main():
        for op in ops:
            if op[0] == "write":
                _, off, n, fill = op
                n = min(n, SIZE - off)
                await store.write(off, bytes([fill]) * n)
                current[off : off + n] = bytes([fill]) * n
            elif op[0] == "flush":
                await store.flush()
                durable[:] = current
            else:
                store.drop()
                current[:] = durable
            assert await store.read(0, SIZE) == current
            assert inner.read_sync(0, SIZE) == durable

    _run(main)


def test_the_fault_spec_puts_the_layer_below_the_faults():
    faults = parse_faults(["all:volatile", "disk1:fail-after=100"], ndisks=3)
    stores = wrap_faults([MemoryStore(SIZE, f"m{i}") for i in range(3)], faults, clock=TrioClock(), block_size=BS,
                         data_offset=0)
    assert all(isinstance(s, FaultyStore) and isinstance(s.inner, VolatileStore) for s in stores)
    assert stores[1].spec.fail_after == 100 and stores[0].spec.fail_after is None
    assert stores[0].instant  # no latency: the member queue may still run requests inline
    assert stores[2].status()["faults"] == "volatile" and stores[2].status()["volatile"]["dirty_blocks"] == 0


def test_a_power_cut_of_a_raid5_array_keeps_exactly_what_was_flushed():
    """Write-through RAID-5 on volatile members: after a flush, more writes, and a power
    cut of every member, the array reassembled from what the members made durable holds
    the flushed data, none of the later writes, and its parity is consistent."""
    g = Geometry(5, 4, 8, BS, 4 * BS, data_offset=4 * BS)
    inner = [MemoryStore(g.member_size, f"m{i}") for i in range(4)]
    stores = wrap_faults(inner, parse_faults(["all:volatile"], 4), clock=TrioClock(), block_size=BS,
                         data_offset=g.data_offset)
    rng = np.random.default_rng(3)
    first = rng.integers(0, 256, 40 * BS, dtype=np.uint8).tobytes()
    later = rng.integers(0, 256, 30 * BS, dtype=np.uint8).tobytes()

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            await array.write(0, first)
            await array.flush()
            await array.write(20 * BS, later)  # half over the flushed data, half beyond it
            assert await array.read(20 * BS, 30 * BS) == later
        for s in stores:
            s.inner.drop()
        async with running(EngineConfig(g, inner)) as array:
            assert await array.read(0, 50 * BS) == first + bytes(10 * BS)

    trio.run(main)
    area = [np.frombuffer(s.read_sync(g.data_offset, g.member_size - g.data_offset), dtype=np.uint8) for s in inner]
    assert not np.bitwise_xor.reduce(area).any()  # data and parity agree everywhere


@pytest.mark.parametrize("spec, expect", [
    ("disk1:volatile=yes", "volatile takes no value"),
    ("every:volatile", "does not start with a member"),
])
def test_bad_volatile_specs(spec, expect):
    from vraid.errors import VraidError

    with pytest.raises(VraidError, match=expect):
        parse_faults([spec], 3)


@pytest.mark.parametrize("mode", ["write-through", "pbg", "stripe-nvram"])
@pytest.mark.parametrize("seed", range(3))
def test_a_power_cut_under_concurrent_writes_reads_and_fsyncs_keeps_every_fsynced_write(mode, seed, tmp_path):
    """The engine side of tests/test_e2e_powercut.py, in virtual time: writers (each with
    its own blocks, interleaved across stripes and cache units), readers and fsyncs run
    against a RAID-5 array on volatile members with a write-intent bitmap, in each cache
    mode; the power goes at a random moment (the volatile layers' contents are lost, the
    NVRAM file keeps what was put). Recovered as a mount would (NVRAM replay, resync),
    every block holds the write that the last completed fsync covered, or a later one."""
    import random
    import shutil
    import struct

    from vraid.backends.nvram import Nvram
    from vraid.engine.host.recovery import recover
    from vraid.ondisk.bitmap import WriteIntentBitmap

    g = Geometry(5, 4, 24, BS, 4 * BS, data_offset=4 * BS)
    rng = random.Random(seed)
    inner = [MemoryStore(g.member_size, f"m{i}") for i in range(4)]
    stores = wrap_faults(inner, parse_faults(["all:volatile"], 4), clock=TrioClock(), block_size=BS, data_offset=g.data_offset)
    cache = {} if mode == "write-through" else write_cache(mode.split("-")[0], 3 * g.stripe_data_bytes, destage="adaptive")
    uuid = "12345678-1234-5678-1234-567812345678"
    nvram = Nvram.create(tmp_path / "nv", slots=2 * cache["cache_size"] // BS, block_size=BS, array_uuid=uuid) if mode == "stripe-nvram" else None
    nblocks = g.capacity // BS
    history: dict[int, list[list]] = {}  # block -> [write id, acknowledged at (ack count) or None]
    state = {"acks": 0, "promised": 0, "wid": 0}

    def payload(wid: int, block: int) -> bytes:
        return struct.pack("<QQ", wid, block) * (BS // 16)

    async def writer(me: int, array) -> None:
        groups = [grp for grp in range(nblocks // 4) if grp % 3 == me]
        while True:
            b0 = rng.choice(groups) * 4 + rng.randrange(4)
            n = rng.randint(1, 4 - b0 % 4)
            state["wid"] += 1
            wid = state["wid"]
            entries = [[wid, None] for _ in range(n)]
            for i, e in enumerate(entries):
                history.setdefault(b0 + i, []).append(e)
            await array.write(b0 * BS, b"".join(payload(wid, b) for b in range(b0, b0 + n)))
            state["acks"] += 1
            for e in entries:
                e[1] = state["acks"]
            if rng.random() < 0.25:
                covered = state["acks"]
                await array.flush()
                state["promised"] = max(state["promised"], covered)
            await trio.sleep(rng.random() * 0.01)

    async def reader(array) -> None:
        while True:
            off = rng.randrange(nblocks) * BS
            await array.read(off, min(rng.choice([1, 4, 16]) * BS, g.capacity - off))
            await trio.sleep(rng.random() * 0.01)

    async def run() -> tuple[list[MemoryStore], int]:
        bitmap = WriteIntentBitmap(g, 2, interval=0.05)
        async with running(EngineConfig(g, stores, **cache, journal=nvram, intent=bitmap)) as array:
            async with trio.open_nursery() as nursery:
                for me in range(3):
                    nursery.start_soon(writer, me, array)
                nursery.start_soon(reader, array)
                await trio.sleep(rng.uniform(0.1, 1.0))
                # the power goes: what the members made durable and what NVRAM holds survive
                survivors = [MemoryStore(g.member_size, s.name) for s in inner]
                for s, kept in zip(inner, survivors):
                    kept.write_sync(0, s.read_sync(0, g.member_size))
                if nvram is not None:
                    shutil.copy(tmp_path / "nv", tmp_path / "nv-cut")
                promised = state["promised"]
                nursery.cancel_scope.cancel()
        return survivors, promised

    async def recovered(survivors: list[MemoryStore]) -> bytes:
        bitmap = WriteIntentBitmap(g, 2)
        chunks = bitmap.load_sync(survivors)
        nv = Nvram.open(tmp_path / "nv-cut", array_uuid=uuid, block_size=BS) if nvram is not None else None
        try:
            async with running(EngineConfig(g, survivors, intent=bitmap)) as array:
                await recover(array, was_clean=False, bitmap_chunks=chunks, nvram=nv)
                return await array.read(0, g.capacity)
        finally:
            if nv is not None:
                nv.close()

    survivors, promised = _run(run)
    if nvram is not None:
        nvram.close()
    data = _run(recovered, survivors)
    assert promised > 0, "no fsync completed before the cut"
    for b, hist in history.items():
        floor = max((i for i, (_, ack) in enumerate(hist) if ack is not None and ack <= promised), default=None)
        if floor is None:
            continue
        allowed = {payload(wid, b) for wid, _ in hist[floor:]}
        assert data[b * BS : (b + 1) * BS] in allowed, f"block {b} lost write {hist[floor][0]}, which a completed fsync covered"


def test_a_durable_write_survives_a_power_cut_and_leaves_the_rest_of_the_layer_volatile():
    inner, vol = _pair()

    async def main():
        await vol.write(0, b"v" * BS)  # volatile
        await vol.write(2 * BS, b"w" * BS)  # volatile, then overwritten durably
        await vol.write_durable(2 * BS, b"d" * BS)
        assert await vol.read(2 * BS, BS) == b"d" * BS
        assert inner.read_sync(2 * BS, BS) == b"d" * BS  # in the inner store already
        assert vol.dirty_blocks == 1
        with pytest.raises(ValueError, match="whole blocks"):
            await vol.write_durable(100, b"x" * 10)

    _run(main)
    before = inner.read_sync(0, BS)
    assert vol.drop() == 1
    assert vol.read_sync(0, BS) == before != b"v" * BS  # the volatile write is lost
    assert vol.read_sync(2 * BS, BS) == b"d" * BS  # the durable one is not
