"""What a datasheet says about a disk (:class:`HddParams`) and the counters of a modelled
one (:class:`HddStats`), for the timing model of :mod:`backends.hdd`.

The fields are the figures a drive's datasheet gives (seed 000 section I-C quotes
them for the ST373454LC; seed 002 Table 1 gives the media rates); the presets
live in :mod:`backends.models`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModelStats

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
    #: the interface moves one command's data at a time, first booked first served (a SCSI
    #: bus between the drive and its host adapter). Off (the default): each command's bus
    #: transfer overlaps the others', so the bus never limits the drive (seed 000 sec. III-D
    #: names the bus cost of CT's added I/O; the stride experiment's ablation turns this on)
    bus_serial: bool = False
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
