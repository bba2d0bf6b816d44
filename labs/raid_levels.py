"""Lab ``raid-levels``: which members a logical request touches, on every RAID level vraid runs.

RAID basics in the style of OSTEP ch. 38 (Arpaci-Dusseau, "Redundant Arrays of Inexpensive
Disks") and its ``raid.py`` homework: a seed deals a level, a member count, a strip size and a
few logical requests. Forward mode: which members and member blocks a read touches, which a
write writes and which it reads first. Reverse mode: a list of member I/Os, and which logical
operation made it. Then the member I/Os of a write of each size (one block, one strip, one
full stripe) on the dealt level, and of a small write and a full-stripe write on every level.

The levels are :func:`vraid.core.redundancy.levels`, each with its scheme's attributes
(``min_disks``, ``layouts``, ``place``), read when a seed is dealt: a level registered there is
dealt here with no change.
Every answer is what the engine did: a :class:`~vraid.testing.session.Session` without a write
cache over members that log their requests (:mod:`vraid.testing.member_log`), so an answer is
the plan a mount would run, read off the members.
"""

from __future__ import annotations

import os
from functools import lru_cache

from vraid.core.geometry import Geometry
from vraid.core import redundancy
from vraid.engine.build import EngineConfig
from vraid.errors import GeometryError
from vraid.sim.experiment.levels_book import dependence
from vraid.testing.member_log import MemberIO, MemberLog
from vraid.testing.session import Session

from .framework import Lab, Question, rng, show

BLOCK = 4096
#: each member's size: room for the superblock area and a few dozen small stripes
DISK_SIZE = 4 << 20


def geometry_for(level: int, ndisks: int, u: int, layout: str | None = None) -> Geometry | None:
    """The lab's array of ``level`` on ``ndisks`` members, ``u`` blocks a strip; None when the
    level does not run on that many members."""
    scheme = redundancy.for_level(level)
    try:
        return Geometry.for_disk_size(level=level, ndisks=ndisks, disk_size=DISK_SIZE, strip_size=u * BLOCK,
                                      layout=layout or scheme.layouts[0])
    except GeometryError:
        return None


def member_counts(level: int) -> list[int]:
    """Member counts the lab deals for ``level``: four from its fewest (at least 3), those it accepts."""
    low = max(3, redundancy.for_level(level).min_disks)
    return [n for n in range(low, low + 4) if geometry_for(level, n, 1) is not None]


def positions(g: Geometry, ios: list[MemberIO], op: str) -> frozenset[str]:
    """``disk:member block`` of every block the ``op`` requests moved (a request of n blocks is n)."""
    out = set()
    for io in ios:
        if io.op == op:
            first = (io.offset - g.data_offset) // g.block_size
            out |= {f"{io.disk}:{first + i}" for i in range(io.length // g.block_size)}
    return frozenset(out)


def requests(ios: list[MemberIO]) -> int:
    """Member requests (reads and writes): one per contiguous run a member moved."""
    return len(ios)


class Array:
    """The lab's array in a Session, its member I/Os logged per host request."""

    def __init__(self, g: Geometry) -> None:
        self.g = g
        self.log = MemberLog()
        self.session = Session(EngineConfig(g, store_factory=self.log.factory))

    def run(self, op: str, block: int, count: int) -> list[MemberIO]:
        """The member requests of one host ``op`` (read or write) of ``count`` blocks from ``block``."""
        with self.log.capture() as ios:
            if op == "write":
                self.session.write(block * BLOCK, os.urandom(count * BLOCK))
            else:
                self.session.read(block * BLOCK, count * BLOCK)
        return list(ios)

    def __enter__(self) -> "Array":
        return self

    def __exit__(self, *exc: object) -> None:
        self.session.close()


def member_block_rule(g: Geometry) -> str:
    """How a member block is numbered: ``stripe * u + row``, or with a stripe of ``depth`` strips
    of every member (RAID-10 on an odd count) ``stripe * depth*u + lane * u + row``."""
    return "stripe * u + row" if g.depth == 1 else f"stripe * {g.depth}u + lane * u + row"


def where(g: Geometry, block: int) -> str:
    """Block ``block`` worked from the geometry: stripe, data strip, row, data and check members."""
    a = g.locate(block)
    checks = list(g.parity_disks(a.stripe))
    lane = g.lane(a.stripe, a.strip)
    at = (f"{a.stripe} * {g.u} + {a.row}" if g.depth == 1 else
          f"{a.stripe} * {g.depth * g.u} + {lane} * {g.u} + {a.row} (its strip is the disk's strip {lane} of the "
          f"stripe: a stripe here is md's period of {g.depth} chunk rows)")
    return (f"block {block} is stripe {block} // {g.data_disks * g.u} = {a.stripe}, data strip {a.strip}, row {a.row}; "
            f"stripe {a.stripe}'s data strips are on disks {list(g.data_disks_of(a.stripe))}"
            + (f" and its check strips on {checks}" if checks else "")
            + f", so disk {a.disk}, member block {at} = {a.member_block}")


def owner(g: Geometry, disk: int, member_block: int) -> str:
    """What ``disk`` holds at ``member_block``: a logical block, or which check strip."""
    stripe, rest = divmod(member_block, g.u * g.depth)
    lane, row = divmod(rest, g.u)
    column = next((j for j, (d, ln) in enumerate(zip(g.columns(stripe), g.lanes(stripe))) if d == disk and ln == lane), None)
    k = column if column is not None and column < g.data_disks else None
    if k is not None:
        return f"block {stripe * g.data_disks * g.u + k * g.u + row}"
    if column is not None:
        j = column - g.data_disks
        copy_of = dependence(g.level, g.ndisks)[0][j]
        if copy_of >= 0:  # a mirror's copy: it holds the same data as that data strip
            return f"check strip {j} of stripe {stripe}, a copy of block {stripe * g.data_disks * g.u + copy_of * g.u + row}"
        return f"check strip {j} of stripe {stripe}"
    return f"nothing of stripe {stripe}"


def how_read(g: Geometry, ios: list[MemberIO]) -> str:
    """The write's reads, named: none, the old contents it overwrites (RMW) or other blocks (RCW)."""
    reads, writes = positions(g, ios, "r"), positions(g, ios, "w")
    if not reads:
        return "nothing read: " + ("no check strips to update" if not g.redundancy.parity_columns else
                                   "the new data alone gives the check strips (whole rows written, or copies)")
    if reads <= writes:
        return "read-modify-write: it reads the old contents of every block it overwrites, data and check"
    return "reconstruct-write: it reads the data blocks of the rows it does not overwrite, then computes the checks"


def listing(g: Geometry, ios: list[MemberIO]) -> str:
    """Member I/Os as the reverse questions show them, in the order the engine issued them."""
    return "; ".join(f"disk {io.disk} {'read' if io.op == 'r' else 'write'} "
                     f"{show(sorted(int(p.split(':')[1]) for p in positions(g, [io], io.op)))}" for io in ios)


class RaidLevelsLab(Lab):
    def dealt(self, seed: int) -> tuple[int, int, int, str]:
        """(level, members, blocks per strip u, layout)."""
        r = rng(self, seed)
        levels = redundancy.levels()
        level = levels[seed] if seed < len(levels) else r.choice(levels)
        ndisks = r.choice(member_counts(level))
        u = r.choice((1, 2, 2, 4))
        layouts = redundancy.for_level(level).layouts
        layout = layouts[0] if seed < len(levels) or not redundancy.for_level(level).parity_columns else r.choice(layouts)
        return level, ndisks, u, layout

    def geometry(self, seed: int) -> Geometry:
        level, ndisks, u, layout = self.dealt(seed)
        g = geometry_for(level, ndisks, u, layout)
        assert g is not None  # member_counts dealt only counts the level accepts
        return g

    def setting(self, seed: int) -> str:
        g = self.geometry(seed)
        s = g.redundancy
        return (f"A {g.title} array of {g.ndisks} disks ({s.tolerates} failure(s) tolerated, "
                f"{s.parity_columns} check strip(s) a stripe), strip = {g.u} block(s) of 4 KiB, so a stripe holds "
                f"{g.data_disks * g.u} data blocks. No write cache: every host request goes to the members at once, "
                "and nothing is cached. Disks, blocks and member blocks count from 0; a member block is the block's "
                f"number inside that disk's data area ({member_block_rule(g)}); write positions as disk:member block "
                f"(e.g. 2:5). Check yourself: vraid layout --level {g.level} --disks {g.ndisks}"
                + (f" --layout {g.layout}" if s.parity_columns else "")
                + f" --strip {g.u * 4}K --block 4K --stripes {g.ndisks}")

    def deal(self, seed: int) -> dict[str, tuple[str, int, int]]:
        """The requests the questions are about: key -> (read or write, first logical block, blocks);
        q1, q2 forward reads, q3 (and q4) a forward one-block write, q5, q6 reverse, then the three
        write sizes of q7."""
        g = self.geometry(seed)
        r = rng(self, seed)
        r.random()  # the setting's draws are done; deal the requests from here
        per = g.data_disks * g.u
        span = per * 2 * g.ndisks
        out = {f"q{i}": ("read", r.randrange(span - 1), r.choice((1, 1, 2))) for i in (1, 2)}
        out["q3"] = ("write", r.randrange(span), 1)
        for i in (5, 6):
            op = r.choice(("read", "write"))
            out[f"q{i}"] = (op, r.randrange(span - 1), r.choice((1, 2)))
        out |= {"one block": ("write", per + r.randrange(per), 1), "one strip": ("write", 2 * per, g.u),
                "a full stripe": ("write", 3 * per, per)}
        return out

    def questions(self, seed: int) -> list[Question]:
        g = self.geometry(seed)
        dealt = self.deal(seed)
        qs: list[Question] = []
        with Array(g) as arr:
            ios_of = {key: arr.run(*req) for key, req in dealt.items()}
        for i in (1, 2):
            _, block, count = dealt[f"q{i}"]
            ios = ios_of[f"q{i}"]
            qs.append(Question(
                f"q{i}", f"Forward: a read of {count} block(s) from logical block {block}: which disk:member "
                         "blocks does it read?", positions(g, ios, "r"), kind="set",
                form="disk:block, comma-separated",
                explanation="; ".join(where(g, b) for b in range(block, block + count))
                            + f". The engine read {show(positions(g, ios, 'r'))}."))
        _, block, _ = dealt["q3"]
        ios = ios_of["q3"]
        qs.append(Question(
            "q3", f"Forward: a write of logical block {block}: which disk:member blocks does it write?",
            positions(g, ios, "w"), kind="set", form="disk:block, comma-separated",
            explanation=(where(g, block) + ("; a write also writes that row of each of the stripe's check strips"
                                             if g.redundancy.parity_columns else "; no check strips to write")
                         + f": {show(positions(g, ios, 'w'))}.")))
        qs.append(Question(
            "q4", f"Forward: and which disk:member blocks does that write of block {block} read first?",
            positions(g, ios, "r"), kind="set", form="disk:block, comma-separated (none if it reads nothing)",
            explanation=how_read(g, ios) + f": {show(positions(g, ios, 'r'))}."))
        for i in (5, 6):
            op, block, count = dealt[f"q{i}"]
            ios = ios_of[f"q{i}"]
            moved = sorted(positions(g, ios, "w" if op == "write" else "r"), key=lambda p: tuple(map(int, p.split(":"))))
            qs.append(Question(
                f"q{i}", f"Reverse: which logical operation made these member I/Os? {listing(g, ios)}",
                [op, *range(block, block + count)], kind="list",
                form="read or write, then its logical blocks (e.g. write,12,13)",
                explanation=(("only reads: a read. " if op == "read" else "data written: a write. ")
                             + "; ".join(f"disk {p.split(':')[0]} member block {p.split(':')[1]} holds "
                                         f"{owner(g, *map(int, p.split(':')))}" for p in moved) + ".")))
        sizes = {k: dealt[k] for k in ("one block", "one strip", "a full stripe")}
        done = {k: ios_of[k] for k in sizes}
        qs.append(Question(
            "q7", f"Member requests (reads + writes; a contiguous run on one disk is one) of a write of "
                  f"{', '.join(f'{k} ({n} block(s) from block {b})' for k, (_, b, n) in sizes.items())}?",
            [requests(ios) for ios in done.values()], kind="list", form="three numbers",
            explanation="\n".join(f"{k}: {said(ios)}; {how_read(g, ios)}" for k, ios in done.items())))
        small, full = small_writes(g.ndisks), full_stripe_writes(g.ndisks)
        names = ", ".join(f"RAID-{lv}" for lv in small)
        qs.append(Question(
            "q8", f"On {g.ndisks} disks with 1-block strips, no cache: member requests of a write of logical block 0 on "
                  f"each level vraid runs ({names})?",
            [requests(ios) for ios in small.values()], kind="list", form="one number per level, in that order",
            explanation="\n".join(f"RAID-{lv}: {said(ios)}; {how_read(geometry_for(lv, g.ndisks, 1), ios)}"
                                   for lv, ios in small.items())))
        qs.append(Question(
            "q9", f"And of a write of the whole first stripe on each of them ({names})?",
            [requests(ios) for ios in full.values()], kind="list", form="one number per level, in that order",
            explanation="\n".join(f"RAID-{lv}: {said(ios)}" for lv, ios in full.items())
                        + "\nA full-stripe write computes its check strips from the new data alone: nothing to read, "
                          "every strip of every member written once, on every level"
                        + ("" if all(geometry_for(lv, g.ndisks, 1).depth == 1 for lv in full) else
                           f" (RAID-10 on {g.ndisks}, an odd count: a stripe holds two strips of every member, md's "
                           "period of two chunk rows)") + "."))
        return qs


def said(ios: list[MemberIO]) -> str:
    """A write's member requests counted: ``2 read(s) + 2 write(s)``."""
    reads = sum(io.op == "r" for io in ios)
    return f"{reads} read(s) + {len(ios) - reads} write(s)"


def small_writes(ndisks: int) -> dict[int, list[MemberIO]]:
    """Level -> the member requests of a one-block write of logical block 0, on every level of
    :func:`~vraid.core.redundancy.levels` that runs on ``ndisks`` members (strips of one block, no cache)."""
    return {lv: ios for lv, (ios, _) in _level_writes(ndisks, redundancy.levels()).items()}


def full_stripe_writes(ndisks: int) -> dict[int, list[MemberIO]]:
    """Level -> the member requests of a write of the whole first stripe, as :func:`small_writes`."""
    return {lv: ios for lv, (_, ios) in _level_writes(ndisks, redundancy.levels()).items()}


@lru_cache(maxsize=16)
def _level_writes(ndisks: int, levels: tuple[int, ...]) -> dict[int, tuple[list[MemberIO], list[MemberIO]]]:
    out: dict[int, tuple[list[MemberIO], list[MemberIO]]] = {}
    for lv in levels:
        g = geometry_for(lv, ndisks, 1)
        if g is not None:
            with Array(g) as arr:
                out[lv] = (arr.run("write", 0, 1), arr.run("write", 0, g.data_disks))
    return out


LAB = RaidLevelsLab(
    name="raid-levels",
    title="RAID levels: which members a request touches (forward and reverse), member I/Os per write size",
    seeds=[],
)

__all__ = ["LAB", "RaidLevelsLab", "full_stripe_writes", "geometry_for", "member_counts", "positions", "small_writes"]
