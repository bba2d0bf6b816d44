"""Lab ``cache-org``: the LRW lists of a PBG cache and a stripe cache (seed 000 sec. III-A, Fig. 6).

A parity block group cache (PBGC, Linux md's way) keeps one unit per PBG (one row of a
stripe: block ``row`` of every data strip); a stripe cache (SC, MSC's way) one unit per stripe.
Under LRW a write moves its whole unit to the tail of the list; destages take the head. Seed 0
is Fig. 6: 5 disks, 4 blocks per strip, writes <17, 1, 9, 0, 11, 25>. Other seeds deal a
geometry and a write sequence.

Every answer is what vraid's engine does: the writes go to a virtual-time
:class:`~vraid.testing.session.Session` with ``cache=pbg`` (then ``stripe``) and
``destage_order=lrw``, the destager paused; the lists are the destage order's own, and the
first destage's plan is the one the engine makes.
"""

from __future__ import annotations

from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.testing.session import Session

from .framework import Lab, Question, rng

BLOCK = 4096
FIG6 = (5, 4, (17, 1, 9, 0, 11, 25))


def run_cache(g: Geometry, cache: str, writes) -> tuple[list[int], int, int]:
    """(the LRW list head first, the unit the first destage takes, dirty blocks it writes)."""
    config = EngineConfig(g, policies={"cache": cache, "destage_order": "lrw"}, cache_size=1 << 20)
    with Session(config) as s:
        s.pause()
        for b in writes:
            s.write(b * BLOCK, bytes([b % 251 + 1]) * BLOCK)
        keys = s.call_sync(lambda: list(s.array.cache.order.keys()))
        s.step()
        event = s.next_plan(destage=True)
        plan = event.plan
        unit = plan.stripe * g.u + event.row0 if cache == "pbg" else plan.stripe
        return keys, unit, sum(row.count("D") for row in plan.z)


class CacheOrgLab(Lab):
    def dealt(self, seed: int) -> tuple[Geometry, tuple[int, ...]]:
        if seed == 0:
            ndisks, u, writes = FIG6
        else:
            r = rng(self, seed)
            ndisks, u = r.choice((4, 5, 6)), r.choice((2, 4))
            span = (ndisks - 1) * u * 3
            writes = tuple(r.randrange(span) for _ in range(r.randrange(6, 9)))
        return Geometry(5, ndisks, 16, BLOCK, u * BLOCK, "left-symmetric", 0), writes

    def setting(self, seed: int) -> str:
        g, writes = self.dealt(seed)
        src = "paper 000 Fig. 6" if seed == 0 else "dealt"
        return (f"RAID-5, {g.ndisks} disks, u = {g.u} blocks per strip ({g.data_disks * g.u} data blocks per stripe). "
                f"Writes of one 4 KiB block each, in this order ({src}): <{', '.join(map(str, writes))}>.\n"
                f"PBG numbers count from 0 as stripe * u + row (the paper's PBG5 is PBG 5 here); the cache starts "
                "empty and destages nothing until asked; LRW moves a written unit to the tail.")

    def questions(self, seed: int) -> list[Question]:
        g, writes = self.dealt(seed)
        pbgs = [g.locate(b).stripe * g.u + g.locate(b).row for b in writes]
        pbg_list, pbg_first, pbg_dirty = run_cache(g, "pbg", writes)
        sc_list, sc_first, sc_dirty = run_cache(g, "stripe", writes)
        per = g.data_disks * g.u
        return [
            Question("q1", "The PBG of each write, in order?", pbgs, kind="list", form="one PBG number per write",
                     explanation="; ".join(f"{b}: stripe {g.locate(b).stripe}, row {g.locate(b).row} -> PBG {p}"
                                           for b, p in zip(writes, pbgs))
                     + f" (block b is in stripe b // {per}, row b mod {g.u})."),
            Question("q2", "The PBGC's LRW list, head (least recently written) first?", pbg_list, kind="list",
                     form="PBG numbers",
                     explanation="a PBG enters the tail when first written and moves to the tail on every later write; "
                                 "the head is the PBG whose LAST write is oldest."),
            Question("q3", "The stripe cache's LRW list, head first?", sc_list, kind="list", form="stripe numbers",
                     explanation="the same rule with a whole stripe as the unit: writes to any block of a stripe "
                                 "move it, so a stripe written long ago but touched again is destaged late."),
            Question("q4", "The first destage: which unit does each cache take, and how many dirty blocks does it write?",
                     [pbg_first, pbg_dirty, sc_first, sc_dirty], kind="list",
                     form="PBG,its dirty blocks,stripe,its dirty blocks",
                     explanation=(f"each takes its list's head: PBG {pbg_first} with {pbg_dirty} dirty block(s), stripe "
                                  f"{sc_first} with {sc_dirty}. The stripe cache gathers the writes of a stripe into one "
                                  "destage (spatial locality), which is what MSC-CT then makes contiguous.")),
            Question("q5", "How many destages empty each cache (PBGC, then SC)?", [len(pbg_list), len(sc_list)],
                     kind="list", form="PBGC,SC",
                     explanation="one destage per unit in the list."),
        ]


LAB = CacheOrgLab(name="cache-org", title="Cache organisation: LRW lists of a PBG cache and a stripe cache (Fig. 6)",
                  seeds=["000"])
