"""Zoned recording: the layout of a modelled disk, LBA -> (cylinder, head, sector, angle).

A few zones, sectors per track falling linearly from the outer to the inner zone
(the media rates of seed 002 Table 1), tracks numbered cylinder by cylinder, and
the first sector of each track skewed by the head-switch or cylinder-switch time
(Ruemmler & Wilkes, "An introduction to disk drive modeling", 1994), so a
sequential transfer crossing a track loses only the switch, not a revolution.
"""

from __future__ import annotations

import math
from bisect import bisect_right

from .hdd_params import HddParams

SECTOR = 512


class Zone:
    """One recording zone: ``cylinders`` cylinders of ``spt`` sectors per track."""

    __slots__ = (
        "index", "first_lba", "end_lba", "first_cyl", "cylinders", "spt", "tracks",
        "sector_time", "base", "cyl_step", "head_skew", "head_switch_time", "cyl_switch_time",
    )

    def __repr__(self) -> str:
        return (f"Zone({self.index}: lba {self.first_lba}..{self.end_lba}, cyl {self.first_cyl}+{self.cylinders},"
                f" spt {self.spt})")


class HddGeometry:
    """Zoned layout of the modelled disk: LBA -> (cylinder, head, sector, angle).

    Tracks are numbered cylinder by cylinder (all heads of a cylinder, then the
    next cylinder). The first sector of each track is skewed by the head-switch
    or cylinder-switch time rounded up to whole sectors, so a sequential
    transfer reaches it exactly when the switch is done. ``cyl_switch``
    (default ``track_seek``) is the cylinder switch the skew allows for; the
    model passes the single-cylinder *write* seek, as drives skew for the
    slower write settle.
    """

    def __init__(self, p: HddParams, size: int, cyl_switch: float | None = None) -> None:
        rps = p.rpm / 60.0
        rev = 1.0 / rps
        self.revolution = rev
        self.heads = heads = p.heads
        used = -(-size // SECTOR)
        disk_sectors = used if p.stroke == "full" else max(used, p.capacity // SECTOR)
        spt_o = max(1, round(p.rate_outer * 1e6 / SECTOR / rps))
        spt_i = max(1, round(p.rate_inner * 1e6 / SECTOR / rps))
        nz = max(1, p.zones)
        spts = [round(spt_o + (spt_i - spt_o) * z / (nz - 1)) if nz > 1 else spt_o for z in range(nz)]
        cpz = max(1, -(-disk_sectors // (heads * sum(spts))))
        zones: list[Zone] = []
        lba = 0
        base = 0.0
        for z, spt in enumerate(spts):
            zn = Zone()
            st = rev / spt
            zn.index, zn.spt, zn.sector_time = z, spt, st
            zn.first_lba, zn.first_cyl, zn.cylinders, zn.tracks = lba, z * cpz, cpz, cpz * heads
            hs = math.ceil(p.head_switch / st - 1e-9) / spt
            cs = math.ceil((cyl_switch or p.track_seek) / st - 1e-9) / spt
            zn.head_skew = hs
            zn.head_switch_time = hs * rev
            zn.cyl_switch_time = cs * rev
            zn.cyl_step = (heads - 1) * hs + cs
            if z:
                prev = zones[-1]
                last = prev.base + (prev.cylinders - 1) * prev.cyl_step + (heads - 1) * prev.head_skew
                base = (last + cs) % 1.0
            zn.base = base
            lba += zn.tracks * spt
            zn.end_lba = lba
            zones.append(zn)
        self.zones = zones
        self.starts = [zn.first_lba for zn in zones]
        self.sectors = lba  # sectors the geometry holds (>= the member's)
        self.used_sectors = used
        self.cylinders = nz * cpz
        self.mean_sector_time = sum(zn.sector_time for zn in zones) / nz
        self.disk_sectors = disk_sectors

    def locate(self, lba: int) -> tuple[int, int, int, int]:
        """(cylinder, head, sector, sectors per track) of ``lba``."""
        zn = self.zones[bisect_right(self.starts, lba) - 1]
        track, sector = divmod(lba - zn.first_lba, zn.spt)
        cl, head = divmod(track, self.heads)
        return zn.first_cyl + cl, head, sector, zn.spt

    def track_start(self, lba: int) -> int:
        """First LBA of the track holding ``lba``."""
        zn = self.zones[bisect_right(self.starts, lba) - 1]
        return lba - (lba - zn.first_lba) % zn.spt

    def angle(self, lba: int) -> float:
        """Angular position of the start of ``lba``, in revolutions [0, 1)."""
        zn = self.zones[bisect_right(self.starts, lba) - 1]
        track, sector = divmod(lba - zn.first_lba, zn.spt)
        cl, head = divmod(track, self.heads)
        return (zn.base + cl * zn.cyl_step + head * zn.head_skew + sector / zn.spt) % 1.0

    def cylinder_weights(self, sectors: int) -> list[int]:
        """Sectors of each cylinder that lie below ``sectors`` (for seek calibration)."""
        out: list[int] = []
        left = sectors
        for zn in self.zones:
            per = self.heads * zn.spt
            for _ in range(zn.cylinders):
                if left <= 0:
                    return out
                out.append(min(per, left))
                left -= per
        return out
