"""A read inside one strip of a healthy array (``Array._read_members``) makes its one member
request directly: the same request the general path makes from the extents, and a member
that fails under it is failed and the read answered from the others."""

from __future__ import annotations

import random

import pytest
import trio

from vraid.backends.memory import MemoryStore
from vraid.core.geometry import LAYOUTS, RESERVED, Geometry

from test_small_write import FailingStore
from vraid.engine.build import EngineConfig, build_engine

from support import running, write_cache

BS = 4096


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("ndisks", [3, 4, 5, 7])
def test_the_direct_request_is_the_one_the_extents_give(layout, ndisks):
    g = Geometry(5, ndisks, 20, BS, 16 * 1024, layout=layout, data_offset=RESERVED)
    array = build_engine(EngineConfig(g, [MemoryStore(g.member_size) for _ in range(ndisks)])).array  # not running
    mapping, strip = array.mapping, g.strip_size
    rng = random.Random(ndisks)
    for _ in range(500):
        first = rng.randrange(g.capacity // BS) * BS
        n = rng.randint(1, (strip - first % strip) // BS) * BS
        (ext,) = mapping.extents(first, n)
        (req,) = array.raid._read_requests(ext)
        stripe, k = divmod(first // strip, g.data_disks)
        assert (req.disk, req.offset, req.length) == (mapping.data_disk(stripe, k), mapping.member_offset(stripe) + first % strip, n)


def test_a_member_failing_under_a_one_strip_read_is_failed_and_the_read_reconstructed():
    g = Geometry(5, 5, 8, BS, 16 * 1024, data_offset=RESERVED)
    stores = [FailingStore(g.member_size) for _ in range(5)]
    data = bytes(range(256)) * (g.stripe_data_bytes // 256)

    async def main():
        async with running(EngineConfig(g, stores)) as array:
            await array.write(0, data)
            disk = array.mapping.data_disk(0, 1)
            stores[disk].fail = "read"
            reads = array.members.disks[disk].stats.reads
            assert await array.read(g.strip_size + 100, 3000) == data[g.strip_size + 100 : g.strip_size + 3100]
            assert array.members.disks[disk].stats.errors == 1 and array.members.disks[disk].stats.reads == reads
            assert array.status()["members"][disk]["state"] == "failed"
            assert await array.read(0, len(data)) == data

    trio.run(main)


def test_unaligned_reads_inside_and_across_strips_read_back():
    g = Geometry(5, 5, 8, BS, 16 * 1024, data_offset=RESERVED)
    rng = random.Random(5)
    model = rng.randbytes(g.capacity)

    async def main():
        async with running(EngineConfig(g, [MemoryStore(g.member_size) for _ in range(5)])) as array:
            await array.write(0, model)
            for _ in range(400):
                off = rng.randrange(g.capacity)
                n = rng.randint(1, min(3 * g.strip_size, g.capacity - off))
                assert await array.read(off, n) == model[off : off + n]

    trio.run(main)


class FailingSyncStore(MemoryStore):
    """A memory member whose reads fail once ``fail`` says so, in ``read_sync`` (which its
    ``read`` calls): it keeps ``sync_reads``, so the direct read runs on it."""

    fail: str | None = None

    def read_sync(self, offset, length):
        if self.fail == "read":
            raise OSError(5, "injected read error")
        return super().read_sync(offset, length)


def test_a_store_that_overrides_read_is_never_read_directly():
    """``sync_reads`` is inherited only while ``read`` is: a store that puts faults or time
    into ``read`` (test_small_write's FailingStore) must be awaited, never bypassed."""
    assert MemoryStore.sync_reads and FailingSyncStore.sync_reads
    assert not FailingStore.sync_reads


def test_the_direct_host_read_counts_what_the_read_path_counts():
    """``Array._read_now`` (no cache of any kind in front, member idle and read synchronously)
    leaves the same bytes, read-path statistics, member statistics and metrics as the long
    path through ``ReadPath``, the target and ``read_members``; also when a member fails
    under it."""
    g = Geometry(5, 5, 8, BS, 16 * 1024, data_offset=RESERVED)
    rng = random.Random(11)
    model = rng.randbytes(g.capacity)
    reads = []
    for _ in range(400):
        at = rng.randrange(g.capacity - 1)
        reads.append((at, rng.randint(1, min(3 * BS, g.capacity - at))))  # inside one strip or across
    reads.insert(200, ("fail", None))

    async def main(direct: bool):
        stores = [FailingSyncStore(g.member_size) for _ in range(5)]
        taken = []
        async with running(EngineConfig(g, stores)) as array:
            await array.write(0, model)
            inner = array._read_now
            if direct:
                def counting(offset, length, start):
                    try:
                        out = inner(offset, length, start)
                    except Exception:
                        taken.append(True)
                        raise
                    taken.append(out is not None)
                    return out

                array._read_now = counting
            else:
                array._read_now = _none  # never applies: every read takes the long path
            got = []
            for at, n in reads:
                if at == "fail":
                    stores[array.mapping.data_disk(3, 2)].fail = "read"
                    at, n = 3 * g.stripe_data_bytes + 2 * g.strip_size + 100, 2000  # that member's strip
                got.append(await array.read(at, n))
            stats, members, metrics = _untimed_counts(array)
            states = [m["state"] for m in array.status()["members"]]
            return got, stats, members, metrics, states, taken

    fast = trio.run(main, True)
    slow = trio.run(main, False)
    assert fast[:5] == slow[:5]
    assert fast[0] == [model[at : at + n] for at, n in
                       [(r if r[0] != "fail" else (3 * g.stripe_data_bytes + 2 * g.strip_size + 100, 2000)) for r in reads]]
    assert fast[4].count("failed") == 1
    assert fast[2][fast[4].index("failed")]["errors"] == 1  # the failed read counted on its member
    assert sum(fast[5]) > 50 and not all(fast[5])  # many went direct; across strips and degraded ones did not


def _none(offset, length, start):
    return None


def _untimed_counts(array):
    """The read path's statistics, every member's and the array's metrics, without the
    figures that depend on the wall clock."""
    timed = ("seconds", "response", "_ms", "busy", "utilization", "idle")
    stats = {k: v for k, v in vars(array.reads.stats).items() if not k.startswith("_") and not any(t in k for t in timed)
             and not callable(v)}
    members = [{k: v for k, v in d.stats.to_dict().items() if k != "busy_seconds"} for d in array.members.disks]
    metrics = {k: v for k, v in array.metrics.to_dict().items() if not any(t in k for t in timed)}
    return stats, members, metrics


@pytest.mark.parametrize("org", ["pbg", "stripe"])
def test_a_cache_that_holds_nothing_of_the_stripe_lets_the_read_go_direct(org):
    """With a write-back cache as a mount runs it (no fill on a miss), a one-strip read of a
    stripe the cache holds nothing of goes direct (``WriteBackCache.passes_by``) and leaves
    what the long path through the cache leaves: bytes, the cache's read counts, the read
    path's and members' statistics, the metrics; a stripe it holds blocks of never does."""
    from vraid.sim.driver import deterministic_trio

    g = Geometry(5, 5, 16, BS, 16 * 1024, data_offset=RESERVED)
    rng = random.Random(5)
    ops = []
    for i in range(600):
        if i % 6 == 0:
            ops.append(("w", rng.randrange(g.capacity // BS) * BS, rng.randbytes(rng.choice([BS, 3 * BS]))))
        else:
            at = rng.randrange(g.capacity - 1)
            ops.append(("r", at, rng.randint(1, min(2 * BS, g.capacity - at))))

    async def main(direct: bool):
        cfg = write_cache(org, g.stripe_data_bytes * 4, destage="hlwm:high=1.0,low=0.9")
        taken = []
        async with running(EngineConfig(g, [MemoryStore(g.member_size) for _ in range(5)], **cfg)) as array:
            cache = array.cache
            cache.serve_a_mount()
            inner = array._read_now

            def counting(offset, length, start):
                held = offset // g.stripe_data_bytes in cache._per_stripe
                out = inner(offset, length, start)
                assert out is None or not held  # never past a stripe the cache holds
                taken.append(out is not None)
                return out

            array._read_now = counting if direct else _none
            got = []
            for op, at, x in ops:
                if op == "w":
                    await array.write(at, x[: g.capacity - at])
                else:
                    got.append(await array.read(at, x))
            stats, members, metrics = _untimed_counts(array)
            m = cache.metrics.to_dict()
            return got, stats, members, metrics, (m["read_blocks"], m["read_hit_blocks"]), taken

    with deterministic_trio(1):
        fast = trio.run(main, True)
    with deterministic_trio(1):
        slow = trio.run(main, False)
    assert fast[:5] == slow[:5]
    model = bytearray(g.capacity)
    want = []
    for op, at, x in ops:
        if op == "w":
            model[at : at + len(x)] = x[: g.capacity - at]
        else:
            want.append(bytes(model[at : at + x]))
    assert fast[0] == want
    assert sum(fast[5]) > 100 and not all(fast[5])
