"""Typed events (vraid.engine.events): one frozen record per kind, each with its cause.

The records' fields are what subscribers read; the engine tests check who publishes what
with which cause: a host write's plan is ``host``, a destage's is ``destage``, a rebuild
and a resync publish their own events with their causes, and their member requests go in
the rebuild priority class.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import trio
import trio.testing

from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.core.rxw import Plan
from vraid.engine.events import (
    Cause, DestageEvent, Event, EventBus, FailureEvent, FlushEvent, PlanEvent, PolicyEvent, PrefetchEvent, RebuildEvent,
    ResyncEvent, ScrubEvent, SpareEvent, WatermarksEvent,
)
from vraid.engine.members.request import Priority
from vraid.engine.raid.scrub import scrub_array
from vraid.engine.build import EngineConfig

from support import running, write_cache

K = 1024
G = Geometry(5, 3, 8, 4 * K, 8 * K, "left-symmetric", data_offset=4 * K)


def run(main):
    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def _plan() -> Plan:
    return Plan.build(2, (("D", "E"), ("E", "E")), (0, 1, 2))


# -- the records ------------------------------------------------------------------------------
RECORDS = [
    (PlanEvent, "plan", Cause.HOST, {"plan": _plan(), "row0": 1, "missing": (2,)}),
    (FlushEvent, "flush", Cause.HOST, {}),
    (WatermarksEvent, "watermarks", Cause.DESTAGE, {"hwm": 0.7, "lwm": 0.3}),
    (DestageEvent, "destage", Cause.DESTAGE, {"unit": 5, "stripe": 2, "ok": True}),
    (FailureEvent, "failure", None, {"disk": 1, "reason": "EIO", "missing": [1]}),
    (SpareEvent, "spare", None, {"store": "spare0"}),
    (RebuildEvent, "rebuild", Cause.REBUILD, {"role": 1, "spare": "spare0", "state": "running", "stripe": 3,
                                               "stripes": 8}),
    (ResyncEvent, "resync", Cause.RESYNC, {"stripes": 4}),
    (ScrubEvent, "scrub", Cause.SCRUB, {"done": 8, "total": 16, "mismatches": 1, "repaired": 0}),
    (PolicyEvent, "policy", None, {"key": "destage", "old": "hlwm", "new": "lt"}),
    (PrefetchEvent, "prefetch", Cause.PREFETCH, {"policy": "msp", "state": {"sc": 38, "sps": 1}, "ranges": [(40, 20)],
                                                 "stream": None}),
]


@pytest.mark.parametrize("cls, kind, cause, fields", RECORDS, ids=[r[1] for r in RECORDS])
def test_each_record_has_its_kind_fields_and_default_cause(cls, kind, cause, fields) -> None:
    ev = cls(time=1.5, **fields)
    assert isinstance(ev, Event) and ev.kind == cls.kind == kind
    assert ev.time == 1.5 and ev.cause is cause
    assert {f.name for f in dataclasses.fields(ev)} == {"time", "cause"} | set(fields) | (
        {"row0", "missing"} if cls is PlanEvent else {"stripe", "stripes"} if cls is RebuildEvent else set())
    for name, value in fields.items():
        assert getattr(ev, name) == value
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.time = 2.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        cls(1.5, **fields)  # keyword only: a record is never built by position


def test_plan_event_degraded_and_cause() -> None:
    ev = PlanEvent(time=0.0, plan=_plan(), cause=Cause.DESTAGE_L2)
    assert not ev.degraded and ev.cause.is_destage
    assert PlanEvent(time=0.0, plan=_plan(), missing=[0]).degraded
    assert PolicyEvent(time=0.0, key="ct", old="none", new="msc").change() == {"key": "ct", "old": "none", "new": "msc"}


def test_causes() -> None:
    assert [c.value for c in Cause] == ["host", "destage", "destage-l1", "destage-l2", "prefetch", "rebuild", "resync",
                                        "scrub"]
    assert {c for c in Cause if c.is_destage} == {Cause.DESTAGE, Cause.DESTAGE_L1, Cause.DESTAGE_L2}
    assert str(Cause.RESYNC) == "resync" and Cause("destage-l1") is Cause.DESTAGE_L1


def test_bus_keeps_the_latest_of_each_kind_and_refuses_untyped_events() -> None:
    bus = EventBus()
    seen: list[Event] = []
    unsubscribe = bus.subscribe(seen.append)
    a, b = FlushEvent(time=1.0), FlushEvent(time=2.0)
    bus.publish(a)
    bus.publish(SpareEvent(time=1.5, store="s"))
    bus.publish(b)
    assert seen == [a, SpareEvent(time=1.5, store="s"), b] and bus.latest["flush"] is b
    unsubscribe()
    bus.publish(FlushEvent(time=3.0))
    assert len(seen) == 3 and len(bus.history) == 4
    with pytest.raises(TypeError):
        bus.publish("flush", 1.0, None)  # type: ignore[call-arg]


# -- who publishes what, with which cause ---------------------------------------------------------
def _record_priorities(array) -> list[Priority]:
    """Wrap ``array.members.run``: the priority class of every member request from now on."""
    seen: list[Priority] = []
    run_batch = array.members.run

    async def recording(requests):
        seen.extend(Priority(r.priority) for r in requests)
        await run_batch(requests)

    array.members.run = recording
    return seen


def test_host_write_plans_are_host_and_destage_plans_are_destage() -> None:
    async def main():
        stores = [MemoryStore(G.member_size) for _ in range(3)]
        events: list[Event] = []
        async with running(EngineConfig(G, stores)) as a:  # write-through: the host write plans
            a.events.subscribe(events.append)
            prios = _record_priorities(a)
            await a.write(0, b"h" * 4096)
            await a.flush()
        plans = [e for e in events if isinstance(e, PlanEvent)]
        assert plans and all(e.cause is Cause.HOST for e in plans)
        assert prios and set(prios) == {Priority.HOST}
        assert isinstance(events[-1], FlushEvent) and events[-1].cause is Cause.HOST

        events.clear()
        cache = write_cache("stripe", 4 * G.stripe_data_bytes)
        async with running(EngineConfig(G, stores, **cache)) as a:
            a.events.subscribe(events.append)
            a.cache.pause()
            await a.write(0, b"d" * 4096)
            prios = _record_priorities(a)
            assert not [e for e in events if isinstance(e, PlanEvent)]  # absorbed: no plan yet
            assert await a.cache.destage_one()
        plans = [e for e in events if isinstance(e, PlanEvent)]
        assert len(plans) == 1 and plans[0].cause is Cause.DESTAGE and plans[0].plan.stripe == 0
        assert set(prios) == {Priority.DESTAGE}
        done = [e for e in events if isinstance(e, DestageEvent)]
        assert done and done[0].ok and done[0].stripe == 0 and done[0].cause is Cause.DESTAGE

    run(main)


def test_write_plan_takes_a_cause() -> None:
    from vraid.engine.raid.plans import dirty_z as _dirty_z
    from vraid.engine.raid.stripe import StripeBuffer

    async def main():
        stores = [MemoryStore(G.member_size) for _ in range(3)]
        events: list[Event] = []
        async with running(EngineConfig(G, stores)) as a:
            a.events.subscribe(events.append)
            buf = StripeBuffer(G, 1)
            await a.raid.write_plan(buf, _dirty_z(G.u, G.data_disks, 0, 0), cause=Cause.DESTAGE_L2)
            await a.raid.write_plan(buf, _dirty_z(G.u, G.data_disks, 0, 0), priority=Priority.PREFETCH)
        assert [e.cause for e in events if isinstance(e, PlanEvent)] == [Cause.DESTAGE_L2, Cause.PREFETCH]

    run(main)


def test_rebuild_and_resync_publish_their_causes_and_go_in_the_rebuild_class() -> None:
    async def main():
        stores = [MemoryStore(G.member_size) for _ in range(3)]
        events: list[Event] = []
        async with running(EngineConfig(G, stores)) as a:
            await a.write(0, np.random.default_rng(1).integers(0, 256, G.capacity, dtype=np.uint8).tobytes())
            a.events.subscribe(events.append)
            prios = _record_priorities(a)
            assert await a.raid.resync(range(G.stripes)) == G.stripes
            resync = [e for e in events if isinstance(e, ResyncEvent)]
            assert len(resync) == 1 and resync[0].stripes == G.stripes and resync[0].cause is Cause.RESYNC
            assert set(prios) == {Priority.REBUILD}

            prios.clear()
            a.raid.fail_member(1, "test")
            a.raid.add_spare(MemoryStore(G.member_size, "spare"))
            while a.raid.rebuild is not None:
                await trio.sleep(0.01)
        assert set(prios) == {Priority.REBUILD}
        failure = [e for e in events if isinstance(e, FailureEvent)]
        assert [(e.disk, e.reason, list(e.missing), e.cause) for e in failure] == [(1, "test", [1], None)]
        assert [e.store for e in events if isinstance(e, SpareEvent)] == ["spare"]
        rebuild = [e for e in events if isinstance(e, RebuildEvent)]
        assert rebuild[0].state == "started" and rebuild[-1].state == "done"
        assert all(e.cause is Cause.REBUILD and e.role == 1 and e.spare == "spare" for e in rebuild)
        progress = [e for e in rebuild if e.state == "running"]
        assert progress and progress[-1].stripe == G.stripes and progress[-1].stripes == G.stripes

    run(main)


def test_scrub_publishes_progress_with_cause_scrub() -> None:
    async def main():
        stores = [MemoryStore(G.member_size) for _ in range(3)]
        events: list[Event] = []
        async with running(EngineConfig(G, stores)) as a:
            await a.write(0, b"x" * G.capacity)
            a.events.subscribe(events.append)
            prios = _record_priorities(a)
            prog = await scrub_array(a.raid, batch=4)
        scrub = [e for e in events if isinstance(e, ScrubEvent)]
        assert [(e.done, e.total, e.mismatches) for e in scrub] == [(4, 8, 0), (8, 8, 0)]
        assert all(e.cause is Cause.SCRUB for e in scrub) and prog.done == 8
        assert set(prios) == {Priority.REBUILD}

    run(main)
