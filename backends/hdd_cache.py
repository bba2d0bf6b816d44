"""The on-board cache of a modelled disk: read-ahead stream, cache segments, write-back.

A mix-in of :class:`backends.hdd.HddModel` over :class:`backends.hdd_mechanism.DiskMechanism`.
Read-ahead ``"track"`` reads to the end of the track (seed 000 section I-C: "reads
ahead up to the end of the track ... containing the last sector"), ``"segment"``
one cache segment past the request, ``"off"`` none (the disks of seed 000 Fig. 9(a)
and 9(d)); a few segments keep recently read data (replaced FIFO). Writes are
write-on-arrival (done when the last sector passed under the head) unless the
write cache is on: then they complete after the bus transfer and a background
destager writes them in arrival order, merging contiguous pieces.
"""

from __future__ import annotations

import math
from bisect import bisect_right


class OnBoardCache:
    """A request's completion time through the drive's buffer (the one-command model)."""

    def _read(self, now: float, lba: int, n: int, nbytes: int) -> float:
        """Completion time of a read of sectors [lba, lba+n) arriving at ``now``."""
        if self._wbq:
            self._drain(now)
        t = now + self._overhead
        bus = nbytes * self._bus_per_byte
        end = lba + n
        slim = self._slim
        if self._slo <= lba < slim:
            # buffered by read-ahead, or about to be: [slo, sp) is in the buffer and
            # the head reaches sector sp at st0 and reads on up to slim
            self.stats.stream_hits += 1
            sp, st0 = self._sp, self._st0
            start = st0 + self._span(sp, lba) if lba >= sp else t
            if end <= slim:
                media_end = st0 + self._span(sp, end) if end > sp else t
                target = self._ra_target(end)
                if target > slim:
                    if st0 + self._span(sp, slim) < t:
                        # read-ahead stopped at its limit before this command: restart
                        # it from there when that sector comes round (in the background)
                        restart = self._media(t, slim, 0, False, 0.0, self._background)[0]
                        self._follow(slim, restart, self._ra_target(slim))
                    else:
                        self._slim = target  # still reading: read on further
                if end > self._sp:  # the stream passed ``end``: move the reference there
                    self._follow(end, media_end + self._gap(end), self._slim)
            else:
                t_lim = st0 + self._span(sp, slim)
                if t <= t_lim:  # decoded in time: the head just keeps reading
                    media_end = t_lim + self._gap(slim) + self._xfer(slim, end - slim)
                else:  # read-ahead had stopped at its limit: fetch the rest
                    media_end = self._media(t, slim, end - slim, False, 0.0)[1]
                self._follow(end, media_end + self._gap(end), self._ra_target(end))
        else:
            for s, e in self._segs:
                if s <= lba and end <= e:  # buffered: the head goes on with what it does
                    self.stats.cache_hits += 1
                    return self._book_bus(t, bus) + bus if self._bus_serial else t + bus
            if slim >= 0:
                self._stop_stream(t)
            mf = self._media_free
            start, media_end = self._media(t if t >= mf else mf, lba, n, False, 0.0)
            if self._ra_mode:
                self._slo = lba
                self._follow(end, media_end + self._gap(end), self._ra_target(end))
            else:
                self._segs_push(lba, end)
        if media_end > self._media_free:
            self._media_free = media_end
        if start < t:
            start = t
        done = media_end + self._sec_bus
        if done < start + bus:
            done = start + bus
        if self._bus_serial:  # the transfer to the host waits for the bus
            if done < self._bus_free + bus:
                done = self._bus_free + bus
            self._bus_free = done
        return done

    def _book_bus(self, t: float, seconds: float) -> float:
        """``bus_serial``: book ``seconds`` of the bus from ``t`` or when it is free, whichever is
        later, and return when the transfer starts. Bookings are served in the order the model
        makes them (a read's transfer is booked when its media transfer is scheduled)."""
        start = t if t >= self._bus_free else self._bus_free
        self._bus_free = start + seconds
        return start

    def _write(self, now: float, lba: int, n: int, nbytes: int, moved: float | None = None) -> float:
        """Completion time of a write of sectors [lba, lba+n) arriving at ``now``; ``moved``:
        when its data began to cross the bus, if already booked (``bus_serial``)."""
        if self._slim >= 0:
            self._stop_stream(now)
        if self._segs:
            end = lba + n
            self._segs = [(s, e) for s, e in self._segs if e <= lba or s >= end]
        t = now + self._overhead
        bus = nbytes * self._bus_per_byte
        if moved is None:  # the data moves when the bus is free
            moved = self._book_bus(t, bus) if self._bus_serial else t
        # media writing may start once the first sector is in the buffer and the
        # bus can stay ahead of the head (write-on-arrival)
        lag = bus - n * self.geometry.mean_sector_time
        earliest = moved + self._sec_bus + (lag if lag > 0 else 0.0)
        if self._write_back and n <= self._cache_sectors:
            short = self._dirty + n > self._cache_sectors
            self._drain(now, n)
            done = moved + bus
            if short and self._media_free > done:
                done = self._media_free
                earliest = done
            self._wbq.append((lba, n, earliest))
            self._dirty += n
            return done
        if self._wbq:
            self._drain(math.inf)
        mf = self._media_free
        done = self._media(t if t >= mf else mf, lba, n, True, earliest)[1]
        self._media_free = done
        return done

    def _write_queued(self, t: float, earliest: float, lba: int, n: int) -> float:
        """Completion of a queued write whose media transfer may be set up from ``t`` and
        start once its data is in the buffer (``earliest``); write-on-arrival."""
        if self._slim >= 0:
            self._stop_stream(t)
        if self._segs:
            end = lba + n
            self._segs = [(s, e) for s, e in self._segs if e <= lba or s >= end]
        if self._wbq:
            self._drain(math.inf)
        mf = self._media_free
        done = self._media(t if t >= mf else mf, lba, n, True, earliest)[1]
        self._media_free = done
        return done

    # ------------------------------------------------------------------ read-ahead
    def _ra_target(self, nxt: int) -> int:
        """Where read-ahead from sector ``nxt`` stops (exclusive)."""
        if nxt >= self._used:
            return self._used
        if self._ra_mode == 1:
            zone = self._zones[bisect_right(self._starts, nxt) - 1]
            lim = nxt - (nxt - zone.first_lba) % zone.spt + zone.spt
        else:
            lim = nxt + self._seg_sectors
        return lim if lim < self._used else self._used

    def _follow(self, sp: int, st0: float, slim: int) -> None:
        """The stream now reaches sector ``sp`` at ``st0`` and reads up to ``slim``;
        the buffer keeps at most one segment behind ``sp``."""
        zone = self._zones[bisect_right(self._starts, sp if sp < self._used else sp - 1) - 1]
        self._sp, self._st0, self._slim, self._sst = sp, st0, slim if slim > sp else sp, zone.sector_time
        if self._slo < sp - self._seg_sectors:
            self._slo = sp - self._seg_sectors

    def _stop_stream(self, t: float) -> None:
        """The head leaves the stream at ``t``: keep what it buffered as a segment."""
        sp, slim = self._sp, self._slim
        covered = sp
        if t > self._st0:
            covered = sp + int((t - self._st0) / self._sst)
            if covered > slim:
                covered = slim
        self._segs_push(self._slo, covered)
        self._slim = -1
        self._sp = self._slo = 1 << 62

    def _segs_push(self, lo: int, hi: int) -> None:
        if not self._max_segs:
            return
        if hi - lo > self._seg_sectors:
            lo = hi - self._seg_sectors
        if hi > lo:
            segs = self._segs
            segs.append((lo, hi))
            if len(segs) > self._max_segs:
                del segs[0]

    # ------------------------------------------------------------------ write-back
    def _drain(self, until: float, need: int = 0) -> None:
        """Run the background destager for the writes it starts before ``until``,
        and further until ``need`` more sectors fit in the cache."""
        q = self._wbq
        cap = self._cache_sectors
        while q:
            lba, n, arrived = q[0]
            start = self._media_free if self._media_free > arrived else arrived
            if start >= until and self._dirty + need <= cap:
                break
            q.popleft()
            if self._slim >= 0:
                self._stop_stream(start)
            end = self._media(start, lba, n, True, start)[1]
            self._dirty -= n
            nxt = lba + n
            while q and q[0][0] == nxt and q[0][2] <= end:
                l2, n2, _ = q.popleft()
                end += self._gap(l2) + self._xfer(l2, n2)
                self._dirty -= n2
                nxt = l2 + n2
            self._media_free = end
            self.stats.destages += 1
