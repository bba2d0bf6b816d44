"""The policy guard (vraid.engine.guard): every family's wrapper, its checks and its fallback.

Each family: a policy that raises, one that answers out of the family's rules, and the
replacement (the family's default) seeded with what the failed one held; then the guard in
a running engine (events, status, ``stop`` mode) and the consistency-rule checker of CT plans.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard_policies import (BrokenScheduler, FlakyOrder, FlakyScheduler, NeverScheduler, PrefetchTooFar,
                            RaisingQueue, RaisingTransform)
from vraid.core.geometry import Geometry
from vraid.core.rxw import Plan, transform_violation
from vraid.engine.build import EngineConfig
from vraid.engine.events import PolicyFaultEvent
from vraid.engine.guard import GuardedOrder, PinnedOrganisation, PolicyFault, PolicyGuard
from vraid.errors import VraidError
from vraid.policies.cache import PbgOrganisation, StripeOrganisation, UnitSpan
from vraid.policies.ct import CtLimits
from vraid.policies.ct.msc import MscTransform
from vraid.policies.destage.base import CacheState, Decision
from vraid.policies.destage.hlwm import HlwmScheduler
from vraid.policies.order import Cscan, Fifo, Lrw
from vraid.policies.prefetch import HostRead, PrefetchPolicy
from vraid.policies.queue.fifo import FifoOrder
from vraid.testing.session import Session

K = 1024
G = Geometry.for_disk_size(level=5, ndisks=5, disk_size=(1 << 20) + 256 * K, block_size=4 * K, strip_size=16 * K)
POLICIES = Path(__file__).with_name("guard_policies.py")


def guard(mode: str = "fallback", **kw) -> PolicyGuard:
    g = PolicyGuard(mode, **kw)
    from vraid.engine.events import EventBus

    g.attach(EventBus(), None, G)
    return g


def state(now: float = 0.0, dirty: int = 1, waiters: int = 0) -> CacheState:
    return CacheState(now=now, dirty=dirty, capacity=10, waiters=waiters)


# -- destage scheduler ---------------------------------------------------------------------------
def test_a_raising_scheduler_falls_back_to_the_default_and_is_recorded():
    gd = guard()
    seen = []
    gd.events.subscribe(seen.append)
    s = gd.wrap("destage", BrokenScheduler())
    d = s.decide(state(dirty=10))
    assert isinstance(d, Decision) and d.concurrency > 0  # hlwm at a full cache
    assert isinstance(s.inner, HlwmScheduler) and s.spec.startswith("hlwm")
    (fault,) = gd.faults
    assert (fault.family, fault.call) == ("destage", "decide")
    assert "BrokenScheduler" in fault.policy and fault.error == "RuntimeError: broken on purpose"
    assert fault.fallback.startswith("hlwm")
    assert [type(e) for e in seen] == [PolicyFaultEvent] and seen[0].error == fault.error
    s.decide(state())
    assert len(gd.faults) == 1, "a disabled policy is not called again"


@pytest.mark.parametrize("bad", [None, "4", Decision(1, hwm=math.nan), Decision(1, lwm=2.0), Decision(1, recheck=math.inf),
                                 Decision(1, rate=-1.0), Decision(True)])
def test_an_invalid_decision_is_a_fault(bad):
    class Bad(HlwmScheduler):
        def decide(self, state):
            return bad

    gd = guard()
    s = gd.wrap("destage", Bad())
    assert isinstance(s.decide(state()), Decision)
    assert gd.faults and "Decision" in gd.faults[0].error or "not a" in gd.faults[0].error


def test_a_nan_concurrency_is_a_fault():
    gd = guard()
    s = gd.wrap("destage", FlakyScheduler(after=0, how="bogus"))
    assert s.decide(state()).concurrency == 0
    assert "concurrency nan" in gd.faults[0].error


def test_a_scheduler_that_never_destages_while_writers_wait_is_disabled_after_the_stall_limit():
    gd = guard(stall_limit=2.0)
    s = gd.wrap("destage", NeverScheduler())
    assert s.decide(state(now=0.0, waiters=0)).concurrency == 0  # nobody waits: its business
    d = s.decide(state(now=1.0, waiters=3))
    assert d.concurrency == 0 and d.recheck == 3.0, "the guard asks to be called when the stall is due"
    assert not gd.faults
    s.decide(state(now=2.5, dirty=10, waiters=0))  # writers got room (the destager forces destages)
    assert not gd.faults
    d = s.decide(state(now=3.0, dirty=10, waiters=3))
    assert d.concurrency > 0 and isinstance(s.inner, HlwmScheduler)
    assert "no destage for 2 s since host writes first waited" in gd.faults[0].error


def test_a_destage_asked_for_ends_the_stall():
    gd = guard(stall_limit=2.0)
    s = gd.wrap("destage", FlakyScheduler(after=0, how="never"))
    s.decide(state(now=0.0, waiters=1))
    s.inner.values["after"] = 10**9  # behaves (hlwm) from now on: a destage at a full cache
    s.inner.calls = 0
    assert s.decide(state(now=1.9, dirty=10, waiters=1)).concurrency > 0
    s.inner.values["after"] = 0
    s.decide(state(now=2.5, waiters=1))
    s.decide(state(now=4.0, waiters=0))
    assert not gd.faults


def test_stop_mode_raises_policy_fault_naming_policy_call_and_error():
    gd = guard("stop")
    s = gd.wrap("destage", BrokenScheduler())
    with pytest.raises(PolicyFault) as info:
        s.decide(state())
    assert "destage scheduler" in info.value.message and "decide" in info.value.message
    assert "RuntimeError: broken on purpose" in info.value.message
    assert "raise RuntimeError" in info.value.traceback
    assert not gd.faults and isinstance(info.value, VraidError)


def test_an_unknown_mode_is_refused():
    with pytest.raises(VraidError, match="policy-fault mode"):
        PolicyGuard("ignore")
    with pytest.raises(VraidError, match="policy-fault mode"):
        EngineConfig(G, on_policy_fault="ignore").check()


# -- destage order ---------------------------------------------------------------------------------
def _fed(order, keys=(5, 3, 9, 1)) -> GuardedOrder:
    gd = guard()
    o = gd.wrap("destage_order", order)
    for k in keys:
        o.dirtied(k)
    return o


@pytest.mark.parametrize("call", ["dirtied", "written", "removed", "next"])
def test_a_raising_order_is_replaced_by_lrw_holding_every_waiting_unit(call):
    o = _fed(FlakyOrder(after=4))
    o.removed(3) if call != "removed" else None
    assert len(o._guard.faults) == (1 if call != "removed" else 0)
    if call == "dirtied":
        o.dirtied(7)
    elif call == "written":
        o.written(9)
    elif call == "removed":
        o.removed(3)
    else:
        o.next()
    assert o._guard.faults, "the fault was recorded"
    assert isinstance(o.inner, Lrw) and type(o.inner).__name__ == "Lrw"
    expect = {5, 9, 1} | ({7} if call == "dirtied" else set())
    assert set(o.inner.keys()) == expect == set(o.keys())
    drained = []
    while (k := o.next()) is not None:
        o.removed(k)
        drained.append(k)
    assert sorted(drained) == sorted(expect), "no dirty unit is forgotten"


@pytest.mark.parametrize("how, error", [("bogus", "not a dirty unit"), ("none", "returned None while 4")])
def test_an_order_naming_a_wrong_unit_is_a_fault(how, error):
    o = _fed(FlakyOrder(after=4, how=how))
    k = o.next()
    assert k in {5, 3, 9, 1}
    assert error in o._guard.faults[0].error and o._guard.faults[0].call == "next"


def test_keys_must_be_the_waiting_units():
    class Forgetful(Fifo):
        def keys(self):
            return super().keys()[:-1]

    o = _fed(Forgetful())
    assert sorted(o.keys()) == [1, 3, 5, 9]
    assert "keys() gave 3" in o._guard.faults[0].error


def test_builtin_orders_pass_the_guard_untouched():
    for cls in (Lrw, Fifo, Cscan):
        o = _fed(cls())
        rnd = random.Random(1)
        for _ in range(200):
            k = rnd.randrange(20)
            (o.dirtied if k not in o.waiting else o.written)(k)
            if rnd.random() < 0.5 and (n := o.next()) is not None:
                o.removed(n)
        assert not o._guard.faults and isinstance(o.inner, cls)


# -- cache organisation ------------------------------------------------------------------------------
class _Unit:
    def __init__(self, span):
        self.span = span


@pytest.mark.parametrize("bad", [
    lambda s, a, b: [UnitSpan(1, s + 1, a, b - a + 1)],             # another stripe
    lambda s, a, b: [UnitSpan(1, s, a, G.u + 1)],                   # past the strip
    lambda s, a, b: [UnitSpan(1, s, a, 1), UnitSpan(2, s, a, 1)],   # overlapping, and rows left out
    lambda s, a, b: [],                                             # rows not covered
    lambda s, a, b: [UnitSpan(1, s, a, 1)],                         # one unit, rows after it left out
    lambda s, a, b: [UnitSpan(1, s, b, 1)],                         # one unit, rows before it left out
    lambda s, a, b: ["unit"],                                       # not a UnitSpan
    lambda s, a, b: 1 / 0,
])
def test_an_organisation_out_of_its_rules_is_pinned(bad):
    class Bad(StripeOrganisation):
        def units(self, stripe, first, last):
            return bad(stripe, first, last)

    gd = guard()
    held = {7: _Unit(UnitSpan(7, 3, 0, G.u))}  # what the cache holds under the old organisation
    org = gd.wrap("cache", Bad(G), units=held)
    assert org.unit_blocks() == G.u * G.data_disks
    spans = org.units(3, 1, 2)
    assert spans == [held[7].span], "a held unit keeps its key and rows"
    assert isinstance(org.inner, PinnedOrganisation) and gd.faults[0].call == "units"
    fresh = org.units(4, 1, 2)
    assert [(s.stripe, s.row0, s.rows) for s in fresh] == [(4, 1, 1), (4, 2, 1)]
    assert all(s.key > 7 for s in fresh), "fresh keys never collide with held ones"
    assert org.span(fresh[0].key) == fresh[0]


def test_an_organisation_reusing_a_held_key_for_other_rows_is_a_fault():
    gd = guard()
    held = {2: _Unit(UnitSpan(2, 0, 2, 1))}
    org = gd.wrap("cache", StripeOrganisation(G), units=held)  # stripe 2's key 2 is held for a PBG
    assert org.units(2, 0, G.u - 1)
    assert "reuses key 2" in gd.faults[0].error


def test_builtin_organisations_pass_the_guard():
    for cls in (StripeOrganisation, PbgOrganisation):
        gd = guard()
        org = gd.wrap("cache", cls(G), units={})
        org.unit_blocks()
        for stripe in range(0, G.stripes, 7):
            for a in range(G.u):
                assert org.units(stripe, a, G.u - 1) == list(cls(G).units(stripe, a, G.u - 1))
        assert not gd.faults


# -- contiguity transform ------------------------------------------------------------------------------
zs = st.lists(st.lists(st.sampled_from("DCE"), min_size=4, max_size=4).map(tuple), min_size=1, max_size=8).map(tuple)


@settings(max_examples=200, deadline=None)
@given(z=zs, sr=st.integers(1, 10), sw=st.integers(1, 10))
def test_msc_keeps_the_consistency_rules(z, sr, sw):
    plan = Plan.build(0, z, range(5))
    assert transform_violation(plan, MscTransform(CtLimits(sr, sw))(plan)) is None


def _plan():
    z = (("D", "E", "C", "E"), ("E", "E", "E", "E"), ("D", "D", "C", "E"))
    return Plan.build(0, z, range(5))


def _with(plan, h, j, cell):
    rows = [list(r) for r in plan.transformed]
    rows[h][j] = cell
    return plan.transform(tuple(tuple(r) for r in rows), "bad")


@pytest.mark.parametrize("edit, rule", [
    (lambda p: _with(p, 0, 0, p.transformed[0][0] + ("r",)), "eq. (6)"),
    (lambda p: _with(p, 1, 1, ("w",)), "eq. (7)"),
    (lambda p: _with(p, 1, 2, ("t",)), "eq. (6)"),
    (lambda p: _with(p, 1, 4, ("w",)), "line 24"),
    (lambda p: _with(p, 0, 0, ()), "dropped"),
    (lambda p: _with(p, 1, 0, ("x",)), "gained"),
    (lambda p: p.transform(p.transformed[:2], "short"), "shape"),
    (lambda p: Plan.build(1, p.z, p.columns), "stripe"),
    (lambda p: "plan", "not a Plan"),
])
def test_transform_violation_names_the_rule(edit, rule):
    p = _plan()
    assert rule in transform_violation(p, edit(p))


def test_a_raising_or_inconsistent_transform_runs_as_none():
    gd = guard()
    ct = gd.wrap("ct", RaisingTransform(CtLimits(4, 4)))
    p = _plan()
    assert ct(p) is p and ct.inner is None and ct.spec == "none"
    assert gd.faults[0].call == "__call__" and "student transform bug" in gd.faults[0].error

    class Spoils(MscTransform):
        def __call__(self, plan):
            return _with(plan, 0, 0, plan.transformed[0][0] + ("r",))

    gd = guard()
    ct = gd.wrap("ct", Spoils(CtLimits(4, 4)))
    assert ct(p) is p and "eq. (6)" in gd.faults[0].error


# -- member queue order ---------------------------------------------------------------------------------
class Req:
    def __init__(self, offset):
        self.offset = offset


def test_a_raising_queue_order_hands_its_requests_to_fifo_in_every_queue():
    gd = guard()
    factory = gd.wrap("queue_order", RaisingQueue)
    q1, q2 = factory(), factory()
    reqs = [Req(i) for i in range(4)]
    for r in reqs[:3]:
        q1.add(r)
    q2.add(reqs[3])
    assert q1.pop(-1) is reqs[0], "the replacement serves in arrival order"
    assert len(gd.faults) == 1 and gd.faults[0].family == "queue_order" and gd.faults[0].call == "pop"
    assert factory.spec == "fifo"
    assert [q1.pop(-1), q1.pop(-1)] == reqs[1:3] and len(q1) == 0
    assert q2.pop(-1) is reqs[3] and isinstance(q2.inner, FifoOrder), "the other queues follow"
    assert len(gd.faults) == 1


def test_a_queue_order_popping_a_stranger_is_a_fault():
    class Stranger(FifoOrder):
        def pop(self, head_position):
            return Req(-1)

    gd = guard()
    q = gd.wrap("queue_order", Stranger)()
    r = Req(0)
    q.add(r)
    assert q.pop(0) is r and "not queued" in gd.faults[0].error


# -- prefetch -------------------------------------------------------------------------------------------
def test_prefetch_out_of_the_array_or_raising_reads_nothing_ahead():
    gd = guard()
    pf = gd.wrap("prefetch", PrefetchTooFar(G))
    assert pf.after_read(HostRead(0, 4, 4, 0, 0.0)) == []
    assert "inside the array" in gd.faults[0].error and pf.spec == "none"

    class Raises(PrefetchPolicy):
        def after_read(self, read):
            raise IndexError("oops")

    gd = guard()
    pf = gd.wrap("prefetch", Raises(G))
    assert pf.after_read(HostRead(0, 4, 4, 0, 0.0)) == [] and gd.faults[0].error == "IndexError: oops"


# -- in a running engine ----------------------------------------------------------------------------------
#: 6 MiB of data: a never-destaging scheduler keeps writers waiting for more than the stall limit
BIG = Geometry.for_disk_size(level=5, ndisks=5, disk_size=(1 << 20) + 1536 * K, block_size=4 * K, strip_size=16 * K)


def _session(mode="fallback", **policies) -> Session:
    specs = {"cache": "stripe", "destage": "hlwm:high=0.6,low=0.3"} | policies
    return Session(EngineConfig(BIG, policies=specs, cache_size=4 * BIG.stripe_data_bytes, disk_model="hdd",
                                on_policy_fault=mode))


def _write_all(s: Session, seed: int = 1) -> bytes:
    data = random.Random(seed).randbytes(BIG.capacity)
    step = 8 * BIG.block_size
    for off in range(0, len(data), step):
        s.write(off, data[off : off + step])
    return data


@pytest.mark.parametrize("key, spec", [
    ("destage", f"{POLICIES}:FlakyScheduler:after=5,how=raise"),
    ("destage", f"{POLICIES}:NeverScheduler"),
    ("destage_order", f"{POLICIES}:FlakyOrder:after=20,how=raise"),
    ("destage_order", f"{POLICIES}:FlakyOrder:after=20,how=none"),
    ("destage_order", f"{POLICIES}:FlakyOrder:after=20,how=bogus"),
])
def test_a_failing_policy_in_a_running_cache_loses_nothing(key, spec):
    with _session(**{key: spec}) as s:
        s.engine.array.guard.stall_limit = 0.05  # the virtual seconds this small array's writes wait
        events = []
        s.engine.array.events.subscribe(lambda e: events.append(e) if e.kind == "policy-fault" else None)
        data = _write_all(s)
        s.flush()
        assert s.read(0, len(data)) == data
        st_ = s.status()
        (fault,) = st_["policy_faults"]
        assert fault["family"] == key and "guard_policies.py" in fault["policy"]
        assert st_["policies"][key] == fault["fallback"]
        assert [e.policy for e in events] == [fault["policy"]]
        s.shutdown()
        assert s.status()["cache"]["dirty_units"] == 0


def test_the_cache_seeds_the_new_order_with_every_dirty_unit_not_destaging():
    with _session(destage_order=f"{POLICIES}:FlakyOrder:after=1000") as s:
        s.pause()  # nothing destages on its own: the cache fills, three stripes of four
        for stripe in range(3):
            s.write(stripe * BIG.stripe_data_bytes, bytes([stripe + 1]) * BIG.block_size)
        cache = s.engine.array.cache
        waiting = {k for k in cache.dirty_keys if not cache.units[k].destaging}
        assert set(cache.order.waiting) == waiting and len(waiting) > 1
        cache.order.inner.after = 0  # fails from the next call on
        assert s.step()  # destages one unit through the replacement
        assert isinstance(cache.order.inner, Lrw) and s.status()["policy_faults"]
        assert set(cache.order.keys()) == {k for k in cache.dirty_keys if not cache.units[k].destaging}
        assert len(cache.order.keys()) == 2
        s.resume()
        s.flush()
        assert [s.read(i * BIG.stripe_data_bytes, 1) for i in range(3)] == [b"\x01", b"\x02", b"\x03"]


def test_stop_mode_ends_the_run_with_the_fault():
    with pytest.raises(BaseException) as info:
        with _session("stop", destage=f"{POLICIES}:BrokenScheduler") as s:
            _write_all(s)
    text = repr(info.value) + repr(getattr(info.value, "__cause__", ""))
    assert "PolicyFault" in text or "broken on purpose" in text
