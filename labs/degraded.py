"""Lab ``degraded``: the member I/Os of reads and writes on a RAID-5 array with one member failed.

RAID basics (docs/failures.md). With one member gone, a block on it is rebuilt on every read
from the other N-1 members of its row (XOR); a write of such a block cannot be written at all,
only folded into the parity, which takes the other data blocks; a write whose parity is on the
failed member is a plain data write; a write elsewhere must avoid any cycle that would read the
missing block. The answers are what a virtual-time :class:`~vraid.testing.session.Session`
built with that member failed (``EngineConfig(failed=[...])``, write-through) asked of each
member; the lab's sheet shows rebuild and scrub on a mount.
"""

from __future__ import annotations

import os

from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.testing.session import Session

from .framework import Lab, Question, rng

BLOCK = 4096


class DegradedLab(Lab):
    def dealt(self, seed: int) -> tuple[Geometry, int]:
        r = rng(self, seed)
        ndisks = r.choice((4, 5, 6))
        g = Geometry(5, ndisks, 4 * ndisks, BLOCK, BLOCK, r.choice(("left-symmetric", "left-asymmetric")), 0)
        return g, r.randrange(ndisks)

    def cases(self, seed: int) -> dict[str, tuple[str, int]]:
        """Question key -> (read|write, logical block), one of each kind the lab asks about."""
        g, failed = self.dealt(seed)
        r = rng(self, seed)
        r.random()
        blocks = list(range(g.data_disks * g.ndisks))
        r.shuffle(blocks)
        on_failed = next(b for b in blocks if g.locate(b).disk == failed)
        elsewhere = next(b for b in blocks if g.locate(b).disk != failed and g.parity_disk(g.locate(b).stripe) != failed)
        parity_gone = next(b for b in blocks if g.parity_disk(g.locate(b).stripe) == failed)
        return {"q1": ("read", elsewhere), "q2": ("read", on_failed), "q3": ("write", on_failed),
                "q4": ("write", parity_gone), "q5": ("write", elsewhere)}

    def setting(self, seed: int) -> str:
        g, failed = self.dealt(seed)
        return (f"RAID-5, {g.ndisks} disks, {g.layout}, strip = one 4 KiB block (so a stripe is one row of "
                f"{g.data_disks} data blocks and a parity block); disk {failed} has failed. No write cache, nothing "
                f"cached. Where blocks live: vraid layout --disks {g.ndisks} --layout {g.layout} --strip 4K --block 4K "
                f"--stripes {g.ndisks}. Each question is one 4 KiB host request; count member reads and writes.")

    def questions(self, seed: int) -> list[Question]:
        g, failed = self.dealt(seed)
        cases = self.cases(seed)
        seen: dict[str, list[int]] = {}
        with Session(EngineConfig(g, failed=[failed])) as s:
            def totals() -> tuple[int, int]:
                ms = s.status()["members"]
                return sum(m["reads"] for m in ms), sum(m["writes"] for m in ms)

            for key, (op, block) in cases.items():
                r0, w0 = totals()
                if op == "read":
                    s.read(block * BLOCK, BLOCK)
                else:
                    s.write(block * BLOCK, os.urandom(BLOCK))
                r1, w1 = totals()
                seen[key] = [r1 - r0, w1 - w0]
        n = g.ndisks

        def where(block: int) -> str:
            a = g.locate(block)
            return f"block {block} (stripe {a.stripe}, disk {a.disk}, parity on disk {g.parity_disk(a.stripe)})"

        return [
            Question("q1", f"Read {where(cases['q1'][1])}: member reads and writes?", seen["q1"], kind="list",
                     form="reads,writes", explanation="its disk works: one read, as on a healthy array."),
            Question("q2", f"Read {where(cases['q2'][1])}: member reads and writes?", seen["q2"], kind="list",
                     form="reads,writes",
                     explanation=f"the block is XOR of the other {n - 1} blocks of its row (data and parity): {n - 1} reads."),
            Question("q3", f"Write {where(cases['q3'][1])}: member reads and writes?", seen["q3"], kind="list",
                     form="reads,writes",
                     explanation=(f"the block cannot be written; the new parity is its new data XOR the other {n - 2} "
                                  f"data blocks, read from their disks: {n - 2} reads, one parity write.")),
            Question("q4", f"Write {where(cases['q4'][1])}: member reads and writes?", seen["q4"], kind="list",
                     form="reads,writes",
                     explanation="the parity of this stripe is on the failed disk: there is no parity to keep, "
                                 "so the data block is written alone, as on RAID-0."),
            Question("q5", f"Write {where(cases['q5'][1])}: member reads and writes?", seen["q5"], kind="list",
                     form="reads,writes",
                     explanation=("data disk and parity disk both work, but RCW would read every other data block, the "
                                  "missing one included: the row must take RMW (read old data and old parity, write "
                                  "both), whatever the rule would pick on a healthy array.")),
        ]


LAB = DegradedLab(name="degraded", title="Degraded mode: the member I/Os of reads and writes with one disk failed",
                  seeds=[])
