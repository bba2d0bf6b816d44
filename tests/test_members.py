"""Member queues: concurrency across members, priority classes, errors, statistics.

Time is virtual: every test runs under ``MockClock(autojump_threshold=0)``, so
a store that sleeps 3 s costs no real time and the clock reads exactly 3.0.
"""

from __future__ import annotations

from typing import Awaitable, Callable

import pytest
import trio
import trio.testing

from vraid.backends.base import StoreWrapper
from vraid.backends.memory import MemoryStore
from vraid.engine.clock import TrioClock
from vraid.errors import MemberIOError
from vraid.engine.members.queues import Members
from vraid.engine.members.request import Priority, Request, busy_fraction

from support import SlowStore

HOST, DESTAGE = Priority.HOST, Priority.DESTAGE

SIZE = 1 << 20


class FailingStore(StoreWrapper):
    """Fails reads and/or writes at chosen offsets."""

    def __init__(self, inner, *, bad: set[int], exc: type[BaseException] = OSError) -> None:
        super().__init__(inner)
        self.bad = bad
        self.exc = exc

    async def read(self, offset: int, length: int) -> bytes:
        await trio.sleep(0.5)
        if offset in self.bad:
            raise self.exc(f"medium error at {offset}")
        return await self.inner.read(offset, length)

    async def write(self, offset: int, data) -> None:
        await trio.sleep(0.5)
        if offset in self.bad:
            raise self.exc(f"medium error at {offset}")
        await self.inner.write(offset, data)


def run_members(stores, body: Callable[[Members], Awaitable[object]]):
    """Run ``body(members)`` with the member workers running, in virtual time."""

    async def main():
        members = Members(stores, TrioClock())
        result, error = None, None
        async with trio.open_nursery() as nursery:
            await nursery.start(members.serve)
            try:
                result = await body(members)
            except Exception as exc:  # re-raised below, outside the nursery's ExceptionGroup
                error = exc
            nursery.cancel_scope.cancel()
        if error is not None:
            raise error
        return result

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def _read(disk: int, offset: int, length: int, priority: int = HOST) -> Request:
    return Request(disk, "read", offset, length, memoryview(bytearray(length)), priority)


def _write(disk: int, offset: int, data: bytes, priority: int = HOST) -> Request:
    return Request(disk, "write", offset, len(data), memoryview(data), priority)


# -- concurrency ------------------------------------------------------------------------
@pytest.mark.parametrize("delays", [(1.0, 2.0, 3.0), (5.0, 0.25, 0.5, 4.0), (2.0,)])
def test_batch_runs_members_concurrently(delays) -> None:
    stores = [SlowStore(MemoryStore(SIZE), d) for d in delays]

    async def body(members: Members) -> float:
        start = trio.current_time()
        await members.run([_read(i, 0, 4096) for i in range(len(delays))])
        return trio.current_time() - start

    elapsed = run_members(stores, body)
    assert elapsed == pytest.approx(max(delays))
    if len(delays) > 1:
        assert elapsed < sum(delays)


def test_one_member_serves_one_request_at_a_time() -> None:
    stores = [SlowStore(MemoryStore(SIZE), 1.0), SlowStore(MemoryStore(SIZE), 1.0)]

    async def body(members: Members) -> float:
        start = trio.current_time()
        # three requests on disk 0, one on disk 1: disk 0 is the bottleneck
        await members.run([_read(0, 0, 512), _read(0, 512, 512), _write(0, 4096, b"x" * 512), _read(1, 0, 512)])
        return trio.current_time() - start

    assert run_members(stores, body) == pytest.approx(3.0)


def test_concurrent_batches_share_members() -> None:
    stores = [SlowStore(MemoryStore(SIZE), 1.0) for _ in range(3)]

    async def body(members: Members) -> list[float]:
        done: list[float] = []

        async def batch(reqs):
            await members.run(reqs)
            done.append(trio.current_time())

        async with trio.open_nursery() as n:
            n.start_soon(batch, [_read(0, 0, 512), _read(1, 0, 512)])
            n.start_soon(batch, [_read(2, 0, 512)])
        return sorted(done)

    assert run_members(stores, body) == [pytest.approx(1.0), pytest.approx(1.0)]


def test_empty_batch_returns_at_once() -> None:
    async def body(members: Members) -> float:
        start = trio.current_time()
        await members.run([])
        return trio.current_time() - start

    assert run_members([SlowStore(MemoryStore(SIZE), 1.0)], body) == 0.0


def test_reads_and_writes_move_the_bytes() -> None:
    stores = [MemoryStore(SIZE, f"m{i}") for i in range(3)]

    async def body(members: Members) -> list[bytes]:
        await members.run([_write(i, 4096 * i, bytes([i + 1]) * 4096) for i in range(3)])
        reqs = [_read(i, 4096 * i, 4096) for i in range(3)]
        await members.run(reqs)
        return [bytes(r.buffer) for r in reqs]

    assert run_members(stores, body) == [bytes([i + 1]) * 4096 for i in range(3)]
    assert stores[2].read_sync(8192, 4) == b"\x03" * 4


# -- priority -------------------------------------------------------------------------------
def test_host_requests_go_before_queued_destage_requests() -> None:
    log: list = []
    store = SlowStore(MemoryStore(SIZE), 1.0, log=log)

    async def body(members: Members) -> None:
        async with trio.open_nursery() as n:
            # t=0: a destage write occupies the disk for 1 s
            n.start_soon(members.run, [_write(0, 0, b"a" * 512, DESTAGE)])
            await trio.sleep(0.1)
            # t=0.1: two more destage writes queue up
            n.start_soon(members.run, [_write(0, 512, b"b" * 512, DESTAGE), _write(0, 1024, b"c" * 512, DESTAGE)])
            await trio.sleep(0.1)
            # t=0.2: host reads arrive; they overtake the queued destage writes
            n.start_soon(members.run, [_read(0, 2048, 512, HOST)])
            await trio.sleep(0.1)
            n.start_soon(members.run, [_read(0, 2560, 512, HOST)])

    run_members([store], body)
    assert [(op, off) for _, op, off, _ in log] == [
        ("write", 0),  # already running: not pre-empted
        ("read", 2048),  # host class first, FIFO inside it
        ("read", 2560),
        ("write", 512),  # then destage, FIFO
        ("write", 1024),
    ]
    assert [t for *_, t in log] == [pytest.approx(float(i)) for i in range(1, 6)]


def test_priority_is_per_member() -> None:
    """A host request on one member does not hold back destage work on another."""
    log: list = []
    stores = [SlowStore(MemoryStore(SIZE), 1.0, log=log, tag="d0"), SlowStore(MemoryStore(SIZE), 1.0, log=log, tag="d1")]

    async def body(members: Members) -> None:
        async with trio.open_nursery() as n:
            n.start_soon(members.run, [_write(1, 0, b"z" * 512, DESTAGE)])
            n.start_soon(members.run, [_read(0, 0, 512, HOST), _read(0, 512, 512, HOST)])

    run_members(stores, body)
    d1 = [(op, t) for tag, op, _, t in log if tag == "d1"]
    assert d1 == [("write", pytest.approx(1.0))]


def test_max_queue_counts_waiting_requests() -> None:
    store = SlowStore(MemoryStore(SIZE), 1.0)

    async def body(members: Members) -> dict:
        await members.run([_read(0, i * 512, 512, DESTAGE if i % 2 else HOST) for i in range(5)])
        return members.stats()[0]

    stats = run_members([store], body)
    assert stats["max_queue"] == 5
    assert stats["queue"] == 0


# -- errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize("exc", [OSError, ValueError])
def test_errors_propagate_as_member_io_error(exc) -> None:
    good = MemoryStore(SIZE, "good")
    bad = FailingStore(MemoryStore(SIZE, "bad"), bad={8192}, exc=exc)
    members_box: list[Members] = []

    async def body(members: Members) -> None:
        members_box.append(members)
        await members.run([_write(0, 0, b"ok" * 256), _read(1, 0, 512), _read(1, 8192, 512), _read(2, 0, 512)])

    with pytest.raises(MemberIOError) as info:
        run_members([good, bad, MemoryStore(SIZE)], body)
    err = info.value
    assert err.member == 1
    assert str(err).startswith("member 1:")
    assert "read at 8192+512 failed" in err.message and "medium error at 8192" in err.message
    # the batch finished before the error was raised: the other requests completed
    assert good.read_sync(0, 4) == b"okok"
    s = [d.stats for d in members_box[0].disks]
    assert (s[1].errors, s[1].reads) == (1, 1)
    assert (s[0].writes, s[2].reads) == (1, 1)


def test_out_of_range_request_is_a_member_io_error() -> None:
    async def body(members: Members) -> None:
        await members.run([_read(0, SIZE - 256, 512)])

    with pytest.raises(MemberIOError) as info:
        run_members([MemoryStore(SIZE, "small")], body)
    assert info.value.member == 0 and "outside" in info.value.message


def test_first_failed_request_is_reported_and_workers_survive() -> None:
    bad0 = FailingStore(MemoryStore(SIZE), bad={0})
    bad2 = FailingStore(MemoryStore(SIZE), bad={0})

    async def body(members: Members) -> bytes:
        with pytest.raises(MemberIOError) as info:
            await members.run([_write(2, 0, b"q" * 512), _write(0, 0, b"p" * 512)])
        assert info.value.member == 2  # the first failing request of the batch, in batch order
        # the workers still serve after an error
        ok = _read(0, 4096, 512)
        await members.run([ok, _read(2, 4096, 512)])
        return bytes(ok.buffer)

    assert run_members([bad0, MemoryStore(SIZE), bad2], body) == b"\0" * 512


# -- statistics ------------------------------------------------------------------------------------
def test_stats_count_requests_bytes_and_busy_time() -> None:
    stores = [SlowStore(MemoryStore(SIZE), 0.5), SlowStore(MemoryStore(SIZE), 2.0)]

    async def body(members: Members) -> tuple[list[dict], float]:
        await members.run([_write(0, 0, b"a" * 4096), _write(0, 4096, b"b" * 1024), _read(1, 0, 8192)])
        await members.run([_read(0, 0, 512), _read(0, 100_000, 2048)])
        return members.stats(), trio.current_time()

    stats, now = run_members(stores, body)
    s0, s1 = stats
    assert (s0["reads"], s0["writes"], s0["read_bytes"], s0["write_bytes"], s0["errors"]) == (2, 2, 2560, 5120, 0)
    assert (s1["reads"], s1["writes"], s1["read_bytes"], s1["write_bytes"], s1["errors"]) == (1, 0, 8192, 0, 0)
    assert s0["busy_seconds"] == pytest.approx(4 * 0.5)
    assert s1["busy_seconds"] == pytest.approx(2.0)
    # contiguous: the 2nd write starts where the 1st ended; the read at 0 does not
    assert s0["contiguous"] == 1
    assert now == pytest.approx(2.0 + 1.0)
    assert busy_fraction(_stats_obj(s1), now) == pytest.approx(2.0 / 3.0)
    assert busy_fraction(_stats_obj(s1), 0.0) == 0.0


def _stats_obj(d: dict):
    from vraid.engine.members.request import MemberStats

    fields = {k: v for k, v in d.items() if k in MemberStats.__dataclass_fields__}
    return MemberStats(**fields)


def test_flush_reaches_every_member() -> None:
    flushed: list[int] = []

    class Flushing(StoreWrapper):
        def __init__(self, inner, i):
            super().__init__(inner)
            self.i = i

        async def flush(self):
            await trio.sleep(1.0 + self.i)
            flushed.append(self.i)

    async def body(members: Members) -> float:
        start = trio.current_time()
        await members.flush()
        return trio.current_time() - start

    assert run_members([Flushing(MemoryStore(SIZE), i) for i in range(3)], body) == pytest.approx(3.0)
    assert sorted(flushed) == [0, 1, 2]
