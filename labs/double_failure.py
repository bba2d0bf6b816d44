"""Lab ``double-failure``: RAID-6 with two members failed, and what Q gives that P alone cannot.

H. Peter Anvin, "The mathematics of RAID-6", section 4 (the cases of two lost strips), on md's
layouts (docs/levels.md "## RAID-6"). A seed deals a RAID-6 array (member count, md layout,
strip = one 4 KiB block) and two failed members. The questions: which strips the two failed
members hold over one rotation of the layout (two data, data+P, data+Q, P+Q) and in one given
stripe; which members the array reads to rebuild a lost data strip of that stripe, and which
check strip(s) that rebuild uses; the Q weight g^slot of that strip (md's syndrome slot); and,
for a stripe where both lost strips are data, what P alone leaves open (256 byte pairs fit its
one equation) and what P and Q pin down (one), with the divisor g^x + g^y of Anvin's
two-data formula and a worked byte.

Every answer is computed by vraid's code: the geometry (:class:`~vraid.core.geometry.Geometry`,
md's placement and slots), the member I/Os of a virtual-time
:class:`~vraid.testing.session.Session` built with both members failed (members that log their
requests, :mod:`vraid.testing.member_log`), and the field and syndrome of
:mod:`vraid.core.gf256` and :mod:`vraid.core.pq`.
"""

from __future__ import annotations

import os

import numpy as np

from vraid.core import gf256
from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.testing.member_log import MemberLog
from vraid.testing.session import Session

from .framework import Lab, Question, rng

BLOCK = 4096
#: each member's size: room for the superblock area and a few dozen one-block stripes
DISK_SIZE = 4 << 20
#: md's four RAID-6 rotations
LAYOUTS = ("left-symmetric", "right-symmetric", "left-asymmetric", "right-asymmetric")
#: the cases of two lost strips (Anvin section 4), in the order q1 counts them
CASES = ("two data", "data+P", "data+Q", "P+Q")


def roles(g: Geometry, stripe: int, disks: tuple[int, ...]) -> list[str]:
    """What each of ``disks`` holds in ``stripe``: ``dK`` (data strip K), ``p`` or ``q``."""
    checks = g.parity_disks(stripe)
    out = []
    for d in disks:
        k = g.strip_of_disk(stripe, d)
        out.append(f"d{k}" if k is not None else "pq"[checks.index(d)])
    return out


def case(g: Geometry, stripe: int, failed: tuple[int, int]) -> str:
    """Which of :data:`CASES` the two failed members' strips of ``stripe`` are."""
    r = sorted(x if x in ("p", "q") else "d" for x in roles(g, stripe, failed))
    return {("d", "d"): "two data", ("d", "p"): "data+P", ("d", "q"): "data+Q", ("p", "q"): "P+Q"}[tuple(r)]


def slot(g: Geometry, stripe: int, k: int) -> int:
    """md's syndrome slot of data strip ``k`` of ``stripe``: Q weights it by g^slot."""
    slots = g.slots(stripe)
    return k if slots is None else slots[k]


class DoubleFailureLab(Lab):
    def geometry(self, seed: int) -> tuple[Geometry, tuple[int, int]]:
        """The dealt array and its two failed members (a pair that is two data strips in some stripe)."""
        r = rng(self, seed)
        n = r.choice((4, 5, 6, 7))
        g = Geometry.for_disk_size(level=6, ndisks=n, disk_size=DISK_SIZE, strip_size=BLOCK, layout=r.choice(LAYOUTS))
        pairs = [(a, b) for a in range(n) for b in range(a + 1, n)
                 if any(case(g, s, (a, b)) == "two data" for s in range(n))]
        return g, r.choice(pairs)

    def stripes(self, seed: int) -> tuple[int, int, int]:
        """(stripe of q2-q5, the failed member whose data strip q3-q5 rebuild, a two-data stripe for q6-q9)."""
        g, failed = self.geometry(seed)
        r = rng(self, seed + 1000)
        n = g.ndisks
        with_data = [(s, d) for s in range(n) for d in failed if g.strip_of_disk(s, d) is not None]
        s, d = r.choice(with_data)
        two = r.choice([t for t in range(n) if case(g, t, failed) == "two data"])
        return s, d, two

    def setting(self, seed: int) -> str:
        g, (a, b) = self.geometry(seed)
        return (f"RAID-6, {g.ndisks} disks, {g.layout} (md's), strip = one 4 KiB block, so stripe s is one row of "
                f"{g.data_disks} data blocks (logical blocks s*{g.data_disks} .. s*{g.data_disks}+{g.data_disks - 1}), "
                f"P and Q. Disks {a} and {b} have failed. Where blocks live: vraid layout --level 6 --disks {g.ndisks} "
                f"--layout {g.layout} --strip 4K --block 4K --stripes {g.ndisks}. Q = sum of g^slot * D over the "
                f"stripe's data in GF(2^8) (polynomial 0x11d, g = 2; docs/levels.md).")

    def observed_reads(self, g: Geometry, failed: tuple[int, int], block: int) -> set[int]:
        """The members a read of ``block`` read, on a Session with both ``failed`` members failed."""
        log = MemberLog()
        with Session(EngineConfig(g, failed=list(failed), store_factory=log.factory)) as s:
            s.write(0, os.urandom(g.ndisks * g.data_disks * BLOCK))  # some data, degraded writes included
            with log.capture() as ios:
                s.read(block * BLOCK, BLOCK)
        assert all(io.op == "r" for io in ios)
        return {io.disk for io in ios}

    def questions(self, seed: int) -> list[Question]:
        g, failed = self.geometry(seed)
        a, b = failed
        s, d, two = self.stripes(seed)
        n, nd = g.ndisks, g.data_disks
        counts = [sum(case(g, t, failed) == c for t in range(n)) for c in CASES]
        k = g.strip_of_disk(s, d)
        block = s * nd + k
        reads = self.observed_reads(g, failed, block)
        p, q = g.parity_disks(s)
        used = " and ".join(name for name, disk in (("p", p), ("q", q)) if disk in reads) or "none"
        sk = slot(g, s, k)

        # the two-data stripe: one byte per data strip, seeded; P and Q as md computes them. P and Q
        # are linear, so P_xy and Q_xy (P and Q less the other data's terms) are the P and Q of the
        # two lost strips alone, and the divisor g^x' + g^y' is the Q of ones in both
        x, y = sorted(g.strip_of_disk(two, f) for f in failed)
        sx, sy = slot(g, two, x), slot(g, two, y)
        r = rng(self, seed + 2000)
        pq, slots = g.redundancy, g.slots(two)
        data = np.array([[r.randrange(256)] for _ in range(nd)], dtype=np.uint8)
        checks = pq.generate(data, slots=slots)
        pv, qv = int(checks[0][0]), int(checks[1][0])
        others = [j for j in range(nd) if j not in (x, y)]

        def only(dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
            """P and Q of a stripe holding ``dx`` and ``dy`` in strips x and y and zeros elsewhere."""
            cols = np.zeros((nd,) + dx.shape, dtype=np.uint8)
            cols[x], cols[y] = dx, dy
            return pq.generate(cols, slots=slots)

        pxy, qxy = (int(v[0]) for v in only(data[x], data[y]))
        divisor = int(only(np.ones(1, np.uint8), np.ones(1, np.uint8))[1][0])
        # every byte pair (D_x, D_y): which fit P's equation, which fit P's and Q's
        every = np.arange(1 << 16)
        pairs = only((every >> 8).astype(np.uint8), (every & 0xFF).astype(np.uint8))
        fit_p = pairs[0] == pxy
        fit_q = pairs[1] == qxy
        lost = data.copy()
        lost[[x, y]] = 0
        pq.reconstruct(lost, checks, [x, y], slots=slots)
        shown = ", ".join(f"D{j}={int(data[j, 0])}" for j in others) or "no other data strip"

        why_reads = {
            "two data": f"both P and Q are needed (two unknowns, two equations): the other {nd - 2} data strips, P and Q",
            "data+P": f"P is gone: D{k} comes from Q alone, D = g^-slot (Q + Q of the other data): the other {nd - 1} data strips and Q",
            "data+Q": f"Q is gone but not needed: D{k} is P + the other data, as on RAID-5: the other {nd - 1} data strips and P",
        }[case(g, s, failed)]
        return [
            Question("q1", f"Over stripes 0..{n - 1} (one turn of the layout), in how many stripes are the strips of "
                           f"disks {a} and {b}: {', '.join(CASES)}?", counts, kind="list", form="four counts",
                     explanation=f"per stripe, from where the layout puts P, Q and the data; {counts[3]} stripe(s) lose "
                                 f"no data at all, {counts[0]} lose two data strips and need both P and Q."),
            Question("q2", f"In stripe {s}, what do disks {a} and {b} hold?", roles(g, s, failed), kind="set",
                     form="dK for data strip K, p, q",
                     explanation=f"stripe {s}: data on disks {list(g.data_disks_of(s))} (strips 0..{nd - 1}), P on disk "
                                 f"{p}, Q on disk {q}."),
            Question("q3", f"Read block {block} (stripe {s}, data strip {k}, on failed disk {d}): which disks does the "
                           f"array read?", sorted(reads), kind="set", form="disk numbers",
                     explanation=why_reads + f": disks {sorted(reads)}."),
            Question("q4", f"Which check strip(s) does that rebuild of block {block} use?", used, kind="word",
                     form="p, q or p and q",
                     explanation="P gives one equation per byte (the XOR); Q gives a second, independent one, which "
                                 "is what lets RAID-6 lose P itself or a second data strip."),
            Question("q5", f"Q weights data strip {k} of stripe {s} by g^slot: what is the slot?", sk,
                     explanation=("md counts slots from the disk after Q, wrapping, skipping P and Q"
                                  + ("; in this stripe that is the logical strip number (always so on the symmetric layouts)"
                                     if g.slots(s) is None else f"; on {g.layout} it is not always the strip number")
                                  + f": slot {sk}, weight g^{sk} = {gf256.gexp(sk)}.")),
            Question("q6", f"Stripe {two} has lost data strips {x} and {y} (disks {a} and {b}). Anvin's formula "
                           f"divides by g^x' + g^y', x' and y' their slots: what is that byte, in decimal?", divisor,
                     explanation=f"slots {sx} and {sy}: g^{sx} + g^{sy} = {gf256.gexp(sx)} XOR {gf256.gexp(sy)} = "
                                 f"{divisor} (for slots below 8, g^i is 2^i)."),
            Question("q7", f"In stripe {two} one byte of P + the other data (P_xy = D{x} + D{y}) is {pxy}. How many "
                           f"byte pairs (D{x}, D{y}) fit P alone?", int(fit_p.sum()),
                     explanation="every D_x has exactly one D_y = P_xy + D_x: P alone cannot tell which of 256 pairs "
                                 "was lost; that is why RAID-5 survives only one failure."),
            Question("q8", f"Q + the other data's Q terms (Q_xy = g^{sx} D{x} + g^{sy} D{y}) is {qxy} at that byte. "
                           f"How many pairs fit P and Q?", int((fit_p & fit_q).sum()),
                     explanation=f"two independent linear equations in GF(2^8): one solution, since g^{sx} + g^{sy} "
                                 f"= {divisor} is not zero (distinct slots have distinct weights)."),
            Question("q9", f"The other data bytes are {shown}; P = {pv}, Q = {qv}. What is D{x}? (GF(2^8): "
                           f"python -c 'from vraid.core.gf256 import mul, inv, gexp')", int(lost[x, 0]),
                     explanation=f"D{x} = (Q_xy + g^{sy} P_xy) / (g^{sx} + g^{sy}) = mul(inv({divisor}), "
                                 f"{gf256.mul(divisor, int(lost[x, 0]))}) = {int(lost[x, 0])}; then "
                                 f"D{y} = P_xy + D{x} = {int(lost[y, 0])}."),
        ]


LAB = DoubleFailureLab(name="double-failure",
                       title="RAID-6 with two disks failed: what to read to rebuild a strip, what Q gives that P cannot",
                       seeds=[])
