"""MSC-CT: the contiguity transform of seed 000 (Baek & Park), sections III-B to III-E, Fig. 10.

A stripe about to be destaged is planned as a basic rxw-matrix ``M`` (``vraid.core.rxw``). In each
column, reads (``r``/``t``) or writes (``w``) that are close but not adjacent cost the disk a
missed rotation (sec. I-C). The transform fills such gaps so each column issues one request
where it issued several:

* **read contiguity transform** (Fig. 10, lines 1-14; predicate (4)): between two reads
  ``m[p][j]`` and ``m[i][j]`` of a column with no read between them, add a read to every cell
  between, choosing by the **consistency rule** eq. (6): ``t`` (into a temporary buffer,
  freed after the destage) where the block is dirty (``z = D``: reading into the cache would
  spoil the newest data), ``r`` (into the cache; the block becomes clean) otherwise, and
  always ``r`` in a parity column (there is no parity cache, Fig. 10 line 8);
* **write contiguity transform** (lines 15-31; predicate (5)): between two writes of a column,
  add ``w`` to every cell between, unless eq. (7) forbids it: some block between is empty
  (``z = E``) and holds no ``r``, so the cache has nothing valid to write. In a parity
  column every cell between must hold ``r`` (line 24). The read transform runs first so its
  ``r``'s can enable writes (sec. III-C);
* **performance rule** eq. (8) and (9): a gap of stride distance ``S = i - p`` is filled only
  when ``S < S^max`` and ``S`` lies in no excluded region ``[s, e]`` (inclusive), with
  ``S_r^max``/``S_r^except`` for reads and ``S_w^max``/``S_w^except`` for writes
  (:class:`vraid.policies.ct.CtLimits`). ``S_r^max = 1`` means no read transform at all.

The transform is pure and synchronous: ``Plan -> Plan`` (``plan.transform(M', "msc")``); it
only ever adds operations to cells, never removes one.

Where vraid differs from the paper:

* vraid applies CT to any plan the controller executes: a destage of a stripe-cache unit
  (the paper's MSC), of a PBG-cache unit (one row: nothing to join, CT is a no-op) and a
  write-through host write (Z of D and E only: reads join, writes join across ``r``'d
  blocks). The paper only destages its stripe cache.
* Fig. 10 is applied as printed, cell by cell; the paper's prose example (sec. III-C) names
  cells that Fig. 10 does not touch on eq. (2) and omits some it does (see docs/ct.md and
  tests/test_ct.py). Rows and columns are 0-based in vraid, 1-based in the paper.
* The paper has one parity column; vraid treats every check column of the plan (its last
  ``plan.checks`` columns: P, and Q where a scheme has two) as a parity column of Fig. 10
  (lines 8 and 24), each on its own. In RAID-0 plans (no check column) every column is
  treated as a data column.
* A merged run that mixes ``r`` and ``t`` is one member read into a scratch buffer, scattered
  per row afterwards (the paper's scatter-gather list, sec. III-C); vraid.engine.raid.stripe does that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vraid.core.rxw import Cell, Matrix, Plan, StateMatrix, cell

from .base import ContiguityTransform

if TYPE_CHECKING:
    from . import CtLimits

NAME = "msc"


def permitted(stride: int, s_max: int, excepted: tuple[tuple[int, int], ...]) -> bool:
    """Eq. (8)/(9): may a gap of stride distance ``stride`` be filled?

    ``stride < s_max`` and outside every ``[s, e]`` (inclusive). A stride of 1 (adjacent
    operations) leaves nothing to fill.
    """
    if stride < 2 or stride >= s_max:
        return False
    return not any(a <= stride <= b for a, b in excepted)


def _add(c: Cell, op: str) -> Cell:
    return c if op in c else cell(c + (op,))


def _gaps(rows: list[list[Cell]], j: int, ops: tuple[str, ...], s_max: int, excepted: tuple[tuple[int, int], ...]):
    """Fig. 10's scan of column ``j`` (lines 3-6 and 18-21): each pair ``(p, i)`` of
    consecutive rows holding one of ``ops`` whose stride ``i - p`` the performance
    rule permits. Filling a gap only touches rows before ``i``, so the scan may go on."""
    p = -1
    for i, row in enumerate(rows):
        if any(op in row[j] for op in ops):
            if p >= 0 and permitted(i - p, s_max, excepted):
                yield p, i
            p = i


def read_transform(m: Matrix, z: StateMatrix, limits: "CtLimits", *, checks: int = 1,
                   parity: bool | None = None) -> Matrix:
    """Fig. 10 ``ReadContiguityTransform``: fill the gaps between reads of each column
    (the last ``checks`` columns are parity columns)."""
    if parity is not None:  # the older keyword: True is one check column
        checks = int(bool(parity))
    rows = [list(r) for r in m]
    if not rows:
        return m
    v = len(rows[0])
    for j in range(v):
        parity_column = j >= v - checks
        for p, i in _gaps(rows, j, ("r", "t"), limits.sr_max, limits.sr_except):
            for h in range(p + 1, i):
                if parity_column:
                    op = "r"  # no cache for parity (line 8)
                else:
                    op = "t" if z[h][j] == "D" else "r"  # eq. (6)
                rows[h][j] = _add(rows[h][j], op)
    return tuple(tuple(r) for r in rows)


def write_transform(m: Matrix, z: StateMatrix, limits: "CtLimits", *, checks: int = 1,
                    parity: bool | None = None) -> Matrix:
    """Fig. 10 ``WriteContiguityTransform``: fill the gaps between writes where eq. (7) allows
    (the last ``checks`` columns are parity columns)."""
    if parity is not None:  # the older keyword: True is one check column
        checks = int(bool(parity))
    rows = [list(r) for r in m]
    if not rows:
        return m
    v = len(rows[0])
    for j in range(v):
        parity_column = j >= v - checks
        for p, i in _gaps(rows, j, ("w",), limits.sw_max, limits.sw_except):
            between = range(p + 1, i)
            if parity_column:
                ok = all("r" in rows[h][j] for h in between)  # line 24
            else:  # eq. (7): no empty block without r in the gap
                ok = not any(z[h][j] == "E" and "r" not in rows[h][j] for h in between)
            if ok:
                for h in between:
                    rows[h][j] = _add(rows[h][j], "w")
    return tuple(tuple(r) for r in rows)


def transform_matrix(m: Matrix, z: StateMatrix, limits: "CtLimits", *, checks: int = 1,
                     parity: bool | None = None) -> Matrix:
    """Read contiguity transform, then write contiguity transform (sec. III-B), with the
    last ``checks`` columns as parity columns (``parity=``, the older keyword of a student's
    CT: True is one check column, False none)."""
    if parity is not None:
        checks = int(bool(parity))
    return write_transform(read_transform(m, z, limits, checks=checks), z, limits, checks=checks)


class MscTransform(ContiguityTransform):
    """The ``msc`` contiguity transform as a plan hook: ``Array(ct=MscTransform(limits))``."""

    name = NAME
    summary = "read then write contiguity transform under eq. (6)-(9), Fig. 10"
    source = "paper 000 sec. III-B to III-E, Fig. 10"

    def __call__(self, plan: Plan) -> Plan:
        return plan.transform(transform_matrix(plan.transformed, plan.z, self.limits, checks=plan.checks), NAME)

    def __repr__(self) -> str:
        return f"MscTransform({self.spec!r})"
