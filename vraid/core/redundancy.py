"""Redundancy: the parity of a stripe, in one place.

Every piece of the engine that computes, patches, checks or rebuilds
parity calls a :class:`Redundancy`, chosen from the RAID level by
:func:`for_level` (the only place that asks which level an array is):

=============== ============ ==================== ==================================
scheme          RAID level   tolerates            check columns per stripe
=============== ============ ==================== ==================================
:class:`Xor`    5            1 failure            1 (P = XOR of the data)
:class:`Raid4`  4            1 failure            1 (P, always on the same member)
:class:`Mirror` 1            n-1 failures         n-1 copies of the one data column
NearMirror      10           1 per mirrored pair  n/2 copies, check j of data column j
NoRedundancy    0            0 failures           0
=============== ============ ==================== ==================================

The mirrors (:class:`Mirror`, :class:`NearMirror`) have as many check columns as the member count
makes, so :func:`for_level` with a member count gives a scheme *bound* to it
(:meth:`Redundancy.bound`; :attr:`vraid.core.geometry.Geometry.redundancy` asks so). Three
questions generalise the count of check columns for them: :meth:`~Redundancy.coverage`
(which data columns each check column covers: every one for XOR, its one for a copy; the
rxw planner writes only the checks of the groups a row writes), :meth:`~Redundancy.copies`
(which check columns hold a copy of a data column: where a read may go instead, md's
read_balance) and :meth:`~Redundancy.survives_columns` (survival by *which* columns are
missing: RAID-10 survives two failures in different pairs).

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
GF(2^8)) is one more subclass with ``parity_columns = tolerates = 2``: its
``update`` and ``reconstruct`` need the column numbers, which is why they
take them here although XOR ignores them. It is not implemented.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

#: md's four RAID-5 layouts; left-symmetric (md's default) first
RAID5_LAYOUTS = ("left-symmetric", "left-asymmetric", "right-symmetric", "right-asymmetric")
#: md's RAID-4 layouts (ALGORITHM_PARITY_N, md's default for raid4, and ALGORITHM_PARITY_0)
RAID4_LAYOUTS = ("parity-last", "parity-first")
#: RAID-1 places whole members (md's raid1 has no layout) and RAID-10 md's "near 2" (mdadm --layout n2)
MIRROR_LAYOUTS = ("mirror",)
NEAR_LAYOUTS = ("near-2",)
#: every layout name of every scheme, APPEND-ONLY: a superblock stores a layout as its index
#: here (vraid.ondisk.superblock), so an old superblock reads the same name forever
LAYOUT_NAMES = RAID5_LAYOUTS + RAID4_LAYOUTS + MIRROR_LAYOUTS + NEAR_LAYOUTS

#: the words the messages use for a count of members
_COUNT = ("no", "one", "two", "three")


def count_word(n: int) -> str:
    """``one`` for 1, ``two`` for 2 (the messages say "survives the loss of one member")."""
    return _COUNT[n] if 0 <= n < len(_COUNT) else str(n)


class Redundancy:
    """A parity scheme (see the module docstring). Subclasses are stateless."""

    #: RAID level it implements
    level: int
    #: parity columns per stripe (each on its own member)
    parity_columns: int
    #: members a stripe may lose and still be read in full
    tolerates: int
    #: fewest members an array of this level has
    min_disks: int
    #: the layouts (md's names) this scheme places strips by; the first is the default
    layouts: tuple[str, ...]

    def place(self, layout: str, ndisks: int, stripe: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The members of ``stripe``'s data strips (logical order) and of its check
        strips (rxw-matrix order, P first) under ``layout``."""
        raise NotImplementedError

    def period(self, ndisks: int) -> int:
        """Stripes after which :meth:`place` repeats (the geometry keeps one table per stripe of a period)."""
        return ndisks if self.parity_columns else 1

    @property
    def name(self) -> str:
        return f"RAID-{self.level}"

    def data_columns(self, ndisks: int) -> int:
        """Data strips per stripe of an array of ``ndisks`` members."""
        return ndisks - self.parity_columns

    def survives(self, missing: int) -> bool:
        """Whether a stripe with ``missing`` members gone can still be read (every set of
        that many: :meth:`survives_columns` says which sets a mirror survives)."""
        return missing <= self.tolerates

    #: survival depends on the count of missing columns alone (False: on which, a mirror)
    by_count = True

    def survives_columns(self, columns: Iterable[int]) -> bool:
        """Whether a stripe with these columns (data and check numbering) gone can still be read."""
        return len(set(columns)) <= self.tolerates

    def bound(self, ndisks: int) -> "Redundancy":
        """The scheme for an array of ``ndisks`` members (itself, unless the member count
        decides the check columns: the mirrors)."""
        return self

    def refusal(self, ndisks: int) -> tuple[str, str] | None:
        """(message, hint) when this scheme cannot run on ``ndisks`` members beyond
        :attr:`min_disks`; None when it can."""
        return None

    def coverage(self, nd: int) -> tuple[tuple[int, ...], ...] | None:
        """Per check column, the data columns it covers (of ``nd``); None: each covers every
        data column (XOR, P+Q), so a written row touches every check."""
        return None

    def copies(self, k: int) -> tuple[int, ...]:
        """The check columns (0 = the first check column) holding a copy of data column ``k``:
        where a read of ``k`` may go instead (none for parity schemes)."""
        return ()

    def rebuild_sources(self, gone: Iterable[int], width: int) -> list[int]:
        """The columns (of ``width``) to read so that :meth:`reconstruct` can rebuild the
        columns ``gone``: every survivor here (XOR needs the whole row)."""
        lost = set(gone)
        return [j for j in range(width) if j not in lost]

    def survival_text(self) -> str:
        """``survives the loss of one member`` (for messages)."""
        t = self.tolerates
        return f"survives the loss of {count_word(t)} member{'s' if t != 1 else ''}"

    def verify_columns(self, data: np.ndarray, checks: np.ndarray) -> np.ndarray:
        """A bool per check column and row (shape ``checks.shape[:-1]``): True where that check
        column disagrees with the data (scrub's report of *which* check is wrong). Here: every
        check column of a row that :meth:`verify` finds wrong."""
        bad = self.verify(data, checks)
        return np.broadcast_to(bad, checks.shape[:-1]).copy()

    def generate(self, data: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The parity columns of ``data`` (into ``out`` when given)."""
        raise NotImplementedError

    def update(self, checks: np.ndarray, old: np.ndarray, new: np.ndarray, columns: Sequence[int]) -> None:
        """Read-modify-write: patch ``checks`` in place for data ``columns`` changing
        from ``old`` to ``new`` (each (len(columns), rows..., block))."""
        raise NotImplementedError

    def reconstruct(self, data: np.ndarray, checks: np.ndarray | None, missing: Sequence[int]) -> None:
        """Recompute the ``missing`` columns (data and parity numbering) in place
        from every other column.

        Raises:
            ValueError: more columns missing than the scheme tolerates.
        """
        raise NotImplementedError

    def verify(self, data: np.ndarray, checks: np.ndarray) -> np.ndarray:
        """A bool per row (shape ``data.shape[1:-1]``): True where the parity
        does not match the data."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


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

    def generate(self, data: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            out = np.empty((1,) + data.shape[1:], dtype=data.dtype)
        np.bitwise_xor.reduce(data, axis=0, out=out[0])
        return out

    def update(self, checks: np.ndarray, old: np.ndarray, new: np.ndarray, columns: Sequence[int]) -> None:
        if len(old) == 1:  # one column: P ^= old ^ new in place, no temporaries
            p = checks[0]
            np.bitwise_xor(p, old[0], out=p)
            np.bitwise_xor(p, new[0], out=p)
            return
        delta = np.bitwise_xor.reduce(old ^ new, axis=0)
        checks[0] ^= delta

    def reconstruct(self, data: np.ndarray, checks: np.ndarray | None, missing: Sequence[int]) -> None:
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

    def verify(self, data: np.ndarray, checks: np.ndarray) -> np.ndarray:
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

    def generate(self, data: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        return np.empty((0,) + data.shape[1:], dtype=data.dtype) if out is None else out

    def update(self, checks: np.ndarray, old: np.ndarray, new: np.ndarray, columns: Sequence[int]) -> None:
        return None

    def reconstruct(self, data: np.ndarray, checks: np.ndarray | None, missing: Sequence[int]) -> None:
        if missing:
            raise ValueError(f"{len(set(missing))} columns missing; RAID-0 has no parity to rebuild them from")

    def verify(self, data: np.ndarray, checks: np.ndarray) -> np.ndarray:
        return np.zeros(data.shape[1:-1], dtype=bool)


class Copies(Redundancy):
    """Mirroring: every check column is a copy of one data column (``source[j]``).

    ``generate`` and ``update`` copy, ``reconstruct`` takes a missing data column from any
    surviving copy (and a missing copy from its data column), ``verify`` compares. A stripe
    survives as long as every data column has itself or one copy left
    (:meth:`survives_columns`). The instance is bound to a member count (:meth:`bound`).
    """

    by_count = False
    ndisks: int
    #: per check column, the data column it copies
    source: tuple[int, ...]

    def bound(self, ndisks: int) -> "Redundancy":
        return self if ndisks == self.ndisks else type(self)(ndisks)

    def period(self, ndisks: int) -> int:
        return 1

    def coverage(self, nd: int) -> tuple[tuple[int, ...], ...] | None:
        return tuple((k,) for k in self.source)

    def copies(self, k: int) -> tuple[int, ...]:
        return self._copies[k] if 0 <= k < len(self._copies) else ()

    def survives_columns(self, columns: Iterable[int]) -> bool:
        gone = set(columns)
        nd = self.ndisks - self.parity_columns
        return all(k not in gone or any(nd + j not in gone for j in self._copies[k]) for k in range(nd))

    def rebuild_sources(self, gone: Iterable[int], width: int) -> list[int]:
        """One surviving copy per lost data column (the one :meth:`reconstruct` takes), and
        the data column of a lost copy: a mirror's rebuild reads one member, not all."""
        lost = set(gone)
        nd = self.ndisks - self.parity_columns
        need = set()
        for c in lost:
            k = c if c < nd else self.source[c - nd]
            if k not in lost:
                need.add(k)
                continue
            alive = [nd + j for j in self._copies[k] if nd + j not in lost]
            if alive:
                need.add(alive[0])
        return sorted(need)

    def _init(self, ndisks: int, source: tuple[int, ...]) -> None:
        self.ndisks = ndisks
        self.source = source
        self.parity_columns = len(source)
        nd = ndisks - len(source)
        self._copies = tuple(tuple(j for j, s in enumerate(source) if s == k) for k in range(nd))
        self._index = np.array(source, dtype=np.intp)

    def generate(self, data: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        return np.take(data, self._index, axis=0, out=out)

    def update(self, checks: np.ndarray, old: np.ndarray, new: np.ndarray, columns: Sequence[int]) -> None:
        for i, k in enumerate(columns):
            for j in self._copies[k]:
                checks[j] = new[i]

    def reconstruct(self, data: np.ndarray, checks: np.ndarray | None, missing: Sequence[int]) -> None:
        gone = set(missing)
        if not gone:
            return
        if not self.survives_columns(gone):
            raise ValueError(f"columns {sorted(gone)} missing: some data column has no copy left")
        nd = data.shape[0]
        assert checks is not None
        for k in sorted(j for j in gone if j < nd):
            j = next(j for j in self._copies[k] if nd + j not in gone)
            data[k] = checks[j]
        for j in sorted(j - nd for j in gone if j >= nd):
            checks[j] = data[self.source[j]]

    def verify(self, data: np.ndarray, checks: np.ndarray) -> np.ndarray:
        return self.verify_columns(data, checks).any(axis=0)

    def verify_columns(self, data: np.ndarray, checks: np.ndarray) -> np.ndarray:
        return (checks != np.take(data, self._index, axis=0)).any(axis=-1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.ndisks})"


class Mirror(Copies):
    """RAID-1 (md's raid1): an n-way mirror of whole members. One data column on member 0,
    n-1 copies of it on members 1..n-1 (each stripe is one strip of each member: all hold the
    same bytes); survives the loss of any n-1 members. Reads go to any copy (balanced by the
    RAID layer, :mod:`vraid.engine.raid.balance`); writes go to every copy and read nothing."""

    level = 1
    min_disks = 2
    layouts = MIRROR_LAYOUTS

    def __init__(self, ndisks: int = 2) -> None:
        self._init(ndisks, (0,) * (ndisks - 1))
        self.tolerates = ndisks - 1

    def place(self, layout: str, ndisks: int, stripe: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return (0,), tuple(range(1, ndisks))


class NearMirror(Copies):
    """RAID-10 with md's "near 2" layout (drivers/md/raid10.c, ``raid10_find_phys`` with
    near_copies = 2): each chunk on two adjacent members, the pairs striped. With an even
    member count a stripe is one row: data strip ``k`` on member ``2k``, its copy (check
    column ``k``) on member ``2k + 1``. Survives one failure in each pair.

    md also runs near-2 on an odd member count, where a chunk's two copies may sit in
    different rows; a vraid stripe is one strip of each member at one offset (the mapping
    contract), which cannot hold that, so odd counts are refused (:meth:`refusal`).
    """

    level = 10
    min_disks = 2
    tolerates = 1
    layouts = NEAR_LAYOUTS

    def __init__(self, ndisks: int = 2) -> None:
        self._init(ndisks, tuple(range(ndisks // 2)))

    def refusal(self, ndisks: int) -> tuple[str, str] | None:
        if ndisks % 2:
            return (f"RAID-10 on {ndisks} disks (an odd count) is not served yet: md's near-2 layout then puts a "
                    "chunk's two copies in different rows, and a vraid stripe is one strip of each member",
                    f"use an even --disks, e.g. --disks {ndisks + 1} or {ndisks - 1}")
        return None

    def place(self, layout: str, ndisks: int, stripe: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return tuple(range(0, ndisks - 1, 2)), tuple(range(1, ndisks, 2))

    def survival_text(self) -> str:
        return "survives the loss of one member of each mirrored pair (members 2k and 2k+1)"


XOR = Xor()
NONE = NoRedundancy()
RAID4 = Raid4()
_BY_LEVEL: dict[int, Redundancy] = {XOR.level: XOR, NONE.level: NONE, RAID4.level: RAID4}

MIRROR = Mirror(2)
NEAR = NearMirror(2)
_BY_LEVEL.update({MIRROR.level: MIRROR, NEAR.level: NEAR})
#: the RAID levels vraid runs, in the order the CLI lists them
LEVELS = tuple(sorted(_BY_LEVEL))


def for_level(level: int, ndisks: int | None = None) -> Redundancy:
    """The scheme of RAID ``level`` (KeyError for a level vraid does not run); bound to an
    array of ``ndisks`` members when given (:meth:`Redundancy.bound`)."""
    scheme = _BY_LEVEL[level]
    return scheme if ndisks is None else scheme.bound(ndisks)
