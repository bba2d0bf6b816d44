"""Destage orders: which dirty unit to destage next (``--destage-order``).

Seed 000 Fig. 6 and section III-A: LRW (least recently written) keeps the
dirty units in a list; a write to any block of a unit moves the whole unit to
the tail, and destages take the head. vraid also offers LRU (reads move the
unit too), FIFO (order of first becoming dirty; later writes do not move it)
and CSCAN (ascending unit number from the last destaged unit, wrapping
around: the one-way elevator, which suits disks).

An order is a pure, synchronous object the cache tells what happened; a new
one is one :class:`DestageOrder` subclass and one entry in the ``destage_order`` row of
:data:`vraid.policies.registry.FAMILIES` (or ``--destage-order pkg.mod:Class``).
"""

from __future__ import annotations

import bisect
from collections import OrderedDict



class DestageOrder:
    """Base of every destage order: built as ``Class(**params)``."""

    name = "base"
    summary = ""
    source = ""
    #: parameter schema (vraid.policies.params): key -> (type, default, doc[, (low, high)])
    params: dict = {}

    def dirtied(self, key: int) -> None:
        """Unit ``key`` became dirty (it was clean or absent)."""
        raise NotImplementedError

    def written(self, key: int) -> None:
        """A write hit unit ``key``, which was already dirty."""

    def read(self, key: int) -> None:
        """A read hit unit ``key``."""

    def removed(self, key: int) -> None:
        """Unit ``key`` is no longer a candidate (its destage started)."""
        raise NotImplementedError

    def next(self) -> int | None:
        """The unit to destage next, or None when there is none (does not remove it)."""
        raise NotImplementedError

    def keys(self) -> list[int]:
        """Candidates in destage order, first first (for display and tests)."""
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.keys())


class Lrw(DestageOrder):
    """Least recently written first (seed 000 Fig. 6)."""

    name = "lrw"
    summary = "least recently written unit first"
    source = "paper 000 Fig. 6, sec. III-A"

    def __init__(self) -> None:
        self._list: OrderedDict[int, None] = OrderedDict()

    def dirtied(self, key: int) -> None:
        self._list[key] = None
        self._list.move_to_end(key)

    def written(self, key: int) -> None:
        if key in self._list:
            self._list.move_to_end(key)

    def removed(self, key: int) -> None:
        self._list.pop(key, None)

    def next(self) -> int | None:
        return next(iter(self._list), None)

    def keys(self) -> list[int]:
        return list(self._list)

    def __len__(self) -> int:
        return len(self._list)


class Lru(Lrw):
    """Least recently used first: reads move a unit as writes do."""

    name = "lru"
    summary = "least recently used first: reads move a unit as writes do"
    source = "vraid"

    def read(self, key: int) -> None:
        self.written(key)


class Fifo(Lrw):
    """First dirtied, first destaged: later writes do not move a unit."""

    name = "fifo"
    summary = "first dirtied, first destaged: later writes do not move a unit"
    source = "vraid"

    def dirtied(self, key: int) -> None:
        self._list.setdefault(key, None)

    def written(self, key: int) -> None:
        return None


class Cscan(DestageOrder):
    """Ascending unit number from the last destaged one, wrapping around."""

    name = "cscan"
    summary = "ascending unit number from the last destaged one, wrapping (one-way elevator)"
    source = "vraid"

    def __init__(self) -> None:
        self._sorted: list[int] = []
        self._last = -1

    def dirtied(self, key: int) -> None:
        i = bisect.bisect_left(self._sorted, key)
        if i == len(self._sorted) or self._sorted[i] != key:
            self._sorted.insert(i, key)

    def removed(self, key: int) -> None:
        i = bisect.bisect_left(self._sorted, key)
        if i < len(self._sorted) and self._sorted[i] == key:
            del self._sorted[i]
            self._last = key

    def next(self) -> int | None:
        if not self._sorted:
            return None
        i = bisect.bisect_right(self._sorted, self._last)
        return self._sorted[i] if i < len(self._sorted) else self._sorted[0]

    def keys(self) -> list[int]:
        i = bisect.bisect_right(self._sorted, self._last)
        return self._sorted[i:] + self._sorted[:i]

    def __len__(self) -> int:
        return len(self._sorted)


def destage_order(name: str) -> DestageOrder:
    """The order a ``--destage-order`` spec names."""
    from vraid.policies.registry import create

    return create("destage_order", name)
