"""Cache organisations: what a cache *unit* is (``--cache none|pbg|stripe``).

Seed 000 (Baek & Park), section III-A and Fig. 6: a parity-block-group cache
(PBGC, Linux md's stripe_head) manages one PBG (one row of a stripe) per
unit; a stripe cache (SC) manages one whole stripe per unit, allocated as one
contiguous buffer (section III-G-3, "the latter allocation scheme"). The unit
is what the destage order ranks, what the destage scheduler counts as a cache
entry, and what one destage writes. ``none`` is the write-through baseline.

A new organisation is one :class:`Organisation` subclass (built with the geometry) and one
entry in the ``cache`` row of :data:`vraid.policies.registry.FAMILIES`; a student's own is
``--cache pkg.mod:Class`` or ``--cache file.py:Class``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from vraid.core.geometry import Geometry


@dataclass(frozen=True)
class UnitSpan:
    """Rows ``row0 .. row0+rows-1`` of ``stripe``: one cache unit's reach."""

    key: int  # unique, ascending in array order (CSCAN sorts by it)
    stripe: int
    row0: int
    rows: int


class Organisation:
    """Base of every cache organisation: ``Organisation(geometry, **params)``."""

    name = "base"
    summary = ""
    source = ""
    #: parameter schema (vraid.policies.params): key -> (type, default, doc[, (low, high)])
    params: dict = {}

    def __init__(self, geometry: Geometry) -> None:
        self.geometry = geometry

    def unit_blocks(self) -> int:
        """Data blocks one unit holds (its size in cache entries' memory)."""
        raise NotImplementedError

    def span(self, key: int) -> UnitSpan:
        raise NotImplementedError

    def units(self, stripe: int, first_row: int, last_row: int) -> Iterator[UnitSpan]:
        """The units covering rows first_row..last_row of ``stripe``."""
        raise NotImplementedError


class StripeOrganisation(Organisation):
    """SC: one unit per stripe (seed 000 Fig. 6(b))."""

    name = "stripe"
    summary = "SC: one unit per stripe, one contiguous buffer"
    source = "paper 000 sec. III-A, Fig. 6(b), III-G-3"

    def unit_blocks(self) -> int:
        return self.geometry.u * self.geometry.data_disks

    def span(self, key: int) -> UnitSpan:
        return UnitSpan(key, key, 0, self.geometry.u)

    def units(self, stripe: int, first_row: int, last_row: int) -> Iterator[UnitSpan]:
        yield self.span(stripe)


class PbgOrganisation(Organisation):
    """PBGC: one unit per parity block group (seed 000 Fig. 6(a)); key = stripe*u + row.

    ``merge`` (off by default, vraid's row-by-row PBGC): destage the dirty units of adjacent
    rows of one stripe together, as the Linux md driver the paper's PBGC is (sec. IV-A) does
    with the block layer's elevator: md's raid5d handles the stripe_heads that are ready in
    one pass and the elevator merges their per-member bios where they are adjacent on one
    member. Each row keeps its own RCW/RMW choice (the rows of the basic rxw-matrix, eq. (3));
    only the member requests of the rows merge, never across a row that is not dirty (a gap)
    nor with a row already being destaged (:meth:`vraid.engine.cache.destager.Destager._neighbours`).
    """

    name = "pbg"
    summary = "PBGC: one unit per parity block group (one row of a stripe), as md's stripe_head"
    source = "paper 000 sec. III-A, Fig. 6(a); merge: md's raid5d + the block layer's elevator (sec. IV-A)"
    params = {
        "merge": (bool, False, "destage adjacent dirty rows of a stripe together, their member requests "
                               "merged per member (md + the elevator); off: one row per destage"),
    }

    def __init__(self, geometry: Geometry, merge: bool = False) -> None:
        super().__init__(geometry)
        #: adjacent rows' destages merged per member (md + elevator); False: row by row
        self.merge = bool(merge)

    def unit_blocks(self) -> int:
        return self.geometry.data_disks

    def span(self, key: int) -> UnitSpan:
        stripe, row = divmod(key, self.geometry.u)
        return UnitSpan(key, stripe, row, 1)

    def units(self, stripe: int, first_row: int, last_row: int) -> Iterator[UnitSpan]:
        u = self.geometry.u
        for row in range(first_row, last_row + 1):
            yield UnitSpan(stripe * u + row, stripe, row, 1)


def organisation(name: str, geometry: Geometry) -> Organisation | None:
    """The organisation ``name`` (any ``--cache`` spec) over ``geometry``; None for ``none``."""
    from vraid.policies.registry import Context, create

    return create("cache", name, Context(geometry=geometry))
