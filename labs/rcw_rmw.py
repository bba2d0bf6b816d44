"""Lab ``rcw-rmw``: reconstruct-write or read-modify-write, row by row (seed 000 sec. II-A).

A stripe row (PBG) with ``d`` dirty and ``c`` clean blocks on ``N`` members can be written two
ways: RCW reads the N-1-d-c data blocks the cache lacks and writes the d blocks and the parity
(N-c I/Os), RMW reads the d old blocks and the old parity and writes them back (2(1+d) I/Os).
The controller takes the cheaper: RMW exactly when ``N - c > 2(1 + d)``, and a row with every
data block dirty (a full-PBG write) reads nothing. Every answer is counted from the cells
:mod:`vraid.core.rxw` builds (its RCW_* and RMW_* cells and :func:`~vraid.core.rxw.basic_row`).
"""

from __future__ import annotations

from vraid.core import rxw

from .framework import Lab, Question, rng

#: seed 000 eq. (2): the paper's example Z (7 rows, 4 data strips + parity)
EQ2 = rxw.parse_z("DEEE,ECED,EEEE,DDDD,DCDD,EDEE,DEEE")


def counts(cells) -> tuple[int, int]:
    """(member reads, member writes) of one row's cells."""
    return sum(1 for c in cells if "r" in c or "t" in c), sum(1 for c in cells if "w" in c)


def rcw_cells(states) -> tuple:
    by_state = {"D": rxw.RCW_DIRTY, "C": rxw.RCW_CLEAN, "E": rxw.RCW_EMPTY}
    return tuple(by_state[s] for s in states) + (rxw.RCW_PARITY,)


def rmw_cells(states) -> tuple:
    return tuple(rxw.RMW_DIRTY if s == "D" else rxw.EMPTY for s in states) + (rxw.RMW_PARITY,)


def deal_row(r, width: int) -> tuple[str, ...]:
    """A row with at least one dirty block (a row with none is not written)."""
    while True:
        row = tuple(r.choice("DDCEEEE") for _ in range(width))
        if "D" in row:
            return row


def why(h: int, row, n: int) -> str:
    """One row's choice, worked."""
    d, c, cyc = row.count("D"), row.count("C"), rxw.row_cycle(row, n)
    head = f"row {h} {''.join(row)}: d = {d} dirty, c = {c} clean of N = {n} disks; "
    if cyc == "none":
        return head + "nothing dirty, nothing to write"
    if cyc == "full":
        return head + "every data block dirty: a full-PBG write, nothing to read"
    return head + f"N - c = {n - c} {'>' if cyc == 'rmw' else '<='} 2(1 + d) = {2 * (1 + d)}: {cyc}"


class RcwRmwLab(Lab):
    def dealt(self, seed: int) -> tuple[int, list[tuple[str, ...]]]:
        r = rng(self, seed)
        ndisks = r.choice((5, 6, 8))
        rows = [deal_row(r, ndisks - 1) for _ in range(4)]
        return ndisks, rows

    def setting(self, seed: int) -> str:
        n, rows = self.dealt(seed)
        lines = "\n".join(f"  row {h}: {''.join(row)}" for h, row in enumerate(rows))
        return (f"RAID-5 on N = {n} disks; one stripe's rows (PBGs) as cache states D dirty, C clean, E empty,\n"
                f"data strips in order (the parity column is not shown):\n{lines}\n"
                f"Count member I/Os per row: one block read or written on one disk is one I/O.\n"
                f"Check yourself: vraid rxw --z {','.join(''.join(r) for r in rows)} --ct none")

    def questions(self, seed: int) -> list[Question]:
        n, rows = self.dealt(seed)
        qs: list[Question] = []
        cycles = [rxw.row_cycle(row, n) for row in rows]
        qs.append(Question(
            "q1", "Which cycle does the controller choose for each row (rcw, rmw or full)?", cycles, kind="list",
            form="one word per row, comma-separated",
            explanation="\n".join(why(h, row, n) for h, row in enumerate(rows))))
        for i, (h, row) in enumerate(((h, row) for h, row in enumerate(rows) if rxw.row_cycle(row, n) != "full"), 2):
            if i > 3:
                break
            rc, rm = counts(rcw_cells(row)), counts(rmw_cells(row))
            d, c = row.count("D"), row.count("C")
            qs.append(Question(
                f"q{i}", f"Row {h} ({''.join(row)}): member reads and writes under RCW, then under RMW?",
                [rc[0], rc[1], rm[0], rm[1]], kind="list", form="RCW reads,RCW writes,RMW reads,RMW writes",
                explanation=(f"RCW reads the {n - 1 - d - c} empty data blocks (N-1-d-c) and writes the {d} dirty ones "
                             f"and the parity (d+1 = {d + 1}); RMW reads the {d} old blocks and the old parity (1+d = {1 + d}) "
                             f"and writes as many. vraid picks {rxw.row_cycle(row, n)} "
                             f"({sum(rc)} vs {sum(rm)} I/Os).")))
        chosen = [counts(rxw.basic_row(row)) for row in rows]
        qs.append(Question(
            "q4", "Total member reads and writes for the whole stripe, each row by its chosen cycle?",
            [sum(c[0] for c in chosen), sum(c[1] for c in chosen)], kind="list", form="reads,writes",
            explanation="per row (reads, writes): " + ", ".join(f"{a},{b}" for a, b in chosen)
                        + ". Requests can still merge down a column; that is the rxw-matrix lab."))
        # seed 000 sec. II-A on the paper's example: how many rows of eq. (2) take each cycle
        eq2 = [rxw.row_cycle(row, len(row) + 1) for row in EQ2]
        qs.append(Question(
            "q5", "Paper 000 eq. (2), Z = DEEE,ECED,EEEE,DDDD,DCDD,EDEE,DEEE on 5 disks: the cycle of each row "
                  "(none for a row with nothing dirty)?", eq2, kind="list", form="7 words",
            explanation="\n".join(why(h, row, 5) for h, row in enumerate(EQ2))
                        + "\nA tie goes to RCW (RMW only when strictly cheaper). These are the rows of eq. (3)."))
        return qs


LAB = RcwRmwLab(name="rcw-rmw", title="RCW vs RMW: the cycle of each row and its I/O count", seeds=["000"])
