"""Tagged command queueing in the hdd model (backends/hdd.py) and the member queue above it.

Every preset against the numbers its model must produce (average seek, average rotational
latency, media rate, random 4 KiB IOPS at queue depth 1 and 32), contiguous single-block writes
at depth, and the normalized stride curve of ST373454LC against the shape of seed 000 Fig. 1/9.
Command queueing is on by default at a preset's native depth (the seeds' SCSI/FC drives
queue 16-64 commands; the ATA presets and the generic disk have none); ``tcq=off`` serves one
command at a time. All in virtual time.
"""

from __future__ import annotations

import random

import pytest
import trio
import trio.testing

from vraid.backends.hdd import HddModel
from vraid.backends.hdd_params import HddParams
from vraid.backends.memory import MemoryStore
from vraid.backends.models import PRESETS, parse_model, wrap
from vraid.engine.clock import TrioClock
from vraid.engine.members.queues import Members
from vraid.engine.members.request import Request
from vraid.errors import VraidError
from vraid.sim import stride_bench as sb

BLOCK = 4096
HDD = [n for n, p in PRESETS.items() if isinstance(p, HddParams)]


def run(fn, *args):
    return trio.run(fn, *args, clock=trio.testing.MockClock(autojump_threshold=0))


def model(spec: str, size: int = 64 << 20) -> HddModel:
    m = wrap(MemoryStore(size), spec, TrioClock())
    assert isinstance(m, HddModel)
    return m


async def _serve(m: HddModel, reqs: list[tuple[str, int, int]], depth: int) -> float:
    """Issue ``reqs`` keeping ``depth`` outstanding (at most the drive's queue); elapsed seconds."""
    t0 = trio.current_time()
    if min(depth, m.queue_depth) <= 1:
        for op, off, n in reqs:
            if op == "read":
                await m.read(off, n)
            else:
                await m.write(off, bytes(n))
        return trio.current_time() - t0
    slots = trio.Semaphore(min(depth, m.queue_depth))

    async def finish(cmd) -> None:
        await m.end(cmd)
        slots.release()

    async with trio.open_nursery() as nursery:
        for op, off, n in reqs:
            await slots.acquire()
            nursery.start_soon(finish, m.begin(op, off, n))
    return trio.current_time() - t0


def _random_reads(count: int, size: int, seed: int = 1) -> list[tuple[str, int, int]]:
    rng = random.Random(seed)
    return [("read", rng.randrange(size // BLOCK) * BLOCK, BLOCK) for _ in range(count)]


# ---------------------------------------------------------------------- each preset's numbers
@pytest.mark.parametrize("name", HDD)
def test_preset_seek_rotation_media_rate_and_iops(name):
    p = PRESETS[name]
    assert isinstance(p, HddParams)
    rev = 60.0 / p.rpm

    async def main():
        m = model(f"hdd:{name},read_ahead=off")
        # average seek: the calibrated curve over random sector pairs is the datasheet's
        assert m.seek.mean_read == pytest.approx(p.avg_seek, rel=0.02)
        assert m.seek.mean_write == pytest.approx(p.avg_write_seek or p.avg_seek, rel=0.02)
        # one at a time: random 4 KiB reads wait half a revolution on average
        t1 = await _serve(m, _random_reads(300, m.size), 1)
        assert m.stats.rotation_wait_seconds / m.stats.rotation_waits == pytest.approx(rev / 2, rel=0.15)
        iops1 = 300 / t1
        expect = 1.0 / (p.avg_seek + rev / 2 + p.overhead + BLOCK / (p.rate_outer * 1e6))
        assert iops1 == pytest.approx(expect, rel=0.2)
        # 32 outstanding: the drive's queue (SPTF or C-LOOK) serves them in a better order
        m32 = model(f"hdd:{name},read_ahead=off")  # the preset's own queue (on by default)
        iops32 = 600 / await _serve(m32, _random_reads(600, m32.size, 2), 32)
        if p.queue_depth > 1:
            assert iops32 > 1.4 * iops1, (iops1, iops32)
            assert m32.stats.reordered > 0 and m32.stats.max_queued >= min(32, p.queue_depth) - 1
            off = model(f"hdd:{name},read_ahead=off,tcq=off")  # one command at a time
            assert off.queue_depth == 1
            iops_off = 600 / await _serve(off, _random_reads(600, off.size, 2), 32)
            assert iops_off == pytest.approx(iops1, rel=0.1)
        else:  # no command queue: the same one-at-a-time service
            assert iops32 == pytest.approx(iops1, rel=0.1)
        # media rate: one large transfer at the outer edge of a partition-stroked disk; it
        # crosses tracks, each switch (skewed, so no lost revolution) costs its switch time
        mp = model(f"hdd:{name},stroke=partition")
        span = 4 << 20
        t = await _serve(mp, [("read", 0, span)], 1)
        # the wait for the first sector depends on the platter's angle when the read arrives
        # (the clock has moved on by the runs above): the media rate is the time after it
        assert mp.stats.rotation_waits <= 1
        t -= mp.stats.rotation_wait_seconds
        sustained = p.rate_outer * rev / (rev + max(p.head_switch, p.track_seek))
        assert span / t / 1e6 == pytest.approx(sustained, rel=0.05)

    run(main)


@pytest.mark.parametrize("name", [n for n in HDD if PRESETS[n].queue_depth > 1])  # type: ignore[union-attr]
def test_contiguous_single_block_writes_at_depth_run_at_media_rate(name):
    """A stream of contiguous 4 KiB writes with 32 outstanding: each is chained onto the
    transfer in progress, so the stream runs at the rate of one large write (seed 000 I-C:
    "t_c consists of only the transfer time"); one at a time each loses a revolution."""

    async def main():
        span = 2 << 20
        one = await _serve(model(f"hdd:{name},stroke=partition"), [("write", 0, span)], 1)
        m = model(f"hdd:{name},stroke=partition")  # the native queue, on by default
        blocks = [("write", b * BLOCK, BLOCK) for b in range(span // BLOCK)]
        deep = await _serve(m, blocks, 32)
        assert deep <= 1.05 * one  # no slower than one large write (the first wait may differ)
        assert span / deep / 1e6 >= 0.85 * PRESETS[name].rate_outer  # type: ignore[union-attr]
        assert m.stats.missed_rotations <= 2
        serial = await _serve(model(f"hdd:{name},stroke=partition,queue_depth=1"), blocks[:64], 1)
        assert serial > 10 * one * 64 / len(blocks)

    run(main)


# ---------------------------------------------------------------------- seed 000 Fig. 1 / Fig. 9 shape
def test_st373454lc_stride_curve_has_the_papers_shape():
    """Normalized time above 1.2 only for small strides, near 1 for the contiguous stream and
    past S_w^max; with a queue a slow stride costs about one more pass, not a revolution a
    block (one at a time it costs about 40x)."""
    deep = sb.bench_model("hdd:st373454lc", max_stride=12, span=2 << 20, passes=1, depth=32)
    w = dict(zip(deep.write.S, deep.write.normalized))
    lim = deep.limits()
    assert 2 <= lim["sw_max"] <= 8 and lim["sw_except"] == []
    assert all(v > 1.2 for s, v in w.items() if 1 < s < lim["sw_max"])
    assert all(0.7 < v < 1.2 for s, v in w.items() if s >= lim["sw_max"])
    assert 1.2 < w[2] < 4.0
    r = dict(zip(deep.read.S, deep.read.normalized))
    assert r[2] > 1.2 and lim["sr_max"] >= 2  # no read-ahead (sec. I-C): reads miss too
    serial = sb.bench_model("hdd:st373454lc", max_stride=4, span=256 << 10, passes=1, depth=1)
    assert serial.write.normalized[1] > 5 * w[2]


# ---------------------------------------------------------------------- the drive's queue
def test_overlapping_commands_keep_their_order_and_data():
    """A read queued before a write of the same block sees the old data; two writes of one
    block land in arrival order, whatever the drive's order."""

    async def main():
        clock = TrioClock()
        m = wrap(MemoryStore(64 << 20), "hdd:st373454lc,tcq=on", clock)
        await m.inner.write(0, b"\1" * BLOCK)
        members = Members([m], clock)
        async with trio.open_nursery() as nursery:
            await nursery.start(members.serve)
            far = [Request(0, "write", off, BLOCK, memoryview(b"\5" * BLOCK)) for off in (40 << 20, 20 << 20)]
            old = Request(0, "read", 0, BLOCK, memoryview(bytearray(BLOCK)))
            w1 = Request(0, "write", 0, BLOCK, memoryview(b"\2" * BLOCK))
            w2 = Request(0, "write", 0, BLOCK, memoryview(b"\3" * BLOCK))
            await members.run([*far, old, w1, w2])
            assert bytes(old.buffer) == b"\1" * BLOCK
            assert await m.inner.read(0, BLOCK) == b"\3" * BLOCK
            assert m.stats.max_queued >= 4
            nursery.cancel_scope.cancel()

    run(main)


@pytest.mark.parametrize("order", ["fifo", "clook"])
def test_member_hands_at_most_the_drive_depth(order):
    """The member queue hands a queueing drive up to its depth; the rest wait in the member's
    queue in its order (FIFO or C-LOOK, seed 003), and C-LOOK counts from the last handed over."""

    async def main():
        clock = TrioClock()
        m = wrap(MemoryStore(64 << 20), "hdd:st373454lc,queue_depth=4", clock)
        members = Members([m], clock, queue_order=order)
        disk = members[0]
        offsets = [o << 20 for o in (9, 3, 30, 1, 12, 50, 7, 22, 2, 40)]
        async with trio.open_nursery() as nursery:
            await nursery.start(members.serve)
            nursery.start_soon(members.run, [Request(0, "read", o, BLOCK) for o in offsets])
            await trio.testing.wait_all_tasks_blocked()
            assert m.stats.max_queued == 4 and disk.queue_depth == 6  # 4 in the drive, 6 wait
            while disk.stats.reads < len(offsets):
                await trio.sleep(0.001)
            nursery.cancel_scope.cancel()
        assert m.stats.max_queued == 4 and disk.stats.reads == len(offsets)
        assert disk.stats.busy_seconds <= trio.current_time()

    run(main)


@pytest.mark.parametrize("scheduling", ["sptf", "clook"])
def test_drive_orders_and_cancellation_leaves_the_queue_working(scheduling):
    async def main():
        m = model(f"hdd:st373454lc,tcq=on,scheduling={scheduling}")
        reqs = _random_reads(40, m.size, 7)
        cmds = [m.begin(op, off, n) for op, off, n in reqs]
        order: list[int] = []

        async def finish(i, cmd):
            await m.end(cmd)
            order.append(i)

        victim = cmds[-1]
        async with trio.open_nursery() as nursery:
            for i, c in enumerate(cmds[:-1]):
                nursery.start_soon(finish, i, c)
            await trio.sleep(0.001)
            assert not victim.dispatched
            with trio.CancelScope() as cs:  # its caller gives up while it is still queued
                cs.cancel()
                await m.end(victim)
        assert len(order) == 39 and m.stats.reordered > 0
        if scheduling == "clook":  # after the first, ascending from the head, wrapping once at most
            lbas = [reqs[i][1] for i in order[1:]]
            assert sum(1 for a, b in zip(lbas, lbas[1:]) if b < a) <= 1

    run(main)


# ---------------------------------------------------------------------- specs
def test_queue_spec_keys():
    ms = parse_model("hdd:st373454lc,queue_depth=8,scheduling=clook")
    assert (ms.params.queue_depth, ms.params.scheduling) == (8, "clook")  # type: ignore[union-attr]
    ms = parse_model("hdd:st373454lc,depth=1,sched=sptf")
    assert ms.params.queue_depth == 1  # type: ignore[union-attr]
    # on by default at the native depth; tcq=off serves one command at a time
    assert model("hdd:st373454lc").queue_depth == 64
    assert model("hdd:st373454lc,tcq=off").queue_depth == 1
    assert model("hdd:st373454lc,tcq=on").queue_depth == 64
    assert model("hdd:st52160n").queue_depth == 16 and model("hdd:91366u4").queue_depth == 1
    assert model("hdd:rpm=5400").queue_depth == 1  # the generic disk has no queue
    assert model("hdd:st373454lc,tcq=on,queue_depth=32").queue_depth == 32
    assert model("hdd:st373454lc,queue_depth=8").queue_depth == 8
    assert model("hdd:st373454lc,tcq=off,queue_depth=8").queue_depth == 1
    # per-preset CT limits are the queued disk's (the preset as it is): tcq=off names no preset
    from vraid.backends.models import disk_preset
    assert disk_preset("hdd:st373454lc") == disk_preset("hdd:st373454lc,tcq=on") == "st373454lc"
    assert disk_preset("hdd:st373454lc,queue_depth=64") == "st373454lc"
    assert disk_preset("hdd:st373454lc,tcq=off") is None
    assert disk_preset("hdd:st373454lc,queue_depth=8") is None
    assert disk_preset("hdd:91366u4,tcq=off") == "91366u4"  # no queue either way
    with pytest.raises(VraidError, match="does not queue"):
        parse_model("hdd:91366u4,tcq=on")
    assert PRESETS["st373454lc"].queue_depth == 64 and PRESETS["91366u4"].queue_depth == 1  # type: ignore[union-attr]
    with pytest.raises(VraidError, match="queue_depth"):
        parse_model("hdd:queue_depth=0")
    with pytest.raises(VraidError, match="scheduling"):
        parse_model("hdd:scheduling=fifo")


# ---------------------------------------------------------------------- the serial bus (bus_serial)
@pytest.mark.parametrize("op", ["write", "read"])
def test_a_serial_bus_moves_one_transfer_at_a_time(op):
    """``bus_serial=on``: the bus moves one command's data at a time, so a stream can go no faster
    than the bus; by default the transfers of queued commands overlap one another and only the
    media bounds it. At the preset's 320 MB/s, above the 96 MB/s media, it changes nothing."""
    reqs = [(op, i * 64 * BLOCK, 64 * BLOCK) for i in range(32)]  # 8 MiB in 256 KiB commands
    total = sum(n for _, _, n in reqs)

    async def main():
        spec = "hdd:st373454lc,stroke=partition,read_ahead=off"
        slow, slow_serial = [await _serve(model(f"{spec},bus=10{extra}"), reqs, 32)
                             for extra in ("", ",bus_serial=on")]
        assert slow_serial >= total / 10e6  # every byte crossed a 10 MB/s bus, one transfer at a time
        assert slow < 0.5 * slow_serial  # overlapping transfers: the media's pace, not the bus's
        fast, fast_serial = [await _serve(model(f"{spec}{extra}"), reqs, 32) for extra in ("", ",bus_serial=on")]
        assert fast_serial == pytest.approx(fast, rel=0.05)  # (the drive's order may differ a little)
        one = [await _serve(model(f"{spec},tcq=off,bus=10{extra}"), reqs, 1) for extra in ("", ",bus_serial=on")]
        assert one[1] >= total / 10e6 and one[0] == pytest.approx(one[1], rel=0.05)  # one at a time: serial anyway

    run(main)


def test_bus_serial_is_a_model_key():
    assert parse_model("hdd:st373454lc,bus_serial=on").params.bus_serial is True  # type: ignore[union-attr]
    assert parse_model("hdd:st373454lc").params.bus_serial is False  # type: ignore[union-attr]
    with pytest.raises(VraidError, match="bus_serial"):
        parse_model("hdd:st373454lc,bus_serial=maybe")
