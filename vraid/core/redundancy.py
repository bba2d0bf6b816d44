"""Redundancy: the parity of a stripe, in one place.

Every piece of the engine that computes, patches, checks or rebuilds
parity calls a :class:`Redundancy`, chosen from the RAID level by
:func:`for_level` (the only place that asks which level an array is):

=============== ============ ==================== ==================================
scheme          RAID level   tolerates            check columns per stripe
=============== ============ ==================== ==================================
:class:`Xor`    5            1 failure            1 (P = XOR of the data)
:class:`Raid4`  4            1 failure            1 (P, always on the same member)
:class:`PQ`     6            2 failures           2 (P, and md's Q syndrome)
:class:`Mirror` 1            n-1 failures         n-1 copies of the one data column
NearMirror      10           1 per mirrored pair  n/2 copies, check j of data column j
NoRedundancy    0            0 failures           0
=============== ============ ==================== ==================================

The base class is :class:`vraid.core.scheme.Redundancy` (re-exported here);
P+Q is :mod:`vraid.core.pq`, the mirrors :mod:`vraid.core.mirror`.

The mirrors have as many check columns as the member count makes, so :func:`for_level`
with a member count gives a scheme *bound* to it (:meth:`Redundancy.bound`;
:attr:`vraid.core.geometry.Geometry.redundancy` asks so). Three questions generalise the
count of check columns for them: :meth:`~Redundancy.coverage` (which data columns each check
column covers: every one for XOR and P+Q, its one for a copy; the rxw planner writes only the
checks of the groups a row writes), :meth:`~Redundancy.copies` (which check columns hold a
copy of a data column: where a read may go instead, md's read_balance) and
:meth:`~Redundancy.survives_columns` (survival by *which* columns are missing: RAID-10
survives two failures in different pairs).

``parity_columns`` is also how many check columns every write plan has
(:attr:`vraid.core.rxw.Plan.checks`, the last columns of the rxw-matrix) and
how many members :meth:`vraid.core.mapping.Mapping.parity_disks` names.

The arrays are the stripe buffer's (:mod:`vraid.engine.raid.stripe`): ``data``
is (data columns, rows..., block) with the data strips in logical order,
``checks`` is (parity columns, rows..., block); a *column* number counts
the data columns first and the parity columns after them, as the
rxw-matrix does (seed 000, Fig. 7). Any number of axes may sit between
the column axis and the block axis (a scrub hands in several stripes at
once), and every operation works on whole runs of rows with numpy, never
block by block (FUSE-NOTES).

The operations:

* :meth:`~Redundancy.generate`: the parity of the data columns (RCW, resync,
  repair);
* :meth:`~Redundancy.update`: read-modify-write, patching the parity with the
  old and new data of the columns that changed;
* :meth:`~Redundancy.reconstruct`: missing columns (data or parity) from the
  survivors, at most :attr:`~Redundancy.tolerates` of them;
* :meth:`~Redundancy.verify`: which rows' parity disagrees with their data;
* :meth:`~Redundancy.place`: which members hold a stripe's data strips and
  check strips under one of the scheme's :attr:`~Redundancy.layouts` (md's
  names). The geometry tabulates it; nothing else asks where parity goes.

P+Q (RAID-6, md's ``raid6_calls``: P the XOR, Q a Reed-Solomon syndrome over
GF(2^8); :mod:`vraid.core.pq`) is one more subclass with ``parity_columns =
tolerates = 2``: its ``update`` and ``reconstruct`` need the column numbers,
which is why they take them here although XOR ignores them, and Q weights the
data in md's syndrome order, which differs from the logical order under the
asymmetric layouts: every operation takes that order as ``slots=``
(:meth:`~Redundancy.slots`, None for XOR and for the symmetric layouts).
:meth:`~Redundancy.disagree` says which check column of a row disagrees.

*Layout names.* :data:`LAYOUT_NAMES` is every layout name of every scheme in
one append-only list: a superblock stores its layout as an index into it, so a
name is only ever added at the end. RAID-6 uses md's four RAID-5 names.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .mirror import MIRROR_LAYOUTS, NEAR_LAYOUTS, Mirror, NearMirror
from .pq import PQ
from .scheme import RAID5_LAYOUTS, Redundancy, count_word

#: md's RAID-4 layouts (ALGORITHM_PARITY_N, md's default for raid4, and ALGORITHM_PARITY_0)
RAID4_LAYOUTS = ("parity-last", "parity-first")

__all__ = ["LAYOUT_NAMES", "LEVELS", "MIRROR", "NEAR", "NONE", "PQ", "P_Q", "RAID4", "RAID4_LAYOUTS", "RAID5_LAYOUTS",
           "Mirror", "NearMirror", "Raid4", "Redundancy", "XOR", "NoRedundancy", "Xor", "count_word", "for_level",
           "levels", "register", "unregister"]

class Xor(Redundancy):
    """RAID-5: one parity column, the XOR of the data columns; survives one failure.

    Every row (parity block group, PBG) XORs to zero, so a missing column of
    a row is the XOR of the row's other columns, data and parity alike.
    """

    level = 5
    parity_columns = 1
    tolerates = 1
    min_disks = 3
    layouts = RAID5_LAYOUTS

    def place(self, layout: str, ndisks: int, stripe: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """md's four RAID-5 layouts (drivers/md/raid5.c, ``raid5_compute_sector``): parity on
        ``N-1 - s mod N`` (left) or ``s mod N`` (right); data strips after the parity member
        and wrapping (symmetric) or in member order skipping it (asymmetric)."""
        n = ndisks
        p = n - 1 - stripe % n if layout.startswith("left") else stripe % n
        if layout.endswith("-symmetric"):
            data = tuple((p + 1 + k) % n for k in range(n - 1))
        else:
            data = tuple(k + 1 if k >= p else k for k in range(n - 1))
        return data, (p,)

    def generate(self, data: np.ndarray, out: np.ndarray | None = None, *, slots: Sequence[int] | None = None) -> np.ndarray:
        if out is None:
            out = np.empty((1,) + data.shape[1:], dtype=data.dtype)
        np.bitwise_xor.reduce(data, axis=0, out=out[0])
        return out

    def update(self, checks: np.ndarray, old: np.ndarray, new: np.ndarray, columns: Sequence[int], *,
               slots: Sequence[int] | None = None) -> None:
        if len(old) == 1:  # one column: P ^= old ^ new in place, no temporaries
            p = checks[0]
            np.bitwise_xor(p, old[0], out=p)
            np.bitwise_xor(p, new[0], out=p)
            return
        delta = np.bitwise_xor.reduce(old ^ new, axis=0)
        checks[0] ^= delta

    def reconstruct(self, data: np.ndarray, checks: np.ndarray | None, missing: Sequence[int], *,
                    slots: Sequence[int] | None = None) -> None:
        missing = sorted(set(missing))
        if not missing:
            return
        if len(missing) > self.tolerates:
            raise ValueError(f"{len(missing)} columns missing; XOR parity rebuilds one")
        assert checks is not None
        nd = data.shape[0]
        (m,) = missing
        if m == nd:
            self.generate(data, out=checks)
            return
        acc = checks[0].copy()
        for j in range(nd):
            if j != m:
                np.bitwise_xor(acc, data[j], out=acc)
        data[m] = acc

    def verify(self, data: np.ndarray, checks: np.ndarray, *, slots: Sequence[int] | None = None) -> np.ndarray:
        syndrome = np.bitwise_xor.reduce(data, axis=0) ^ checks[0]
        return syndrome.any(axis=-1)


class Raid4(Xor):
    """RAID-4 (md's raid4): RAID-5's XOR parity on one fixed member, data striped over the rest.

    md's default for raid4 is ALGORITHM_PARITY_N (``parity-last``: parity on the last member,
    data strip ``k`` on member ``k``); ALGORITHM_PARITY_0 (``parity-first``) puts parity on
    member 0 and data strip ``k`` on member ``k + 1``. Plans, degraded mode and rebuild are
    RAID-5's: only the placement differs, and it does not rotate (period 1).
    """

    level = 4
    layouts = RAID4_LAYOUTS

    def place(self, layout: str, ndisks: int, stripe: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        if layout == "parity-first":
            return tuple(range(1, ndisks)), (0,)
        return tuple(range(ndisks - 1)), (ndisks - 1,)

    def period(self, ndisks: int) -> int:
        return 1


class NoRedundancy(Redundancy):
    """RAID-0: no parity; a missing member's blocks are gone."""

    level = 0
    parity_columns = 0
    tolerates = 0
    min_disks = 1
    #: RAID-0 has nothing to place: it accepts RAID-5's names (superblocks carry one) and ignores them
    layouts = RAID5_LAYOUTS

    def place(self, layout: str, ndisks: int, stripe: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return tuple(range(ndisks)), ()

    def generate(self, data: np.ndarray, out: np.ndarray | None = None, *, slots: Sequence[int] | None = None) -> np.ndarray:
        return np.empty((0,) + data.shape[1:], dtype=data.dtype) if out is None else out

    def update(self, checks: np.ndarray, old: np.ndarray, new: np.ndarray, columns: Sequence[int], *,
               slots: Sequence[int] | None = None) -> None:
        return None

    def reconstruct(self, data: np.ndarray, checks: np.ndarray | None, missing: Sequence[int], *,
                    slots: Sequence[int] | None = None) -> None:
        if missing:
            raise ValueError(f"{len(set(missing))} columns missing; RAID-0 has no parity to rebuild them from")

    def verify(self, data: np.ndarray, checks: np.ndarray, *, slots: Sequence[int] | None = None) -> np.ndarray:
        return np.zeros(data.shape[1:-1], dtype=bool)


XOR = Xor()
NONE = NoRedundancy()
P_Q = PQ()
RAID4 = Raid4()
MIRROR = Mirror(2)
NEAR = NearMirror(2)
_BY_LEVEL: dict[int, Redundancy] = {s.level: s for s in (XOR, NONE, P_Q, RAID4, MIRROR, NEAR)}
#: every layout name of every scheme, APPEND-ONLY: a superblock stores a layout as its index
#: here (vraid.ondisk.superblock), so an old superblock reads the same name forever (RAID-6
#: uses md's four RAID-5 names)
LAYOUT_NAMES: tuple[str, ...] = RAID5_LAYOUTS + RAID4_LAYOUTS + MIRROR_LAYOUTS + NEAR_LAYOUTS
#: the RAID levels vraid is built with, in the order the CLI lists them (:func:`levels` adds
#: any registered since)
LEVELS = tuple(sorted(_BY_LEVEL))


def levels() -> tuple[int, ...]:
    """Every RAID level vraid runs now: the built-in :data:`LEVELS` and any :func:`register` added."""
    return tuple(sorted(_BY_LEVEL))


def register(scheme: Redundancy) -> int:
    """Run ``scheme`` as RAID level ``scheme.level`` (a course's own level, or a test's); its
    level number. ValueError when that number is taken: a level's placement is on disk, so a
    registered level never replaces another."""
    if scheme.level in _BY_LEVEL:
        raise ValueError(f"RAID level {scheme.level} is taken by {_BY_LEVEL[scheme.level].name}")
    _BY_LEVEL[scheme.level] = scheme
    return scheme.level


def unregister(level: int) -> None:
    """Take a :func:`register`-ed level out again (ValueError for a built-in level)."""
    if level in LEVELS:
        raise ValueError(f"RAID level {level} is built in")
    _BY_LEVEL.pop(level, None)


def for_level(level: int, ndisks: int | None = None) -> Redundancy:
    """The scheme of RAID ``level`` (KeyError for a level vraid does not run); bound to an
    array of ``ndisks`` members when given (:meth:`Redundancy.bound`)."""
    scheme = _BY_LEVEL[level]
    return scheme if ndisks is None else scheme.bound(ndisks)
