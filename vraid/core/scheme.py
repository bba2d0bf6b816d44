"""The redundancy seam's base class: what a parity scheme answers (:class:`Redundancy`).

The schemes themselves and the registry that picks one by RAID level are in
:mod:`vraid.core.redundancy` (XOR, RAID-4, none), :mod:`vraid.core.pq` (P+Q) and
:mod:`vraid.core.mirror` (RAID-1, RAID-10); this
module holds only what they all share, so that each scheme's module imports it
and the registry imports the schemes (no import cycle). The module docstring
of :mod:`vraid.core.redundancy` describes the operations.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

#: md's four RAID-5 layouts; left-symmetric (md's default) first
RAID5_LAYOUTS = ("left-symmetric", "left-asymmetric", "right-symmetric", "right-asymmetric")

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
    #: the names of the check columns, P first (a scrub reports which one disagrees)
    check_names: tuple[str, ...] = ("P",)

    def place(self, layout: str, ndisks: int, stripe: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The members of ``stripe``'s data strips (logical order) and of its check
        strips (rxw-matrix order, P first) under ``layout``."""
        raise NotImplementedError

    def slots(self, layout: str, ndisks: int, stripe: int) -> tuple[int, ...] | None:
        """The weight order of ``stripe``'s data strips in the check columns (logical
        order in, md's syndrome slot out), None when it is the logical order. Only a
        scheme whose checks weight the data (P+Q's Q: :mod:`vraid.core.pq`) has one; every
        operation below takes it as ``slots=`` (the geometry tabulates it per stripe)."""
        return None

    def lanes(self, ndisks: int) -> int:
        """Strips each member holds per stripe: 1 (a stripe is one strip of every member),
        unless a stripe needs more cells than there are members (md's near-2 on an odd
        member count: 2, :mod:`vraid.core.mirror`). With more than one, :meth:`place` names
        *cells*: cell ``c`` is strip ``c // ndisks`` (its lane) of member ``c % ndisks``'s
        part of the stripe."""
        return 1

    def period(self, ndisks: int) -> int:
        """Stripes after which :meth:`place` repeats (the geometry keeps one table per stripe of a period)."""
        return ndisks if self.parity_columns else 1

    @property
    def name(self) -> str:
        return f"RAID-{self.level}"

    def data_columns(self, ndisks: int) -> int:
        """Data strips per stripe of an array of ``ndisks`` members (of its cells: :meth:`lanes`)."""
        return self.lanes(ndisks) * ndisks - self.parity_columns

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
        columns ``gone``: every survivor here (XOR and P+Q need the whole row)."""
        lost = set(gone)
        return [j for j in range(width) if j not in lost]

    def survival_text(self) -> str:
        """``survives the loss of one member`` (for messages)."""
        t = self.tolerates
        return f"survives the loss of {count_word(t)} member{'s' if t != 1 else ''}"

    def generate(self, data: np.ndarray, out: np.ndarray | None = None, *, slots: Sequence[int] | None = None) -> np.ndarray:
        """The parity columns of ``data`` (into ``out`` when given)."""
        raise NotImplementedError

    def update(self, checks: np.ndarray, old: np.ndarray, new: np.ndarray, columns: Sequence[int], *,
               slots: Sequence[int] | None = None) -> None:
        """Read-modify-write: patch ``checks`` in place for data ``columns`` changing
        from ``old`` to ``new`` (each (len(columns), rows..., block))."""
        raise NotImplementedError

    def reconstruct(self, data: np.ndarray, checks: np.ndarray | None, missing: Sequence[int], *,
                    slots: Sequence[int] | None = None) -> None:
        """Recompute the ``missing`` columns (data and parity numbering) in place
        from every other column.

        Raises:
            ValueError: more columns missing than the scheme tolerates.
        """
        raise NotImplementedError

    def verify(self, data: np.ndarray, checks: np.ndarray, *, slots: Sequence[int] | None = None) -> np.ndarray:
        """A bool per row (shape ``data.shape[1:-1]``): True where the parity
        does not match the data."""
        raise NotImplementedError

    def disagree(self, data: np.ndarray, checks: np.ndarray, *, slots: Sequence[int] | None = None) -> np.ndarray:
        """Per check column (:attr:`check_names`) a bool per row: True where that check
        does not match the data (a scrub says which one is wrong); shape
        ``(parity columns,) + data.shape[1:-1]``."""
        return self.verify(data, checks, slots=slots)[None]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
