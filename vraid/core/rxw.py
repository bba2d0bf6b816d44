"""The rxw-matrix of seed 000 (Baek & Park, MSC-CT), section II-A and III-B.

A stripe about to be written (destaged) is described by its cache-state matrix
``Z`` (u rows = PBGs, one column per data strip in logical order): each block
is ``D`` (dirty: new data to write), ``C`` (clean: a valid copy is cached) or
``E`` (empty: nothing cached). Choosing the reconstruct-write (RCW) or the
read-modify-write (RMW) cycle for each row gives the *basic rxw-matrix* ``M``
(u rows, one more column for parity, last), whose cells are sets of the six
operations of Table I:

===  ==========================================================
r    read the block from the disk into the block cache
t    read the block from the disk into a temporary buffer
w    write the block cache memory to the disk
x    XOR the block cache memory (into the parity accumulator)
xx   XOR the block cache memory with the temporary memory
_    the destination of the XOR result (the new parity)
===  ==========================================================

The rule (section II-A): with N members, c clean and d dirty blocks in a row,
RCW needs N-1-d-c reads and d+1 writes (N-c I/Os), RMW needs 1+d reads and
1+d writes; vraid uses RMW exactly when ``N - c > 2(1 + d)``, and a row whose
data blocks are all dirty (a full-PBG write) reads nothing. A row without
dirty blocks gets no operations. RAID-0 has no parity column: dirty blocks get
``w`` and nothing is read.

*Check columns.* A plan has ``checks`` parity (check) columns, the last
``checks`` columns of M: none for RAID-0, P for RAID-5, P then Q for a scheme
with two (RAID-6, docs/levels.md). The count is the redundancy scheme's
(:attr:`vraid.core.redundancy.Redundancy.parity_columns`). Every check column
of a row gets the same cell (RCW: ``_w``; RMW: ``rx_w``, each old check is
read and patched), and the rule counts them all: with k check columns RCW
needs N-k-d-c reads and d+k writes (again N-c I/Os), RMW k+d reads and k+d
writes, so RMW is chosen when ``N - c > 2(k + d)`` (seed 000 states k = 1).

*Coverage.* A check column that copies one data column (RAID-1, RAID-10: the
redundancy's :meth:`~vraid.core.redundancy.Redundancy.coverage`) covers only that
column. With ``covers`` given (per check column, the data columns it covers) a
row touches only the check columns whose covered data holds a dirty block, and
only the data of those groups takes part: with ``g`` touched checks and ``I``
the data columns they cover, RCW reads the empty blocks of ``I`` and writes
``d + g``, RMW reads and writes ``g + d``; RMW when ``|I| + g - c > 2(g + d)``
(``c`` the clean blocks of ``I``), a row whose ``I`` is all dirty reads nothing
("full"). For a mirror ``I`` is the dirty columns themselves: every row writes
the dirty blocks and their copies and reads nothing. ``covers=None`` (XOR, P+Q:
every check covers every data column) is the rule above.

Each column then becomes member requests: a run of consecutive rows holding
``r`` or ``t`` is one read, a run holding ``w`` is one write. The contiguity
transform (``vraid.policies.ct``) rewrites ``M`` between these two steps.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Iterable, Literal, Sequence

#: Canonical order of operations inside a cell (as the paper prints them).
OPS = ("t", "r", "x", "xx", "_", "w")
_ORDER = {op: i for i, op in enumerate(OPS)}

Cell = tuple[str, ...]
#: per check column, the data columns it covers; None: every one (vraid.core.redundancy.Redundancy.coverage)
Covers = "tuple[tuple[int, ...], ...] | None"
Matrix = tuple[tuple[Cell, ...], ...]
StateMatrix = tuple[tuple[str, ...], ...]

EMPTY: Cell = ()
RMW_DIRTY: Cell = ("t", "xx", "w")
RMW_PARITY: Cell = ("r", "x", "_", "w")
RCW_EMPTY: Cell = ("r", "x")
RCW_CLEAN: Cell = ("x",)
RCW_DIRTY: Cell = ("x", "w")
RCW_PARITY: Cell = ("_", "w")
RAID0_DIRTY: Cell = ("w",)


def cell(ops: Iterable[str]) -> Cell:
    """A cell with its operations in canonical order, each once."""
    unique = set(ops)
    unknown = unique - _ORDER.keys()
    if unknown:
        raise ValueError(f"unknown rxw operations {sorted(unknown)}; use {', '.join(OPS)}")
    return tuple(sorted(unique, key=_ORDER.__getitem__))


def parse_z(text: str) -> StateMatrix:
    """Parse ``"DEEE,ECED"`` (rows of D/C/E, comma separated) into Z.

    Raises:
        ValueError: on other letters or ragged rows, naming the row.
    """
    rows = [r.strip().upper() for r in text.split(",") if r.strip()]
    if not rows:
        raise ValueError("Z is empty: give rows of D, C and E separated by commas, e.g. DEEE,ECED")
    width = len(rows[0])
    for i, row in enumerate(rows):
        bad = set(row) - set("DCE")
        if bad:
            raise ValueError(f"row {i} of Z ({row!r}) has {''.join(sorted(bad))!r}; use only D, C and E")
        if len(row) != width:
            raise ValueError(f"row {i} of Z has {len(row)} blocks, row 0 has {width}; every row needs the same")
    return tuple(tuple(row) for row in rows)


def row_cycle(states: Sequence[str], ndisks: int, checks: int = 1,
              covers: Covers = None) -> Literal["none", "rcw", "rmw", "full"]:
    """Which cycle destages one PBG (row of Z) on ``ndisks`` members, ``checks`` of them
    holding the row's check blocks (RAID-5: one); ``covers``: see *Coverage* above."""
    if covers is not None:
        return _grouped_cycle(tuple(states), covers)
    d = states.count("D")
    if d == 0:
        return "none"
    if d == len(states):
        return "full"
    c = states.count("C")
    return "rmw" if ndisks - c > 2 * (checks + d) else "rcw"


def touched_groups(states: tuple[str, ...], covers) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(the check columns whose covered data holds a dirty block, the data columns they cover)."""
    touched = tuple(j for j, cov in enumerate(covers) if any(states[k] == "D" for k in cov))
    involved = tuple(sorted({k for j in touched for k in covers[j]}))
    return touched, involved


@functools.lru_cache(maxsize=4096)
def _grouped_cycle(states: tuple[str, ...], covers) -> Literal["none", "rcw", "rmw", "full"]:
    touched, involved = touched_groups(states, covers)
    if not touched:
        return "none"
    d = sum(states[k] == "D" for k in involved)
    if d == len(involved):
        return "full"
    c = sum(states[k] == "C" for k in involved)
    g = len(touched)
    return "rmw" if len(involved) + g - c > 2 * (g + d) else "rcw"


def basic_matrix(z: StateMatrix, *, checks: int = 1, parity: bool | None = None, covers: Covers = None) -> Matrix:
    """The basic rxw-matrix M of Z (seed 000 eq. (3) from eq. (2)), ``checks`` check
    columns last (``covers``: see *Coverage* above).

    ``checks=0`` builds RAID-0's matrix: no parity column, ``w`` per dirty block.
    ``parity`` is the older spelling: True is ``checks=1``, False ``checks=0``.
    """
    k = _check_count(checks, parity)
    if covers is not None:
        return tuple(grouped_row(tuple(states), covers) for states in z)
    return tuple(basic_row(tuple(states), k) for states in z)


@functools.lru_cache(maxsize=4096)
def grouped_row(states: tuple[str, ...], covers) -> tuple[Cell, ...]:
    """:func:`basic_row` when each check column covers only ``covers[j]`` (a mirror's copy):
    untouched groups get nothing."""
    cycle = _grouped_cycle(states, covers)
    nd, k = len(states), len(covers)
    if cycle == "none":
        return (EMPTY,) * (nd + k)
    touched, involved = touched_groups(states, covers)
    checks = tuple(j in touched for j in range(k))
    if cycle == "rmw":
        return (tuple(RMW_DIRTY if s == "D" else EMPTY for s in states)
                + tuple(RMW_PARITY if t else EMPTY for t in checks))
    by_state = {"D": RCW_DIRTY, "C": RCW_CLEAN, "E": RCW_EMPTY}
    data = tuple(by_state[s] if i in involved else RAID0_DIRTY if s == "D" else EMPTY for i, s in enumerate(states))
    return data + tuple(RCW_PARITY if t else EMPTY for t in checks)


def _check_count(checks: int, parity: bool | None) -> int:
    """The number of check columns ``checks``, or the one ``parity`` (True/False) names."""
    k = int(checks) if parity is None else (1 if parity else 0)
    if k < 0:
        raise ValueError(f"a plan has 0 or more check columns, not {k}")
    return k


@functools.lru_cache(maxsize=4096)
def basic_row(states: tuple[str, ...], checks: int = 1) -> tuple[Cell, ...]:
    """The cells of one row of M, ``checks`` check columns last (memoised: a stripe's
    rows repeat a handful of patterns). A bool ``checks`` counts as 1 or 0."""
    if not checks:
        return tuple(RAID0_DIRTY if s == "D" else EMPTY for s in states)
    cycle = row_cycle(states, len(states) + checks, checks)
    if cycle == "none":
        return (EMPTY,) * (len(states) + checks)
    if cycle == "rmw":
        return tuple(RMW_DIRTY if s == "D" else EMPTY for s in states) + (RMW_PARITY,) * checks
    # rcw, or full (a full-PBG write is RCW with nothing to read)
    by_state = {"D": RCW_DIRTY, "C": RCW_CLEAN, "E": RCW_EMPTY}
    return tuple(by_state[s] for s in states) + (RCW_PARITY,) * checks


@dataclass(frozen=True)
class MemberRequest:
    """One merged request of a column: ``rows`` blocks from ``first_row`` on."""

    column: int
    op: Literal["read", "write"]
    first_row: int
    rows: int

    def to_dict(self) -> dict[str, object]:
        return {"column": self.column, "op": self.op, "first_row": self.first_row, "rows": self.rows}


def column_requests(m: Matrix) -> list[MemberRequest]:
    """Merge each column's runs: consecutive r/t rows are one read, w rows one write.

    Reads come before writes; both in column order, then row order.
    """
    if not m:
        return []
    reads: list[MemberRequest] = []
    writes: list[MemberRequest] = []
    active = [i for i, row in enumerate(m) if any(row)]  # rows with any operation
    for j in range(len(m[0])):
        flags = [(i, _flags(m[i][j])) for i in active]
        reads += _merge(j, "read", [i for i, (is_read, _) in flags if is_read])
        writes += _merge(j, "write", [i for i, (_, is_write) in flags if is_write])
    return reads + writes


def _merge(column: int, op: Literal["read", "write"], rows: list[int]) -> list[MemberRequest]:
    """One request per run of consecutive rows (``rows`` ascending)."""
    out: list[MemberRequest] = []
    start = prev = -2
    for i in rows + [-1]:
        if i != prev + 1:
            if start >= 0:
                out.append(MemberRequest(column, op, start, prev + 1 - start))
            start = i
        prev = i
    return out


@functools.lru_cache(maxsize=256)
def _flags(c: Cell) -> tuple[bool, bool]:
    """(reads the disk, writes the disk) for a cell."""
    return ("r" in c or "t" in c), ("w" in c)


@dataclass(frozen=True, init=False)
class Plan:
    """Everything decided about writing one stripe: published as an event.

    ``transformed`` is ``basic`` unless a CT policy changed it; ``requests``
    are derived from ``transformed``; ``columns`` maps column -> member.
    ``checks`` counts the check (parity) columns, the last ``checks`` columns of
    the matrix in the order P, Q (:attr:`check_columns`); 0 for RAID-0, 1 for
    RAID-5. ``parity=True``/``False`` is accepted in its place (1 / 0 check columns).
    """

    stripe: int
    z: StateMatrix
    basic: Matrix
    transformed: Matrix
    columns: tuple[int, ...]
    requests: tuple[MemberRequest, ...] = field(default=())
    ct: str = "none"
    checks: int = 1
    covers: "tuple[tuple[int, ...], ...] | None" = None

    def __init__(self, stripe: int, z: StateMatrix, basic: Matrix, transformed: Matrix, columns: tuple[int, ...],
                 requests: tuple[MemberRequest, ...] = (), ct: str = "none", checks: int = 1, *,
                 parity: bool | None = None, covers: Covers = None) -> None:
        put = object.__setattr__  # frozen: set once here, as the generated __init__ would
        put(self, "stripe", stripe)
        put(self, "z", z)
        put(self, "basic", basic)
        put(self, "transformed", transformed)
        put(self, "columns", columns)
        put(self, "requests", requests)
        put(self, "ct", ct)
        if parity is not None:
            checks = 1 if parity else 0
        elif type(checks) is not int:
            checks = _check_count(checks, None)
        put(self, "checks", checks)
        put(self, "covers", covers)

    @classmethod
    def build(cls, stripe: int, z: StateMatrix, columns: Sequence[int], *, checks: int = 1,
              parity: bool | None = None, covers: Covers = None) -> "Plan":
        """The basic plan of Z with ``checks`` check columns (``parity``: the older
        spelling, True for one and False for none; ``covers``: a mirror's coverage)."""
        k = _check_count(checks, parity)
        m = basic_matrix(z, checks=k, covers=covers)
        return cls(stripe, z, m, m, tuple(columns), tuple(column_requests(m)), checks=k, covers=covers)

    @property
    def parity(self) -> bool:
        """Whether the plan has any check column (False: RAID-0)."""
        return self.checks > 0

    @property
    def data_columns(self) -> int:
        """How many data columns the matrix has (the width of Z)."""
        if self.z:
            return len(self.z[0])
        width = len(self.transformed[0]) if self.transformed else len(self.columns)
        return width - self.checks

    @property
    def check_columns(self) -> tuple[int, ...]:
        """The matrix columns of the check blocks, P first: the last ``checks`` columns."""
        nd = self.data_columns
        return tuple(range(nd, nd + self.checks))

    def transform(self, transformed: Matrix, ct: str) -> "Plan":
        """The same plan with M rewritten by the CT policy ``ct``."""
        return replace(self, transformed=transformed, requests=tuple(column_requests(transformed)), ct=ct)

    def cycles(self) -> list[str]:
        """The cycle chosen per row ("none", "rcw", "rmw", "full"); RAID-0: "write"/"none"."""
        k = self.checks
        if not k:
            return ["write" if "D" in row else "none" for row in self.z]
        return [row_cycle(row, len(row) + k, k, self.covers) for row in self.z]

    def to_dict(self) -> dict[str, object]:
        return {
            "stripe": self.stripe,
            "z": [list(r) for r in self.z],
            "basic": [[list(c) for c in r] for r in self.basic],
            "transformed": [[list(c) for c in r] for r in self.transformed],
            "columns": list(self.columns),
            "requests": [r.to_dict() for r in self.requests],
            "ct": self.ct,
        }


def format_cell(c: Cell) -> str:
    """``('r', 'x', '_', 'w')`` -> ``"rx_w"``; the empty cell is ``"."``."""
    return "".join(c) if c else "."


def transform_violation(before: Plan, after: object) -> str | None:
    """What is wrong with ``after`` as a contiguity transform of ``before`` (None: nothing).

    The rules every transform must keep (seed 000 sec. III-B, as ``policies/ct/msc.py``
    applies them): the same stripe, Z, basic matrix, columns and parity; a matrix of the
    same shape that only *adds* reads (``r``, ``t``) and writes (``w``) to cells; in a data
    column an added ``r`` only where the block is not dirty and an added ``t`` only where it
    is (consistency rule eq. (6)), an added ``w`` only where the cache holds the block or the
    cell reads it (eq. (7)); in every check column (the plan's last ``checks``) only ``r``,
    and ``w`` only where the cell reads the old check block (Fig. 10 line 24); and member
    requests derived from that matrix.
    """
    if not isinstance(after, Plan):
        return f"returned {type(after).__name__}, not a Plan"
    for name in ("stripe", "z", "basic", "columns", "checks", "covers"):
        if getattr(after, name) != getattr(before, name):
            return f"changed the plan's {name}"
    m, basic, z = after.transformed, before.transformed, before.z
    if not isinstance(m, tuple) or len(m) != len(basic) or any(
            not isinstance(row, tuple) or len(row) != len(brow) for row, brow in zip(m, basic)):
        return "the transformed matrix does not have the plan's shape"
    k = before.checks
    for h, (row, brow) in enumerate(zip(m, basic)):
        first_check = len(brow) - k
        for j, (c, b) in enumerate(zip(row, brow)):
            if not isinstance(c, tuple) or any(op not in _ORDER for op in c):
                return f"cell ({h}, {j}) {c!r} is not a tuple of rxw operations"
            if not set(b) <= set(c):
                return f"cell ({h}, {j}) dropped operations of the basic matrix ({format_cell(b)} -> {format_cell(c)})"
            added = set(c) - set(b)
            if j >= first_check:
                if added - {"r", "w"}:
                    return f"parity cell ({h}, {j}) gained {sorted(added - {'r', 'w'})} (only r and w may be added)"
                if "w" in added and "r" not in c:
                    return f"parity cell ({h}, {j}) gained a write without reading the old parity (Fig. 10 line 24)"
                continue
            if added - {"r", "t", "w"}:
                return f"cell ({h}, {j}) gained {sorted(added - {'r', 't', 'w'})} (only r, t and w may be added)"
            state = z[h][j]
            if "r" in added and state == "D":
                return f"cell ({h}, {j}) reads a dirty block into the cache (eq. (6): t, not r)"
            if "t" in added and state != "D":
                return f"cell ({h}, {j}) reads a {state} block into a temporary buffer (eq. (6): r, not t)"
            if "w" in added and state == "E" and "r" not in c:
                return f"cell ({h}, {j}) writes an empty block it does not read (eq. (7))"
    if tuple(after.requests) != tuple(column_requests(m)):
        return "the member requests are not the ones the transformed matrix gives"
    return None
