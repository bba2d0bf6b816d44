"""vraid.engine.clock: the simulator's VirtualClock gives what MockClock(autojump_threshold=0) gives."""

from __future__ import annotations

import pytest
import trio
import trio.testing

import vraid.sim.simulator as simulator
from vraid.engine.clock import TrioClock, VirtualClock
from vraid.sim.simulator import SimConfig, run_sim


@pytest.mark.parametrize("settings", [
    dict(workload="random-write:threads=4", policies={"cache": "pbg", "cache_size": "1M"}),
    dict(workload="random-write:iat=4ms"),
    dict(workload="zipf", disk_model="ssd", policies={"queue_order": "clook"}),
], ids=["pbg-closed-4", "open-loop", "ssd-zipf-clook"])
def test_simulation_under_virtual_clock_equals_mock_clock(monkeypatch, settings):
    config = SimConfig(requests=200, seed=3, **settings)
    assert isinstance(simulator.loop_clock(), VirtualClock)  # the simulator's own clock
    virtual = run_sim(config).to_json()
    monkeypatch.setattr(simulator, "loop_clock", lambda: trio.testing.MockClock(autojump_threshold=0))
    assert run_sim(config).to_json() == virtual


def test_virtual_clock_jumps_to_deadlines_in_order():
    seen = []

    async def sleeper(name: str, seconds: float) -> None:
        await trio.sleep(seconds)
        seen.append((name, trio.current_time()))

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sleeper, "b", 0.5)
            nursery.start_soon(sleeper, "a", 0.25)
        assert trio.current_time() == 0.5

    trio.run(main, clock=VirtualClock())
    assert seen == [("a", 0.25), ("b", 0.5)]


def test_advance_alone_only_when_nothing_else_could_run():
    clock = TrioClock()

    async def main() -> None:
        virtual = trio.lowlevel.current_clock()
        assert isinstance(virtual, VirtualClock)
        await clock.sleep(0.125)  # alone: no scheduler pass, the time moves exactly
        assert clock.now() == 0.125
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.sleep, 0.01)  # runnable now: the caller must not jump past it
            assert not virtual.advance_alone(1.0)
            assert not clock.alone()
            await clock.sleep_until(1.0)
            assert clock.now() == 1.0
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.sleep, 0.5)
            await trio.testing.wait_all_tasks_blocked()  # it has registered its deadline (1.5)
            assert not virtual.advance_alone(1.5)  # a deadline at the same instant: trio decides
            assert virtual.advance_alone(1.25)
            assert clock.now() == 1.25
        with trio.CancelScope() as scope:
            scope.cancel()
            assert not virtual.advance_alone(2.0)  # a pending cancellation must be delivered
            await clock.sleep(1.0)
        assert scope.cancelled_caught

    trio.run(main, clock=VirtualClock())


def test_trio_clock_under_mock_clock_keeps_sleeping_normally():
    clock = TrioClock(scale=2.0)

    async def main() -> None:
        assert not clock.alone()
        await clock.sleep(0.25)
        assert clock.now() == 0.5

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_an_uncontended_checkpoint_may_be_skipped_on_the_real_clock_only():
    """TrioClock.may_skip_checkpoint: always on trio's real clock (a mount), never under
    MockClock (tests rely on its interleavings), as ``alone`` under a VirtualClock."""
    clock = TrioClock()
    seen: list[tuple[str, bool]] = []

    async def main(kind: str) -> None:
        seen.append((kind, clock.may_skip_checkpoint()))
        if kind == "virtual":
            seen.append(("alone", clock.alone()))

    trio.run(main, "real")
    trio.run(main, "mock", clock=trio.testing.MockClock(autojump_threshold=0))
    trio.run(main, "virtual", clock=VirtualClock())
    assert seen[:2] == [("real", True), ("mock", False)]
    assert seen[2][1] == seen[3][1]  # under a VirtualClock: exactly when alone


#: a pair where now + (deadline - now) rounds one ulp below the deadline
ROUNDS_SHORT = (384.46496893048953, 919.1861245949602)

_SLEEPS = """
import random, sys, trio, trio.testing
from vraid.engine.clock import TrioClock, VirtualClock

def deadlines():
    rnd = random.Random(5)
    out = [{a}, {b}]
    now = out[-1]
    for _ in range(400):  # jumps of up to 3x the time so far, where the rounding happens
        now = now + now * rnd.uniform(0.0, 2.0) + rnd.random()
        out.append(now)
    return out

async def main(own):
    clock, times = TrioClock(), []
    for i, d in enumerate(deadlines()):
        if own and i % 2:
            await clock.sleep_until(d)  # alone: VirtualClock.advance_alone
        else:
            await trio.sleep_until(d)  # the run loop: VirtualClock.deadline_to_sleep_time
        times.append(repr(trio.current_time()))
    return times

for own in (True, False):
    mock = trio.run(main, own, clock=trio.testing.MockClock(autojump_threshold=0))
    virtual = trio.run(main, own, clock=VirtualClock())
    print("same" if mock == virtual else "differ", len(mock), flush=True)
"""


def test_a_jump_that_rounds_short_of_its_deadline_lands_on_it_as_mock_clocks_does():
    """now + (deadline - now) can round below the deadline; MockClock then jumps again and
    lands on it. VirtualClock once answered "sleep for ever" there, and its loop hung (the
    msc-ct run of 2026-11-23). In a child process, so that a hang fails the test."""
    import subprocess
    import sys

    now, deadline = ROUNDS_SHORT
    assert now + (deadline - now) < deadline
    code = _SLEEPS.format(a=repr(now), b=repr(deadline))
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"a run under VirtualClock hung (printed {exc.stdout!r})")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["same", "402"] * 2
