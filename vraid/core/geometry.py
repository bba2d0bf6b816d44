"""Array geometry and the RAID-0 / RAID-5 / RAID-6 address mapping.

Words as in seed 000 (Baek & Park, Fig. 3): a *block* is the unit of caching
(``block_size`` bytes); a *strip* is ``u`` consecutive blocks on one member; a
*stripe* is one strip from every member, ``v = N`` strips for RAID-5 of which
one holds parity; a *PBG* (parity block group) is one row of a stripe: the
blocks at the same offset of every member.

Logical data is laid out stripe by stripe; inside a stripe, data strip ``k``
(0-based, logical order) holds logical blocks ``k*u .. k*u+u-1`` of that stripe.
Which member holds data strip ``k`` and which holds parity is the *layout*; the
four classic ones are Linux md's (drivers/md/raid5.c, ``raid5_compute_sector``):

================== ====================== ==========================
layout             parity member of s     member of data strip k
================== ====================== ==========================
left-asymmetric    N-1 - s mod N          k, skipping the parity one
left-symmetric     N-1 - s mod N          (parity + 1 + k) mod N
right-asymmetric   s mod N                k, skipping the parity one
right-symmetric    s mod N                (parity + 1 + k) mod N
================== ====================== ==========================

left-symmetric is md's default and vraid's. RAID-0 has no parity: data strip
``k`` lives on member ``k``. RAID-6 (:mod:`vraid.core.pq`) places P as above
and Q on the member after it, under the same four names. RAID-4 (``parity-last``,
md's default, or ``parity-first``), RAID-1 (``mirror``) and RAID-10 (``near-2``) place
their strips as their schemes say (:meth:`vraid.core.redundancy.Redundancy.place`;
docs/levels.md).

A stripe is one strip of every member, except where a scheme needs more cells than there are
members (:meth:`Redundancy.lanes`: RAID-10 near-2 on an odd count, whose stripe is md's period
of two chunk rows): then each member holds :attr:`Geometry.depth` consecutive strips of a
stripe (its *lanes*), a column of the stripe is one of them (:meth:`Geometry.lane`), and a
member may appear in :meth:`Geometry.columns` once per lane.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterator, NamedTuple

from vraid.errors import GeometryError
from .redundancy import LAYOUT_NAMES, LEVELS, RAID5_LAYOUTS, Redundancy, for_level, levels
from .units import format_size

#: md's RAID-5 (and RAID-6) layouts; every scheme's names are LAYOUT_NAMES (append-only:
#: superblocks store the index); the arithmetic is the scheme's, :meth:`Redundancy.place`
LAYOUTS = RAID5_LAYOUTS
__all__ = ["LAYOUTS", "LAYOUT_NAMES", "Geometry", "BlockAddress", "Extent"]
DEFAULT_BLOCK = 4096
DEFAULT_STRIP = 64 * 1024
#: Bytes at the start of every member before its data area: superblock (4 KiB)
#: and room for the write-intent bitmap. Rounded up to a whole strip.
RESERVED = 1 << 20


class BlockAddress(NamedTuple):
    """Where one logical block lives."""

    stripe: int
    strip: int  # data strip index k inside the stripe (logical order)
    row: int  # PBG index inside the stripe, 0..u-1
    disk: int  # member holding it
    member_block: int  # block number inside that member's data area (its lane's, Geometry.depth > 1)


class Extent(NamedTuple):
    """The part of a host byte range that falls inside one stripe."""

    stripe: int
    start: int  # byte offset inside the stripe's data (0 .. data_disks*strip)
    length: int
    host_offset: int  # where it starts in the host request's buffer


@dataclass(frozen=True)
class Geometry:
    """Shape of an array. Validate with :meth:`check` (the constructor does)."""

    level: int
    ndisks: int
    stripes: int
    block_size: int = DEFAULT_BLOCK
    strip_size: int = DEFAULT_STRIP
    layout: str = None  # type: ignore[assignment]  # None: the level's default (md's), set here
    data_offset: int = RESERVED

    def __post_init__(self) -> None:
        if self.layout is None:
            object.__setattr__(self, "layout", default_layout(self.level))
        self.check()

    # -- construction -------------------------------------------------------
    @classmethod
    def for_disk_size(
        cls,
        *,
        level: int,
        ndisks: int,
        disk_size: int,
        block_size: int = DEFAULT_BLOCK,
        strip_size: int = DEFAULT_STRIP,
        layout: str | None = None,
    ) -> "Geometry":
        """The geometry that fits members of ``disk_size`` bytes.

        Raises:
            GeometryError: when the parameters are impossible, naming the fix.
        """
        layout = layout or default_layout(level)
        _check_shape(level, ndisks, block_size, strip_size, layout)
        data_offset = _round_up(RESERVED, strip_size)
        depth = for_level(level, ndisks).lanes(ndisks)
        stripes = (disk_size - data_offset) // (strip_size * depth) if disk_size > data_offset else 0
        if stripes < 1:
            need = data_offset + strip_size * depth
            raise GeometryError(
                f"disk size {format_size(disk_size) if disk_size > 0 else disk_size} is smaller than one stripe: "
                f"each member needs {format_size(data_offset)} for its superblock area plus "
                + (f"one {format_size(strip_size)} strip" if depth == 1 else f"{depth} strips of {format_size(strip_size)}"),
                f"use --disk-size {format_size(_round_up(need, 1 << 20))} or more (or a smaller --strip)",
            )
        return cls(level, ndisks, stripes, block_size, strip_size, layout, data_offset)

    def check(self) -> None:
        _check_shape(self.level, self.ndisks, self.block_size, self.strip_size, self.layout)
        if self.stripes < 1:
            raise GeometryError("an array needs at least one stripe", "use a larger --disk-size")
        if self.data_offset % self.block_size:
            raise GeometryError("data offset is not block aligned", "recreate the array")

    # -- sizes --------------------------------------------------------------
    @cached_property
    def redundancy(self) -> Redundancy:
        """The parity scheme of this level (vraid.core.redundancy), bound to the member count."""
        return for_level(self.level, self.ndisks)

    def survives_members(self, missing) -> bool:
        """Whether the array can still be read with the members ``missing`` gone: every stripe
        of a period survives the loss of the columns those members hold there
        (:meth:`Redundancy.survives_columns`; by their count alone for the parity schemes)."""
        scheme = self.redundancy
        gone = set(missing)
        if scheme.by_count:
            return scheme.survives(len(gone))
        return all(scheme.survives_columns([j for j, d in enumerate(cols) if d in gone]) for cols in self._columns_table)

    @property
    def title(self) -> str:
        """``RAID-5 left-symmetric``, ``RAID-0``: the level, with the layout where there is parity to place."""
        return f"RAID-{self.level}" + (f" {self.layout}" if self.redundancy.parity_columns else "")

    @cached_property
    def u(self) -> int:
        """Blocks per strip (rows of a stripe, PBGs per stripe)."""
        return self.strip_size // self.block_size

    @cached_property
    def data_disks(self) -> int:
        """Data strips per stripe: N-1 for RAID-5, N for RAID-0."""
        return self.redundancy.data_columns(self.ndisks)

    @cached_property
    def stripe_data_bytes(self) -> int:
        return self.data_disks * self.strip_size

    @cached_property
    def capacity(self) -> int:
        """Bytes of data the array holds: the size of the image file."""
        return self.stripes * self.stripe_data_bytes

    @cached_property
    def depth(self) -> int:
        """Strips each member holds per stripe: 1, or the scheme's lanes
        (:meth:`Redundancy.lanes`: 2 for RAID-10 near-2 on an odd member count)."""
        return self.redundancy.lanes(self.ndisks)

    @property
    def member_data_bytes(self) -> int:
        """Bytes of a member's data area: its strips of every stripe."""
        return self.stripes * self.depth * self.strip_size

    @property
    def member_size(self) -> int:
        """The smallest member file that holds this geometry."""
        return self.data_offset + self.member_data_bytes

    @property
    def blocks(self) -> int:
        return self.capacity // self.block_size

    # -- mapping ------------------------------------------------------------
    def parity_disk(self, stripe: int) -> int | None:
        """Member holding the (first) parity strip of ``stripe`` (None for RAID-0)."""
        checks = self.parity_disks(stripe)
        return checks[0] if checks else None

    def parity_disks(self, stripe: int) -> tuple[int, ...]:
        """Members holding the check strips of ``stripe``, in rxw-matrix order (P first):
        as many as the redundancy has parity columns, () for RAID-0 (one for RAID-5)."""
        table = self._places
        return table[stripe % len(table)][1]

    @cached_property
    def _cells(self) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
        """(data cells, check cells) per stripe of one period of the layout
        (:meth:`Redundancy.place`; the layouts repeat, so a few small tables cover them all);
        a cell is a member when :attr:`depth` is 1, else lane * ndisks + member."""
        scheme = self.redundancy
        return tuple(scheme.place(self.layout, self.ndisks, s) for s in range(scheme.period(self.ndisks)))

    @cached_property
    def _places(self) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
        """(data members, check members) per stripe of one period (:attr:`_cells`' members)."""
        if self.depth == 1:
            return self._cells
        n = self.ndisks
        return tuple((tuple(c % n for c in data), tuple(c % n for c in checks)) for data, checks in self._cells)

    @cached_property
    def _lane_table(self) -> tuple[tuple[int, ...], ...]:
        """Per stripe of a period, the lane of every column (rxw-matrix order); () when
        :attr:`depth` is 1 (every column in lane 0)."""
        if self.depth == 1:
            return ()
        n = self.ndisks
        return tuple(tuple(c // n for c in data + checks) for data, checks in self._cells)

    def lanes(self, stripe: int) -> tuple[int, ...]:
        """The lane of every column of ``stripe`` (rxw-matrix order): which of the member's
        :attr:`depth` strips of the stripe it is (all 0 when depth is 1)."""
        table = self._lane_table
        return table[stripe % len(table)] if table else (0,) * len(self.columns(stripe))

    def lane(self, stripe: int, column: int) -> int:
        """The lane of column ``column`` of ``stripe`` (see :meth:`lanes`)."""
        table = self._lane_table
        return table[stripe % len(table)][column] if table else 0

    @cached_property
    def _disk_tables(self) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int | None, ...], ...]]:
        """Per stripe of a period: data strip -> member, and member -> data strip."""
        k_to_disk, disk_to_k = [], []
        for disks, _ in self._places:
            inverse: list[int | None] = [None] * self.ndisks
            for k, d in enumerate(disks):
                inverse[d] = k
            k_to_disk.append(disks)
            disk_to_k.append(tuple(inverse))
        return tuple(k_to_disk), tuple(disk_to_k)

    def data_disk(self, stripe: int, k: int) -> int:
        """Member holding data strip ``k`` of ``stripe``."""
        tables = self._disk_tables[0]
        return tables[stripe % len(tables)][k]

    def data_disks_of(self, stripe: int) -> tuple[int, ...]:
        """Members of data strips 0..data_disks-1 of ``stripe``, in logical order."""
        tables = self._disk_tables[0]
        return tables[stripe % len(tables)]

    def strip_of_disk(self, stripe: int, disk: int) -> int | None:
        """Data strip index held by ``disk`` in ``stripe``; None for the parity member (a
        member holds at most one data strip of a stripe in every layout vraid runs)."""
        tables = self._disk_tables[1]
        return tables[stripe % len(tables)][disk]

    def slots(self, stripe: int) -> tuple[int, ...] | None:
        """The weight order of ``stripe``'s data strips in its check columns
        (:meth:`Redundancy.slots`: md's RAID-6 syndrome slots); None when it is the logical
        order, as for every stripe of RAID-5 and of RAID-6's symmetric layouts."""
        table = self._slots
        return table[stripe % len(table)] if table else None

    @cached_property
    def _slots(self) -> tuple[tuple[int, ...] | None, ...]:
        """:meth:`slots` per stripe of a period; () when no stripe has any."""
        scheme = self.redundancy
        table = tuple(scheme.slots(self.layout, self.ndisks, s) for s in range(scheme.period(self.ndisks)))
        return table if any(t is not None for t in table) else ()

    def columns(self, stripe: int) -> tuple[int, ...]:
        """Members in rxw-matrix column order: data strips in order, then :meth:`parity_disks`."""
        table = self._columns_table
        return table[stripe % len(table)]

    @cached_property
    def _columns_table(self) -> tuple[tuple[int, ...], ...]:
        """:meth:`columns` per parity position (the layouts repeat every N stripes)."""
        return tuple(data + checks for data, checks in self._places)

    def locate(self, block: int) -> BlockAddress:
        """Where logical block ``block`` lives."""
        per_stripe = self.data_disks * self.u
        stripe, within = divmod(block, per_stripe)
        k, row = divmod(within, self.u)
        return BlockAddress(stripe, k, row, self.data_disk(stripe, k), (stripe * self.depth + self.lane(stripe, k)) * self.u + row)

    def member_offset(self, stripe: int, row: int = 0) -> int:
        """Byte offset on any member of ``row`` of ``stripe`` (of its first lane)."""
        return self.data_offset + (stripe * self._stripe_rows + row) * self.block_size

    def column_offset(self, stripe: int, column: int, row: int = 0) -> int:
        """Byte offset, on its member, of ``row`` of column ``column`` of ``stripe``
        (:meth:`member_offset` plus the column's lane)."""
        table = self._lane_table
        if table:
            row += table[stripe % len(table)][column] * self.u
        return self.data_offset + (stripe * self._stripe_rows + row) * self.block_size

    @cached_property
    def _stripe_rows(self) -> int:
        """Blocks of a member per stripe (u, times :attr:`depth`)."""
        return self.u * self.depth

    def extents(self, offset: int, length: int) -> Iterator[Extent]:
        """Split the host byte range [offset, offset+length) into per-stripe pieces."""
        per = self.stripe_data_bytes
        pos, end = offset, offset + length
        while pos < end:
            stripe, start = divmod(pos, per)
            n = min(per - start, end - pos)
            yield Extent(stripe, start, n, pos - offset)
            pos += n

    def describe(self) -> dict[str, object]:
        return {
            "level": self.level,
            "layout": self.layout if self.redundancy.parity_columns else "-",
            "disks": self.ndisks,
            "block_size": self.block_size,
            "strip_size": self.strip_size,
            "blocks_per_strip": self.u,
            "stripes": self.stripes,
            "data_offset": self.data_offset,
            "capacity": self.capacity,
        } | ({"strips_per_member_per_stripe": self.depth} if self.depth > 1 else {})


def default_layout(level: int) -> str:
    """md's default layout of ``level`` (left-symmetric for RAID-5, parity-last for RAID-4);
    a level vraid does not run gets left-symmetric, and the check names the level."""
    return for_level(level).layouts[0] if level in levels() else LAYOUTS[0]


def _round_up(n: int, unit: int) -> int:
    return -(-n // unit) * unit


def _check_shape(level: int, ndisks: int, block_size: int, strip_size: int, layout: str) -> None:
    if level not in levels():
        raise GeometryError(f"RAID level {level} is not supported", f"use {' or '.join(f'--level {n}' for n in levels())}")
    scheme = for_level(level)
    least = scheme.min_disks
    if ndisks < least:
        raise GeometryError(
            f"{scheme.name} needs at least {least} disk{'s' if least != 1 else ''}, got {ndisks}",
            f"use --disks {least} or more" + (" (or --level 0 for striping without parity)" if scheme.tolerates else ""),
        )
    refused = for_level(level).refusal(ndisks)
    if refused is not None:
        raise GeometryError(*refused)
    if ndisks > 64:
        raise GeometryError(f"{ndisks} disks is more than vraid handles", "use --disks 64 or fewer")
    if block_size < 512 or block_size & (block_size - 1):
        raise GeometryError(
            f"block size {block_size} is not a power of two of at least 512 bytes", "use --block 4K (the default)"
        )
    ratio = strip_size // block_size if strip_size >= block_size else 0
    if strip_size % block_size or ratio < 1 or ratio & (ratio - 1):
        raise GeometryError(
            f"strip size {format_size(strip_size)} is not a power-of-two multiple of the "
            f"{format_size(block_size)} block",
            f"use a strip of {format_size(block_size)} times 1, 2, 4, 8, ... e.g. --strip 64K",
        )
    if layout not in scheme.layouts:
        raise GeometryError(f"unknown {scheme.name} layout {layout!r}", f"choose one of {', '.join(scheme.layouts)}")
