"""Proportional-integral (PI) destage-rate control on the dirty fraction.

Not from a seed paper: vraid adds it as a contrast to the threshold schedulers, in the manner
of Linux bcache's writeback-rate controller, which holds the dirty fraction of its cache near a
target by setting a writeback rate from a proportional and an integral term. Instead of
switching destaging on and off, the scheduler sets a *rate*: with the error measured in cache
units above the target, ``e = dirty - target * capacity``,

    rate = clamp(kp * e + ki * I, min_rate, max_rate),   I = integral of e dt,

so ``kp`` is in 1/s (an excess of E units is drained at kp*E destages per second) and ``ki`` in
1/s^2. Under a steady arrival rate the integral term settles at that rate and the dirty
fraction at ``target``.

Anti-windup (vraid's choice of scheme): the integral is not advanced in a step that would
push an output already at ``max_rate`` further up or one at ``min_rate`` further down
(conditional integration), and ``ki * I`` itself is kept within ``[min_rate, max_rate]``
(it stands for the steady-state rate, which can be neither negative nor above the maximum).
So a long overload, or a long quiet spell below the target, does not wind the integral up.

The decision carries ``rate`` (the controller caps destages per second with it) and a
concurrency that grows with the rate, ``ceil(rate / max_rate * max_destages)``, at least 1
while the rate is positive. The controller calls ``decide`` only when the cache changes, so the
decision also asks to be called back (``recheck``) after ``interval`` seconds, or sooner, after
one destage period ``1 / rate``, to pace the destages. Blocked host writes (``waiters > 0``)
lift the cap (rate None, full concurrency). The decision's ``hwm`` shows the target (there is no
``lwm``).
"""

from __future__ import annotations

import math
from typing import Any

from .base import CacheState, Decision, DestageScheduler, Fraction, Seconds, check, must_drain


class PiScheduler(DestageScheduler):
    """Destage rate from a PI controller holding the dirty fraction at ``target``."""

    name = "pi"
    summary = "PI controller: destage rate holds the dirty fraction at target (bcache-style)"
    source = "vraid (after Linux bcache's writeback rate); not from a seed paper"
    params = {
        "target": (Fraction, 0.5, "dirty fraction to hold"),
        "kp": (float, 1.0, "proportional gain, destages/s per dirty unit above target (1/s)"),
        "ki": (float, 0.1, "integral gain (1/s^2)"),
        "min_rate": (float, 0.0, "lowest destage rate, destages/s (0: none at or below target)"),
        "max_rate": (float, 1000.0, "highest destage rate, destages/s"),
        "max_destages": (int, 4, "destages in flight at max_rate", (1, None)),
        "interval": (Seconds, 0.1, "longest time between two evaluations (recheck)"),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._integral = 0.0          # I, in unit-seconds
        self._last: float | None = None
        self._rate = 0.0

    def _check(self) -> None:
        p = self.values
        check(p["kp"] >= 0 and p["ki"] >= 0, "pi: kp and ki must not be negative", "e.g. pi:kp=1,ki=0.1")
        check(math.isfinite(p["kp"]) and math.isfinite(p["ki"]), "pi: kp and ki must be finite", "e.g. kp=1")
        check(0 <= p["min_rate"] <= p["max_rate"], "pi: need 0 <= min_rate <= max_rate",
              "e.g. min_rate=0,max_rate=1000")
        check(0 < p["max_rate"] < math.inf, "pi: max_rate must be positive and finite", "e.g. max_rate=1000")
        check(p["max_destages"] >= 1, "pi: max_destages must be at least 1", "e.g. max_destages=4")
        check(p["interval"] > 0, "pi: interval must be positive", "e.g. interval=100ms")

    @property
    def integral(self) -> float:
        """The integral term ``ki * I`` in destages/s (bounded by anti-windup)."""
        return self.values["ki"] * self._integral

    @property
    def rate(self) -> float:
        """The last rate decided, destages/s."""
        return self._rate

    def decide(self, state: CacheState) -> Decision:
        p = self.values
        lo, hi, kp, ki = p["min_rate"], p["max_rate"], p["kp"], p["ki"]
        dt = 0.0 if self._last is None else max(0.0, state.now - self._last)
        self._last = state.now
        error = state.dirty - p["target"] * state.capacity
        if ki > 0 and dt > 0:
            before = kp * error + ki * self._integral
            pushing_up = before >= hi and error > 0
            pushing_down = before <= lo and error < 0
            if not (pushing_up or pushing_down):
                self._integral = min(max(self._integral + error * dt, lo / ki), hi / ki)
        rate = min(max(kp * error + ki * self._integral, lo), hi)
        if state.dirty == 0:
            rate = 0.0                # nothing to destage, whatever min_rate says
        self._rate = rate
        if must_drain(state):
            return Decision(p["max_destages"], hwm=p["target"], rate=None, recheck=state.now + p["interval"])
        if rate <= 0:
            return Decision(0, hwm=p["target"], rate=0.0, recheck=state.now + p["interval"])
        n = max(1, min(p["max_destages"], math.ceil(rate / hi * p["max_destages"] - 1e-9)))
        return Decision(n, hwm=p["target"], rate=rate, recheck=state.now + min(p["interval"], 1.0 / rate))

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "rate": self._rate, "integral": self.integral}
