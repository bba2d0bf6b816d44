"""Self-adjusting high/low water marks (seed 003: Nam & Park, adaptive HLWM).

The static HLWM scheduler (:mod:`.hlwm`) keeps rho_H and rho_L fixed. Seed 003 makes them
follow the workload (sec. 2.3.1). With i(t) the rate at which the dirty fraction grows while
not destaging and delta(t) = d(t) - i(t) the rate at which it falls while destaging (sec. 2.1),
and i_B, delta_B their reference values from the initial workload, destaging starts when the
time left to fill the cache at i(t) equals T_H = (1 - rho_H) N_W / i_B and stops when the time
left to empty it at delta(t) equals T_L = rho_L N_W / delta_B, which gives

    rho_H(t) = max{0, 1 - (1 - rho_H) i(t) / i_B}                              (3)
    rho_L(t) = min{1, max{0, rho_L delta(t) / delta_B}, rho_H(t)}              (4)

and H_adaptive(t) = rho_H(t) N_W (1), L_adaptive(t) = rho_L(t) N_W (2). See
:func:`adaptive_thresholds`.

i_B and delta_B (sec. 2.3.2, Fig. 2): the scheduler first runs as static HLWM with rho_H and
rho_L (seed 003 sec. 4.1 uses 0.5 and 0.1, our defaults), logs the times the occupancy reaches
the LWM and the HWM, t_1^LWM, t_1^HWM, t_2^LWM, t_2^HWM, t_3^LWM, and averages the rising
slopes (H - L) / (t_k^HWM - t_k^LWM) into i_B and the falling slopes
(H - L) / (t_{k+1}^LWM - t_k^HWM) into delta_B. See :func:`reference_rates`.

Updates (sec. 2.3.3): every k seconds (``period``; 3 s in sec. 4.1) a monitor re-estimates
i(t) and delta(t) from the last three crossing points and the current point, either
{t_last-1^HWM, t_last^LWM, t_last^HWM, t_cur} or {t_last-1^LWM, t_last^HWM, t_last^LWM, t_cur},
and recomputes rho_H(t), rho_L(t) by (3)-(4). See :func:`estimate_rates`; the paper's example
(t = 10, 20, 25, 30; occupancy 70, 30, 70, 40) gives i = 40/5 and delta = (40/10 + 30/5)/2.

Where vraid interprets or differs (the paper leaves these open):

* Units. Occupancies are fractions of N_W and rates are fractions per second. Eq. (3)-(4) use
  only the ratios i(t)/i_B and delta(t)/delta_B, so the thresholds are the same as with entry
  counts; :meth:`AdaptiveScheduler.describe` also gives the rates in units per second, the
  paper's unit (it reports e.g. i_B = 70.09).
* Crossing points are the hysteresis transitions against the *current* thresholds: an HWM
  point when destaging starts (occupancy >= rho_H(t)), an LWM point when it stops (occupancy
  <= rho_L(t)). The one exception is t_1^LWM of Fig. 2: while nothing has been logged yet, a
  cache filling from below the LWM logs the moment it reaches the LWM on its way up. So the
  points alternate H, L, H, ... as the paper's formulas assume.
* Each point logs the occupancy measured at that moment, not the threshold: it is within one
  unit of the threshold when the occupancy moves one unit at a time, and where the occupancy
  really was when a write of many units or a threshold update jumps past it. The slopes use
  these measured levels (for static thresholds in the ideal case that is H_static - L_static).
* After destaging stops at the LWM, destages already in flight finish and may take the
  occupancy below the LWM; the LWM point keeps the stop time (not a later upward re-crossing).
* Learning uses the first ``learn`` rising (LWM -> HWM) and the first ``learn`` falling
  (HWM -> LWM) intervals (Fig. 2 shows two of each, the default). Intervals of zero length are
  skipped. Until both are in, the scheduler is static HLWM and has no recheck. When they are,
  i(t) = i_B and delta(t) = delta_B (so the thresholds stay static) and the monitor starts:
  updates fall on a grid every ``period`` seconds from that moment, and the decision's
  ``recheck`` is the next grid time.
* The paper says delta(t) "is updated only when the destage is active" but also gives a
  delta formula for the case {L, H, L, cur}, in which destaging is off. vraid's
  :func:`estimate_rates` computes both rates for both cases; the scheduler always takes i(t)
  and takes delta(t) only while destaging is on (i.e. in the {H, L, H, cur} case).
* Because delta(t) is re-estimated only at monitor ticks that fall while destaging, a perfectly
  periodic workload whose fill/drain cycle is a multiple of ``period`` can have every tick land
  in a filling phase, and delta(t) then never updates (tests show it with a 6 s cycle and the
  3 s period). That is the paper's rule, kept as is; real arrivals jitter, and a ``period`` that
  does not divide the cycle breaks the lock.
* A slope over an interval of zero length (an update at the very moment of a crossing) is left
  out of its average; a rate with no slope left keeps its previous value. Negative estimates
  (the occupancy still rising while destaging, or falling after a stop while the last destages
  finish) are taken as 0: for delta that is what the max{0, .} of eq. (4) does anyway, for i
  it keeps rho_H(t) <= 1 (eq. (3) has no upper bound; the paper states rho_H(t) <= 1).
* Eq. (4) allows rho_L(t) = rho_H(t) although sec. 2.3.1 asks for rho_L(t) < rho_H(t); vraid
  keeps eq. (4). Destaging then starts at the mark and stops one destage later, holding the
  occupancy there. Destaging never starts with nothing dirty (rho_H(t) may be 0).
* Sec. 2.3.1 lists Case 1 (i < i_B) as raising the LWM too, but by eq. (4) rho_L(t) depends on
  delta(t) only: the LWM rises in Case 1 because delta = d - i grows when i falls and the
  destage speed d does not. vraid follows the equations.
* Blocked host writes (``waiters > 0``) force full concurrency without starting the hysteresis
  and without logging a crossing; the papers run one destage process, vraid ``max_destages``.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .base import CacheState, Decision, DestageScheduler, Fraction, Hysteresis, Seconds, check, must_drain

Point = tuple[float, float, str]
"""A crossing point: (time in seconds, occupancy, "H" for the HWM or "L" for the LWM)."""

KEEP_POINTS = 16   # crossing points kept for display once i_B and delta_B are learned


def _ratio(rate: float, reference: float) -> float:
    """rate / reference for eq. (3)-(4), defined for every input: negative rates count as 0,
    NaN gives 1 (no information, stay static), 0/0 and inf/inf give 1, x/0 gives inf, x/inf 0."""
    if math.isnan(rate) or math.isnan(reference):
        return 1.0
    rate, reference = max(rate, 0.0), max(reference, 0.0)
    if rate == reference:
        return 1.0
    if reference == 0.0 or math.isinf(rate):
        return math.inf
    if math.isinf(reference):
        return 0.0
    return rate / reference


def adaptive_thresholds(rho_h: float, rho_l: float, i_t: float, i_b: float,
                        delta_t: float, delta_b: float) -> tuple[float, float]:
    """(rho_H(t), rho_L(t)) by seed 003 eq. (3) and (4).

    ``rho_h``, ``rho_l``: the static fractions (0 <= rho_l < rho_h <= 1). ``i_t``, ``i_b``:
    current and reference increasing rates; ``delta_t``, ``delta_b``: current and reference
    effective decreasing rates, all in the same units. The result always satisfies
    0 <= rho_L(t) <= rho_H(t) <= 1, for zero, infinite, negative or NaN rates too (see
    :func:`_ratio`); eq. (3)'s missing upper bound 1 is added.
    """
    headroom = 1.0 - rho_h
    rho_h_t = 1.0 if headroom <= 0.0 else 1.0 - headroom * _ratio(i_t, i_b)
    rho_h_t = min(1.0, max(0.0, rho_h_t))
    rho_l_t = 0.0 if rho_l <= 0.0 else rho_l * _ratio(delta_t, delta_b)
    rho_l_t = min(1.0, max(0.0, rho_l_t), rho_h_t)
    return rho_h_t, rho_l_t


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _slope(rise: float, run: float) -> list[float]:
    """[rise / run], or [] for an interval of no length."""
    return [rise / run] if run > 0 else []


def estimate_rates(points: Sequence[Point], now: float, occupancy: float) -> tuple[float | None, float | None]:
    """(i(t), delta(t)) from the last three crossing points and the current one (seed 003 sec. 2.3.3).

    ``points`` are (time, occupancy, kind) with kind "H" (reached the HWM) or "L" (reached the
    LWM); only the last three are used and they must alternate. Occupancies may be counts or
    fractions, as long as ``occupancy`` (C_1 or C_2, at time ``now``) is the same kind.

    Last three H, L, H (destaging since t_last^HWM):
        i = (H_last - L_last) / (t_last^HWM - t_last^LWM)
        delta = ((H_last-1 - L_last) / (t_last^LWM - t_last-1^HWM) + (H_last - C_1) / (t_cur - t_last^HWM)) / 2
    Last three L, H, L (not destaging since t_last^LWM), the paper's "similarly":
        i = ((H_last - L_last-1) / (t_last^HWM - t_last-1^LWM) + (C_2 - L_last) / (t_cur - t_last^LWM)) / 2
        delta = (H_last - L_last) / (t_last^LWM - t_last^HWM)

    Slopes over intervals of no length are left out; a rate with none left is None. The raw
    averages are returned (they may be negative); the scheduler decides what to use.

    Raises:
        ValueError: fewer than three points, or the last three do not alternate.
    """
    if len(points) < 3:
        raise ValueError(f"need the last three crossing points, got {len(points)}")
    (t1, o1, k1), (t2, o2, k2), (t3, o3, k3) = points[-3:]
    kinds = k1 + k2 + k3
    if kinds == "HLH":
        i = _mean(_slope(o3 - o2, t3 - t2))
        delta = _mean(_slope(o1 - o2, t2 - t1) + _slope(o3 - occupancy, now - t3))
    elif kinds == "LHL":
        i = _mean(_slope(o2 - o1, t2 - t1) + _slope(occupancy - o3, now - t3))
        delta = _mean(_slope(o2 - o3, t3 - t2))
    else:
        raise ValueError(f"the last three crossing points must alternate (HLH or LHL), got {kinds}")
    return i, delta


def reference_rates(points: Sequence[Point], cycles: int = 2) -> tuple[float, float] | None:
    """(i_B, delta_B) from the first crossing points (seed 003 sec. 2.3.2, Fig. 2), or None
    while fewer than ``cycles`` rising and ``cycles`` falling intervals have been logged.

    A rising interval runs from an LWM point to the next HWM point, i_k = (H - L) / (t_k^HWM -
    t_k^LWM); a falling one from an HWM point to the next LWM point, delta_k = (H - L) /
    (t_{k+1}^LWM - t_k^HWM), with the logged occupancies as H and L. The first ``cycles`` of
    each (of positive length) are averaged.
    """
    rises: list[float] = []
    falls: list[float] = []
    for (ta, oa, ka), (tb, ob, kb) in zip(points, points[1:]):
        if tb <= ta:
            continue
        if ka == "L" and kb == "H" and len(rises) < cycles:
            rises.append((ob - oa) / (tb - ta))
        elif ka == "H" and kb == "L" and len(falls) < cycles:
            falls.append((oa - ob) / (tb - ta))
    if len(rises) < cycles or len(falls) < cycles:
        return None
    return sum(rises) / cycles, sum(falls) / cycles


class AdaptiveScheduler(DestageScheduler):
    """HLWM whose marks follow the workload by seed 003 eq. (3)-(4); see the module docstring."""

    name = "adaptive"
    summary = "self-adjusting HLWM: marks follow the fill and drain rates (learned i_B, delta_B)"
    source = "paper 003 (Nam & Park) sec. 2.3, eq. (1)-(4); defaults from sec. 4.1"
    params = {
        "high": (Fraction, 0.5, "static HWM rho_H (used until i_B, delta_B are learned)"),
        "low": (Fraction, 0.1, "static LWM rho_L"),
        "period": (Seconds, 3.0, "re-estimate i(t), delta(t) every this many seconds (k)"),
        "learn": (int, 2, "rising and falling intervals averaged into i_B and delta_B", (1, None)),
        "max_destages": (int, 4, "destages in flight while destaging is on", (1, None)),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._latch = Hysteresis()
        self._points: list[Point] = []
        self._prev_occupancy: float | None = None
        self._capacity: int | None = None
        self._i_b: float | None = None
        self._delta_b: float | None = None
        self._i_t: float | None = None
        self._delta_t: float | None = None
        self._rho_h_t: float = self.values["high"]
        self._rho_l_t: float = self.values["low"]
        self._next_update: float | None = None
        self._updates = 0

    def _check(self) -> None:
        p = self.values
        check(p["low"] < p["high"], f"adaptive: low={p['low']} must be below high={p['high']}",
              "e.g. adaptive:high=0.5,low=0.1")
        check(p["period"] > 0, "adaptive: period must be positive", "e.g. period=3s")
        check(p["learn"] >= 1, "adaptive: learn must be at least 1", "e.g. learn=2")
        check(p["max_destages"] >= 1, "adaptive: max_destages must be at least 1", "e.g. max_destages=4")

    # -- what metrics and the TUI show ---------------------------------------------------------
    @property
    def rho_h(self) -> float:
        """Current HWM rho_H(t) as a fraction (the static rho_H until learned)."""
        return self._rho_h_t

    @property
    def rho_l(self) -> float:
        """Current LWM rho_L(t) as a fraction (the static rho_L until learned)."""
        return self._rho_l_t

    @property
    def i_b(self) -> float | None:
        """Reference increasing rate i_B, fraction of the cache per second (None until learned)."""
        return self._i_b

    @property
    def delta_b(self) -> float | None:
        """Reference effective decreasing rate delta_B, fraction per second (None until learned)."""
        return self._delta_b

    @property
    def i_t(self) -> float | None:
        """Current increasing rate i(t), fraction per second (None until learned)."""
        return self._i_t

    @property
    def delta_t(self) -> float | None:
        """Current effective decreasing rate delta(t), fraction per second (None until learned)."""
        return self._delta_t

    @property
    def learned(self) -> bool:
        """True once i_B and delta_B are known and the thresholds adapt."""
        return self._i_b is not None

    @property
    def active(self) -> bool:
        """True while the hysteresis has destaging on."""
        return self._latch.active

    @property
    def crossings(self) -> tuple[Point, ...]:
        """Logged crossing points (time, occupancy fraction, "H"/"L"); the last few once learned."""
        return tuple(self._points)

    # -- the algorithm --------------------------------------------------------------------------
    def decide(self, state: CacheState) -> Decision:
        occupancy = state.occupancy
        self._capacity = state.capacity
        if self._next_update is not None and state.now >= self._next_update:
            self._update(state.now, occupancy)
            periods = math.floor((state.now - self._next_update) / self.values["period"]) + 1
            self._next_update += periods * self.values["period"]

        kind = self._latch.step(occupancy, state.dirty, self._rho_h_t, self._rho_l_t)
        if kind is None and not self._points and not self._latch.active \
                and self._prev_occupancy is not None and self._prev_occupancy < self._rho_l_t <= occupancy:
            kind = "L"                # t_1^LWM of Fig. 2: the cache fills past the LWM
        self._prev_occupancy = occupancy
        if kind is not None:
            self._points.append((state.now, occupancy, kind))
            if self.learned:
                del self._points[:-KEEP_POINTS]
            else:
                self._try_learning(state.now)

        on = self._latch.active or must_drain(state)
        return Decision(self.values["max_destages"] if on else 0, hwm=self._rho_h_t, lwm=self._rho_l_t,
                        recheck=self._next_update)

    def _try_learning(self, now: float) -> None:
        """Sec. 2.3.2: once enough intervals are logged, fix i_B and delta_B and start the monitor."""
        ref = reference_rates(self._points, self.values["learn"])
        if ref is None:
            return
        self._i_b, self._delta_b = ref
        self._i_t, self._delta_t = ref
        self._rho_h_t, self._rho_l_t = self._thresholds()
        self._next_update = now + self.values["period"]

    def _update(self, now: float, occupancy: float) -> None:
        """Sec. 2.3.3: re-estimate i(t) always and delta(t) while destaging, then eq. (3)-(4)."""
        i, delta = estimate_rates(self._points, now, occupancy)
        if i is not None:
            self._i_t = max(0.0, i)
        if delta is not None and self._latch.active:
            self._delta_t = max(0.0, delta)
        self._rho_h_t, self._rho_l_t = self._thresholds()
        self._updates += 1

    def _thresholds(self) -> tuple[float, float]:
        assert self._i_t is not None and self._i_b is not None
        assert self._delta_t is not None and self._delta_b is not None
        return adaptive_thresholds(self.values["high"], self.values["low"], self._i_t, self._i_b,
                                   self._delta_t, self._delta_b)

    def describe(self) -> dict[str, Any]:
        info = {**super().describe(), "learned": self.learned, "active": self.active,
                "rho_h": self._rho_h_t, "rho_l": self._rho_l_t, "i_b": self._i_b, "delta_b": self._delta_b,
                "i_t": self._i_t, "delta_t": self._delta_t, "updates": self._updates,
                "crossings": [list(p) for p in self._points]}
        if self._capacity is not None:
            info["units_per_s"] = {k: (None if v is None else v * self._capacity) for k, v in
                                   (("i_b", self._i_b), ("delta_b", self._delta_b),
                                    ("i_t", self._i_t), ("delta_t", self._delta_t))}
        return info
