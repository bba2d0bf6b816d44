"""The heapq floor: the cheapest simulation of RAID-5 small writes we can write in pure Python.

Issue 17 asks how much ``vraid sim`` costs per simulated request against a minimal
discrete-event simulation of the same thing, run in the same process. This is that
minimal simulation: no engine, no data, no trio; one ``heapq`` of events.

What it simulates (the case ``bench/sim_speed.py`` measures with ``vraid sim``):
random 4 KiB writes, closed loop with one outstanding request, on a left-symmetric
RAID-5 of ``disks`` members with ``strip``-byte strips. Each write is a read-modify-write:
read the old data block and the old parity block (two members at once), then write both
(two members at once); the host request completes when the second write does. Every member
request costs seek + rotational latency + transfer:

- seek: ``a + b*sqrt(d)`` in cylinders (0 for d == 0), fitted to a 15,000 rpm disk's
  0.2 ms track-to-track and 7.4 ms full stroke (the ST373454LC preset's figures);
- rotation: the platter angle is ``now * rps mod 1``; the target sector's angle is a
  fixed function of its address (sectors per track constant: no zones);
- transfer: ``length / rate`` at the preset's 96 MB/s outer-zone rate.

The member requests are events in one heap ``(completion time, sequence, phase)``; the
run pops completions until ``requests`` host writes have completed (a phase's last
completion issues the next phase, or the next write). This is deliberately
not the hdd model (no zones, head switches, settle, cache): it only fixes the floor of
what one request must cost in Python, so that ``vraid sim``'s overhead is a ratio.
"""

from __future__ import annotations

import heapq
import math
import random
import time
from dataclasses import dataclass

SECTOR = 512


@dataclass(frozen=True)
class FloorDisk:
    rpm: float = 15_000
    capacity: int = 73_400_000_000
    sectors_per_track: int = 800
    heads: int = 4
    track_seek: float = 0.2e-3
    full_seek: float = 7.4e-3
    rate: float = 96e6  # bytes per second


def run_floor(requests: int, *, disks: int = 5, strip: int = 64 << 10, disk_size: int = 64 << 20,
              block: int = 4096, seed: int = 0, model: FloorDisk = FloorDisk()) -> tuple[float, float]:
    """Simulate ``requests`` random ``block``-byte writes; return (virtual seconds, wall seconds)."""
    started = time.perf_counter()
    rng = random.Random(seed)
    rps = model.rpm / 60.0
    spt = model.sectors_per_track
    per_cyl = spt * model.heads
    cylinders = model.capacity // SECTOR // per_cyl
    seek_b = (model.full_seek - model.track_seek) / (math.sqrt(cylinders) - 1)
    seek_a = model.track_seek - seek_b
    rate = model.rate
    stripes = disk_size // strip
    blocks_per_strip = strip // block
    data_disks = disks - 1
    blocks = stripes * data_disks * blocks_per_strip
    head = [0] * disks  # cylinder under each head
    heap: list = []
    seq = 0
    now = 0.0
    sqrt = math.sqrt
    push, pop, randrange = heapq.heappush, heapq.heappop, rng.randrange
    READ, WRITE = 0, 1
    pending = done = 0
    disk = parity = offset = 0
    while done < requests:
        if not pending:  # the previous write completed (or none yet): issue the next one
            b = randrange(blocks)
            strip_no, within = divmod(b, blocks_per_strip)
            stripe, k = divmod(strip_no, data_disks)
            parity = data_disks - stripe % disks  # left-symmetric: parity moves left one disk per stripe
            disk = (parity + 1 + k) % disks
            offset = stripe * strip + within * block
            phase = READ
        else:
            now, _, phase = pop(heap)
            pending -= 1
            if pending:
                continue
            if phase == WRITE:
                done += 1
                continue
            phase = WRITE
        lba = offset // SECTOR
        cyl = lba // per_cyl
        angle = (lba % spt) / spt
        for d in (disk, parity):  # two member requests at once: seek + rotation + transfer each
            t = now
            dist = cyl - head[d]
            if dist:
                head[d] = cyl
                t += seek_a + seek_b * sqrt(dist if dist > 0 else -dist)
            t += ((angle - t * rps) % 1.0) / rps + block / rate
            seq += 1
            push(heap, (t, seq, phase))
        pending = 2
    return now, time.perf_counter() - started


if __name__ == "__main__":
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    virtual, wall = run_floor(n)
    print(f"heapq floor: {n:,} writes in {wall:.3f} s wall ({n / wall:,.0f}/s), {virtual:.3f} s virtual "
          f"({virtual / n * 1e3:.2f} ms per write)")
