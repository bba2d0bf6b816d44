"""Mirroring schemes: RAID-1 (md's raid1) and RAID-10 (md's raid10, "near 2"), in the redundancy seam.

A mirror's check columns are copies: each check column holds the bytes of one data column
(:class:`Copies`). That is all the engine needs to plan, read, degrade and rebuild a mirror
through the same seam as XOR and P+Q: :meth:`Copies.coverage` tells the rxw planner that a
written row touches only the copies of the columns it writes (so a mirror write reads
nothing), :meth:`Copies.copies` tells the RAID layer's reads where else a block is (md's
read_balance, :mod:`vraid.engine.raid.balance`), and :meth:`Copies.survives_columns` says which
sets of missing members a stripe survives (RAID-10: one of each pair). The number of check
columns depends on the member count, so the registry binds a scheme to it
(:meth:`Redundancy.bound`). RAID-10 on an odd member count makes a stripe of md's period
(two rows of chunks), two strips of each member (:meth:`Redundancy.lanes`).
docs/levels.md draws the layouts and says where vraid differs from md.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from .scheme import Redundancy

#: RAID-1 places whole members (md's raid1 has no layout) and RAID-10 md's "near 2" (mdadm --layout n2)
MIRROR_LAYOUTS = ("mirror",)
NEAR_LAYOUTS = ("near-2",)


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
        nd = self.nd
        return all(k not in gone or any(nd + j not in gone for j in self._copies[k]) for k in range(nd))

    def rebuild_sources(self, gone: Iterable[int], width: int) -> list[int]:
        """One surviving copy per lost data column (the one :meth:`reconstruct` takes), and
        the data column of a lost copy: a mirror's rebuild reads one member, not all."""
        lost = set(gone)
        nd = self.nd
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
        #: a scrub names a copy that differs by its check column: copy0, copy1, ...
        self.check_names = tuple(f"copy{j}" for j in range(len(source)))
        #: data columns of a stripe (its cells less the copies: :meth:`Redundancy.lanes`)
        self.nd = nd = self.lanes(ndisks) * ndisks - len(source)
        self._copies = tuple(tuple(j for j, s in enumerate(source) if s == k) for k in range(nd))
        self._index = np.array(source, dtype=np.intp)

    def generate(self, data: np.ndarray, out: np.ndarray | None = None, *, slots: Sequence[int] | None = None) -> np.ndarray:
        return np.take(data, self._index, axis=0, out=out)

    def update(self, checks: np.ndarray, old: np.ndarray, new: np.ndarray, columns: Sequence[int], *,
               slots: Sequence[int] | None = None) -> None:
        for i, k in enumerate(columns):
            for j in self._copies[k]:
                checks[j] = new[i]

    def reconstruct(self, data: np.ndarray, checks: np.ndarray | None, missing: Sequence[int], *,
                    slots: Sequence[int] | None = None) -> None:
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

    def verify(self, data: np.ndarray, checks: np.ndarray, *, slots: Sequence[int] | None = None) -> np.ndarray:
        return self.disagree(data, checks).any(axis=0)

    def disagree(self, data: np.ndarray, checks: np.ndarray, *, slots: Sequence[int] | None = None) -> np.ndarray:
        """Per copy, a bool per row: True where that copy differs from its data column."""
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
    near_copies = 2): chunk ``i`` is written to the device slots ``2i`` and ``2i + 1``, the
    slots numbered row by row over the members (slot ``p`` is member ``p mod n`` in chunk row
    ``p // n``).

    With an even member count the two slots of a chunk are in one row, so a stripe is one
    row: data strip ``k`` on member ``2k``, its copy (check column ``k``) on member
    ``2k + 1``; survives one failure in each pair.

    With an odd count (md allows it) a chunk may straddle two rows (3 members: row 0 is
    A A B, row 1 is B C C); the layout repeats every two rows, which hold ``n`` chunks.
    A stripe is then that period: two strips of each member (:meth:`lanes`), whose ``2n``
    cells are the ``n`` chunks (data column ``k`` in slot ``2k``) and their copies (check
    column ``k`` in slot ``2k + 1``); cell = slot, so :meth:`place` is the even rule on
    ``2n`` slots. The two holders of a chunk are neighbours in slot order, members ``m``
    and ``m + 1 mod n`` (the wrap ``n-1, 0`` included), and every such pair holds one
    chunk: the array survives one failure, and two when they are not neighbours
    (:meth:`Copies.survives_columns`; never on 3 members).
    """

    level = 10
    min_disks = 2
    tolerates = 1
    layouts = NEAR_LAYOUTS

    def __init__(self, ndisks: int = 2) -> None:
        self._init(ndisks, tuple(range(self.lanes(ndisks) * ndisks // 2)))

    def lanes(self, ndisks: int) -> int:
        return 2 if ndisks % 2 else 1

    def place(self, layout: str, ndisks: int, stripe: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        slots = self.lanes(ndisks) * ndisks
        return tuple(range(0, slots - 1, 2)), tuple(range(1, slots, 2))

    def survival_text(self) -> str:
        if self.ndisks % 2:
            return (f"survives the loss of one member, or of two that are not neighbours (members m and m+1 mod "
                    f"{self.ndisks} hold the two copies of a chunk)")
        return "survives the loss of one member of each mirrored pair (members 2k and 2k+1)"
