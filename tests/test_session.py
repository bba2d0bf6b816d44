"""vraid.testing.session: a synchronous handle on an engine in virtual time."""

from __future__ import annotations

import time

import pytest
import trio

from vraid.core.geometry import RESERVED, Geometry
from vraid.engine.build import EngineConfig
from vraid.errors import OutOfRange, VraidError
from vraid.testing.session import Session, SessionError

K = 1024
G = Geometry.for_disk_size(level=5, ndisks=4, disk_size=RESERVED + 32 * 16 * K, strip_size=16 * K)
CACHED = EngineConfig(G, policies={"cache": "stripe"}, cache_size=6 * G.stripe_data_bytes, disk_model="hdd")


def test_write_read_flush_and_errors():
    with Session(EngineConfig(G, disk_model="hdd")) as s:
        t0 = s.now
        s.write(1000, b"hello")
        assert s.read(998, 9) == b"\0\0hello\0\0"
        s.flush()
        assert s.now > t0, "the disk model's time passed (virtual)"
        with pytest.raises(OutOfRange):
            s.write(G.capacity - 1, b"xy")
        m = s.metrics()
        assert m["host_writes"] == 1 and m["host_reads"] == 1
    with pytest.raises(SessionError):
        s.read(0, 1)


def test_time_stands_still_between_calls_and_advance_moves_it():
    with Session(CACHED) as s:
        s.write(0, b"x" * 4096)
        t = s.now
        time.sleep(0.05)
        assert s.now == t
        s.advance(2.5)
        assert s.now == pytest.approx(t + 2.5)


def test_pause_step_and_next_plan():
    with Session(CACHED) as s:
        s.pause()
        assert s.next_plan() is None
        for stripe in (3, 1):
            s.write(stripe * G.stripe_data_bytes, b"a" * 8192)
        s.advance(1.0)
        status = s.status()
        assert status["cache"]["dirty_units"] == 2, "paused: nothing was destaged"
        assert s.next_plan(destage=True) is None
        assert s.step()
        first = s.next_plan(destage=True)
        assert first is not None and first.plan.stripe in (1, 3)
        assert s.step()
        second = s.next_plan()
        assert second.plan.stripe in (1, 3) and second.plan.stripe != first.plan.stripe
        assert not s.step(), "nothing dirty is left"
        assert s.status()["cache"]["dirty_units"] == 0
        s.resume()
        assert s.metrics()["cache"]["destages_finished"] == 2


def test_write_through_plans_and_step_without_cache():
    with Session(EngineConfig(G)) as s:
        s.write(0, b"z" * 100)
        plan = s.next_plan()
        assert plan is not None and plan.plan.stripe == 0 and not plan.cause.is_destage
        with pytest.raises(VraidError, match="without a write cache"):
            s.step()


def test_a_bad_config_fails_at_start_with_its_own_error():
    with pytest.raises(VraidError, match="unknown cache organisation"):
        Session(EngineConfig(G, policies={"cache": "lfu"}))


def test_rate_paced_time_and_background_tasks():
    s = Session(CACHED, rate=100.0)
    try:
        done = []

        async def writer():
            for i in range(20):
                await s.array.write(i * 4096, b"w" * 4096)
                await trio.sleep(0.01)
            done.append(True)

        t = s.now
        s.start_soon(writer)
        deadline = time.monotonic() + 20
        while not done:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert s.now > t, "time flows on its own at a rate"
        s.set_rate(0)
        t = s.now
        time.sleep(0.05)
        assert s.now == t
        assert s.read(0, 4096) == b"w" * 4096
    finally:
        s.close()
    assert not s.alive


def test_a_failing_background_task_ends_the_session():
    s = Session(EngineConfig(G), rate=1.0)

    async def boom():
        raise RuntimeError("driver broke")

    s.start_soon(boom)
    deadline = time.monotonic() + 10
    while s.alive:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert isinstance(s.error, RuntimeError)
    with pytest.raises(SessionError):
        s.read(0, 1)
    with pytest.raises(SessionError):
        s.close()
