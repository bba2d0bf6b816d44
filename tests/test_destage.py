"""Destage schedulers (vraid.policies.destage): the seed 003 adaptive HLWM, static HLWM (seed 000),
linear threshold, PI rate control, idle-time destage (seed 002), and the spec/registry."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vraid.errors import VraidError
from vraid.policies.destage import (
    SCHEDULERS, CacheState, Decision, DestageScheduler, describe_schedulers, load_scheduler, scheduler_class,
    schedulers_help,
)
from vraid.policies.destage.adaptive import (
    AdaptiveScheduler, adaptive_thresholds, estimate_rates, reference_rates,
)
from vraid.policies.destage.hlwm import HlwmScheduler
from vraid.policies.destage.idle import IdleScheduler
from vraid.policies.destage.lt import LinearThresholdScheduler, linear_concurrency
from vraid.policies.destage.pi import PiScheduler


def state(now: float, dirty: int, capacity: int = 100, **kw) -> CacheState:
    return CacheState(now=now, dirty=dirty, capacity=capacity, **kw)


# -- seed 003 sec. 2.3.3: the worked example ----------------------------------------------------

def test_seed003_worked_example_exactly():
    """t = {10, 20, 25, 30}, occupancy {70, 30, 70, 40}: i = 40/5, delta = (40/10 + 30/5)/2."""
    points = [(10.0, 70.0, "H"), (20.0, 30.0, "L"), (25.0, 70.0, "H")]
    i, delta = estimate_rates(points, now=30.0, occupancy=40.0)
    assert i == 40 / 5
    assert delta == (40 / 10 + 30 / 5) / 2
    # the same as fractions of the cache (occupancy in %/100): the rates scale, nothing else changes
    i_f, delta_f = estimate_rates([(t, o / 100, k) for t, o, k in points], now=30.0, occupancy=0.40)
    assert i_f == pytest.approx(0.08) and delta_f == pytest.approx(0.05)
    # only the last three points count
    i2, delta2 = estimate_rates([(0.0, 30.0, "L")] + points, now=30.0, occupancy=40.0)
    assert (i2, delta2) == (i, delta)


def test_estimate_rates_other_case_and_degenerate_intervals():
    # {t_last-1^LWM, t_last^HWM, t_last^LWM, t_cur}: two rising slopes, one falling
    points = [(0.0, 30.0, "L"), (10.0, 70.0, "H"), (20.0, 30.0, "L")]
    i, delta = estimate_rates(points, now=25.0, occupancy=50.0)
    assert i == pytest.approx((40 / 10 + 20 / 5) / 2)
    assert delta == pytest.approx(40 / 10)
    # an update at the very moment of the last crossing: that slope is left out
    i, delta = estimate_rates([(10.0, 70.0, "H"), (20.0, 30.0, "L"), (25.0, 70.0, "H")], now=25.0, occupancy=70.0)
    assert i == 8.0 and delta == 4.0
    # all intervals empty: no estimate
    assert estimate_rates([(1.0, 70.0, "H"), (1.0, 30.0, "L"), (1.0, 70.0, "H")], 1.0, 70.0) == (None, None)
    with pytest.raises(ValueError):
        estimate_rates([(0.0, 1.0, "H"), (1.0, 0.0, "L")], 2.0, 0.5)
    with pytest.raises(ValueError):
        estimate_rates([(0.0, 1.0, "H"), (1.0, 1.0, "H"), (2.0, 0.0, "L")], 3.0, 0.5)


# -- seed 003 sec. 2.3.2: i_B and delta_B -------------------------------------------------------

def test_reference_rates_from_fig2_points():
    # Fig. 2: t1^LWM, t1^HWM, t2^LWM, t2^HWM, t3^LWM with H = 50, L = 10
    pts = [(1.0, 10.0, "L"), (5.0, 50.0, "H"), (13.0, 10.0, "L"), (15.0, 50.0, "H"), (25.0, 10.0, "L")]
    i_b, delta_b = reference_rates(pts, cycles=2)
    assert i_b == pytest.approx((40 / 4 + 40 / 2) / 2)
    assert delta_b == pytest.approx((40 / 8 + 40 / 10) / 2)
    assert reference_rates(pts[:4], cycles=2) is None      # only one falling interval yet
    # a log that starts at the HWM (cache already full when the scheduler started) works too
    assert reference_rates([(0.0, 50.0, "H")] + pts[:4], cycles=2) == pytest.approx((15.0, (40 / 1 + 40 / 8) / 2))


def run_plant(sched: DestageScheduler, *, t_from: float, t_to: float, x: float, arrive: float, drain: float,
              capacity: int = 1000, dt: float = 0.01) -> float:
    """A fluid write cache: the dirty count grows by ``arrive`` units/s and, while the scheduler
    destages, falls by ``drain`` units/s (the destage speed d; the net delta is d - i)."""
    k0, k1 = round(t_from / dt), round(t_to / dt)
    for k in range(k0, k1):
        dec = sched.decide(CacheState(now=k * dt, dirty=round(x), capacity=capacity))
        x += arrive * dt - (drain * dt if dec.concurrency > 0 else 0.0)
        x = min(max(x, 0.0), float(capacity))
    return x


def test_learning_i_b_and_delta_b_from_a_synthetic_trace():
    """Static 0.5/0.1 with i = 100 units/s and delta = 100 units/s on 1000 units: the LWM is
    reached at t = 1 (rising), the HWM at 5, the LWM at 9, the HWM at 13, the LWM at 17."""
    s = AdaptiveScheduler()
    x = run_plant(s, t_from=0, t_to=16.9, x=0.0, arrive=100, drain=200)
    assert not s.learned and s.i_b is None and s.rho_h == 0.5 and s.rho_l == 0.1
    assert [k for _t, _o, k in s.crossings] == ["L", "H", "L", "H"]
    assert [t for t, _o, _k in s.crossings] == pytest.approx([1.0, 5.0, 9.0, 13.0])
    x = run_plant(s, t_from=16.9, t_to=17.05, x=x, arrive=100, drain=200)
    assert s.learned
    assert s.i_b == pytest.approx(0.1, rel=1e-3) and s.delta_b == pytest.approx(0.1, rel=1e-3)
    assert (s.i_t, s.delta_t) == (s.i_b, s.delta_b)
    assert (s.rho_h, s.rho_l) == pytest.approx((0.5, 0.1))
    d = s.describe()
    assert d["units_per_s"]["i_b"] == pytest.approx(100, rel=1e-3)
    json.dumps(d)
    # once learned the monitor asks to be woken every period (3 s) ...
    dec = s.decide(CacheState(now=17.05, dirty=round(x), capacity=1000))
    assert dec.recheck == pytest.approx(17.0 + 3.0)
    # ... and an unchanged workload leaves the marks where they were
    run_plant(s, t_from=17.06, t_to=80, x=x, arrive=100, drain=200)
    assert (s.rho_h, s.rho_l) == pytest.approx((0.5, 0.1), abs=0.01)


# -- seed 003 eq. (3)-(4) -----------------------------------------------------------------------

rates = st.one_of(st.just(0.0), st.just(math.inf), st.floats(min_value=0.0, allow_infinity=True, allow_nan=False),
                  st.floats(min_value=1e-300, max_value=1e300))


@st.composite
def marks(draw):
    a = draw(st.floats(min_value=0.0, max_value=1.0))
    b = draw(st.floats(min_value=0.0, max_value=1.0))
    low, high = sorted((a, b))
    return (high, low) if low < high else (1.0, 0.0)


@settings(max_examples=500)
@given(marks(), rates, rates, rates, rates)
def test_thresholds_stay_ordered_within_0_and_1(hl, i_t, i_b, delta_t, delta_b):
    rho_h, rho_l = hl
    h, l = adaptive_thresholds(rho_h, rho_l, i_t, i_b, delta_t, delta_b)
    assert not (math.isnan(h) or math.isnan(l))
    assert 0.0 <= l <= h <= 1.0


@given(marks(), st.floats(min_value=1e-6, max_value=1e6), st.floats(min_value=1e-6, max_value=1e6))
def test_reference_rates_give_the_static_marks(hl, i_b, delta_b):
    rho_h, rho_l = hl
    assert adaptive_thresholds(rho_h, rho_l, i_b, i_b, delta_b, delta_b) == pytest.approx((rho_h, rho_l))


def test_thresholds_with_zero_infinite_and_odd_rates():
    assert adaptive_thresholds(0.5, 0.1, 0.0, 0.0, 0.0, 0.0) == (0.5, 0.1)        # 0/0: no change
    assert adaptive_thresholds(0.5, 0.1, math.inf, math.inf, 1, 1) == (0.5, 0.1)  # inf/inf: no change
    assert adaptive_thresholds(0.5, 0.1, 1.0, 0.0, 1, 1) == (0.0, 0.0)            # filling infinitely faster
    assert adaptive_thresholds(0.5, 0.1, 0.0, 1.0, 1, 1) == (1.0, 0.1)            # nothing arrives: wait till full
    assert adaptive_thresholds(0.5, 0.1, 1, 1, math.inf, 1.0) == (0.5, 0.5)       # rho_L(t) capped by rho_H(t)
    assert adaptive_thresholds(0.5, 0.1, -1.0, 1.0, -1.0, 1.0) == (1.0, 0.0)      # negative rates count as 0
    assert adaptive_thresholds(0.5, 0.1, math.nan, 1.0, math.nan, 1.0) == (0.5, 0.1)
    assert adaptive_thresholds(1.0, 0.0, math.inf, 1.0, math.inf, 1.0) == (1.0, 0.0)


# sec. 2.3.1, Cases 1-4 (eq. (3)-(4) with rho_H = 0.5, rho_L = 0.1, i_B = 10, delta_B = 20)
H0, L0, IB, DB = 0.5, 0.1, 10.0, 20.0


def test_case1_slower_fill_raises_hwm_and_lwm():
    h, l = adaptive_thresholds(H0, L0, 5.0, IB, DB, DB)
    assert h > H0 and l == pytest.approx(L0)     # eq. (4): the LWM depends on delta only ...
    d = DB + IB                                  # ... and delta = d - i grows as i falls (d unchanged)
    h, l = adaptive_thresholds(H0, L0, 5.0, IB, d - 5.0, DB)
    assert h > H0 and l > L0


def test_case2_faster_fill_lowers_hwm_and_lwm():
    d = DB + IB
    h, l = adaptive_thresholds(H0, L0, 15.0, IB, d - 15.0, DB)
    assert h < H0 and l < L0


def test_case3_faster_drain_raises_lwm():
    h, l = adaptive_thresholds(H0, L0, IB, IB, 30.0, DB)
    assert l > L0 and h == pytest.approx(H0)


def test_case4_slower_drain_lowers_lwm():
    h, l = adaptive_thresholds(H0, L0, IB, IB, 10.0, DB)
    assert l < L0 and h == pytest.approx(H0)


@pytest.mark.parametrize("case, arrive, drain, hwm, lwm", [
    ("Case 1: i halves", 50, 200, 0.75, 0.15),      # i = 0.5 i_B, delta = 1.5 delta_B
    ("Case 2: i x1.5", 150, 200, 0.25, 0.05),       # i = 1.5 i_B, delta = 0.5 delta_B
    ("Case 3: delta x1.5", 100, 250, 0.5, 0.15),
    ("Case 4: delta halves", 100, 150, 0.5, 0.05),
])
def test_adaptive_scheduler_follows_a_changed_workload(case, arrive, drain, hwm, lwm):
    """Learn on i = delta = 100 units/s, then change the workload (seed 003 Table 1 style)."""
    s = AdaptiveScheduler()
    x = run_plant(s, t_from=0, t_to=30, x=0.0, arrive=100, drain=200)
    assert s.learned and (s.rho_h, s.rho_l) == pytest.approx((0.5, 0.1), abs=0.005)
    run_plant(s, t_from=30, t_to=200, x=x, arrive=arrive, drain=drain)
    assert s.rho_h == pytest.approx(hwm, abs=0.02), case
    assert s.rho_l == pytest.approx(lwm, abs=0.02), case
    # crossings are logged against the current (adaptive) marks, not the static 0.5 / 0.1
    last_h = [o for _t, o, k in s.crossings if k == "H"][-1]
    last_l = [o for _t, o, k in s.crossings if k == "L"][-1]
    assert last_h == pytest.approx(s.rho_h, abs=0.02) and last_l == pytest.approx(s.rho_l, abs=0.02)


def test_adaptive_delta_aliasing_when_the_cycle_is_a_multiple_of_the_period():
    """delta(t) is re-estimated only at monitor ticks that fall while destaging (sec. 2.3.3). With
    delta doubled the static 0.5/0.1 cycle is 2 s destaging + 4 s filling = 6 s, twice the 3 s
    period: every tick lands in a filling phase and delta(t) never updates. Jitter (any real
    workload, or a period that does not divide the cycle) breaks the lock."""
    s = AdaptiveScheduler()
    x = run_plant(s, t_from=0, t_to=30, x=0.0, arrive=100, drain=200)
    run_plant(s, t_from=30, t_to=200, x=x, arrive=100, drain=300)
    assert s.delta_t == s.delta_b and s.rho_l == pytest.approx(0.1)
    s = AdaptiveScheduler(period=2.9)
    x = run_plant(s, t_from=0, t_to=30, x=0.0, arrive=100, drain=200)
    run_plant(s, t_from=30, t_to=200, x=x, arrive=100, drain=300)
    assert s.rho_l == pytest.approx(0.2, abs=0.02) and s.rho_h == pytest.approx(0.5, abs=0.02)


def test_adaptive_delta_only_updated_while_destaging():
    s = AdaptiveScheduler(period=1.0)
    x = run_plant(s, t_from=0, t_to=17.5, x=0.0, arrive=100, drain=200)
    assert s.learned and not s.active
    delta = s.delta_t
    # not destaging (rising from the LWM): an update changes i(t) but not delta(t)
    run_plant(s, t_from=17.5, t_to=19.5, x=x, arrive=50, drain=200)
    assert not s.active and s.delta_t == delta and s.i_t < s.i_b


def test_adaptive_static_until_learned_and_waiters_force_destage():
    s = AdaptiveScheduler()
    assert s.decide(state(1, 30)).concurrency == 0            # below the static HWM 0.5
    dec = s.decide(state(2, 30, waiters=1))                   # a blocked write: drain anyway
    assert dec.concurrency == 4 and not s.active and dec.recheck is None
    assert s.decide(state(3, 50)).concurrency == 4 and s.active
    assert s.decide(state(4, 11)).concurrency == 4
    assert s.decide(state(5, 10)).concurrency == 0
    assert [k for _t, _o, k in s.crossings] == ["H", "L"]     # started between the marks: no t_1^LWM


# -- static HLWM --------------------------------------------------------------------------------

def test_hlwm_hysteresis():
    s = HlwmScheduler()                                       # 95 % / 85 % as seed 000
    up = [s.decide(state(t, d)).concurrency for t, d in enumerate(range(0, 101))]
    assert up[:95] == [0] * 95 and up[95:] == [4] * 6
    down = [s.decide(state(200 + t, d)).concurrency for t, d in enumerate(range(100, 80, -1))]
    assert down == [4] * 15 + [0] * 5                         # keeps going until 85, stops at 85
    again = [s.decide(state(300 + t, d)).concurrency for t, d in enumerate(range(85, 95))]
    assert again == [0] * 10                                  # between the marks, stays off
    dec = s.decide(state(400, 90, waiters=2))
    assert dec.concurrency == 4 and not s.active and (dec.hwm, dec.lwm) == (0.95, 0.85)
    assert HlwmScheduler(max_destages=2, high=0.5, low=0.2).decide(state(0, 60)).concurrency == 2


# -- linear threshold ---------------------------------------------------------------------------

@given(st.integers(0, 1000), st.integers(0, 1000))
def test_lt_monotone_in_occupancy(a, b):
    s = LinearThresholdScheduler(low=0.2, high=0.8, max_destages=5)
    lo, hi = sorted((a, b))
    n_lo = s.decide(state(0, lo, capacity=1000)).concurrency
    n_hi = s.decide(state(0, hi, capacity=1000)).concurrency
    assert 0 <= n_lo <= n_hi <= 5


def test_lt_shape():
    assert [linear_concurrency(o / 100, 0.5, 0.9, 4) for o in (0, 50, 51, 60, 61, 70, 80, 89, 90, 100)] == \
        [0, 0, 1, 1, 2, 2, 3, 4, 4, 4]
    assert LinearThresholdScheduler().decide(state(0, 10, waiters=1)).concurrency == 4


# -- PI -----------------------------------------------------------------------------------------

def run_pi(s: PiScheduler, *, t_from: float, t_to: float, x: float, arrive: float, capacity: int = 1000,
           dt: float = 0.01) -> float:
    """occupancy += arrivals - rate * dt (the disks keep up with whatever rate is asked)."""
    for k in range(round(t_from / dt), round(t_to / dt)):
        dec = s.decide(CacheState(now=k * dt, dirty=round(x), capacity=capacity))
        rate = dec.rate if dec.rate is not None else 0.0
        x = min(max(x + (arrive - rate) * dt, 0.0), float(capacity))
    return x


def test_pi_converges_on_a_simple_plant():
    s = PiScheduler()
    x = run_pi(s, t_from=0, t_to=120, x=0.0, arrive=200.0)
    assert x / 1000 == pytest.approx(0.5, abs=0.01)
    assert s.rate == pytest.approx(200.0, rel=0.03)
    assert s.integral == pytest.approx(200.0, rel=0.03)       # the integral carries the steady rate


def test_pi_anti_windup():
    s = PiScheduler(max_rate=500.0)
    x = run_pi(s, t_from=0, t_to=100, x=0.0, arrive=2000.0)  # overload: pinned at max_rate, cache full
    assert x == 1000 and s.rate == 500.0
    held = s.integral
    assert 0 <= held <= 500.0
    x = run_pi(s, t_from=100, t_to=1000, x=x, arrive=2000.0)
    assert s.integral == held                                 # long saturation: the integral does not grow
    # overload over: the controller comes back to the target without a long windup excursion
    x = run_pi(s, t_from=1000, t_to=1120, x=x, arrive=100.0)
    assert x / 1000 == pytest.approx(0.5, abs=0.01)


def test_pi_decisions():
    s = PiScheduler(interval=0.2)
    dec = s.decide(state(0, 10))                               # below target: nothing, but keep sampling
    assert dec.concurrency == 0 and dec.rate == 0.0 and dec.recheck == pytest.approx(0.2)
    dec = s.decide(state(0.1, 100))                            # 50 units above: 50 destages/s, paced
    assert dec.rate == pytest.approx(50.0 + 0.1 * 50 * 0.1) and 1 <= dec.concurrency <= 4
    assert dec.recheck == pytest.approx(0.1 + 1 / dec.rate)
    dec = s.decide(state(0.2, 100, waiters=1))
    assert dec.rate is None and dec.concurrency == 4


# -- idle (seed 002 level 2) --------------------------------------------------------------------

def test_idle_waits_then_destages():
    s = IdleScheduler(idle="100ms")
    dec = s.decide(state(10.0, 20, host_idle=0.03))
    assert dec.concurrency == 0 and dec.recheck == pytest.approx(10.07)
    assert s.decide(state(10.07, 20, host_idle=0.1)).concurrency == 4     # the idle period has elapsed
    assert s.decide(state(10.2, 19, host_idle=0.0)).concurrency == 0      # a request arrived: suspend
    assert s.decide(state(10.3, 95, host_idle=0.0)).concurrency == 4      # above high: always
    assert s.decide(state(10.3, 30, host_idle=0.0, waiters=1)).concurrency == 4
    dec = s.decide(state(11.0, 0, host_idle=5.0))
    assert dec.concurrency == 0 and dec.recheck is None                   # nothing dirty


# -- specs, registry, custom classes ------------------------------------------------------------

def test_registry_loads_every_scheduler_by_name():
    for name, target in SCHEDULERS.items():
        cls = scheduler_class(name)
        assert cls.name == name and target.endswith(":" + cls.__name__)
        s = load_scheduler(name)
        assert isinstance(s, DestageScheduler)
        assert isinstance(s.decide(state(0, 50)), Decision)
        assert load_scheduler(s.spec).values == s.values       # spec round-trips
        json.dumps(s.describe())
    infos = describe_schedulers()
    assert [i.name for i in infos] == list(SCHEDULERS) and all(i.params and i.source for i in infos)
    assert "adaptive" in schedulers_help()


def test_spec_parameters():
    s = load_scheduler(" hlwm : high=90% , low=0.5,max_destages=2 ")
    assert s.values == {"high": 0.9, "low": 0.5, "max_destages": 2}
    assert load_scheduler("adaptive:period=500ms").values["period"] == 0.5
    assert load_scheduler("pi:kp=2").values["kp"] == 2.0
    assert HlwmScheduler(high=0.9).values["high"] == 0.9


@pytest.mark.parametrize("spec, message, hint", [
    ("", "empty", "hlwm, adaptive, lt, pi, idle"),
    ("nosuch", "unknown destage scheduler 'nosuch'", "hlwm, adaptive"),
    ("hlwm:bogus=1", "no parameter 'bogus'", "high, low, max_destages"),
    ("hlwm:high", "not key=value", "high, low, max_destages"),
    ("hlwm:high=1,high=0.9", "given twice", ""),
    ("hlwm:high=lots", "high='lots' is not a fraction", "high=0.95"),
    ("hlwm:high=1.5", "not a fraction", ""),
    ("hlwm:max_destages=2.5", "not a whole number", ""),
    ("hlwm:high=0.5,low=0.6", "must be below", ""),
    ("adaptive:period=0", "period must be positive", ""),
    ("adaptive:period=soon", "not a duration", ""),
    ("idle:idle=-1", "not a duration", ""),
    ("pi:min_rate=5,max_rate=1", "min_rate <= max_rate", ""),
    ("no such:Thing", "unknown destage scheduler", "module:Class"),
    ("vraid_no_such_module_xyz:Sched", "cannot import module", "PYTHONPATH"),
    ("json:dumps", "not a DestageScheduler subclass", "subclass"),
    ("vraid.policies.destage.hlwm:Missing", "has no 'Missing'", "HlwmScheduler"),
])
def test_spec_errors(spec, message, hint):
    with pytest.raises(VraidError) as err:
        load_scheduler(spec)
    assert message in err.value.message
    assert hint in err.value.hint


def test_scheduler_params_in_python_are_checked_too():
    with pytest.raises(VraidError, match="no parameter 'hihg'") as err:
        HlwmScheduler(hihg=0.9)
    assert "high, low, max_destages" in err.value.hint
    with pytest.raises(VraidError, match="not a number"):
        PiScheduler(kp=True)


STUDENT = '''
from vraid.policies.destage import Decision, DestageScheduler


class Always(DestageScheduler):
    """Destage all the time, n at once."""
    summary = "always destage"
    params = {"n": (int, 2, "destages in flight")}

    def decide(self, state):
        return Decision(self.values["n"] if state.dirty else 0)


class NotAScheduler:
    pass


class Unfinished(DestageScheduler):
    pass
'''


def test_load_a_students_own_class(tmp_path, monkeypatch):
    module = "student_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{module}.py").write_text(STUDENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    s = load_scheduler(f"{module}:Always")
    assert s.name == "Always" and s.values == {"n": 2}
    s = load_scheduler(f"{module}:Always:n=3")
    assert s.decide(state(0, 1)).concurrency == 3 and s.decide(state(0, 0)).concurrency == 0
    assert s.spec == f"{module}:Always:n=3" and load_scheduler(s.spec).values == {"n": 3}
    with pytest.raises(VraidError, match="no parameter 'm'") as err:
        load_scheduler(f"{module}:Always:m=1")
    assert "n" in err.value.hint
    with pytest.raises(VraidError, match="not a DestageScheduler subclass"):
        load_scheduler(f"{module}:NotAScheduler")
    with pytest.raises(VraidError, match="does not implement decide"):
        load_scheduler(f"{module}:Unfinished")
    with pytest.raises(VraidError, match="has no 'Nope'") as err:
        load_scheduler(f"{module}:Nope")
    assert "Always" in err.value.hint and "Unfinished" in err.value.hint


def test_state_and_decision_validate():
    assert state(0, 25).occupancy == 0.25
    with pytest.raises(ValueError):
        CacheState(now=0, dirty=1, capacity=0)
    with pytest.raises(ValueError):
        Decision(-1)
