"""Lab ``watermarks``: when static HLWM destaging starts and stops (seed 000 III-G 1, seed 003 sec. 2.2).

A stripe cache of U units under the high/low water mark scheduler: destaging starts when the
dirty fraction reaches the high mark and, once on, goes on until it falls to the low mark
(hysteresis); LRW picks the units. The lab writes one 4 KiB block per step into the dealt
stripes, letting the engine settle between writes; without a disk model a destage takes no
time, so each burst drains the cache to the low mark before the next write.

The answers are what a virtual-time :class:`~vraid.testing.session.Session` running
``cache=stripe, destage=hlwm:high=..,low=..`` did: its cache counters and its destage plans.
Watch the same thing live with ``vraid top --sim --cache stripe --destage hlwm:high=75%,low=25%``.
"""

from __future__ import annotations

from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.testing.session import Session

from .framework import Lab, Question, rng

BLOCK = 4096


def simulate(units: int, high: float, low: float, writes) -> list[tuple[int, list[int]]]:
    """Per write: (dirty units after it settled, stripes destaged meanwhile in order)."""
    g = Geometry(5, 5, 4 * units, BLOCK, 4 * BLOCK, "left-symmetric", 0)
    config = EngineConfig(g, policies={"cache": "stripe", "destage_order": "lrw",
                                       "destage": f"hlwm:high={high},low={low},max_destages=1"},
                          cache_size=units * g.stripe_data_bytes)
    out = []
    with Session(config) as s:
        for stripe in writes:
            s.write(stripe * g.stripe_data_bytes, b"w" * BLOCK)
            s.advance(0.001)
            burst = []
            while (event := s.next_plan(destage=True)) is not None:
                burst.append(event.plan.stripe)
            out.append((s.status()["cache"]["dirty_units"], burst))
    return out


class WatermarksLab(Lab):
    def dealt(self, seed: int):
        r = rng(self, seed)
        units = r.choice((8, 10, 16, 20))
        high = r.choice((0.5, 0.75, 0.8)) if units != 10 else r.choice((0.5, 0.8, 0.9))
        low = r.choice([x for x in (0.1, 0.2, 0.25, 0.3, 0.5) if x < high - 0.2])
        n = int(units * 2.5)
        writes, fresh = [], 0
        for _ in range(n):
            if writes and r.random() < 0.25:
                writes.append(r.choice(writes[-4:]))  # a rewrite of a recent stripe
            else:
                writes.append(fresh)
                fresh += 1
        return units, high, low, writes

    def setting(self, seed: int) -> str:
        units, high, low, writes = self.dealt(seed)
        return (f"A stripe cache of U = {units} units (stripes), static HLWM with high = {high:g} and low = {low:g} "
                f"(fractions of U dirty), LRW order.\n"
                f"The host writes one block into each of these stripes, one after the other "
                f"(writes numbered from 1):\n  {', '.join(map(str, writes))}\n"
                "Between writes the engine settles; a destage takes no time (no disk model). A write to a stripe "
                "still dirty adds no unit; a write to a clean one dirties it again.\n"
                f"Watch it: vraid top --sim --cache stripe --destage hlwm:high={high:g},low={low:g}")

    def questions(self, seed: int) -> list[Question]:
        units, high, low, writes = self.dealt(seed)
        trace = simulate(units, high, low, writes)
        first = next(i for i, (_, burst) in enumerate(trace) if burst)
        total = sum(len(b) for _, b in trace)
        starts = [i + 1 for i, (_, b) in enumerate(trace) if b]
        return [
            Question("q1", "After which write does destaging start for the first time?", first + 1,
                     explanation=(f"destaging starts when the dirty units reach high * U = {high:g} * {units} = "
                                  f"{high * units:g}; write {first + 1} brings the cache there (rewrites of a dirty "
                                  "stripe add nothing).")),
            Question("q2", "How many units are dirty when that first burst stops?", trace[first][0],
                     explanation=(f"once on, destaging goes on until the dirty units fall to low * U = {low:g} * {units} = "
                                  f"{low * units:g} (hysteresis), then stops.")),
            Question("q3", "Which stripes does the first burst destage?", trace[first][1], kind="list",
                     form="stripes in the order destaged",
                     explanation="LRW: the least recently written dirty stripes first; a stripe rewritten lately waits."),
            Question("q4", "After which writes does a burst happen (all of them)?", starts, kind="list",
                     form="write numbers",
                     explanation=(f"each burst leaves {low * units:g} dirty units at most; the next starts when the "
                                  f"new writes bring the cache back to {high * units:g}.")),
            Question("q5", "How many destages in all, and how many units are dirty after the last write?",
                     [total, trace[-1][0]], kind="list", form="destages,dirty units",
                     explanation="the sum of the bursts; what is left dirty waits for the next burst (or a flush)."),
        ]


LAB = WatermarksLab(name="watermarks", title="Watermarks: when static HLWM destaging starts and stops",
                    seeds=["000", "003"])
