"""Lab ``multibuffering``: which large (LW) or partial (PW) stripe write a buffer state forms,
where the blocks land, what the stripe directory says afterwards, and what the free-stripe generator (the cleaner) would
do next (seed 004, Hua, Vu & Hu, sections 2.1-2.2, Fig. 2).

Multibuffering keeps one write buffer per disk in a shared pool. A block is buffered on its
*home* disk and never leaves it. When the pool is full, a write miss forms a stripe write out
of the buffers: a **large write** (LW) of one block from each of n-1 buffers plus the parity
into a free stripe (no reads at all) when enough disks have something buffered, otherwise a
**partial write** (PW) into a partially free stripe. The parity member of a new stripe rotates.
The stripe directory records where every logical block now lives.

Every answer is what vraid's own placement policy and directory do
(:class:`vraid.policies.placement.multibuffer.MultibufferPlacement`,
:class:`vraid.core.directory.StripeDirectory`): the dealt writes are handed to the policy one
by one, and every step it returns is applied to the directory, as the engine does on a mount
(`vraid create --placement multibuffer`, docs/multibuffer.md); this lab needs no mount.
"""

from __future__ import annotations

from typing import Any

from vraid.core.directory import LW, StripeWrite
from vraid.core.geometry import Geometry
from vraid.policies.placement.cleaner import generate
from vraid.policies.placement.multibuffer import MultibufferPlacement

from .framework import Lab, Question, rng

BLOCK = 4096


def dealt(lab: Lab, seed: int) -> tuple[int, int, int, str, tuple[int, ...]]:
    """(disks, data stripes, buffer size in blocks, replacement order, writes of logical blocks)."""
    r = rng(lab, seed)
    ndisks = 4 if seed == 0 else r.choice((4, 5, 6))
    data_stripes = 6 if seed == 0 else r.choice((6, 8))
    buffer = ndisks if seed == 0 else r.choice((ndisks - 1, ndisks, ndisks + 1))
    order = "lrw" if seed == 0 else r.choice(("lrw", "fifo"))
    blocks = data_stripes * (ndisks - 1)
    n = buffer + (3 if seed < 3 else r.randrange(4, 8))
    writes = tuple(r.randrange(blocks) for _ in range(n))
    return ndisks, data_stripes, buffer, order, writes


def play(ndisks: int, data_stripes: int, buffer: int, order: str, writes) -> dict[str, Any]:
    """Run the writes through the policy and the directory; what happened, for the questions."""
    spare = 2  # free stripes beyond the data
    g = Geometry(5, ndisks, data_stripes + spare, BLOCK, BLOCK, "left-symmetric", 0)
    p = MultibufferPlacement(buffer=buffer, order=order, hot=0.0, spare=0.0)
    d = p.make_directory(g, data_stripes)
    p.attach(d)
    homes = [d.home(b) for b in writes]
    stripe_writes: list[tuple[int, StripeWrite]] = []  # (1-based write number, the write)
    for i, b in enumerate(writes, 1):
        for step in p.write(b):
            if isinstance(step, StripeWrite):
                stripe_writes.append((i, step))
            d.apply(step)
    d.check()
    return {"geometry": g, "directory": d, "policy": p, "homes": homes, "stripe_writes": stripe_writes,
            "buffered": [p.buffered()[m] for m in range(ndisks)]}


class MultibufferingLab(Lab):
    def setting(self, seed: int) -> str:
        ndisks, stripes, buffer, order, writes = dealt(self, seed)
        return (f"{ndisks} disks, RAID-5 left-symmetric, one 4 KiB block per strip: {stripes} stripes of data "
                f"({stripes * (ndisks - 1)} logical blocks) and 2 free stripes after them. Multibuffering with a pool "
                f"of {buffer} blocks shared by the {ndisks} per-disk buffers, {order.upper()} replacement. "
                f"The buffers start empty. Writes of logical blocks, in order: <{', '.join(map(str, writes))}>.\n"
                "A block's home disk is the disk it lives on in the RAID-5 layout; it is buffered there. When the pool "
                "is full, a write miss first forms one stripe write out of the buffers (the oldest block of each "
                "buffer taken).")

    def questions(self, seed: int) -> list[Question]:
        ndisks, stripes, buffer, order, writes = dealt(self, seed)
        run = play(ndisks, stripes, buffer, order, writes)
        d, sw = run["directory"], run["stripe_writes"]
        qs = [Question("q1", "The home disk of each written block, in order?", run["homes"], kind="list",
                       form="one disk number per write",
                       explanation="the RAID-5 layout's disk of each block: block b is in stripe b // (n-1); "
                                   "left-symmetric puts the parity of stripe s on disk n-1-(s mod n) and the data "
                                   "strips after it, wrapping round."),
              Question("q2", "How many stripe writes do the writes cause, and how many of them are large writes (LW)?",
                       [len(sw), sum(1 for _, w in sw if w.kind == LW)], kind="list", form="stripe writes,LWs",
                       explanation="a stripe write happens only when a write MISSES with the pool full (a write hit "
                                   "just updates the buffered copy); it is an LW when at least n-1 buffers hold a "
                                   "block, a PW (into a partly free stripe) otherwise.")]
        if sw:
            i, w = sw[0]
            qs += [
                Question("q3", "The first stripe write: at which write (1 = the first) does it happen, into which "
                               "stripe, with the parity on which disk, writing how many data blocks?",
                         [i, w.stripe, w.parity, w.size], kind="list", form="write number,stripe,parity disk,blocks",
                         explanation=(f"write {i} missed with {buffer} blocks buffered; it was a{'n' if w.kind == LW else ''} "
                                      f"{w.kind} of {w.size} data block(s) into stripe {w.stripe}, parity on disk "
                                      f"{w.parity}. Free stripes come after the data ({stripes}, {stripes + 1}); the "
                                      "parity member of new stripes rotates, and each block goes to its home disk "
                                      "(blocks never migrate).")),
                Question("q4", "Which logical blocks did that first stripe write take out of the buffers?",
                         sorted(L for _, L in w.slots), kind="set", form="logical block numbers",
                         explanation="the oldest block of every non-empty buffer except the new stripe's parity disk "
                                     "(FIFO order inside a buffer; under LRW a rewritten block moves to its buffer's "
                                     "young end)."),
            ]
            moved = sorted({L for _, w2 in sw for _, L in w2.slots})
            target = moved[0]
            s, m = d.loc[target]
            qs.append(Question("q5", f"After all the writes, where does the stripe directory say logical block {target} "
                                     "lives?", [s, m], kind="list", form="stripe,disk",
                               explanation=f"block {target} was written by a stripe write, so its old slot in the RAID-5 "
                                           f"layout is dirty (free once its stripe is cleaned) and the directory maps "
                                           f"it to stripe {s}, disk {m}: still its home disk."))
        qs.append(Question("q6", "How many blocks does each disk's buffer hold at the end (disk 0 first)?",
                           run["buffered"], kind="list", form="one count per disk",
                           explanation="each write miss adds a block to its home disk's buffer (a hit adds nothing); each "
                                       "stripe write takes one block out of every buffer it uses."))
        plan = generate(d)
        if plan is not None:
            live = len(d.live_members(plan.victim))
            qs += [
                Question("q7", "The free-stripe generator runs now, on the directory after all the writes: which stripe "
                               "is its victim, and how many of its blocks does it move (swaps)?",
                         [plan.victim, plan.swaps], kind="list", form="victim stripe,swaps",
                         explanation=(f"the victim is the stripe with the fewest active (live) blocks among those "
                                      f"cleaning can improve (ties: the lower number): stripe {plan.victim} with "
                                      f"{live}. Each active block moves to a partner stripe holding a dirty (stale) "
                                      "slot on the same disk, so no block changes disk.")),
                Question("q8", "Does the victim become a whole free stripe (ready for an LW) or a partial free stripe "
                               "(PFS, ready for a PW)?", "free" if plan.whole else "pfs", kind="word",
                         form="free or pfs",
                         explanation="free when every active block found a partner; otherwise its dirty slots are freed "
                                     "and it is a PFS (Fig. 2(b))."),
            ]
        return qs


LAB = MultibufferingLab(name="multibuffering",
                        title="Multibuffering: LW or PW, where the blocks land, the stripe directory (paper 004)",
                        seeds=["004"])
