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
of queued commands never contend with one another; the cylinder skew allows
for the single-cylinder *write* seek, head switches cost the same for reads
and writes. Model time is ``clock.now() / clock.scale`` so a scaled real clock
(``--time real:0.1``) keeps the platter consistent with the sleeps.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass
from functools import lru_cache

import trio

from .base import ModelStats, Store, TimedStore, check_range
from .base import acquire

SECTOR = 512
#: rotational positions closer than this fraction of a revolution count as "already there"
_EPS = 1e-6
#: a rotational wait longer than this fraction of a revolution means the sector had just passed
MISSED_FRACTION = 0.875
#: a queued command waiting longer than this many revolutions (1 s at 15,000 rpm) is served next (aging)
STARVE_REVOLUTIONS = 250
#: the drive's queue orders (``HddParams.scheduling``)
SCHEDULINGS = ("sptf", "clook")


@dataclass(frozen=True, slots=True)
class HddParams:
    """What a datasheet says about a disk. Times in seconds, rates in MB/s (10^6).

    The defaults describe a generic 7,200 rpm disk of about 2000 (plausible
    datasheet values, not a particular drive); presets live in
    :mod:`backends.models`.
    """

    name: str = "generic"
    drive: str = "generic 7,200 rpm disk"
    rpm: float = 7200.0
    capacity: int = 18_200_000_000
    heads: int = 8
    zones: int = 8
    rate_outer: float = 25.0
    rate_inner: float = 15.0
    avg_seek: float = 8.5e-3
    #: average write seek; ``None``: the same as ``avg_seek``
    avg_write_seek: float | None = None
    #: single-cylinder seek, also the cylinder switch of a sequential transfer
    track_seek: float = 1.0e-3
    #: full-stroke seek; ``None``: 2.1 x avg_seek
    full_seek: float | None = None
    head_switch: float = 0.8e-3
    #: command processing per request (host completion + next command + drive decode)
    overhead: float = 0.2e-3
    bus_rate: float = 40.0
    cache_size: int = 2 << 20
    segments: int = 8
    #: "off", "track" (to the end of the track holding the next sector) or
    #: "segment" (one cache segment past the request, across tracks)
    read_ahead: str = "track"
    write_cache: bool = False
    #: "full": the member is spread over all cylinders (random I/O sees the datasheet
    #: seeks whatever the member size); "partition": the member is the first bytes of
    #: a disk of ``capacity`` (short-stroked)
    stroke: str = "full"
    #: tagged command queueing: commands the drive accepts at once (1: one at a time, no
    #: queue). A preset's value is the drive's native depth.
    queue_depth: int = 1
    #: command queueing on (the default): the model takes up to ``queue_depth`` commands
    #: at once. Off (``hdd:NAME,tcq=off``): one command at a time, whatever ``queue_depth``
    #: says, the one-command model
    tcq: bool = True
    #: the drive's own order for its queue: "sptf" (shortest positioning time first, by
    #: the model's seek curve and platter angle) or "clook" (ascending LBA from the head)
    scheduling: str = "sptf"
    source: str = ""


@dataclass(slots=True)
class HddStats(ModelStats):
    """Counters of one modelled disk (model time, seconds)."""

    #: seeks of one or more cylinders, and their total time
    seeks: int = 0
    seek_seconds: float = 0.0
    #: rotational waits before a media transfer, and their total time
    rotation_waits: int = 0
    rotation_wait_seconds: float = 0.0
    #: waits longer than 7/8 revolution: the sector had just passed (seed 000 Fig. 2)
    missed_rotations: int = 0
    #: reads served from the read-ahead stream or a cache segment
    stream_hits: int = 0
    cache_hits: int = 0
    #: write-back cache: media writes of the background destager
    destages: int = 0
    #: tagged command queueing: commands that waited in the drive's queue, the most
    #: waiting at once, and commands served before one that arrived earlier
    queued: int = 0
    max_queued: int = 0
    reordered: int = 0


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


@dataclass(frozen=True, slots=True)
class SeekCurve:
    """``t(d) = a + b*sqrt(d)`` for ``1 <= d < knee``, ``c + e*d`` beyond; ``t(0) = 0``.

    ``write_extra`` is added to every write seek (the write settle).
    """

    knee: float = 1.0
    a: float = 0.0
    b: float = 0.0
    c: float = 0.0
    e: float = 0.0
    write_extra: float = 0.0
    #: average over random sector pairs (d = 0 included as zero), reads and writes
    mean_read: float = 0.0
    mean_write: float = 0.0

    def time(self, d: int, write: bool = False) -> float:
        if d <= 0:
            return 0.0
        v = self.a + self.b * math.sqrt(d) if d < self.knee else self.c + self.e * d
        return v + self.write_extra if write else v


@lru_cache(maxsize=64)
def fit_seek_curve(weights: tuple[int, ...], t1: float, tmax: float, avg: float, avg_write: float) -> SeekCurve:
    """Fit the Ruemmler & Wilkes two-part seek curve to the datasheet figures.

    ``weights`` are the sectors of each cylinder; a random request picks a sector
    uniformly, so the seek distance of two independent requests has the
    distribution of the (weighted) autocorrelation. Given a knee K, the curve is
    pinned by t(1) = ``t1`` (track to track), t(C-1) = ``tmax`` (full stroke) and
    a smooth join at K; K is bisected until the mean equals ``avg``. If ``avg``
    lies outside what the two end shapes (all linear, all square root) can give,
    the nearer shape is scaled to hit ``avg`` (then t1 and tmax are not kept).
    """
    import numpy as np  # construction time only

    ncyl = len(weights)
    if ncyl < 2:
        return SeekCurve()
    w = np.asarray(weights, dtype=float)
    w /= w.sum()
    n = 1 << (2 * ncyl - 1).bit_length()
    spec = np.fft.rfft(w, n)
    prob = np.fft.irfft(spec * np.conj(spec), n)[:ncyl]
    prob[1:] *= 2.0
    prob = np.clip(prob, 0.0, None)
    prob /= prob.sum()
    d = np.arange(ncyl, dtype=float)
    sq = np.sqrt(d)
    dmax = ncyl - 1
    tmax = max(tmax, t1)

    def shape(knee: float) -> tuple[float, float, float, float]:
        sk = math.sqrt(knee)
        b = (tmax - t1) / ((sk - 1.0) + (dmax - knee) / (2.0 * sk)) if dmax > 1 else 0.0
        a = t1 - b
        e = b / (2.0 * sk)
        c = a + b * sk - e * knee
        return a, b, c, e

    def mean(knee: float, coef: tuple[float, float, float, float]) -> float:
        a, b, c, e = coef
        f = np.where(d < knee, a + b * sq, c + e * d)
        f[0] = 0.0
        return float((prob * f).sum())

    lo, hi = 1.0, float(dmax)
    m_lo, m_hi = mean(lo, shape(lo)), mean(hi, shape(hi))
    if avg <= m_lo or avg >= m_hi or dmax <= 1:
        knee = lo if abs(avg - m_lo) <= abs(avg - m_hi) else hi
        coef = shape(knee)
        m = mean(knee, coef)
        s = avg / m if m > 0 else 1.0
        coef = tuple(x * s for x in coef)  # type: ignore[assignment]
    else:
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if mean(mid, shape(mid)) < avg:
                lo = mid
            else:
                hi = mid
        knee = 0.5 * (lo + hi)
        coef = shape(knee)
    a, b, c, e = coef
    m = mean(knee, coef)
    p_move = 1.0 - float(prob[0])
    extra = (avg_write - m) / p_move if p_move > 0 else 0.0
    return SeekCurve(knee, a, b, c, e, extra, m, m + extra * p_move)


#: seek curves by (params, disk sectors): a fresh model of a full-size disk need not walk its
#: cylinders again (the stride benchmark builds one per curve point)
_SEEK_CURVES: dict[tuple[HddParams, int], SeekCurve] = {}


def seek_curve_for(p: HddParams, geo: HddGeometry) -> SeekCurve:
    """The calibrated seek curve of ``p`` over the sectors the datasheet average refers to."""
    key = (p, geo.disk_sectors)
    curve = _SEEK_CURVES.get(key)
    if curve is None:
        weights = tuple(geo.cylinder_weights(geo.disk_sectors))
        full = p.full_seek if p.full_seek is not None else 2.1 * p.avg_seek
        avg_w = p.avg_write_seek if p.avg_write_seek is not None else p.avg_seek
        curve = fit_seek_curve(weights, p.track_seek, full, p.avg_seek, avg_w)
        if len(_SEEK_CURVES) < 256:
            _SEEK_CURVES[key] = curve
    return curve


class _Cmd:
    """One command in the drive's queue (model seconds)."""

    __slots__ = ("write", "lba", "n", "nbytes", "arrival", "seq", "earliest", "after", "dispatched", "queued",
                 "free", "done", "event")

    def __init__(self, write: bool, lba: int, n: int, nbytes: int, arrival: float, seq: int) -> None:
        self.write, self.lba, self.n, self.nbytes, self.arrival, self.seq = write, lba, n, nbytes, arrival, seq
        self.earliest = 0.0  # a write's media transfer may not start before its data is in the buffer
        self.after: _Cmd | None = None  # an earlier queued command it overlaps (served first)
        self.dispatched = False
        self.queued = False  # waited in the queue (False: served at once from the buffer)
        self.free = arrival  # when the head is done with it (the next command may start)
        self.done = arrival  # completion
        self.event: trio.Event | None = None


class HddModel(TimedStore):
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
        self._queue: list[_Cmd] = []  # waiting commands in arrival order
        self._serving: _Cmd | None = None  # the command whose media transfer has the head
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

    def begin(self, op: str, offset: int, length: int) -> _Cmd:
        """A command arrives now (tagged command queueing): it joins the drive's queue, or is
        served at once from the buffer (a write the write-back cache takes, a read found in a
        cache segment). Synchronous, so commands arrive in the caller's order; :meth:`end`
        waits for the one returned. The caller keeps at most ``queue_depth`` outstanding and
        moves the data itself once ``end`` returns."""
        check_range(self, offset, length)
        now = self.clock.now() / self._scale
        lba = offset // SECTOR
        n = -(-(offset + length) // SECTOR) - lba
        st = self.stats
        st.requests += 1
        write = op != "read"
        if write:
            st.writes += 1
            st.write_bytes += length
        else:
            st.reads += 1
            st.read_bytes += length
        self._seq += 1
        cmd = _Cmd(write, lba, n, length, now, self._seq)
        if not n:
            cmd.dispatched = True
            return cmd
        if write:
            if self._write_back and n <= self._cache_sectors:  # acknowledged from the buffer
                cmd.done = cmd.free = self._write(now, lba, n, length)
                cmd.dispatched = True
                self._busy(now, cmd.done)
                return cmd
            lag = length * self._bus_per_byte - n * self.geometry.mean_sector_time
            cmd.earliest = now + self._overhead + self._sec_bus + (lag if lag > 0 else 0.0)
        else:
            end = lba + n
            for s, e in self._segs:
                if s <= lba and end <= e:  # buffered: no need for the head
                    st.cache_hits += 1
                    cmd.done = cmd.free = now + self._overhead + length * self._bus_per_byte
                    cmd.dispatched = True
                    self._busy(now, cmd.done)
                    return cmd
        q = self._queue
        for c in reversed(q):
            if c.lba < lba + n and lba < c.lba + c.n:
                cmd.after = c
                break
        cmd.queued = True
        cmd.event = trio.Event()
        q.append(cmd)
        st.queued += 1
        if len(q) > st.max_queued:
            st.max_queued = len(q)
        return cmd

    async def end(self, cmd: _Cmd) -> None:
        """Wait until ``cmd`` (from :meth:`begin`) completes. The task of the command whose
        media transfer has the head wakes when the head is free and picks the next one."""
        clock, scale = self.clock, self._scale
        try:
            while not cmd.dispatched:
                if self._serving is None and self._queue:  # an idle drive: start now
                    self._dispatch(clock.now() / scale)
                else:
                    assert cmd.event is not None
                    await cmd.event.wait()
            if cmd.queued:
                dt = cmd.free - clock.now() / scale
                if dt > 0:
                    await clock.sleep(dt)
                if self._serving is cmd:
                    self._release(cmd.free)
            dt = cmd.done - clock.now() / scale
            if dt > 0:
                await clock.sleep(dt)
        finally:
            if not cmd.dispatched and cmd in self._queue:  # cancelled while waiting
                self._queue.remove(cmd)
                for c in self._queue:
                    if c.after is cmd:
                        c.after = cmd.after
            if self._serving is cmd:  # cancelled in service: the drive goes on with the queue
                self._release(max(clock.now() / scale, cmd.free))

    def _release(self, t: float) -> None:
        """The head is free at ``t``: start the next queued command."""
        self._serving = None
        if self._queue:
            self._dispatch(t)

    def _dispatch(self, t: float) -> None:
        """Choose the next command at ``t`` (the head is free) and account its service."""
        cmd = self._choose(t)
        self._queue.remove(cmd)
        if self._queue and self._queue[0].seq < cmd.seq:
            self.stats.reordered += 1
        lba, n = cmd.lba, cmd.n
        if cmd.arrival >= t:  # served on arrival by an idle drive: the one-command model
            done = self._write(t, lba, n, cmd.nbytes) if cmd.write else self._read(t, lba, n, cmd.nbytes)
        else:
            ov = self._overhead
            ready = t if lba == self._end_lba and cmd.arrival + ov <= t else t + ov
            if cmd.write:
                done = self._write_queued(ready, cmd.earliest, lba, n)
            else:
                done = self._read(ready - ov, lba, n, cmd.nbytes)
        self._end_lba = lba + n
        free = self._media_free if self._media_free > t else t
        cmd.free = free if free < done else done
        cmd.done = done
        cmd.dispatched = True
        self._serving = cmd
        self._busy(t, done)
        assert cmd.event is not None
        cmd.event.set()

    def _busy(self, t: float, done: float) -> None:
        """Count [t, done) in ``busy_seconds`` where no command counted before covers it."""
        b = self._busy_to
        if done > b:
            self.stats.busy_seconds += done - (t if t > b else b)
            self._busy_to = done

    def _choose(self, t: float) -> _Cmd:
        """The queued command to serve next when the head is free at ``t``."""
        q = self._queue
        first = q[0]  # the oldest: nothing it overlaps is still queued
        if len(q) == 1 or t - first.arrival > self._starve:
            return first
        best = first
        if self._clook:
            head = self._end_lba
            lowest = None
            best = None
            for c in q:
                a = c.after
                if a is not None and not a.dispatched:
                    continue
                if c.lba >= head and (best is None or c.lba < best.lba):
                    best = c
                if lowest is None or c.lba < lowest.lba:
                    lowest = c
            return best or lowest or first
        ov, head = self._overhead, self._end_lba
        best_t = math.inf
        for c in q:
            a = c.after
            if a is not None and not a.dispatched:
                continue
            s = self._reach(t if c.lba == head and c.arrival + ov <= t else t + ov, c.lba, c.write, c.earliest)
            if s < best_t:
                best, best_t = c, s
        return best

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

    # ------------------------------------------------------------------ model
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
                    return t + bus
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
        return done if done > start + bus else start + bus

    def _write(self, now: float, lba: int, n: int, nbytes: int) -> float:
        """Completion time of a write of sectors [lba, lba+n) arriving at ``now``."""
        if self._slim >= 0:
            self._stop_stream(now)
        if self._segs:
            end = lba + n
            self._segs = [(s, e) for s, e in self._segs if e <= lba or s >= end]
        t = now + self._overhead
        bus = nbytes * self._bus_per_byte
        # media writing may start once the first sector is in the buffer and the
        # bus can stay ahead of the head (write-on-arrival)
        lag = bus - n * self.geometry.mean_sector_time
        earliest = t + self._sec_bus + (lag if lag > 0 else 0.0)
        if self._write_back and n <= self._cache_sectors:
            short = self._dirty + n > self._cache_sectors
            self._drain(now, n)
            done = t + bus
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
