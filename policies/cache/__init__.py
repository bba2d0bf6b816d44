"""Cache organisations: what a cache *unit* is (``--cache none|pbg|stripe``).

Seed 000 (Baek & Park), section III-A and Fig. 6: a parity-block-group cache
(PBGC, Linux md's stripe_head) manages one PBG (one row of a stripe) per
unit; a stripe cache (SC) manages one whole stripe per unit, allocated as one
contiguous buffer (section III-G-3, "the latter allocation scheme"). The unit
is what the destage order ranks, what the destage scheduler counts as a cache
entry, and what one destage writes. ``none`` is the write-through baseline.

A new organisation is one class here and one entry in ``ORGANISATIONS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ...errors import VraidError
from vraid.core.geometry import Geometry


@dataclass(frozen=True)
class UnitSpan:
    """Rows ``row0 .. row0+rows-1`` of ``stripe``: one cache unit's reach."""

    key: int  # unique, ascending in array order (CSCAN sorts by it)
    stripe: int
    row0: int
    rows: int


class Organisation:
    name = "base"

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

    def unit_blocks(self) -> int:
        return self.geometry.u * self.geometry.data_disks

    def span(self, key: int) -> UnitSpan:
        return UnitSpan(key, key, 0, self.geometry.u)

    def units(self, stripe: int, first_row: int, last_row: int) -> Iterator[UnitSpan]:
        yield self.span(stripe)


class PbgOrganisation(Organisation):
    """PBGC: one unit per parity block group (seed 000 Fig. 6(a)); key = stripe*u + row."""

    name = "pbg"

    def unit_blocks(self) -> int:
        return self.geometry.data_disks

    def span(self, key: int) -> UnitSpan:
        stripe, row = divmod(key, self.geometry.u)
        return UnitSpan(key, stripe, row, 1)

    def units(self, stripe: int, first_row: int, last_row: int) -> Iterator[UnitSpan]:
        u = self.geometry.u
        for row in range(first_row, last_row + 1):
            yield UnitSpan(stripe * u + row, stripe, row, 1)


ORGANISATIONS: dict[str, type[Organisation]] = {"stripe": StripeOrganisation, "pbg": PbgOrganisation}
CHOICES = ("none", *ORGANISATIONS)


def organisation(name: str, geometry: Geometry) -> Organisation:
    try:
        return ORGANISATIONS[name](geometry)
    except KeyError:
        raise VraidError(f"unknown cache organisation {name!r}", f"use --cache {' | '.join(CHOICES)}") from None
