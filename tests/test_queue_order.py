"""Queue orders (vraid.policies.queue) and the priority classes of a member's queue.

Seed 003, section 3.1: a disk serves its destage queue only while its host queue is
empty, and serves each queue in C-LOOK order. The pure orders are checked against a
reference model (hypothesis); a member with a disk timing model shows C-LOOK reordering a
queued batch; ``vraid sim`` stays deterministic with ``clook``.
"""

from __future__ import annotations

import contextlib
import json
import random
from dataclasses import dataclass

import pytest
import trio
import trio.testing
from hypothesis import given, strategies as st

from vraid.backends.base import StoreWrapper
from vraid.backends.memory import MemoryStore
from vraid.backends.models import wrap
from vraid.engine.clock import TrioClock
from vraid.engine.events import Cause
from vraid.engine.members.member import Member
from vraid.engine.members.queues import Members
from vraid.engine.members.request import Priority, Request
from vraid.errors import VraidError
from vraid.policies.queue import QUEUE_ORDERS, ClookOrder, FifoOrder, QueueOrder, queue_order


@dataclass
class Req:
    """What a queue order sees of a request: its offset (and, here, a tag)."""

    offset: int
    tag: int = 0
    length: int = 512
    priority: Priority = Priority.HOST


def clook_reference(waiting: list[tuple[int, int]], head: int) -> tuple[int, int]:
    """The documented C-LOOK choice among (offset, arrival) pairs: the lowest offset at or
    above the head (earliest arrival first), else the lowest offset of all."""
    above = [w for w in waiting if w[0] >= head]
    return min(above) if above else min(waiting)


# -- the orders themselves ------------------------------------------------------------------
def test_builtins_and_resolution() -> None:
    assert QUEUE_ORDERS == {"fifo": FifoOrder, "clook": ClookOrder}
    assert queue_order(None) is FifoOrder and queue_order("clook") is ClookOrder
    assert queue_order(" fifo ") is FifoOrder

    def factory() -> QueueOrder:
        return ClookOrder()

    assert queue_order(factory) is factory
    with pytest.raises(VraidError) as info:
        queue_order("elevator")
    assert "unknown queue order 'elevator'" in info.value.message and "fifo | clook" in info.value.hint


@pytest.mark.parametrize("cls", [FifoOrder, ClookOrder])
def test_empty_queue(cls) -> None:
    q = cls()
    assert len(q) == 0 and not q
    with pytest.raises(IndexError):
        q.pop(0)
    q.add(Req(7))
    assert len(q) == 1 and q
    assert q.pop(100).offset == 7
    assert not q


def test_fifo_ignores_the_head() -> None:
    q = FifoOrder()
    for i, off in enumerate([900, 100, 500, 100]):
        q.add(Req(off, i))
    assert [q.pop(head).tag for head in (0, 1000, 500, -1)] == [0, 1, 2, 3]


def test_clook_sweeps_up_from_the_head_then_wraps() -> None:
    q = ClookOrder()
    for i, off in enumerate([1000, 7000, 3000, 9000, 5000, 3000]):
        q.add(Req(off, i))
    head, order = 4500, []
    while q:
        r = q.pop(head)
        order.append((r.offset, r.tag))
        head = r.offset + r.length
    # 5000, 7000, 9000 above the head; wrap to 1000; the two at 3000 in arrival order
    assert order == [(5000, 4), (7000, 1), (9000, 3), (1000, 0), (3000, 2), (3000, 5)]


def test_clook_serves_a_request_at_the_head_first() -> None:
    q = ClookOrder()
    q.add(Req(4096, 0))
    q.add(Req(8192, 1))
    assert q.pop(8192).tag == 1  # sequential to the last request: no seek
    assert q.pop(8192 + 512).tag == 0  # nothing above: wrap


ops = st.lists(
    st.one_of(st.tuples(st.just("add"), st.integers(0, 50)), st.tuples(st.just("pop"), st.integers(-1, 60))),
    max_size=80,
)


@given(ops)
def test_clook_pops_every_request_once_in_the_documented_order(script) -> None:
    q = ClookOrder()
    waiting: list[tuple[int, int]] = []
    popped: list[int] = []
    n = 0
    for op, value in script:
        if op == "add":
            q.add(Req(value, n))
            waiting.append((value, n))
            n += 1
        elif waiting:
            want = clook_reference(waiting, value)
            got = q.pop(value)
            assert (got.offset, got.tag) == want
            waiting.remove(want)
            popped.append(got.tag)
        else:
            with pytest.raises(IndexError):
                q.pop(value)
        assert len(q) == len(waiting)
    head = 0
    while waiting:  # drain as a disk would: the head follows the requests
        want = clook_reference(waiting, head)
        got = q.pop(head)
        assert (got.offset, got.tag) == want
        waiting.remove(want)
        popped.append(got.tag)
        head = got.offset + got.length
    assert sorted(popped) == list(range(n)) and len(q) == 0


@given(st.lists(st.integers(0, 1000), max_size=40), st.integers(-1, 1000))
def test_clook_drain_is_one_ascending_sweep_then_one_wrap(offsets, head) -> None:
    q = ClookOrder()
    for i, off in enumerate(offsets):
        q.add(Req(off, i, length=0))  # zero length: the head stays on the request served
    got = []
    pos = head
    while q:
        r = q.pop(pos)
        got.append(r.offset)
        pos = r.offset
    upper = sorted(o for o in offsets if o >= head)
    lower = sorted(o for o in offsets if o < head)
    assert got == upper + lower


# -- priority classes in a member ----------------------------------------------------------
def test_priority_classes_and_causes() -> None:
    assert list(Priority) == [Priority.HOST, Priority.PREFETCH, Priority.DESTAGE, Priority.REBUILD]
    assert [Priority.of(c) for c in Cause] == [
        Priority.HOST, Priority.DESTAGE, Priority.DESTAGE, Priority.DESTAGE,
        Priority.PREFETCH, Priority.REBUILD, Priority.REBUILD, Priority.REBUILD,
    ]
    assert all(Priority.of(p.cause) is p for p in Priority)


requests = st.lists(st.tuples(st.sampled_from(list(Priority)), st.integers(0, 64)), max_size=40)


@pytest.mark.parametrize("order", ["fifo", "clook"])
@given(batch=requests, head=st.integers(-1, 64), script=st.lists(st.booleans(), max_size=60))
def test_member_never_inverts_priorities(order, batch, head, script) -> None:
    """Whatever the order inside a class, every pick comes from the highest class waiting."""
    member = Member(0, MemoryStore(1 << 20), TrioClock(), order)
    member._last_end = head
    pending = list(batch)
    waiting: list[Request] = []
    for add in script + [False] * (len(batch) + 1):
        if add and pending:
            prio, off = pending.pop()
            req = Request(0, "read", off * 512, 512, priority=prio)
            member.submit(req)
            waiting.append(req)
        else:
            picked = member._pick()
            if not waiting:
                assert picked is None
                continue
            assert picked is not None and picked.priority == min(r.priority for r in waiting)
            waiting.remove(picked)
            member._last_end = picked.offset + picked.length
        assert member.queue_depth == len(waiting)
        assert member.can_inline == (not waiting)


def test_unknown_queue_order_is_refused() -> None:
    with pytest.raises(VraidError):
        Members([MemoryStore(4096)], TrioClock(), queue_order="nope")


# -- a member with a timing model ------------------------------------------------------------
class Log(StoreWrapper):
    """Records the offsets a member serves, in order (not instant: every request is queued)."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.served: list[int] = []

    async def read(self, offset: int, length: int) -> bytes:
        self.served.append(offset)
        return await self.inner.read(offset, length)


def _serve_batch(order: str, offsets: list[int], start: int) -> tuple[list[int], float]:
    async def main() -> tuple[list[int], float]:
        clock = TrioClock()
        store = Log(wrap(MemoryStore(64 << 20), "hdd:st373454lc", clock))
        members = Members([store], clock, queue_order=order)
        async with trio.open_nursery() as nursery:
            await nursery.start(members.serve)
            await members.run([Request(0, "read", start, 4096)])  # the head is now at start + 4096
            store.served.clear()
            t0 = trio.current_time()
            await members.run([Request(0, "read", off, 4096, priority=Priority.DESTAGE) for off in offsets])
            elapsed = trio.current_time() - t0
            nursery.cancel_scope.cancel()
        return store.served, elapsed

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_clook_reorders_a_queued_batch_and_seeks_less() -> None:
    rng = random.Random(3)
    offsets = [rng.randrange(0, (64 << 20) // 4096) * 4096 for _ in range(24)]
    start = 32 << 20
    fifo, t_fifo = _serve_batch("fifo", offsets, start)
    clook, t_clook = _serve_batch("clook", offsets, start)
    assert fifo == offsets  # the order the batch was submitted in
    head = start + 4096
    assert clook == sorted(o for o in offsets if o >= head) + sorted(o for o in offsets if o < head)
    assert t_clook < 0.8 * t_fifo  # one sweep instead of random seeks across the disk


@pytest.mark.parametrize("order", ["fifo", "clook"])
def test_fast_paths_never_bypass_a_queue(order) -> None:
    """A request is charged on the virtual-time fast path only when its member has nothing
    queued or running; otherwise it queues behind, in its class's order."""

    async def main() -> None:
        clock = TrioClock()
        # one command at a time (tcq=off): the member queue's own fast paths are under test
        members = Members([wrap(MemoryStore(64 << 20), "hdd:st373454lc,tcq=off", clock)], clock, queue_order=order)
        disk = members[0]
        async with trio.open_nursery() as nursery:
            await nursery.start(members.serve)
            assert disk.can_charge and not disk.can_inline  # a timing model is never instant
            batch = [Request(0, "read", off, 4096, priority=Priority.DESTAGE) for off in (8 << 20, 1 << 20, 4 << 20)]
            nursery.start_soon(members.run, batch)
            await trio.testing.wait_all_tasks_blocked()
            assert disk.queue_depth == 2 and not disk.can_charge  # one runs, two wait
            late = Request(0, "read", 0, 4096)
            await members.run([late])  # queued (host class first), not charged past the queue
            assert disk.stats.reads == 2  # the running one, then the host read
            while disk.stats.reads < 4:
                await trio.sleep(0.001)
            await trio.sleep_until(disk.busy_until)
            assert disk.queue_depth == 0 and disk.can_charge
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


# -- the simulator -------------------------------------------------------------------------------
def test_vraid_sim_is_deterministic_with_clook(tmp_path) -> None:
    """Same config, same JSON with C-LOOK queues; and C-LOOK does change what the disks do when
    the disks serve one command at a time (tcq=off; with their queues on, the default, the 32
    outstanding reads all reach the drive, which orders them itself)."""
    from vraid.cli.main import main

    args = ["sim", "--disks", "4", "--disk-size", "16M", "--workload", "random-read:outstanding=32", "--requests", "600",
            "--seed", "5", "--disk-model", "hdd:st373454lc,tcq=off", "--json"]
    out = []
    for i, extra in enumerate((["--queue-order", "clook"], ["--queue-order", "clook"], [])):
        path = tmp_path / f"run{i}.json"
        with open(path, "w") as f, contextlib.redirect_stdout(f):
            assert main(args + extra) == 0
        out.append(json.loads(path.read_text()))
    assert out[0] == out[1]
    assert out[0]["config"]["policies"] == {"queue_order": "clook"}
    assert out[0]["metrics"] != out[2]["metrics"]
