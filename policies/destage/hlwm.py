"""Static high/low water mark (HLWM) destage scheduling.

Seed 000 (Baek & Park, sec. III-G 1, "When and What to Destage") uses the high/low mark
scheduler: destages are disabled below a low mark of 85 % and run when the occupancy is at or
above a high mark of 95 %; between the two the destage process keeps whatever state it is in.
Seed 003 (Nam & Park, sec. 2.2 and 3.3) describes the same algorithm with H_static = rho_H N_W
and L_static = rho_L N_W: "the destaging process starts when the current occupancy reaches its
HWM and then stops when the current occupancy descends to its LWM".

Where vraid differs: the papers run one destaging process; vraid lets ``max_destages`` destages
be in flight while destaging is on. A write blocked for lack of clean units (``waiters > 0``)
makes vraid destage at full concurrency even below the low mark, without latching the
hysteresis on (a host write that needs more units than are clean must not wait for the high
mark). The defaults are seed 000's 95 % / 85 %.
"""

from __future__ import annotations

from typing import Any

from .base import CacheState, Decision, DestageScheduler, Fraction, Hysteresis, check, must_drain


class HlwmScheduler(DestageScheduler):
    """Hysteresis: start at occupancy >= ``high``, keep going until occupancy <= ``low``."""

    name = "hlwm"
    decides_on_counts = True  # the latch moves with the occupancy alone
    summary = "static high/low water marks: start at high, stop at low (hysteresis)"
    source = "paper 000 sec. III-G 1 (low 85 %, high 95 %); paper 003 sec. 2.2, 3.3"
    params = {
        "high": (Fraction, 0.95, "start destaging when the dirty fraction reaches this"),
        "low": (Fraction, 0.85, "stop destaging when the dirty fraction falls to this"),
        "max_destages": (int, 4, "destages in flight while destaging is on", (1, None)),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._latch = Hysteresis()

    def _check(self) -> None:
        p = self.values
        check(p["low"] < p["high"], f"hlwm: low={p['low']} must be below high={p['high']}",
              "e.g. hlwm:high=0.95,low=0.85")
        check(p["max_destages"] >= 1, "hlwm: max_destages must be at least 1", "e.g. max_destages=4")

    @property
    def active(self) -> bool:
        """True while the hysteresis has destaging on."""
        return self._latch.active

    def decide(self, state: CacheState) -> Decision:
        high, low = self.values["high"], self.values["low"]
        self._latch.step(state.occupancy, state.dirty, high, low)
        on = self._latch.active or must_drain(state)
        return Decision(self.values["max_destages"] if on else 0, hwm=high, lwm=low)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "active": self.active}
