"""The reference rates of seed 003 (sec. 2.3: i_B, delta_B) as an ``adaptive-hlwm`` run learned
them, at the paper's scale.

A run's rates are in entries per virtual second of a cache of N_W entries whose times are
scaled by tau (:class:`.adaptive_hlwm_sim.Setup`); the paper's are entries per second of its
4096-entry cache. Shared by the rows, the report, the workloads' table and the think-factor
ablation, so that none imports another for them.
"""

from __future__ import annotations

from typing import Any

from .adaptive_hlwm_paper import PAPER_NW


def paper_rate(rate: float | None, setup: dict[str, Any]) -> float:
    """A rate in our entries per virtual second as the paper's entries per second (x tau x 4096 / N_W)."""
    if rate is None:
        return float("nan")
    return rate * setup.get("tau", 1.0) * PAPER_NW / setup.get("nw", PAPER_NW)


def rates(run: dict[str, Any]) -> tuple[float, float]:
    """(i_B, delta_B) an adaptive run learned, at the paper's scale."""
    sched, setup = run["scheduler"], run["setup"]
    return paper_rate(sched.get("i_b_entries_per_s"), setup), paper_rate(sched.get("delta_b_entries_per_s"), setup)


__all__ = ["paper_rate", "rates"]
