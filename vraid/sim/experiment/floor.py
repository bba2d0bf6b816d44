"""The floor ablation's arithmetic, shared by ``vc-raid`` and ``msc-ct``'s mount part (vraid's).

A mount with no disk time (``vraid mount --time none``) takes the mount's own time for a step:
FUSE, the loop device, the daemon, the file system. A timed step less that floor is the disks'
share of it, and the ratio of two arrays' disks' shares is what their policies alone make of the
step. A share within the verdict rule's tolerance of its floor (:data:`.verdict.TOLERANCE`) is
noise: that step never waited for the disks long enough to tell the arrays apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from .verdict import TOLERANCE


@dataclass(frozen=True)
class DiskShares:
    """Two steps' disks' shares (their times per unit of work less their floors)."""

    top: float
    bottom: float
    #: whether each side's share is within the tolerance of its floor (top, bottom)
    at_floor: tuple[bool, bool]

    @property
    def ratio(self) -> float | None:
        """The throughput ratio top over bottom of the disks' shares (bottom's time over top's);
        None where either side is at its floor."""
        return None if any(self.at_floor) else self.bottom / self.top


def disk_share(time: float, floor: float) -> tuple[float, bool]:
    """One step's disks' share: its time per unit of work with the disks less the same step's in
    the mount alone (``floor``), and whether that is within the tolerance of the floor (noise)."""
    d = time - floor
    return d, d <= TOLERANCE * floor


def disk_shares(top: float, top_floor: float, bottom: float, bottom_floor: float) -> DiskShares:
    """The disks' shares of two steps: ``top`` and ``bottom`` are their times per unit of work
    with the disks, ``*_floor`` the same steps' in the mount alone."""
    (d_top, at_top), (d_bottom, at_bottom) = disk_share(top, top_floor), disk_share(bottom, bottom_floor)
    return DiskShares(d_top, d_bottom, (at_top, at_bottom))


__all__ = ["DiskShares", "disk_share", "disk_shares"]
