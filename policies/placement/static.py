"""Static placement: every block at its fixed place, RAID-5 small writes (vraid's default).

The geometry's layout (md's four RAID-5 layouts) decides where a block lives, as before
placements were pluggable: a write is an in-place read-modify-write or reconstruct-write
by the engine's planner, nothing is buffered by the placement (the write-back cache
families still apply). The directory it makes is the static layout with no spare
stripes, which answers every mapping question as ``StaticMapping`` does. This is the
"standard RAID5" the seed 004 paper (Hua, Vu & Hu, section 3) compares against.
"""

from __future__ import annotations

from typing import Any

from . import InPlace, Placement


class StaticPlacement(Placement):
    """Blocks stay where the layout puts them; small writes update parity in place."""

    name = "static"
    summary = "blocks at their fixed place, RAID-5 small writes (today's layout)"
    source = "paper 004, section 3 (the standard RAID5 baseline)"
    remaps = False  # no stripe directory: the engine runs no placement layer

    def write(self, strip: int) -> list[Any]:
        return [InPlace((strip,))]
