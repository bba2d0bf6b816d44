"""Idle-time destage scheduling (seed 002's level-2 destage).

Seed 002 (He & Yang, VC-RAID, sec. 3.3.3 "Destages"): data move from the cache disk to the
data disks during system idle time; "once the Level 2 destage starts, it continues until the
cache disk becomes empty, or until a new request comes in. In the later case, the destage
thread is suspended, until the driver detects another idle period." Destaging also happens
when the cache disk is full (sec. 2).

vraid's form: destage at ``max_destages`` when the host has been idle (no request arrived)
for at least ``idle`` seconds, and always when the dirty fraction is at or above ``high``
(vraid's stand-in for "the cache disk is full"). A new host request suspends destaging: no new
destage is issued once ``host_idle`` is below ``idle`` again, but destages already in flight
finish (the paper's thread stops between segments, too). While waiting for the idle period
the decision asks to be called back (``recheck``) at the moment it will have elapsed, since
nothing in the cache changes to wake the scheduler. The paper does not say how long an idle
period must be before destaging starts; 0.1 s is vraid's default. There is no level 1 here:
vraid's cache is one level.
"""

from __future__ import annotations

import math

from .base import CacheState, Decision, DestageScheduler, Fraction, Seconds, check, must_drain


class IdleScheduler(DestageScheduler):
    """Destage when the host has been idle ``idle`` seconds, and always at or above ``high``."""

    name = "idle"
    summary = "destage in host idle time (after idle= seconds) and always above high"
    source = "paper 002 sec. 3.3.3 (level-2 destage in idle time)"
    params = {
        "idle": (Seconds, 0.1, "host idle time after which destaging starts"),
        "high": (Fraction, 0.9, "destage regardless of host activity at or above this dirty fraction"),
        "max_destages": (int, 4, "destages in flight while destaging", (1, None)),
    }

    def _check(self) -> None:
        p = self.values
        check(p["idle"] >= 0, "idle: idle must not be negative", "e.g. idle=100ms")
        check(p["high"] > 0, "idle: high must be above 0", "e.g. high=0.9")
        check(p["max_destages"] >= 1, "idle: max_destages must be at least 1", "e.g. max_destages=4")

    def decide(self, state: CacheState) -> Decision:
        p = self.values
        full = p["max_destages"]
        if must_drain(state) or state.occupancy >= p["high"]:
            return Decision(full, hwm=p["high"])
        if state.dirty == 0:
            return Decision(0, hwm=p["high"])
        if state.host_idle >= p["idle"]:
            return Decision(full, hwm=p["high"])
        # never "now" itself: when now + the rest rounds to now (large now, tiny rest), the
        # destager would ask again at once, forever, and virtual time could not move on
        return Decision(0, hwm=p["high"], recheck=max(state.now + (p["idle"] - state.host_idle),
                                                      math.nextafter(state.now, math.inf)))
