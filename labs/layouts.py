"""Lab ``layouts``: where logical block N lives under each md layout, and the reverse.

RAID basics (no paper): the four md RAID-5 layouts rotate the parity strip over the members
stripe by stripe; *left* layouts start it on the last member and move it left, *right* ones
start on the first and move right; *symmetric* layouts put the first data strip just after the
parity, *asymmetric* ones fill the data strips left to right around it. The answers come from
:class:`vraid.core.geometry.Geometry` and :class:`vraid.core.mapping.StaticMapping`, the code
that places every byte a mount writes.
"""

from __future__ import annotations

from vraid.core.geometry import LAYOUTS, Geometry
from vraid.core.mapping import StaticMapping

from .framework import Lab, Question, rng

BLOCK = 4096


class LayoutsLab(Lab):
    def geometry(self, seed: int) -> Geometry:
        r = rng(self, seed)
        layout = LAYOUTS[seed % len(LAYOUTS)] if seed < len(LAYOUTS) else r.choice(LAYOUTS)
        ndisks = r.choice((3, 4, 5, 6))
        u = r.choice((1, 2, 2, 4))
        return Geometry(5, ndisks, 64, BLOCK, u * BLOCK, layout, 0)

    def setting(self, seed: int) -> str:
        g = self.geometry(seed)
        return (f"A RAID-5 array of {g.ndisks} disks, layout {g.layout}, strip = {g.u} block(s) of 4 KiB "
                f"(u = {g.u}), so a stripe holds {g.data_disks * g.u} data blocks. Disks, stripes, rows and blocks "
                "count from 0; a member block is the block's number inside that disk's data area "
                f"(stripe * u + row). Check yourself: vraid layout --disks {g.ndisks} --layout {g.layout} "
                f"--strip {g.u * 4}K --block 4K --stripes {g.ndisks}")

    def questions(self, seed: int) -> list[Question]:
        g = self.geometry(seed)
        m = StaticMapping(g)
        r = rng(self, seed)
        r.random()  # the geometry's draws are done; deal the blocks from here
        per = g.data_disks * g.u
        qs: list[Question] = []
        blocks = r.sample(range(per * g.ndisks * 2), 3)
        for i, n in enumerate(blocks, 1):
            a = g.locate(n)
            qs.append(Question(
                f"q{i}", f"Logical block {n}: which disk, and which member block on it?", [a.disk, a.member_block],
                kind="list", form="disk,member block",
                explanation=(f"{per} data blocks per stripe: block {n} is in stripe {n} // {per} = {a.stripe}, "
                             f"data strip k = {(n % per) // g.u}, row {a.row}. Stripe {a.stripe} keeps parity on disk "
                             f"{g.parity_disk(a.stripe)}; under {g.layout} its data strips 0..{g.data_disks - 1} are on "
                             f"disks {list(g.data_disks_of(a.stripe))}, so strip {a.strip} is on disk {a.disk}, "
                             f"member block {a.stripe} * {g.u} + {a.row} = {a.member_block}.")))
        s = r.randrange(g.ndisks, 3 * g.ndisks)
        qs.append(Question(
            "q4", f"Which disk holds the parity of stripe {s}?", g.parity_disk(s),
            explanation=(f"{g.layout}: parity starts on disk {g.parity_disk(0)} in stripe 0 and moves "
                         f"{'left' if g.layout.startswith('left') else 'right'} one disk per stripe, repeating every "
                         f"{g.ndisks} stripes: stripe {s} is {s} mod {g.ndisks} = {s % g.ndisks} into the cycle.")))
        for i in (5, 6, 7):
            disk = r.randrange(g.ndisks)
            mb = r.randrange(g.ndisks * g.u * 2)
            stripe, row = divmod(mb, g.u)
            k = g.strip_of_disk(stripe, disk)
            if k is None:
                answer, why = "parity", f"disk {disk} holds stripe {stripe}'s parity"
            else:
                answer = str(m.block_of(stripe, k, row))
                why = (f"disk {disk} holds data strip k = {k} of stripe {stripe}, so the block is "
                       f"{stripe} * {per} + {k} * {g.u} + {row} = {answer}")
            qs.append(Question(
                f"q{i}", f"Reverse: which logical block is at disk {disk}, member block {mb}? (or 'parity')", answer,
                kind="word", form="a block number or parity",
                explanation=f"member block {mb} is stripe {mb} // {g.u} = {stripe}, row {row}; {why}."))
        return qs


LAB = LayoutsLab(
    name="layouts",
    title="RAID-5 layouts: where logical block N lives, and the reverse",
    seeds=[],
)
