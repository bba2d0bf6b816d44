"""Lab ``rxw-matrix``: the basic rxw-matrix M of a cache-state matrix Z (seed 000 eq. (2) -> (3)).

Seed 0 is the paper's own example, eq. (2); other seeds deal a Z whose size grows with the
difficulty, which the seed picks: seed mod 3 = 1 easy (3 rows, 4 disks), 2 medium (5 rows,
5 disks), 0 hard (7 rows, 6 disks). The cells use Table I's operations (r, t, w, x, xx, _).
Each row's cycle is chosen by the RCW/RMW rule (lab ``rcw-rmw``); each column's runs of
consecutive reads (or writes) are one member request. The answers are :mod:`vraid.core.rxw`'s
:func:`~vraid.core.rxw.basic_matrix` and :func:`~vraid.core.rxw.column_requests`.
"""

from __future__ import annotations

from vraid.core import rxw

from .framework import Lab, Question, rng
from .rcw_rmw import EQ2

#: difficulty -> (rows u, disks N, weights of D, C, E)
LEVELS = {"easy": (3, 4, "DDCEE"), "medium": (5, 5, "DCEEE"), "hard": (7, 6, "DCEEEE")}


def level_of(seed: int) -> str:
    return "paper" if seed == 0 else ("hard", "easy", "medium")[seed % 3]


class RxwMatrixLab(Lab):
    def z(self, seed: int) -> rxw.StateMatrix:
        if seed == 0:
            return EQ2
        rows, disks, weights = LEVELS[level_of(seed)]
        r = rng(self, seed)
        while True:
            z = tuple(tuple(r.choice(weights) for _ in range(disks - 1)) for _ in range(rows))
            if sum(row.count("D") for row in z) >= 2:
                return z

    def setting(self, seed: int) -> str:
        z = self.z(seed)
        level = level_of(seed)
        text = "paper 000 eq. (2), the paper's example" if level == "paper" else f"difficulty {level} (seed mod 3)"
        lines = "\n".join(f"  row {h}: {' '.join(row)}" for h, row in enumerate(z))
        return (f"Z ({text}): {len(z)} rows (PBGs), {len(z[0])} data strips + parity on {len(z[0]) + 1} disks,\n"
                f"D dirty, C clean, E empty; rows and columns count from 0, parity column P last:\n{lines}\n"
                "Write a cell as its operations in Table I order t r x xx _ w (e.g. txxw, rx_w), '.' for none.\n"
                f"Check yourself: vraid rxw --z {','.join(''.join(r) for r in z)} --ct none")

    def questions(self, seed: int) -> list[Question]:
        z = self.z(seed)
        m = rxw.basic_matrix(z)
        n = len(z[0]) + 1
        r = rng(self, seed)
        r.random()
        cycles = [rxw.row_cycle(row, n) for row in z]
        qs = [Question("q1", "The cycle of each row (none, rcw, rmw or full)?", cycles, kind="list",
                       form="one word per row",
                       explanation=", ".join(f"row {h}: {c}" for h, c in enumerate(cycles))
                       + ". RMW exactly when N - c > 2(1 + d) (N disks, d dirty and c clean blocks in the row); a row all "
                       "dirty is a full-PBG write.")]
        filled = [(h, j) for h, row in enumerate(m) for j, c in enumerate(row) if c]
        for i, (h, j) in enumerate(sorted(r.sample(filled, min(3, len(filled)))), 2):
            col = "P (parity)" if j == n - 1 else f"d{j}"
            cell = m[h][j]
            state = "parity" if j == n - 1 else {"D": "dirty", "C": "clean", "E": "empty"}[z[h][j]]
            qs.append(Question(
                f"q{i}", f"The cell of M at row {h}, column {col}?", rxw.format_cell(cell), kind="word",
                form="e.g. txxw, rx, x, xw, rx_w, _w or .",
                explanation=f"row {h} is {cycles[h]}; under {cycles[h]} a {state} cell is {rxw.format_cell(cell)}."))
        reqs = rxw.column_requests(m)
        per_col = [sum(1 for q in reqs if q.column == j) for j in range(n)]
        k = len(qs) + 1
        qs.append(Question(
            f"q{k}", "Member requests per column d0.. then P (a run of consecutive reads is one request, "
                     "a run of writes another)?", per_col, kind="list", form=f"{n} numbers",
            explanation="; ".join(
                f"{'P' if j == n - 1 else f'd{j}'}: " + (", ".join(
                    f"{q.op} rows {q.first_row}..{q.first_row + q.rows - 1}" for q in reqs if q.column == j) or "none")
                for j in range(n))))
        reads = sum(1 for q in reqs if q.op == "read")
        qs.append(Question(
            f"q{k + 1}", "How many member reads and member writes does the stripe's destage issue in all?",
            [reads, len(reqs) - reads], kind="list", form="reads,writes",
            explanation="the requests of the previous answer, split by kind. The contiguity transform "
                        "(lab contiguity) exists to make these fewer."))
        return qs


LAB = RxwMatrixLab(name="rxw-matrix", title="The basic rxw-matrix M from Z, with each row's cycle", seeds=["000"])
