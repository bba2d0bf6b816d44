"""The book's side of experiment ``levels``: OSTEP ch. 38's RAID comparison (Figure 38.8), derived
for any redundancy scheme from what the scheme says and does.

OSTEP (Arpaci-Dusseau, ch. 38 "Redundant Arrays of Inexpensive Disks", sec. 38.4-38.8) analyses
RAID-0, RAID-1 (mirrored pairs, striped: md's RAID-10 near-2), RAID-4 and RAID-5 with one
disk's sequential bandwidth S, its random (small-request) bandwidth R, its request latency T and
its capacity B, and tabulates capacity, reliability, throughput and latency per level (Fig.
38.8). Its reasoning, applied here to a :class:`~vraid.core.redundancy.Redundancy` on N members
so that every level of :func:`~vraid.core.redundancy.levels` gets its column, the book's four
levels the book's own formulas (``tests/test_experiment_levels.py`` checks RAID-0, RAID-5 and a
RAID-4-like scheme against the printed table):

* **capacity**: the data strips of a stripe over the strips a member holds of it,
  ``data_columns(N)/lanes(N)·B`` (one strip a member per stripe but for RAID-10 on an odd N,
  whose stripe is md's period of two rows: :meth:`Redundancy.lanes`);
* **reliability**: failures survived for sure (``tolerates``) and, if lucky, every member not
  needed to hold one copy of the data, ``N - ceil(capacity)`` (the book's N/2 for mirrors; on an
  odd N, RAID-10's copies of a chunk are on neighbours round a ring and (N-1)/2 is the most);
* **sequential read and write**: every member streams, but only the data strips carry data:
  ``capacity·S`` (the book: N·S, N/2·S, (N-1)·S);
* **random read and write**: each member does R of small requests; a level's throughput is R
  over the busiest member's share of the small requests one random read or write makes,
  averaged over every data strip of every stripe of the layout (:meth:`Redundancy.place`). A
  read is one request, on the data strip's member or, where a check strip is a copy of it,
  spread over the copies (the book's mirrored reads). A write writes its data strip and every
  check strip that depends on it; where those are copies that is all, where they are parity the
  book's subtractive method first reads the old data and the old checks (the book's "4 I/Os"
  of a RAID-4/5 small write). So RAID-5 spreads 4 requests over N members (N/4·R) and RAID-4
  puts 2 of them on its parity member (R/2);
* **latency**: a read is one request (T); a write that must read first is two in a row (2T),
  one that need not is one (T).

Which check strips are copies and which depend on a data strip is not declared by a scheme: it
is found by running the scheme's :meth:`~Redundancy.generate` on random data, and flipping one
data column (:func:`dependence`). Reliability is measured the same way, on the scheme's own
:meth:`~Redundancy.reconstruct` (:func:`survivable`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Callable

import numpy as np

from vraid.core.geometry import Geometry
from vraid.core.redundancy import Redundancy, for_level
from vraid.errors import GeometryError

#: bytes per block of the probes (contents only matter, not sizes)
PROBE_BLOCK = 16


def accepts(level: int, n: int) -> bool:
    """Whether ``level`` runs on ``n`` members (the geometry's own check)."""
    try:
        Geometry(level, n, 1, 4096, 4096, for_level(level).layouts[0], 0)
    except GeometryError:
        return False
    return True


@lru_cache(maxsize=256)
def dependence(level: int, n: int) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """(copies, depends): ``copies[j]`` is the data column check column ``j`` is a copy of (-1: not
    a copy); ``depends[k]`` the check columns that change when data column ``k`` does. Found by
    running the scheme's ``generate`` on random data, then with column ``k`` changed."""
    scheme = for_level(level, n)
    d, c = scheme.data_columns(n), scheme.parity_columns
    rng = np.random.default_rng(n)
    data = rng.integers(0, 256, size=(d, 1, PROBE_BLOCK), dtype=np.uint8)
    checks = scheme.generate(data)
    copies = tuple(next((k for k in range(d) if np.array_equal(checks[j], data[k])), -1) for j in range(c))
    depends = []
    for k in range(d):
        other = data.copy()
        other[k] = 255 - other[k]  # every byte changes (255 - x == x has no integer solution)
        changed = scheme.generate(other)
        depends.append(tuple(j for j in range(c) if not np.array_equal(changed[j], checks[j])))
    return copies, tuple(depends)


@dataclass(frozen=True)
class Shape:
    """What the book's reasoning needs of one level on ``n`` members (all per random request)."""

    level: int
    n: int
    data_columns: int
    tolerates: int
    #: data strips of a stripe over the strips each member holds of it (in members' worth)
    capacity: Fraction
    #: member requests of a small write: reads, then writes (the book's subtractive method)
    write_reads: int
    write_writes: int
    #: the busiest member's share of the requests of one random read / write
    read_load: Fraction
    write_load: Fraction


def shape(level: int, n: int) -> Shape:
    """The book's view of ``level`` on ``n`` members (see the module docstring)."""
    scheme = for_level(level, n)
    layout = scheme.layouts[0]
    copies, depends = dependence(level, n)
    period = scheme.period(n)
    d = scheme.data_columns(n)
    reads = [Fraction(0)] * n
    writes = [Fraction(0)] * n
    for s in range(period):
        data, checks = _members(scheme, layout, n, s)
        for k in range(d):
            holders = [data[k]] + [checks[j] for j in range(len(checks)) if copies[j] == k]
            for m in holders:
                reads[m] += Fraction(1, len(holders))
            touched = [data[k]] + [checks[j] for j in depends[k]]
            each = 1 if all(copies[j] == k for j in depends[k]) else 2  # copies: write; parity: read, write
            for m in touched:
                writes[m] += each
    total = period * d
    small = 1 + len(depends[0]) if d else 0
    needs_read = any(copies[j] != 0 for j in depends[0]) if d else False
    return Shape(level, n, d, scheme.tolerates, Fraction(d, scheme.lanes(n)), small if needs_read else 0, small,
                 max(reads) / total, max(writes) / total)


def _members(scheme: Redundancy, layout: str, n: int, stripe: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """:meth:`Redundancy.place` as members (a cell ``c`` of a scheme with lanes is on member ``c mod n``)."""
    data, checks = scheme.place(layout, n, stripe)
    return tuple(c % n for c in data), tuple(c % n for c in checks)


def survivable(level: int, n: int) -> tuple[int, int]:
    """(for sure, if lucky): the most failed members every set / some set of that size survives,
    tried on the scheme's ``reconstruct`` for every set of members and every stripe of the layout."""
    scheme = for_level(level, n)
    layout = scheme.layouts[0]
    d = scheme.data_columns(n)
    rng = np.random.default_rng(n)
    data = rng.integers(0, 256, size=(d, 1, PROBE_BLOCK), dtype=np.uint8)
    checks = scheme.generate(data)
    places = [_members(scheme, layout, n, s) for s in range(scheme.period(n))]
    sure = lucky = 0
    for k in range(1, n + 1):
        ok = [all(_rebuilds(scheme, data, checks, dm + cm, set(failed)) for dm, cm in places)
              for failed in itertools.combinations(range(n), k)]
        if all(ok) and sure == k - 1:
            sure = k
        if any(ok):
            lucky = k
    return sure, lucky


def _rebuilds(scheme: Redundancy, data: np.ndarray, checks: np.ndarray, members: tuple[int, ...],
              failed: set[int]) -> bool:
    """Whether the scheme gives back a stripe whose columns on ``failed`` members are lost."""
    missing = [col for col, m in enumerate(members) if m in failed]
    if not missing:
        return True
    d = len(data)
    lost_data, lost_checks = data.copy(), checks.copy()
    for col in missing:
        (lost_data[col] if col < d else lost_checks[col - d])[...] = 0
    try:
        scheme.reconstruct(lost_data, lost_checks, missing)
    except ValueError:
        return False
    return np.array_equal(lost_data, data) and np.array_equal(lost_checks, checks)


# ---------------------------------------------------------------------- the table's rows
@dataclass(frozen=True)
class Row:
    """One row of Fig. 38.8: its name, its unit, the book's value of a shape, and what vraid measures."""

    key: str
    label: str
    unit: str
    book: Callable[[Shape], Fraction]
    how: str


ROWS = (
    Row("capacity", "Capacity", "B", lambda s: s.capacity,
        "the geometry's capacity over one member's data area"),
    Row("reliability_sure", "Reliability (for sure)", "failures", lambda s: Fraction(s.tolerates),
        "failed members every set of that size survives, on the scheme's reconstruct"),
    Row("reliability_lucky", "Reliability (if lucky)", "failures", lambda s: Fraction(s.n - math.ceil(s.capacity)),
        "failed members some set of that size survives, on the scheme's reconstruct"),
    Row("seq_read", "Sequential read", "S", lambda s: s.capacity,
        "one stream of full-stripe reads, MB/s over one disk's"),
    Row("seq_write", "Sequential write", "S", lambda s: s.capacity,
        "one stream of full-stripe writes, MB/s over one disk's"),
    Row("rand_read", "Random read", "R", lambda s: 1 / s.read_load,
        "4 KiB random reads, the members kept busy, MB/s over one disk's"),
    Row("rand_write", "Random write", "R", lambda s: 1 / s.write_load,
        "4 KiB random writes, no cache, the members kept busy, MB/s over one disk's"),
    Row("lat_read", "Read latency", "T", lambda s: Fraction(1),
        "mean response of one 4 KiB random read at a time over one disk's"),
    Row("lat_write", "Write latency", "T", lambda s: Fraction(2 if s.write_reads else 1),
        "mean response of one 4 KiB random write at a time over one disk's"),
)


def formula(level: int, row: Row, n: int) -> str:
    """The book's value of ``row`` as a formula in N (``(N-1)·S``, ``N/4·R``, ``1/2·R``), fitted on
    member counts near ``n`` the level accepts with the stripe shape of ``n`` (as many strips of a
    member per stripe: RAID-10's odd counts apart from its even ones); the value at ``n`` when it
    is not linear in N."""
    lanes = for_level(level, n).lanes(n) if accepts(level, n) else 1
    counts = [m for m in range(max(1, n - 4), n + 8) if accepts(level, m) and for_level(level, m).lanes(m) == lanes]
    values = {m: row.book(shape(level, m)) for m in counts}
    text = _linear(values)
    if text is None:
        text = str(values.get(n, "?"))
    if row.unit == "failures" or text == "0":
        return text
    return row.unit if text == "1" else f"{text}·{row.unit}"


def _linear(values: dict[int, Fraction]) -> str | None:
    """``a·N + b`` through every point, written the book's way; None when no line fits."""
    if len(values) < 2:
        return None
    (n1, v1), (n2, v2) = list(values.items())[:2]
    a = (v2 - v1) / (n2 - n1)
    b = v1 - a * n1
    if any(a * n + b != v for n, v in values.items()):
        return None
    if a == 0:
        return str(b)
    head = "N" if a == 1 else (f"N/{a.denominator}" if a.numerator == 1 else f"{a}·N")
    if b == 0:
        return head
    return f"({head}{'+' if b > 0 else '-'}{abs(b)})"


__all__ = ["ROWS", "Row", "Shape", "accepts", "dependence", "formula", "shape", "survivable"]
