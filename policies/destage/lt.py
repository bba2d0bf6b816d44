"""Linear threshold (LT) destage scheduling.

Seed 000 (sec. III-G 1) names the linear threshold scheduler of Varma & Jacobson (its
reference [5]) as a better alternative to the high/low mark scheduler, without describing it.
The idea vraid implements: the destage effort grows linearly with the occupancy, so a cache
that is filling slowly is destaged gently (leaving the disks to the host and giving
overwrites time to happen) and one close to full is destaged hard.

vraid's form: no destages at or below ``low``; ``max_destages`` at or above ``high``; in
between ``ceil((occupancy - low) / (high - low) * max_destages)`` destages in flight, so any
occupancy above ``low`` gets at least one. Varma & Jacobson express the effort as a set of
occupancy thresholds per extra outstanding destage (and also use idle time); equal steps
between ``low`` and ``high`` are vraid's simplification, and the defaults (50 % / 95 %) are
vraid's choice. Blocked host writes (``waiters > 0``) force full concurrency.
"""

from __future__ import annotations

import math

from .base import CacheState, Decision, DestageScheduler, Fraction, check, must_drain


def linear_concurrency(occupancy: float, low: float, high: float, max_destages: int) -> int:
    """Destages in flight for ``occupancy``: 0 at or below ``low``, ``max_destages`` at or above
    ``high``, rising in equal steps in between (never decreasing as the occupancy grows)."""
    if occupancy <= low:
        return 0
    if occupancy >= high:
        return max_destages
    share = (occupancy - low) / (high - low) * max_destages
    return max(1, min(max_destages, math.ceil(share - 1e-9)))


class LinearThresholdScheduler(DestageScheduler):
    """Concurrency grows linearly with occupancy between ``low`` and ``high``."""

    name = "lt"
    decides_on_counts = True
    summary = "linear threshold: destages in flight grow linearly from low to high"
    source = "paper 000 sec. III-G 1, after Varma & Jacobson (its ref. [5])"
    params = {
        "low": (Fraction, 0.5, "no destaging at or below this dirty fraction"),
        "high": (Fraction, 0.95, "max_destages at or above this dirty fraction"),
        "max_destages": (int, 4, "destages in flight at the high threshold", (1, None)),
    }

    def _check(self) -> None:
        p = self.values
        check(p["low"] < p["high"], f"lt: low={p['low']} must be below high={p['high']}",
              "e.g. lt:low=0.5,high=0.95")
        check(p["max_destages"] >= 1, "lt: max_destages must be at least 1", "e.g. max_destages=4")

    def decide(self, state: CacheState) -> Decision:
        p = self.values
        n = p["max_destages"] if must_drain(state) else \
            linear_concurrency(state.occupancy, p["low"], p["high"], p["max_destages"])
        return Decision(n, hwm=p["high"], lwm=p["low"])
