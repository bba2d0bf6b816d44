"""The mapping: every logical-to-physical translation of the engine, in one object.

The engine never does layout arithmetic itself: the array, the cache (its
units and NVRAM block numbers), the stripe buffer, rebuild, scrub, resync
and the write-intent bitmap ask a :class:`Mapping`. The first (and today
only) one is :class:`StaticMapping`, the fixed layouts of
:mod:`vraid.core.geometry` (md's four RAID-5 layouts and RAID-0); a
*stripe directory* (seed 004, Hua, Vu & Hu, section 2.1: blocks written
to free stripes, the parity member rotating per new stripe) is meant to
replace it without touching its callers.

The contract (what the callers rely on, and what a replacement must keep):

* **Pure and synchronous.** Answers come from memory, never from I/O; the
  same question asked twice between two changes gets the same answer.
  A mapping that changes (a directory) changes only when the engine tells
  it to, while it holds the locks of the stripes concerned.
* **Stripes are physical.** A stripe number names one row of strips, one
  per member, all at :meth:`member_offset` ``(stripe)`` on their members; it
  is the unit of parity, of the per-stripe lock, of the bitmap, of rebuild,
  scrub and resync, which walk ``range(stripes)``. The rows of a stripe are
  consecutive on every member (row ``r`` is ``block_size * r`` bytes after
  row 0), and so are the stripes (stripe ``s + 1`` starts ``geometry.depth``
  strips after stripe ``s``; a scrub reads a run of stripes in one request per member).
  :attr:`stripes` counts them all (free ones included). A directory moves
  blocks between stripes; it never moves a stripe.
* **Columns.** :meth:`columns` lists the members of a stripe in rxw-matrix
  order: data strips in logical order (``k = 0 .. data_disks-1``), then the
  parity member(s) (:meth:`parity_disks`; as many as the redundancy scheme
  has parity columns, none for RAID-0). Every member appears at most once,
  except where a stripe holds ``geometry.depth`` strips of every member
  (RAID-10 near-2 on an odd count: md's period of two chunk rows); then a
  member appears once per *lane* (:meth:`lanes`: which of its strips of the
  stripe a column is), and a column's rows are at :meth:`column_offset`.
  Callers that address a column's rows ask :meth:`column_offset`, never
  :meth:`member_offset` plus arithmetic of their own.
* **Logical blocks.** :meth:`locate` and :meth:`block_of` are inverse: a
  logical block (``block_size`` bytes of the host image, numbered from 0)
  lives at (stripe, data strip k, row) and back. NVRAM records blocks by
  this number, so what it replays lands where the data belongs.
* **Extents.** :meth:`extents` splits a host byte range into pieces, in host
  order, that each lie in one stripe and are contiguous in that stripe's
  data (strip 0's rows, then strip 1's, ... in logical order: byte ``start``
  of the stripe's data is strip ``start // strip_size``). Their lengths add
  up to the range exactly. A static layout gives one piece per stripe
  touched; a directory, where logically consecutive strips may sit in
  different stripes, gives smaller pieces.
* :attr:`capacity` (host bytes) may be smaller than ``stripes`` times the
  data of a stripe when a directory keeps free stripes in reserve.

What stays the geometry's: block, strip and stripe sizes, the member's
reserved area (superblock, bitmap) and the validation of a shape. Which
parity scheme runs is the redundancy's (:mod:`vraid.core.redundancy`).
"""

from __future__ import annotations

from typing import Iterator, Protocol

from .geometry import BlockAddress, Extent, Geometry
from .redundancy import Redundancy


class Mapping(Protocol):
    """What the engine asks of a mapping (see the module docstring)."""

    geometry: Geometry
    redundancy: Redundancy

    @property
    def stripes(self) -> int: ...

    @property
    def capacity(self) -> int: ...

    def extents(self, offset: int, length: int) -> Iterator[Extent]: ...

    def data_disk(self, stripe: int, k: int) -> int: ...

    def columns(self, stripe: int) -> tuple[int, ...]: ...

    def parity_disks(self, stripe: int) -> tuple[int, ...]: ...

    def member_offset(self, stripe: int, row: int = 0) -> int: ...

    def column_offset(self, stripe: int, column: int, row: int = 0) -> int: ...

    def lanes(self, stripe: int) -> tuple[int, ...]: ...

    def locate(self, block: int) -> BlockAddress: ...

    def block_of(self, stripe: int, k: int, row: int) -> int: ...


class StaticMapping:
    """The fixed layouts: md's four RAID-5 layouts and RAID-0, by the geometry's arithmetic.

    Stripe ``s`` holds logical blocks ``s * data_disks * u`` onwards, data
    strip ``k`` of it on member ``geometry.data_disk(s, k)``; physical and
    logical stripe numbers are the same.
    """

    def __init__(self, geometry: Geometry) -> None:
        self.geometry = geometry
        self.redundancy = geometry.redundancy
        self._per_stripe = geometry.data_disks * geometry.u

    @property
    def stripes(self) -> int:
        return self.geometry.stripes

    @property
    def capacity(self) -> int:
        return self.geometry.capacity

    def extents(self, offset: int, length: int) -> Iterator[Extent]:
        return self.geometry.extents(offset, length)

    def data_disk(self, stripe: int, k: int) -> int:
        return self.geometry.data_disk(stripe, k)

    def columns(self, stripe: int) -> tuple[int, ...]:
        return self.geometry.columns(stripe)

    def parity_disks(self, stripe: int) -> tuple[int, ...]:
        return self.geometry.parity_disks(stripe)

    def member_offset(self, stripe: int, row: int = 0) -> int:
        return self.geometry.member_offset(stripe, row)

    def column_offset(self, stripe: int, column: int, row: int = 0) -> int:
        return self.geometry.column_offset(stripe, column, row)

    def lanes(self, stripe: int) -> tuple[int, ...]:
        return self.geometry.lanes(stripe)

    def locate(self, block: int) -> BlockAddress:
        return self.geometry.locate(block)

    def block_of(self, stripe: int, k: int, row: int) -> int:
        return stripe * self._per_stripe + k * self.geometry.u + row

    def __repr__(self) -> str:
        return f"StaticMapping({self.geometry.layout if self.redundancy.parity_columns else 'RAID-0'})"


def mapping_of(layout: "Geometry | Mapping") -> "Mapping":
    """``layout`` itself when it is a mapping; a geometry's static mapping otherwise."""
    return StaticMapping(layout) if isinstance(layout, Geometry) else layout
