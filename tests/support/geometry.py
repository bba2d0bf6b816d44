"""The small geometries the engine tests run on."""

from __future__ import annotations

from vraid.core.geometry import Geometry

K = 1024


def small_geometry(*, level: int = 5, ndisks: int = 5, stripes: int = 8, block: int = 4 * K, strip: int = 16 * K,
                   layout: str = "left-symmetric", data_offset: int = 64 * K) -> Geometry:
    """A RAID geometry small enough to check byte by byte: by default RAID-5 on 5 members,
    8 stripes of 16 KiB strips (u = 4 blocks of 4 KiB), data from 64 KiB on."""
    return Geometry(level=level, ndisks=ndisks, stripes=stripes, block_size=block, strip_size=strip, layout=layout,
                    data_offset=data_offset)
