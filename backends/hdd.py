"""``hdd`` timing model: a store wrapper that makes a member behave like a disk.

Data still lands in the wrapped store; the wrapper only charges service time
with ``await clock.sleep(t)``. The model is a small mechanical disk in the style
of Ruemmler & Wilkes ("An introduction to disk drive modeling", 1994):

- **seek**: ``a + b*sqrt(d)`` for short seeks, linear for long ones, fitted so
  that the average over random sector pairs equals the preset's average seek
  (:func:`fit_seek_curve`); writes add a settle time so that their average is the
  preset's write-seek average (seed 000, section I-C quotes 4.1 ms for ST373454LC);
- **rotation**: the platter angle is a function of clock time,
  ``(now * rpm / 60) mod 1``, so idle time moves the platter too;
- **zoned recording**: a few zones, sectors per track falling linearly from the
  outer to the inner zone (the media rates of seed 002 Table 1);
- **head switch and track switch with skew**: the first sector of each track is
  skewed by the switch time, so a sequential transfer crossing a track loses only
  the switch, not a revolution;
- **on-board cache**: an optional read-ahead stream (``read_ahead="track"``: to
  the end of the track, seed 000 section I-C: "reads ahead up to the end of the
  track ... containing the last sector"; ``"segment"``: a cache segment past the
  request; ``"off"``: none, as the disks of seed 000 Fig. 9(a) and 9(d)) and a
  few segments of recently read data; writes are write-on-arrival
  (the request completes when its last sector has passed under the head) unless
  ``write_cache`` is on, when they complete after the bus transfer and a
  background writer destages them.

The missed rotation of seed 000 Fig. 2 is not coded anywhere: a write that
arrives (command overhead plus bus transfer) after its first sector passed under
the head simply waits for the platter to come round again, which is eq. (1),
``t_d = t_c + t_r * N_r``, emerging from the angle bookkeeping.

Tagged command queueing (``tcq`` on, the default, and ``queue_depth`` > 1: the
SCSI and Fibre Channel presets queue at their native depth, as the seeds' disks
do; the ATA presets and the generic disk have depth 1, no queue; ``tcq=off``
serves one command at a time whatever the depth). The drive accepts up to
``queue_depth`` commands (:meth:`HddModel.begin` / :meth:`HddModel.end`; ``read`` and
``write`` use them) and serves them one media transfer at a time in its own
order (``scheduling``): ``"sptf"``, shortest positioning time first, the queued
command whose first sector the head can reach soonest (seek curve, head switch
and platter angle at the moment the head becomes free), or ``"clook"``,
ascending LBA from where the head stopped, wrapping. A command's decode and
bus transfer overlap the media work of the commands before it; what does not
overlap is the firmware setup (``overhead``) of a media transfer that does not
continue the one in progress: the head must be free before the drive sets up
a transfer elsewhere. A command that starts at the sector where the previous
transfer ended is chained onto it with no gap, so a stream of contiguous
single-block writes runs at the media rate, while a fragmented stream misses
the sectors that pass under the head during the setup and pays a revolution
for them, unless another queued command can be reached first (seed 000,
section I-C, eq. (1): a rotation is missed when transfer and "computational
overhead" outlast the gap under the head). Commands overlapping an earlier
queued command are never served before it; a command waiting longer than
``STARVE_REVOLUTIONS`` revolutions is served next (aging, so SPTF cannot
starve it). Writes acknowledged from the write-back cache and reads found in
a cache segment take no queue slot. With one command outstanding (or
``queue_depth`` 1) the model is the one-command model above, to the bit.

With ``queue_depth`` 1 a consequence is worth knowing: with write-on-arrival
even *contiguous* single-block writes issued back to back lose a revolution
each (the next command is decoded after its first sector passed). Queueing
hides this; so do the member queue, which merges adjacent requests, and the
contiguity transform (seed 000 section III), which makes fragmented writes
mergeable.

Deliberate simplifications: commands are served one media transfer at a time
(reads are not split to serve a queued command in between); the SPTF estimate
ignores the read-ahead buffer (a queued read the stream will bring costs its
positioning like any other); reads of data still dirty in the write-back cache
are served from the media; the write-back destager writes in arrival order,
merging contiguous pieces that have arrived; cache segments are replaced
FIFO; the bus transfer of a read overlaps the media transfer, and bus transfers
of queued commands never contend with one another unless ``bus_serial`` is on
(then the bus moves one command's data at a time, first booked first served: a
write's at its arrival, a read's when its media transfer is scheduled, so a write
may wait behind a read booked for later); the cylinder skew allows
for the single-cylinder *write* seek, head switches cost the same for reads
and writes. Model time is ``clock.now() / clock.scale`` so a scaled real clock
(``--time real:0.1``) keeps the platter consistent with the sleeps.

The model in modules, one idea each: :mod:`backends.hdd_params` (the datasheet
and the counters), :mod:`backends.hdd_zones` (zoned recording and skew),
:mod:`backends.hdd_seek` (the fitted seek curve), :mod:`backends.hdd_mechanism`
(positioning and media transfer), :mod:`backends.hdd_cache` (read-ahead, cache
segments, write-back), :mod:`backends.hdd_tcq` (tagged command queueing); this
module is the store wrapper that puts them together.
"""

from __future__ import annotations

import math
from collections import deque

import trio

from .base import Store, TimedStore, check_range
from .base import acquire
from .hdd_cache import OnBoardCache
from .hdd_mechanism import DiskMechanism
from .hdd_params import SCHEDULINGS, HddParams, HddStats
from .hdd_seek import seek_curve_for
from .hdd_tcq import STARVE_REVOLUTIONS, QueuedCommand
from .hdd_tcq import TaggedCommandQueue
from .hdd_zones import SECTOR, HddGeometry

class HddModel(TaggedCommandQueue, OnBoardCache, DiskMechanism, TimedStore):
    """A disk in front of ``inner``: every request sleeps its modelled service time.

    Args:
        inner: the store that holds the data.
        clock: the injected clock (``now()``, ``async sleep(s)``); a ``scale``
            attribute (``TrioClock(scale)``) stretches model time: the model
            reads ``now() / scale`` so its platter turns in model seconds.
        params: the disk, usually a preset from :mod:`backends.models`.

    Attributes:
        stats: :class:`HddStats`.
        geometry: :class:`HddGeometry`.
        seek: :class:`SeekCurve`.
        revolution: seconds per revolution.
    """

    def __init__(self, inner: Store, clock, params: HddParams) -> None:
        super().__init__(inner)
        self.clock = clock
        self.params = params
        self.stats = HddStats()
        self._background = HddStats()  # read-ahead repositioning: not request time
        geo = HddGeometry(params, inner.size)
        self.seek = seek_curve_for(params, geo)
        if self.seek.time(1, True) > params.track_seek:
            geo = HddGeometry(params, inner.size, self.seek.time(1, True))
        self.geometry = geo
        self.revolution = geo.revolution
        self._scale = float(getattr(clock, "scale", 1.0) or 1.0)
        self._lock = trio.Lock()
        # hot constants as plain attributes
        self._rps = params.rpm / 60.0
        self._zones = geo.zones
        self._starts = geo.starts
        self._heads = params.heads
        self._overhead = params.overhead
        self._bus_per_byte = 1.0 / (params.bus_rate * 1e6)
        self._sec_bus = SECTOR * self._bus_per_byte
        self._bus_serial = bool(params.bus_serial)
        self._bus_free = -math.inf  # bus_serial: when the bus has moved every transfer booked so far
        self._head_switch = params.head_switch
        s = self.seek
        self._knee, self._sa, self._sb, self._lc, self._le, self._wx = s.knee, s.a, s.b, s.c, s.e, s.write_extra
        modes = {"off": 0, "track": 1, "segment": 2, False: 0, True: 1}
        if params.read_ahead not in modes:
            raise ValueError(f"read_ahead must be off, track or segment, not {params.read_ahead!r}")
        # no buffer: no read-ahead and no segments
        self._ra_mode = modes[params.read_ahead] if params.cache_size >= SECTOR else 0
        self._used = geo.used_sectors
        self._seg_sectors = max(1, params.cache_size // max(1, params.segments) // SECTOR)
        self._max_segs = max(1, params.segments) if params.cache_size >= SECTOR else 0
        self._write_back = params.write_cache and params.cache_size >= SECTOR
        self._cache_sectors = params.cache_size // SECTOR
        # mechanical state
        self._cyl = 0
        self._head = 0
        self._media_free = -math.inf  # when the head finishes its current media transfer
        # read-ahead stream: the head was at the start of sector _sp at time _st0 and keeps
        # reading (sector time _sst) up to _slim; _slo is where the buffered run began
        self._sp = self._slo = 1 << 62
        self._slim = -1
        self._st0 = 0.0
        self._sst = 1.0
        self._segs: list[tuple[int, int]] = []
        # write-back cache: (lba, sectors, time the destager may start writing it)
        self._wbq: deque[tuple[int, int, float]] = deque()
        self._dirty = 0
        # tagged command queueing
        if params.scheduling not in SCHEDULINGS:
            raise ValueError(f"scheduling must be one of {', '.join(SCHEDULINGS)}, not {params.scheduling!r}")
        self.queue_depth = max(1, int(params.queue_depth)) if params.tcq else 1
        self._clook = params.scheduling == "clook"
        self._queue: list[QueuedCommand] = []  # waiting commands in arrival order
        self._serving: QueuedCommand | None = None  # the command whose media transfer has the head
        self._end_lba = -1  # where the last queued media transfer left the head
        self._seq = 0
        self._busy_to = -math.inf  # queued commands: busy time counted up to here
        self._starve = STARVE_REVOLUTIONS * geo.revolution

    # ------------------------------------------------------------------ store API
    def charge(self, op: str, offset: int, length: int) -> float:
        """Account a request that starts now and return its service time in model
        seconds, without sleeping: the member layer then sleeps once for a whole
        batch (the virtual-time fast path). The caller moves the data itself."""
        check_range(self, offset, length)
        now = self.clock.now() / self._scale
        lba = offset // SECTOR
        n = -(-(offset + length) // SECTOR) - lba
        st = self.stats
        st.requests += 1
        if op == "read":
            dt = (self._read(now, lba, n, length) if n else now) - now
            st.reads += 1
            st.read_bytes += length
        else:
            dt = (self._write(now, lba, n, length) if n else now) - now
            st.writes += 1
            st.write_bytes += length
        st.busy_seconds += dt
        self._end_lba = lba + n
        return dt

    # ------------------------------------------------------------------ command queueing
    async def read(self, offset: int, length: int) -> bytes:
        if self.queue_depth <= 1:
            return await super().read(offset, length)
        await self.end(self.begin("read", offset, length))
        return await self.inner.read(offset, length)

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        if self.queue_depth <= 1:
            await super().write(offset, data)
            return
        await self.end(self.begin("write", offset, len(data)))
        await self.inner.write(offset, data)

    async def flush(self) -> None:
        """Wait until the write-back cache is on the media (plus one command overhead)."""
        lock = self._lock
        await acquire(lock)
        try:
            now = self.clock.now() / self._scale
            if self._wbq:
                self._drain(math.inf)
            dt = max(now + self._overhead, self._media_free) - now
            self.stats.flushes += 1
            self.stats.busy_seconds += dt
            await self.clock.sleep(dt)
        finally:
            lock.release()
        await self.inner.flush()

    def seek_time(self, distance: int, write: bool = False) -> float:
        """Seconds to seek ``distance`` cylinders."""
        return self.seek.time(distance, write)
