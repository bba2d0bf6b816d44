"""vraid.engine.host.live: step mode (pause, step, resume), run-time policy changes, snapshots and
the control handlers, on the real engine in virtual time."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from vraid.backends.memory import MemoryStore
from vraid.errors import VraidError
from vraid.engine.host.live import LiveState, derive_rates, history_buckets
from vraid.engine.build import EngineConfig

from support import run_virtual, running, small_geometry, write_cache

K = 1024
STRIPE = 4 * 16 * K  # data bytes of one stripe of small_geometry(stripes=16)


def _array(cache_units: int = 4, destage: str = "hlwm:high=0.5,low=0.25", order: str = "lrw", ct=None):
    g = small_geometry(stripes=16)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(g.ndisks)]
    cfg = write_cache("stripe", cache_units * STRIPE, order=order, destage=destage)
    return running(EngineConfig(g, stores, **cfg, instances={"ct": ct}))


def _partial(stripe: int) -> bytes:
    return bytes([stripe + 1]) * 4096


def test_pause_stops_destaging_and_a_full_cache_makes_writes_wait():
    async def main():
        async with _array(cache_units=4) as a:
            live = LiveState(a)
            live.pause()
            for s in range(4):
                await a.write(s * STRIPE, _partial(s))
            await trio.sleep(5)
            assert a.cache.metrics.destages_started == 0
            assert len(a.cache.dirty_keys) == 4  # above the HWM, and still nothing destaged
            with trio.move_on_after(5) as scope:
                await a.write(4 * STRIPE, _partial(4))  # no room: waits while paused
            assert scope.cancelled_caught
            assert a.cache.metrics.destages_started == 0
            live.resume()
            await a.write(4 * STRIPE, _partial(4))
            assert a.cache.metrics.destages_finished >= 1

    run_virtual(main)


def test_step_destages_exactly_one_stripe_and_unblocks_a_waiting_write():
    async def main():
        async with _array(cache_units=4) as a:
            live = LiveState(a)
            live.pause()
            for s in range(4):
                await a.write(s * STRIPE, _partial(s))
            done = trio.Event()

            async def writer():
                await a.write(4 * STRIPE, _partial(4))  # waits for room
                done.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(writer)
                await trio.sleep(1)
                assert not done.is_set() and a.cache.waiters == 1
                first = a.cache.order.next()
                plans = await live.step()
                assert [p["unit"] for p in plans] == [first]
                assert plans[0]["stripe"] == first and plans[0]["destage"] is True
                assert a.cache.metrics.destages_finished == 1
                await done.wait()  # the freed unit made room: no deadlock
            await trio.sleep(5)
            assert a.cache.metrics.destages_finished == 1  # still paused: only the step destaged
            snap = live.snapshot()
            assert snap["paused"] and snap["step"][0]["unit"] == first
            more = await live.step(2)
            assert len(more) == 2 and a.cache.metrics.destages_finished == 3
            live.resume()
            assert live.snapshot()["step"] == []
            await a.flush()
            assert not a.cache.dirty_keys

    run_virtual(main)


def test_step_without_dirty_units_destages_nothing_and_shutdown_resumes():
    async def main():
        async with _array() as a:
            live = LiveState(a)
            assert await live.step() == []
            await a.write(0, _partial(0))
            live.pause()
            await a.shutdown()  # a paused destager must not hold the unmount
            assert not a.cache.dirty_keys and not a.cache.paused

    run_virtual(main)


def test_set_order_is_seeded_with_the_dirty_units_and_set_scheduler_takes_over():
    async def main():
        async with _array(cache_units=8, destage="hlwm:high=1.0,low=0.9") as a:
            live = LiveState(a)
            for s in (5, 2, 7, 0):
                await a.write(s * STRIPE, _partial(s))
            assert a.cache.order.keys() == [5, 2, 7, 0]
            change = live.set_policy("destage_order", "cscan")
            assert change == {"key": "destage_order", "old": "lrw", "new": "cscan"}
            assert sorted(a.cache.order.keys()) == [0, 2, 5, 7] and a.cache.order.name == "cscan"
            assert a.cache.metrics.destages_started == 0
            change = live.set_policy("destage", "hlwm:high=0.25,low=0")
            assert change["old"].startswith("hlwm:high=1.0") and change["new"].startswith("hlwm:high=0.25")
            await trio.sleep(2)
            assert not a.cache.dirty_keys  # the new scheduler destaged everything
            assert [c["key"] for c in live.snapshot()["policy_log"]] == ["destage_order", "destage"]
            assert a.events.latest["policy"].key == "destage"

    run_virtual(main)


@pytest.mark.parametrize("key, value, words", [
    ("destage", "nonsense", "unknown destage scheduler"),
    ("destage", "hlwm:high=2", "high"),
    ("destage_order", "random", "unknown destage order"),
    ("rebuild_speed", "1", "unknown policy key"),
    ("ct", "msc:sr_max=0", "sr_max"),
])
def test_bad_policy_changes_nothing(key, value, words):
    async def main():
        async with _array() as a:
            live = LiveState(a)
            before = live.policies()
            with pytest.raises(VraidError, match=words):
                live.set_policy(key, value)
            assert live.policies() == before and "policy" not in a.events.latest

    run_virtual(main)


def test_ct_can_be_switched_on_and_off():
    async def main():
        async with _array() as a:
            live = LiveState(a)
            change = live.set_policy("ct", "msc:sr_max=4,sw_max=4")
            assert change["old"] == "none" and change["new"].startswith("msc:sr_max=4,sw_max=4")
            assert live.policies()["ct"] == change["new"]
            # C blocks between D blocks: the write transform fills the gap
            await a.write(0, b"a" * 4096)
            await a.write(2 * 4096, b"b" * 4096)
            plans = await live.step()
            assert plans[0]["ct"].startswith("msc")
            assert live.set_policy("ct", "none")["new"] == "none" and a.ct is None

    run_virtual(main)


def test_handlers_refuse_bad_requests_and_answer_json():
    async def main():
        async with _array() as a:
            h = LiveState(a).handlers()
            for cmd, req in [("step", {"count": "1"}), ("step", {"count": 0}), ("step", {"count": True}),
                             ("step", {"count": 10**9}), ("snapshot", {"buckets": -1}),
                             ("snapshot", {"window": "x"}), ("ctl_set", {"key": 1, "value": "x"}),
                             ("ctl_set", {}), ("ctl_set", {"key": "destage", "value": ["hlwm"]}),
                             ("ctl_set", {"key": "nope", "value": "x"})]:
                answer = await h[cmd]({"cmd": cmd} | req)
                assert answer["ok"] is False and answer["error"], (cmd, req)
            got = await h["ctl_get"]({"cmd": "ctl_get"})
            assert set(got["keys"]) >= {"destage", "destage_order", "ct"}
            assert got["policies"]["destage_order"] == "lrw"
            await a.write(0, _partial(0))
            step = await h["step"]({"cmd": "step", "count": 1})
            assert step["destaged"] == 1 and step["paused"] is True
            snap = (await h["snapshot"]({"cmd": "snapshot", "buckets": 50, "window": 10}))["snapshot"]
            assert len(snap["history"]) == 50
            json.dumps(snap)  # JSON-ready
            assert (await h["resume"]({"cmd": "resume"}))["paused"] is False

    run_virtual(main)


def test_no_cache_refuses_step_mode():
    async def main():
        g = small_geometry(stripes=16)
        async with running(EngineConfig(g, [MemoryStore(g.member_size, f"m{i}") for i in range(5)])) as a:
            live = LiveState(a)
            answer = await live.handlers()["pause"]({"cmd": "pause"})
            assert answer["ok"] is False and "without a write cache" in answer["error"]
            await a.write(0, b"x" * 4096)
            snap = live.snapshot()
            assert snap["plan"]["destage"] is False and snap["history"] == []

    run_virtual(main)


def test_history_buckets_hold_samples_and_mark_destages():
    history = [(0.0, 0.1, 0.9, 0.5, 0), (2.0, 0.6, 0.9, 0.5, 0), (2.5, 0.95, 0.9, 0.5, 2), (6.0, 0.4, 0.8, 0.4, 0)]
    b = history_buckets(history, now=10.0, window=10.0, n=10, destages=[7.5])
    assert b[0] == [0.1, 0.1, 0.9, 0.5, 0]
    assert b[2] == [0.95, 0.95, 0.9, 0.5, 1]  # peak of the bucket, destaging seen
    assert b[3] == [0.95, 0.95, 0.9, 0.5, 1]  # held: still destaging
    assert b[5][:4] == [0.95, 0.4, 0.8, 0.4] and b[6][:2] == [0.4, 0.4]  # buckets are (t0, t1]
    assert b[7][4] == 1 and b[8][4] == 0  # a destage ended at 7.5
    assert history_buckets(history, now=0.0, window=10.0, n=5)[:4] == [None] * 4
    assert history_buckets([], now=5.0, window=5.0, n=3) == [None, None, None]


def test_derive_rates():
    prev = {"time": 1.0, "metrics": {"host_writes": 10, "host_write_bytes": 0, "host_reads": 0, "host_read_bytes": 0},
            "members": [{"disk": 0, "reads": 1, "writes": 1, "busy_seconds": 0.5}], "cache": {"destages_finished": 1}}
    cur = {"time": 3.0, "metrics": {"host_writes": 30, "host_write_bytes": 4_000_000, "host_reads": 0, "host_read_bytes": 0},
           "members": [{"disk": 0, "reads": 5, "writes": 7, "busy_seconds": 1.5}], "cache": {"destages_finished": 5}}
    r = derive_rates(prev, cur)
    assert r["host_iops"] == 10 and r["host_mb_s"] == 2 and r["destages_per_s"] == 2
    assert r["members"] == [{"disk": 0, "requests_per_s": 5.0, "busy": 0.5}]
    assert derive_rates(None, cur) == {}


def test_recent_percentiles_follow_the_ring():
    from vraid.engine.metrics import ResponseTimes

    r = ResponseTimes(limit=10)
    for v in range(1, 26):  # the ring keeps 16..25; the newest 4 are 22..25
        r.add(float(v))
    assert r.percentiles((0.0, 100.0)) == [16.0, 25.0]
    assert r.percentiles((0.0, 100.0), recent=4) == [22.0, 25.0]
    assert r.percentiles((0.0, 100.0), recent=7) == [19.0, 25.0]
    fresh = ResponseTimes(limit=10)
    for v in range(1, 6):
        fresh.add(float(v))
    assert fresh.percentiles((100.0,), recent=2) == [5.0] and fresh.percentiles((0.0,), recent=2) == [4.0] and fresh.percentiles((50.0,)) == [3.0]
