"""The rxw plans a stripe write makes (seed 000 sec. III-B, Fig. 7: state matrix Z -> basic
rxw-matrix M -> member requests), memoised: M and the requests depend on Z alone (the stripe
and its columns only label them), so each distinct Z is planned once.

:func:`build_plan` is ``Plan.build`` with M and the requests from the memo;
:func:`cycle_totals` counts a plan's PBG cycles as :class:`vraid.engine.metrics.Metrics`
does; :func:`dirty_z` is the Z of a write-through write (its blocks D, the rest E).
"""

from __future__ import annotations

import functools

from vraid.core.rxw import Plan


@functools.lru_cache(maxsize=1024)
def plan_parts(z, checks: int, covers=None) -> tuple:
    """M and the member requests of ``Plan.build`` for Z with ``checks`` check columns
    (``covers``: the redundancy's coverage, None for XOR)."""
    plan = Plan.build(0, z, (), checks=checks, covers=covers)
    return plan.basic, plan.requests


def build_plan(stripe: int, z, columns, checks: int, covers=None) -> Plan:
    """``Plan.build(stripe, z, columns, checks=checks, covers=covers)``, with M and the
    requests from the memo."""
    m, requests = plan_parts(z, checks, covers)
    return Plan(stripe, z, m, m, tuple(columns), requests, checks=checks, covers=covers)


@functools.lru_cache(maxsize=1024)
def cycle_totals(z, checks: int, covers=None) -> tuple[int, int, int]:
    """(rcw, rmw, full) PBG counts of ``Plan.cycles()`` for Z (what Metrics counts)."""
    cycles = Plan(0, z, (), (), (), checks=checks, covers=covers).cycles()
    return cycles.count("rcw"), cycles.count("rmw"), cycles.count("full")


@functools.lru_cache(maxsize=4096)
def dirty_z(u: int, cols: int, first: int, last: int) -> tuple[tuple[str, ...], ...]:
    """Z of a write-through write: blocks first..last (stripe data order) are D, the rest E."""
    rows = [["E"] * cols for _ in range(u)]
    for b in range(first, last + 1):
        k, row = divmod(b, u)
        rows[row][k] = "D"
    return tuple(tuple(r) for r in rows)
