"""Lab ``contiguity``: what MSC-CT (seed 000 sec. III-B..E, Fig. 10) adds, and the requests saved.

Given Z, its basic rxw-matrix M (lab ``rxw-matrix``) and the limits S_r^max, S_w^max and the
excluded strides S_r^except, S_w^except, the transform fills the gap between two reads (or two
writes) of a column when the stride S = i - p satisfies S < S^max and S lies in no excluded
region (eq. (8), (9)); a read into a dirty block is ``t``, else ``r`` (eq. (6)); a write is
added only over blocks the cache holds or reads (eq. (7)); the read transform runs first.

Seed 0 is the paper's eq. (2) with generous limits (every gap may be filled, as ``vraid rxw``
does); other seeds deal a Z and limits. The answers are :func:`vraid.policies.ct.spec.load_ct`'s
transform applied to :meth:`vraid.core.rxw.Plan.build`, the code every mount runs.
"""

from __future__ import annotations

from vraid.core import rxw
from vraid.policies.ct import GENEROUS
from vraid.policies.ct.spec import load_ct

from .framework import Lab, Question, rng
from .rcw_rmw import EQ2


def regions(text: str) -> str:
    return text or "none"


class ContiguityLab(Lab):
    def dealt(self, seed: int) -> tuple[rxw.StateMatrix, str]:
        """(Z, the ct spec)."""
        if seed == 0:
            return EQ2, "msc"
        r = rng(self, seed)
        while True:  # deal until the limits matter: the transform adds something, yet less than it could
            disks, rows = r.choice((4, 5, 6)), r.choice((6, 7, 8))
            z = tuple(tuple(r.choice("DDCEEE") for _ in range(disks - 1)) for _ in range(rows))
            sr, sw = r.randrange(1, 6), r.randrange(2, 7)
            parts = [f"sr_max={sr}", f"sw_max={sw}"]
            if sw > 3 and r.random() < 0.5:
                a = r.randrange(2, sw - 1)
                parts.append(f"sw_except={a}-{a}")
            spec = "msc:" + ",".join(parts)
            plan = rxw.Plan.build(0, z, list(range(disks)))
            limited, full = load_ct(spec, GENEROUS)(plan), load_ct("msc", GENEROUS)(plan)
            if plan.transformed != limited.transformed != full.transformed:
                return z, spec

    def setting(self, seed: int) -> str:
        z, spec = self.dealt(seed)
        ct = load_ct(spec, GENEROUS)
        lim = ct.limits
        lines = "\n".join(f"  row {h}: {' '.join(row)}" for h, row in enumerate(z))
        limits = ("generous limits: every gap may be filled (paper 000's worked example)" if seed == 0 else
                  f"S_r^max = {lim.sr_max}, S_w^max = {lim.sw_max}, S_r^except = {regions(_fmt(lim.sr_except))}, "
                  f"S_w^except = {regions(_fmt(lim.sw_except))}")
        return (f"Z on {len(z[0]) + 1} disks (rows and columns from 0, parity column P last):\n{lines}\n"
                f"MSC-CT with {limits}.\n"
                "A gap of stride S between two reads (or writes) at rows p < i of a column is filled when S < S^max "
                "and S is in no excluded region; cells are named row/column, e.g. 1/0 (P is column "
                f"{len(z[0])}).\nCheck yourself: vraid rxw --z {','.join(''.join(r) for r in z)} --ct {spec}")

    def questions(self, seed: int) -> list[Question]:
        z, spec = self.dealt(seed)
        n = len(z[0]) + 1
        before = rxw.Plan.build(0, z, list(range(n)))
        after = load_ct(spec, GENEROUS)(before)
        added = {(h, j): set(c) - set(b) for h, (row, brow) in enumerate(zip(after.transformed, before.basic))
                 for j, (c, b) in enumerate(zip(row, brow)) if set(c) != set(b)}
        reads = sorted(f"{h}/{j}" for (h, j), ops in added.items() if ops & {"r", "t"})
        temps = sorted(f"{h}/{j}" for (h, j), ops in added.items() if "t" in ops)
        writes = sorted(f"{h}/{j}" for (h, j), ops in added.items() if "w" in ops)

        def count(plan):
            rd = sum(1 for q in plan.requests if q.op == "read")
            return rd, len(plan.requests) - rd

        b, a = count(before), count(after)
        return [
            Question("q1", "Member reads and writes of the basic plan, before the transform?", list(b), kind="list",
                     form="reads,writes", explanation="one request per run of consecutive reads (or writes) in a column."),
            Question("q2", "Which cells gain a read (r or t)?", reads, kind="set", form="cells as row/column, or none",
                     explanation="read gaps filled: " + (", ".join(reads) or "none")
                     + ". Only gaps between two reads of one column, with stride below S_r^max and not excluded."),
            Question("q3", "Of those, which gain t (a read into a temporary buffer) rather than r?", temps, kind="set",
                     form="cells, or none",
                     explanation="eq. (6): a dirty block must not be overwritten by its old contents, so it is read "
                                 "into a temporary buffer (t); clean, empty and parity cells get r."),
            Question("q4", "Which cells gain a write w?", writes, kind="set", form="cells, or none",
                     explanation="write gaps filled: " + (", ".join(writes) or "none")
                     + ". Eq. (7): no write over an empty block the transform did not read; in P every cell between "
                       "must read the old parity."),
            Question("q5", "Member reads and writes after the transform?", list(a), kind="list", form="reads,writes",
                     explanation=f"{sum(b)} requests became {sum(a)}: each filled gap joins two requests of a column into one, "
                                 "at the price of moving more blocks."),
        ]


def _fmt(regs) -> str:
    return ";".join(f"{s}-{e}" for s, e in regs)


LAB = ContiguityLab(name="contiguity", title="Contiguity transform: what Fig. 10 adds under S^max and except regions",
                    seeds=["000"])
