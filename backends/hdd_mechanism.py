"""The mechanism of a modelled disk: positioning (seek, head switch, rotation) and media transfer.

A mix-in of :class:`backends.hdd.HddModel`, which sets the state it reads: the head
(``_cyl``, ``_head``), the zones, the seek curve's constants. The platter angle is
a function of clock time, ``(now * rpm / 60) mod 1``, so idle time moves the
platter too; a write that arrives after its first sector passed under the head
waits for the platter to come round again, which is seed 000's eq. (1),
``t_d = t_c + t_r * N_r``, emerging from the angle bookkeeping (Fig. 2's missed
rotation is counted, not coded). Seek curve and zoned geometry after Ruemmler &
Wilkes, "An introduction to disk drive modeling" (1994).
"""

from __future__ import annotations

import math
from bisect import bisect_right

from .hdd_params import HddStats
from .hdd_zones import Zone

#: rotational positions closer than this fraction of a revolution count as "already there"
_EPS = 1e-6
#: a rotational wait longer than this fraction of a revolution means the sector had just passed
MISSED_FRACTION = 0.875


class DiskMechanism:
    """Where the head is and what moving it costs (model seconds); no queue, no cache."""

    def _reach(self, t: float, lba: int, write: bool, earliest: float) -> float:
        """When the head, free at ``t`` where it is, could start a transfer at ``lba`` (no side effects)."""
        zone = self._zones[bisect_right(self._starts, lba) - 1]
        track, sector = divmod(lba - zone.first_lba, zone.spt)
        cl, head = divmod(track, self._heads)
        d = zone.first_cyl + cl - self._cyl
        if d:
            if d < 0:
                d = -d
            t += self._sa + self._sb * math.sqrt(d) if d < self._knee else self._lc + self._le * d
            if write:
                t += self._wx
        elif head != self._head:
            t += self._head_switch
        if t < earliest:
            t = earliest
        frac = (zone.base + cl * zone.cyl_step + head * zone.head_skew + sector / zone.spt - t * self._rps) % 1.0
        return t if frac > 1.0 - _EPS else t + frac / self._rps

    def _media(self, t: float, lba: int, n: int, write: bool, earliest: float,
               st: HddStats | None = None) -> tuple[float, float]:
        """Position the head for ``lba`` from time ``t`` and transfer ``n`` sectors.

        Returns (transfer start, transfer end); moves the head; counts seeks and
        rotational waits in ``st`` (default: the model's stats).
        """
        zone = self._zones[bisect_right(self._starts, lba) - 1]
        track, sector = divmod(lba - zone.first_lba, zone.spt)
        cl, head = divmod(track, self._heads)
        cyl = zone.first_cyl + cl
        d = cyl - self._cyl
        if st is None:
            st = self.stats
        if d:
            if d < 0:
                d = -d
            pos = self._sa + self._sb * math.sqrt(d) if d < self._knee else self._lc + self._le * d
            if write:
                pos += self._wx
            st.seeks += 1
            st.seek_seconds += pos
            t += pos
        elif head != self._head:
            t += self._head_switch
        if t < earliest:
            t = earliest
        frac = (zone.base + cl * zone.cyl_step + head * zone.head_skew + sector / zone.spt - t * self._rps) % 1.0
        if frac > 1.0 - _EPS:
            frac = 0.0
        if frac > 0.0:
            wait = frac / self._rps
            st.rotation_waits += 1
            st.rotation_wait_seconds += wait
            if frac > MISSED_FRACTION:
                st.missed_rotations += 1
            t += wait
        return t, t + self._xfer_from(zone, track, sector, n)

    def _xfer_from(self, zone: Zone, track: int, sector: int, n: int) -> float:
        """Time to transfer ``n`` sectors from the start of (zone, track, sector); leaves the head there."""
        heads = self._heads
        rem = zone.spt - sector
        if n <= rem:
            self._cyl = zone.first_cyl + track // heads
            self._head = track % heads
            return n * zone.sector_time
        t = rem * zone.sector_time
        n -= rem
        zones = self._zones
        while True:
            track += 1
            if track == zone.tracks:
                zone = zones[zone.index + 1]
                track = 0
                t += zone.cyl_switch_time
            elif track % heads == 0:
                t += zone.cyl_switch_time
            else:
                t += zone.head_switch_time
            if n <= zone.spt:
                t += n * zone.sector_time
                break
            t += zone.spt * zone.sector_time
            n -= zone.spt
        self._cyl = zone.first_cyl + track // heads
        self._head = track % heads
        return t

    def _xfer(self, lba: int, n: int) -> float:
        zone = self._zones[bisect_right(self._starts, lba) - 1]
        track, sector = divmod(lba - zone.first_lba, zone.spt)
        return self._xfer_from(zone, track, sector, n)

    def _gap(self, lba: int) -> float:
        """Switch time between the end of sector ``lba - 1`` and the start of ``lba``."""
        zone = self._zones[bisect_right(self._starts, lba) - 1]
        track, sector = divmod(lba - zone.first_lba, zone.spt)
        if sector or lba == 0:
            return 0.0
        if track % self._heads == 0:
            return zone.cyl_switch_time
        return zone.head_switch_time

    def _span(self, sp: int, x: int) -> float:
        """Time from the head at the start of sector ``sp`` to the end of sector ``x - 1``."""
        if x <= sp:
            return 0.0
        cyl, head = self._cyl, self._head
        t = self._xfer(sp, x - sp)
        self._cyl, self._head = cyl, head
        return t
