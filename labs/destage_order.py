"""Lab ``destage-order``: which dirty stripe goes next under LRW, LRU, FIFO and CSCAN.

Seed 000 sec. III-A and III-G 1 destage by LRW (least recently written); seed 003 sec. 3.3 by
FIFO over its delayed-write list. vraid also has LRU (reads move a unit too) and CSCAN (the
next unit number above the last destaged one, wrapping: a one-way elevator over the array).
The lab deals writes and reads to a stripe cache, one destage in the middle, and asks the order
in which the rest drain. It is also the base for writing your own order (docs/labs/destage-order.md):
a :class:`policies.order.DestageOrder` subclass in a file, run as ``--destage-order mine.py:Mine``.

Every answer is what a virtual-time :class:`~vraid.testing.session.Session` did with
``cache=stripe`` and that ``destage_order``, the destager paused and stepped one unit at a time.
"""

from __future__ import annotations

from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.testing.session import Session

from .framework import Lab, Question, rng

BLOCK = 4096
ORDERS = ("lrw", "lru", "fifo", "cscan")


def drain(order: str, ops: list[tuple[str, int]], stripes: int) -> tuple[int, list[int]]:
    """(the stripe the middle destage took, the stripes destaged afterwards in order)."""
    g = Geometry(5, 5, stripes, BLOCK, 4 * BLOCK, "left-symmetric", 0)
    config = EngineConfig(g, policies={"cache": "stripe", "destage_order": order}, cache_size=stripes * g.stripe_data_bytes)
    first, rest = -1, []
    with Session(config) as s:
        s.pause()
        for op, stripe in ops:
            if op == "w":
                s.write(stripe * g.stripe_data_bytes, b"w" * BLOCK)
            elif op == "r":
                s.read(stripe * g.stripe_data_bytes, BLOCK)
            else:
                s.step()
                first = s.next_plan(destage=True).plan.stripe
        while s.step():
            rest.append(s.next_plan(destage=True).plan.stripe)
    return first, rest


class DestageOrderLab(Lab):
    def dealt(self, seed: int) -> list[tuple[str, int]]:
        r = rng(self, seed)
        pool = r.sample(range(12), 6)
        ops: list[tuple[str, int]] = []
        for i in range(9):
            if i == 5:
                ops.append(("d", -1))
            written = [s for op, s in ops if op == "w"]
            if written and r.random() < 0.3:
                ops.append(("r", r.choice(written)))
            else:
                ops.append(("w", r.choice(pool)))
        return ops

    def setting(self, seed: int) -> str:
        ops = self.dealt(seed)
        text = ", ".join({"w": f"write {s}", "r": f"read {s}", "d": "DESTAGE ONE"}[op] for op, s in ops)
        return ("A stripe cache (one unit per stripe) with room for every stripe; the destager is paused. The host "
                "does, in order (numbers are stripes; a read of a stripe in the cache is a hit):\n  " + text + "\n"
                "DESTAGE ONE destages the first unit of the order; afterwards the cache is drained one unit at a "
                "time. LRW: least recently written first; LRU: least recently written or read; FIFO: first "
                "dirtied first, later writes do not move it; CSCAN: the lowest stripe above the last one destaged, "
                "wrapping to the lowest.")

    def questions(self, seed: int) -> list[Question]:
        ops = self.dealt(seed)
        stripes = 12
        got = {o: drain(o, ops, stripes) for o in ORDERS}
        qs = [Question("q1", "Which stripe does DESTAGE ONE take under LRW, LRU, FIFO and CSCAN?",
                       [got[o][0] for o in ORDERS], kind="list", form="four stripes: lrw,lru,fifo,cscan",
                       explanation="each order's head at that moment: "
                                   + ", ".join(f"{o} {got[o][0]}" for o in ORDERS)
                                   + " (CSCAN has destaged nothing yet, so it starts from the lowest).")]
        why = {"lrw": "by the time of each stripe's last write",
               "lru": "by the time of each stripe's last write or read hit",
               "fifo": "by the time each stripe became dirty (a destaged stripe written again is new)",
               "cscan": "ascending from the stripe DESTAGE ONE took, wrapping to the lowest"}
        for i, o in enumerate(ORDERS, 2):
            qs.append(Question(f"q{i}", f"{o.upper()}: in which order are the remaining dirty stripes destaged?",
                               got[o][1], kind="list", form="stripes in order",
                               explanation=f"{o}: {why[o]}: {', '.join(map(str, got[o][1])) or 'none'}."))
        return qs


LAB = DestageOrderLab(name="destage-order", title="Destage order: LRW, LRU, FIFO and CSCAN (and your own)",
                      seeds=["000", "003"])
