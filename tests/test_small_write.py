"""The inline small write (the small-write shape, ``vraid.engine.raid.shapes.small_write``): a write of whole blocks of one data strip,
done without a stripe buffer when nothing can interleave with it, must leave exactly what the
general path leaves: the members' bytes, the plans and their events, the metrics, the member
statistics and the write-intent bits; and a member that fails under it is failed and the
write carried on degraded, as the general path does."""

from __future__ import annotations

import random

import numpy as np
import pytest
import trio

from vraid.backends.memory import MemoryStore
from vraid.core.geometry import RESERVED, Geometry
from vraid.engine.host.array import Array
from vraid.engine.raid.layer import RaidLayer
from vraid.engine.events import PlanEvent
from vraid.engine.raid.scrub import scrub_array
from vraid.ondisk.bitmap import WriteIntentBitmap

BS = 4096


class FailingStore(MemoryStore):
    """An instant memory member whose reads or writes fail once ``fail`` names the op."""

    fail: str | None = None

    async def read(self, offset, length):
        if self.fail == "read":
            raise OSError(5, "injected read error")
        return await super().read(offset, length)

    async def write(self, offset, data):
        if self.fail == "write":
            raise OSError(5, "injected write error")
        await super().write(offset, data)


def _writes(g: Geometry, n: int, seed: int) -> list[tuple[int, bytes]]:
    """Random writes inside one stripe each: mostly one to four whole blocks of one strip (the
    small write), some across strips and some unaligned (the general path). One stripe each,
    so that every write is one task and the order of the plans is the same on every run (the
    stripes of a larger write run as concurrent tasks, which trio orders at random)."""
    rng = random.Random(seed)
    per, stripe_bytes = g.strip_size // BS, g.stripe_data_bytes
    out = []
    for _ in range(n):
        kind = rng.random()
        base = rng.randrange(g.capacity // stripe_bytes) * stripe_bytes
        if kind < 0.7:
            first = rng.randrange(per)
            off = base + rng.randrange(g.data_disks) * g.strip_size + first * BS
            length = rng.randint(1, per - first) * BS
        elif kind < 0.75:  # a whole stripe (the full-stripe write)
            off, length = base, stripe_bytes
        elif kind < 0.85:
            first = rng.randrange(stripe_bytes // BS - 1)
            off, length = base + first * BS, rng.randint(2, stripe_bytes // BS - first) * BS
        else:
            off = base + rng.randrange(stripe_bytes - 3 * BS)
            length = rng.randint(1, 3 * BS)
        out.append((off, rng.randbytes(length)))
    return out


def _general_path_only(array: Array) -> None:
    """Turn the small and full-stripe writes off on ``array`` (inline and locked): every write
    takes the general path."""
    array.raid.shapes = False


async def _run(g: Geometry, stores, writes, *, inline: bool, bitmap: bool = True):
    """Apply ``writes``; return what the general path must agree on."""
    intent = WriteIntentBitmap(g, 2) if bitmap else None
    plans: list[tuple] = []
    async with running(EngineConfig(g, stores, intent=intent)) as array:
        if not inline:
            _general_path_only(array)
        array.events.subscribe(lambda e: plans.append((e.plan.stripe, e.plan.z, e.plan.transformed, e.plan.requests,
                                                       e.row0, tuple(e.missing), e.cause))
                               if isinstance(e, PlanEvent) else None)
        for off, data in writes:
            await array.write(off, data)
        taken = array.raid.small_writes
        full = array.raid.full_stripe_writes
        timed = ("response", "_ms", "seconds", "busy", "utilization")  # wall-clock figures differ run to run
        metrics = {k: v for k, v in array.metrics.to_dict().items() if not any(t in k for t in timed)}
        stats = [{k: v for k, v in d.stats.to_dict().items() if k != "busy_seconds"} for d in array.members.disks]
        bits = sorted(intent.durable) if intent is not None else None
        health = [m["state"] for m in array.status()["members"]]
        scrub = await scrub_array(array.raid)
    return {"plans": plans, "metrics": metrics, "stats": stats, "bits": bits, "health": health,
            "mismatches": scrub.mismatches, "bytes": [bytes(s.read_sync(0, s.size)) for s in stores]}, (taken, full)


@pytest.mark.parametrize("ndisks", [3, 4, 5])
def test_the_inline_small_write_leaves_what_the_general_path_leaves(ndisks):
    g = small_geometry(ndisks=ndisks, stripes=24, data_offset=RESERVED)
    writes = _writes(g, 300, seed=ndisks)

    async def main():
        fast, (taken, full) = await _run(g, [MemoryStore(g.member_size) for _ in range(ndisks)], writes, inline=True)
        slow, none = await _run(g, [MemoryStore(g.member_size) for _ in range(ndisks)], writes, inline=False)
        assert none == (0, 0)
        # 3 and 4 disks: the plans choose RCW for these writes (as cheap or cheaper), never inline
        assert taken > 100 if ndisks == 5 else taken == 0
        assert full > 5  # whole stripes: written from the host's bytes, on any number of members
        assert fast == slow
        assert fast["mismatches"] == 0

    trio.run(main)


def test_the_data_reads_back_and_parity_rebuilds_a_lost_member():
    g = small_geometry(stripes=24, data_offset=RESERVED)
    writes = _writes(g, 200, seed=7)
    model = bytearray(g.capacity)
    for off, data in writes:
        model[off : off + len(data)] = data
    stores = [MemoryStore(g.member_size) for _ in range(g.ndisks)]

    async def main():
        async with running(EngineConfig(g, stores, intent=WriteIntentBitmap(g, 2))) as array:
            for off, data in writes:
                await array.write(off, data)
            assert array.raid.small_writes > 100
            assert await array.read(0, g.capacity) == bytes(model)
            array.raid.fail_member(2, "test")
            assert await array.read(0, g.capacity) == bytes(model)  # member 2 rebuilt from parity

    trio.run(main)


@pytest.mark.parametrize("op, disk_role", [("read", "data"), ("read", "parity"), ("write", "data"), ("write", "parity")])
def test_a_member_failing_under_the_inline_small_write_is_failed_and_the_write_done_degraded(op, disk_role):
    g = small_geometry(stripes=24, data_offset=RESERVED)
    off, data = 5 * g.strip_size + BS, bytes(range(256)) * 32  # two blocks of one strip
    stripe = off // g.stripe_data_bytes

    async def main(inline: bool):
        stores = [FailingStore(g.member_size) for _ in range(g.ndisks)]
        plans = []
        async with running(EngineConfig(g, stores, intent=WriteIntentBitmap(g, 2))) as array:
            if not inline:
                _general_path_only(array)
            await array.write(0, b"\x01" * 4 * BS)  # the bitmap bit of stripe 0's chunk...
            await array.write(off, b"\x02" * len(data))  # ... and of this one, durable: the inline path may run
            columns = array.mapping.columns(stripe)
            victim = columns[(off % g.stripe_data_bytes) // g.strip_size] if disk_role == "data" else columns[-1]
            stores[victim].fail = op
            array.events.subscribe(lambda e: plans.append((e.plan.z, tuple(e.missing))) if isinstance(e, PlanEvent) else None)
            await array.write(off, data)
            state = [m["state"] for m in array.status()["members"]]
            stores[victim].fail = None
            read = await array.read(off, len(data))
            metrics = {k: array.metrics.to_dict()[k] for k in ("plans", "host_writes")}
            return state, read, plans, metrics, array.raid.small_writes

    fast = trio.run(main, True)
    slow = trio.run(main, False)
    assert fast[:4] == slow[:4]
    state, read, plans, _, _ = fast
    assert read == data
    assert state.count("failed") == 1
    if op == "read":
        assert len(plans) == 2 and plans[1][1]  # planned again, degraded
    else:
        assert len(plans) == 1  # the other member holds its new blocks; the failed one is rebuilt from them
    assert fast[4] == 1  # only the write before the failure went inline (and, on a write error, none after)


def test_the_inline_small_write_waits_its_turn_behind_a_held_stripe_lock():
    """A stripe another task holds is never written inline: the write queues on the lock."""
    import trio.testing

    g = small_geometry(stripes=24, data_offset=RESERVED)
    order = []

    async def main():
        async with running(EngineConfig(g, [MemoryStore(g.member_size) for _ in range(g.ndisks)])) as array:
            held = array.raid.stripe_lock(0)
            await held.__aenter__()

            async def writer():
                await array.write(BS, b"\x07" * BS)
                order.append("write")

            async with trio.open_nursery() as nursery:
                nursery.start_soon(writer)
                await trio.testing.wait_all_tasks_blocked()
                order.append("released")
                await held.__aexit__(None, None, None)
            assert array.raid.small_writes == 1  # once it held the lock: under it, without a stripe buffer
            assert await array.read(BS, BS) == b"\x07" * BS
            await array.write(BS, b"\x08" * BS)  # nothing held now: inline
            assert array.raid.small_writes == 2

    trio.run(main)
    assert order == ["released", "write"]


def test_no_data_mode_takes_the_inline_path_without_bytes():
    """The metadata-only simulation (``members.no_data``) runs the same plans, no XOR."""
    g = small_geometry(stripes=24, data_offset=RESERVED)
    writes = [(s * g.strip_size, b"\x05" * BS) for s in range(20)]

    async def main():
        async with running(EngineConfig(g, [MemoryStore(g.member_size) for _ in range(g.ndisks)])) as array:
            array.members.no_data = True
            for off, data in writes:
                await array.write(off, data)
            assert array.raid.small_writes == len(writes)
            assert array.metrics.plans == len(writes)

    trio.run(main)


def test_a_stripe_lock_object_is_never_left_behind():
    g = small_geometry(stripes=24, data_offset=RESERVED)

    async def main():
        async with running(EngineConfig(g, [MemoryStore(g.member_size) for _ in range(g.ndisks)])) as array:
            for off, data in _writes(g, 100, seed=3):
                await array.write(off, data)
            assert array.raid.locks.table == {}

    trio.run(main)


def test_the_inline_write_xors_through_the_redundancy_scheme():
    """The parity arithmetic stays in vraid.core.redundancy (the seam rules): the inline
    path's parity equals the XOR of the row's data blocks."""
    g = small_geometry(stripes=24, data_offset=RESERVED)
    stores = [MemoryStore(g.member_size) for _ in range(g.ndisks)]

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            await array.write(3 * g.strip_size, b"\x0f" * BS)
            await array.write(3 * g.strip_size, b"\xf0" * BS)
            assert array.raid.small_writes == 2
            stripe = 3 // g.data_disks
            columns = array.mapping.columns(stripe)
            at = array.mapping.member_offset(stripe, 0)
            rows = [np.frombuffer(stores[d].read_sync(at, BS), np.uint8) for d in columns]
            assert not np.bitwise_xor.reduce(rows).any()

    trio.run(main)


# -- against a plain model, with a member failing at a random moment ------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from vraid.engine.build import EngineConfig

from support import running, small_geometry

G5 = small_geometry(stripes=24, data_offset=RESERVED)
_BLOCKS = G5.capacity // BS


@st.composite
def _write_ops(draw):
    """Writes, mostly whole blocks inside one strip (the inline path's), some unaligned or
    spanning strips and stripes."""
    n = draw(st.integers(1, 40))
    ops = []
    for _ in range(n):
        if draw(st.booleans()):
            strip = draw(st.integers(0, G5.capacity // G5.strip_size - 1))
            per = G5.strip_size // BS
            first = draw(st.integers(0, per - 1))
            off, length = strip * G5.strip_size + first * BS, draw(st.integers(1, per - first)) * BS
        else:
            off = draw(st.integers(0, G5.capacity - 1))
            length = draw(st.integers(1, min(3 * G5.stripe_data_bytes, G5.capacity - off)))
        ops.append((off, length, draw(st.integers(0, 255))))
    return ops


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_write_ops(), fail=st.none() | st.tuples(st.integers(0, 39), st.integers(0, 4), st.sampled_from(["read", "write"])))
def test_writes_read_back_as_the_model_with_a_member_failing_anywhere(ops, fail):
    model = bytearray(G5.capacity)
    stores = [FailingStore(G5.member_size) for _ in range(G5.ndisks)]

    async def main():
        async with running(EngineConfig(G5, stores, intent=WriteIntentBitmap(G5, 2))) as array:
            for i, (off, length, byte) in enumerate(ops):
                if fail is not None and i == fail[0]:
                    stores[fail[1]].fail = fail[2]
                data = bytes([byte]) * length
                await array.write(off, data)
                model[off : off + length] = data
            for s in stores:
                s.fail = None
            assert await array.read(0, G5.capacity) == bytes(model)
            failed = [m["state"] for m in array.status()["members"]].count("failed")
            assert failed <= 1
            if not failed:
                assert (await scrub_array(array.raid)).mismatches == 0

    trio.run(main)


@pytest.mark.parametrize("model,workload,extra", [
    ("hdd:st373454lc", "random-write", {}),
    ("hdd:st373454lc", "random-write:threads=8", {}),  # stripes contended: writes queue on the lock
    ("ssd", "random-write:threads=4", {"faults": ("disk2:eio=300-310",)}),  # a member fails mid-run
    ("none", "random-write:threads=8", {"no_data": True}),
])
def test_a_simulation_gives_the_same_results_with_the_small_write_under_the_lock(model, workload, extra, monkeypatch):
    """With members that take time (a simulation's disk models, which never run inline) the
    small write runs under the stripe lock: the JSON of ``vraid sim`` is the general path's."""
    from vraid.sim.simulator import SimConfig, run_sim

    config = SimConfig(disk_model=model, workload=workload, requests=600, seed=4, disk_size=16 << 20, **extra)
    arrays = []
    fast = run_sim(config, observe=arrays.append).to_json()
    assert arrays[0].raid.small_writes > 0
    monkeypatch.setattr(RaidLayer, "shapes", False)
    slow = run_sim(config, observe=arrays.append).to_json()
    assert arrays[1].raid.small_writes == 0
    assert fast == slow


@pytest.mark.parametrize("role", ["data", "parity"])
def test_a_member_failing_under_a_full_stripe_write_is_failed_and_the_write_done_degraded(role):
    """A whole stripe written from the host's bytes: a member that fails under it is failed,
    the write completes (the others hold their new blocks), as on the general path."""
    g = small_geometry(stripes=24, data_offset=RESERVED)
    stripe = 3
    off = stripe * g.stripe_data_bytes
    data = bytes(range(256)) * (g.stripe_data_bytes // 256)

    async def main(direct: bool):
        stores = [FailingStore(g.member_size) for _ in range(g.ndisks)]
        plans = []
        async with running(EngineConfig(g, stores, intent=WriteIntentBitmap(g, 2))) as array:
            if not direct:
                _general_path_only(array)
            await array.write(off, b"\x01" * len(data))  # sets the intent bit (general path) ...
            await array.write(off, b"\x02" * len(data))  # ... durable now: the direct path runs
            victim = array.mapping.columns(stripe)[0 if role == "data" else -1]
            stores[victim].fail = "write"
            array.events.subscribe(lambda e: plans.append((e.plan.z, tuple(e.missing))) if isinstance(e, PlanEvent) else None)
            await array.write(off, data)
            state = [m["state"] for m in array.status()["members"]]
            stores[victim].fail = None
            read = await array.read(off, len(data))
            return state, read, plans, array.raid.full_stripe_writes

    fast = trio.run(main, True)
    slow = trio.run(main, False)
    assert fast[:3] == slow[:3]
    state, read, plans, full = fast
    assert read == data and state.count("failed") == 1 and len(plans) == 1
    assert full == 1 and slow[3] == 0  # the second write went direct (a failed one is not counted)


def test_raid0_and_no_data_full_stripe_writes():
    """RAID-0 (no parity column) and the metadata-only simulation take the full-stripe path too."""
    g0 = Geometry(level=0, ndisks=4, stripes=16, block_size=BS, strip_size=4 * BS, data_offset=RESERVED)
    g5 = small_geometry(stripes=24, data_offset=RESERVED)

    async def main():
        async with running(EngineConfig(g0, [MemoryStore(g0.member_size) for _ in range(g0.ndisks)])) as array:
            data = bytes(range(256)) * (g0.stripe_data_bytes // 256)
            await array.write(2 * g0.stripe_data_bytes, data)
            assert array.raid.full_stripe_writes == 1
            assert await array.read(2 * g0.stripe_data_bytes, len(data)) == data
        async with running(EngineConfig(g5, [MemoryStore(g5.member_size) for _ in range(g5.ndisks)])) as array:
            array.members.no_data = True
            await array.write(0, b"\x05" * g5.stripe_data_bytes)
            assert array.raid.full_stripe_writes == 1 and array.metrics.plans == 1

    trio.run(main)


def test_a_mount_writes_the_stripes_of_a_large_write_in_the_writing_task():
    """On trio's real clock with instant members the stripes of one host write are written one
    after another by the writing task (no task per stripe); under a test or simulation clock,
    or with members that take time, they stay concurrent tasks (their order is recorded)."""
    import trio.testing

    from vraid.backends.base import StoreWrapper

    g = small_geometry(stripes=24, data_offset=RESERVED)
    data = bytes(range(256)) * (3 * g.stripe_data_bytes // 256 + 8)
    off = g.stripe_data_bytes - 1024  # a sub-block head, two whole stripes, a tail

    class Slow(StoreWrapper):
        instant = False

        async def write(self, offset, buf):
            await trio.sleep(0)
            await self.inner.write(offset, buf)

    async def main(stores, expect: bool):
        async with running(EngineConfig(g, stores)) as array:
            assert array.raid._one_task() is expect
            spawned = []
            nursery = trio.open_nursery

            def counting():
                spawned.append(1)
                return nursery()

            trio.open_nursery = counting  # what write_through opens for concurrent stripes
            try:
                await array.write(off, data)
            finally:
                trio.open_nursery = nursery
            assert bool(spawned) is not expect
            assert await array.read(off, len(data)) == data

    trio.run(main, [MemoryStore(g.member_size) for _ in range(g.ndisks)], True)
    trio.run(main, [Slow(MemoryStore(g.member_size)) for _ in range(g.ndisks)], False)
    trio.run(main, [MemoryStore(g.member_size) for _ in range(g.ndisks)], False,
             clock=trio.testing.MockClock(autojump_threshold=0))
