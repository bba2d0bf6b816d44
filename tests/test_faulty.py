"""The faulty backend: each fault fires at the requests it names, and nowhere else."""

from __future__ import annotations

import errno

import pytest
import trio
import trio.testing

from vraid.backends.faulty import FaultSpec, FaultyStore, PowerCut, parse_fault, parse_faults
from vraid.backends.memory import MemoryStore
from vraid.engine.clock import TrioClock
from vraid.errors import MemberIOError, VraidError
from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig

from support import running

K = 1024
BS = 4096
OFF = 64 * K  # a data offset


def _store(spec: FaultSpec, **kw) -> FaultyStore:
    return FaultyStore(MemoryStore(OFF + 256 * BS), spec, clock=TrioClock(), block_size=BS, data_offset=OFF, **kw)


def _run(fn, *args):
    return trio.run(fn, *args, clock=trio.testing.MockClock(autojump_threshold=0))


@pytest.mark.parametrize(
    "text, disk, spec",
    [
        ("disk2:eio=1000-1010", 2, FaultSpec(eio=[(1000, 1010)])),
        ("disk0:eio=7,eio=20-29", 0, FaultSpec(eio=[(7, 7), (20, 29)])),
        ("1:fail-after=5000", 1, FaultSpec(fail_after=5000)),
        ("disk0:latency=50ms,every=100", 0, FaultSpec(latency=0.05, every=100)),
        ("disk3:latency=2s,p=0.25,seed=7", 3, FaultSpec(latency=2.0, probability=0.25, seed=7)),
        ("disk4:torn-after=300", 4, FaultSpec(torn_after=300)),
    ],
)
def test_parse_fault(text, disk, spec):
    assert parse_fault(text) == (disk, spec)


@pytest.mark.parametrize(
    "text, expect",
    [
        ("eio=1-2", "does not start with a member"),
        ("diskx:eio=1", "does not start with a member"),
        ("disk1:", "no fault given"),
        ("disk1:eio=5-2", "ends before it starts"),
        ("disk1:eio=a", "not a block or a range"),
        ("disk1:fail-after=-3", "not a whole number"),
        ("disk1:latency=5ms", "needs every=N or p="),
        ("disk1:latency=soon,every=2", "not a time"),
        ("disk1:every=3", "go with latency"),
        ("disk1:latency=1ms,p=2", "not a probability"),
        ("disk1:latency=1ms,p=0.1,every=3", "not both"),
        ("disk1:explode=1", "unknown fault 'explode'"),
        ("disk1:eio", "is not KEY=VALUE"),
        ("disk7:eio=1", "members disk0..disk4"),
    ],
)
def test_bad_fault_specs_name_the_problem(text, expect):
    with pytest.raises(VraidError, match=expect) as exc:
        parse_fault(text, ndisks=5)
    assert "disk2:eio=1000-1010" in exc.value.hint


def test_specs_for_one_disk_merge():
    faults = parse_faults(["disk1:eio=3", "disk1:fail-after=10", "disk0:eio=1"])
    assert faults[1] == FaultSpec(eio=[(3, 3)], fail_after=10) and faults[0] == FaultSpec(eio=[(1, 1)])


def test_eio_only_on_the_named_member_blocks():
    store = _store(FaultSpec(eio=[(10, 12)]))

    async def main():
        await store.write(OFF + 9 * BS, b"a" * BS)  # block 9: fine
        await store.write(OFF + 13 * BS, b"a" * BS)  # block 13: fine
        await store.read(0, 4096)  # the superblock area: never a data block
        for first, n in ((10, 1), (12, 1), (8, 3), (12, 4), (0, 40)):
            with pytest.raises(OSError) as exc:
                await store.read(OFF + first * BS, n * BS)
            assert exc.value.errno == errno.EIO and "bad blocks 10-12" in str(exc.value)
        with pytest.raises(OSError):
            await store.write(OFF + 11 * BS, b"b" * BS)
        assert await store.read(OFF + 10 * BS - 1, 1) == b"a"  # the byte before the range: readable

    _run(main)
    assert store.injected["eio"] == 6


def test_fail_after_n_requests_fails_every_later_one():
    store = _store(FaultSpec(fail_after=5))

    async def main():
        for i in range(5):
            await (store.read(OFF, BS) if i % 2 else store.write(OFF, b"x" * BS))
        for _ in range(3):
            with pytest.raises(OSError, match="failed after 5 requests"):
                await store.read(OFF, BS)
        with pytest.raises(OSError):
            await store.flush()

    _run(main)
    assert store.failed and store.requests == 8 and store.injected["failed"] == 3


def test_latency_every_nth_request_on_the_injected_clock():
    store = _store(FaultSpec(latency=0.5, every=4))

    async def main():
        times = []
        for _ in range(8):
            t0 = trio.current_time()
            await store.read(OFF, BS)
            times.append(round(trio.current_time() - t0, 6))
        return times

    assert _run(main) == [0, 0, 0, 0.5, 0, 0, 0, 0.5]
    assert not store.instant


def test_latency_with_probability_is_seeded():
    def spikes(seed):
        store = _store(FaultSpec(latency=0.01, probability=0.3, seed=seed))

        async def main():
            for _ in range(200):
                await store.read(OFF, BS)

        _run(main)
        return store.injected["latency"]

    assert spikes(3) == spikes(3)
    assert 30 < spikes(3) < 90


def test_torn_write_lands_a_prefix_then_the_disk_is_dead():
    inner = MemoryStore(OFF + 256 * BS)
    store = FaultyStore(inner, FaultSpec(torn_after=2, seed=5), clock=TrioClock(), block_size=BS, data_offset=OFF)

    async def main():
        await store.write(OFF, b"1" * BS)
        await store.read(OFF, BS)
        with pytest.raises(OSError, match="power lost: only"):
            await store.write(OFF + 10 * BS, b"2" * (8 * BS))
        with pytest.raises(OSError, match="power lost"):
            await store.read(OFF, BS)

    _run(main)
    _, _, length, landed = store.power.torn
    assert length == 8 * BS and landed % BS == 0 and landed < length
    got = inner.read_sync(OFF + 10 * BS, 8 * BS)
    assert got == b"2" * landed + b"\0" * (length - landed)
    assert inner.read_sync(OFF, BS) == b"1" * BS  # what came before is intact


def test_a_power_cut_shared_by_every_member():
    power = PowerCut(after=3, seed=1)
    stores = [FaultyStore(MemoryStore(OFF + 64 * BS), clock=TrioClock(), block_size=BS, data_offset=OFF, power=power)
              for _ in range(3)]

    async def main():
        for s in stores:
            await s.write(OFF, b"a" * BS)
        with pytest.raises(OSError):
            await stores[1].write(OFF, b"b" * 2 * BS)
        for s in stores:
            with pytest.raises(OSError, match="power lost"):
                await s.read(OFF, BS)

    _run(main)
    assert power.dead and power.torn[0] == stores[1].name


def test_an_injected_eio_fails_the_member_and_raid5_serves_degraded():
    """With degraded mode (vraid.engine.raid.degraded) the EIO fails the member, the read is
    reconstructed from the others, and later writes keep parity right."""
    g = Geometry(5, 3, 16, BS, 4 * BS, data_offset=OFF)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(3)]
    bad = g.locate(5).member_block  # logical block 5's block on its member
    disk = g.locate(5).disk
    stores[disk] = FaultyStore(stores[disk], FaultSpec(eio=[(bad, bad)]), clock=TrioClock(), block_size=BS,
                               data_offset=OFF)

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            await array.write(4 * BS, b"a" * BS + b"b" * BS)  # block 5's write hits the bad block
            assert array.status()["members"][disk]["state"] == "failed"
            assert await array.read(4 * BS, 2 * BS) == b"a" * BS + b"b" * BS  # reconstructed
            await array.write(5 * BS, b"z" * BS)
            assert await array.read(5 * BS, BS) == b"z" * BS

    trio.run(main)


def test_an_injected_eio_on_raid0_reaches_the_host_and_the_array_goes_on():
    g = Geometry(0, 3, 16, BS, 4 * BS, data_offset=OFF)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(3)]
    bad = g.locate(5).member_block
    disk = g.locate(5).disk
    stores[disk] = FaultyStore(stores[disk], FaultSpec(eio=[(bad, bad)]), clock=TrioClock(), block_size=BS,
                               data_offset=OFF)

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            away = 3 * g.stripe_data_bytes  # another stripe: no request touches the bad block
            await array.write(away, b"ok" * BS)
            with pytest.raises(MemberIOError) as exc:
                await array.read(5 * BS, BS)
            assert exc.value.member == disk
            assert await array.read(away, 2 * BS) == b"ok" * BS  # the array still serves the rest

    trio.run(main)
