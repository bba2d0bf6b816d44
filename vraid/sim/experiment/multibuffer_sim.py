"""The access-counting simulator of seed 004 section 3 (Hua, Vu & Hu), driving vraid's placements.

The paper's simulator counts *requests*: concurrent accesses, each of which "can perform
operations on up to nine disks simultaneously"; it has no disk timing. This module does
the same with vraid's own placement objects (:mod:`vraid.policies.placement`) and stripe
directory (:mod:`vraid.core.directory`), the objects the engine will use:

* **a read** of blocks ``R``: the blocks the placement's buffers hold are hits; the rest
  are read from their current member (``directory.locate``); the request costs as many
  concurrent accesses as the busiest member has blocks to read (one block per member per
  access). Blocks kept on their home member (RAID-5, multibuffering) spread evenly;
  blocks that migrated (DPSR) pile up on some members.
* **a write**, block by block through ``placement.write``: a large write (LW) is one
  access (every member writes once); a partial write (PW) two (read the parity, then
  write); a RAID-5 small write (RAID-5 itself, DPSR's fallback) of ``d`` blocks of one
  stripe reads then writes: the busiest member's reads plus its writes, choosing per
  stripe read-modify-write or reconstruct-write, whichever does fewer I/Os.
* **the cleaner** (multibuffering's free-stripe generator, DPSR's garbage collector):
  the paper does not say whether its figures count these accesses. Its rule for what they
  cost is section 2.2: a swap of an active block and a dirty block moves data only "if at
  least one of them is in the cold region. Otherwise, the swap ... does not have to incur
  any disk activity" (the stripe directory is changed). So the cleaner's accesses are
  counted by two rules, apart from ``accesses``:

  - ``background_paper`` (the paper's rule): a swap with both stripes in the hot region 0;
    any other swap 3 (read the strip, the partner's dirty strip and parity; write both);
    a release of a stripe that keeps live blocks 2 (its parity is recalculated, step 3).
    DPSR's directory has no hot region, so every swap of its collector moves data;
  - ``background`` (vraid's physical rule): vraid's stripes are physical rows, so every
    swap moves the strip (3), releases as above.

  ``swaps_hot`` and ``swaps_cold`` count the swaps of each kind, ``victims`` the cleanings
  and ``victims_hot`` those whose victim stripe was in the hot region (the paper: "the
  victim stripe is likely in the hot region").

The workload is the paper's (section 3): the first block of a request drawn from a
Zipf-like distribution over the blocks (skew ``z``; block ``i`` has probability
``1/i^z`` normalised, block 1 the hottest), read or write by the W/R ratio, the size
from a Zipf-like distribution over 1..100 (reads) or 1..10 (writes) with the access-size
skew 0.2 (size ``max`` the most likely: "a larger access-size skew indicates that most
of the I/O operations involve a large number of data blocks"). Statistics start after
``warmup`` requests; a run ends with the buffers flushed (Table 1's small writes "are
mostly the results of the final buffer flush"): ``flush_sizes`` counts the stripe writes of
that flush apart (they are in ``sizes`` too).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vraid.core.directory import LW, PW, Dirty, Release, StripeWrite, Swap
from vraid.core.geometry import Geometry
from vraid.policies import registry
from vraid.policies.placement import InPlace
from .multibuffer_logging import LOGGING, make as make_logging, small_write_io

DISKS = 9
BLOCKS = 10_000
MAX_READ, MAX_WRITE = 100, 10
SIZE_SKEW = 0.2


def zipf_probabilities(n: int, z: float) -> np.ndarray:
    """P_i = 1 / (i^z * sum_j 1/j^z), i = 1..n (seed 004 section 3)."""
    w = 1.0 / np.arange(1, n + 1, dtype=float) ** z
    return w / w.sum()


def workload(requests: int, wr: float, skew: float, seed: int, *, blocks: int = BLOCKS,
             size_skew: float = SIZE_SKEW) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(first, is_write, size)`` arrays of ``requests`` requests (three generators)."""
    rng_first, rng_type, rng_size = (np.random.default_rng([seed, k]) for k in range(3))
    first = rng_first.choice(blocks, size=requests, p=zipf_probabilities(blocks, skew))
    is_write = rng_type.random(requests) < wr
    ranks_r = rng_size.choice(MAX_READ, size=requests, p=zipf_probabilities(MAX_READ, size_skew))
    ranks_w = rng_size.choice(MAX_WRITE, size=requests, p=zipf_probabilities(MAX_WRITE, size_skew))
    size = np.where(is_write, MAX_WRITE - ranks_w, MAX_READ - ranks_r)
    return first, is_write, size


def geometry_for(scheme_spare: float, blocks: int = BLOCKS, disks: int = DISKS) -> tuple[Geometry, int]:
    data = disks - 1
    logical = -(-blocks // data)
    spare = int(np.ceil(scheme_spare * logical))
    return Geometry(5, disks, logical + spare, 4096, 4096), logical


class Counter:
    """Accesses as the paper counts them, the cleaner's by two rules, hit counts."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.on = False
        self.accesses = 0
        self.read_accesses = 0
        self.write_accesses = 0
        self.background = 0
        self.background_paper = 0
        self.swaps_hot = self.swaps_cold = self.partial_releases = 0
        self.victims = self.victims_hot = 0
        self.flushing = False
        self.flush_sizes: dict[int, int] = {}
        self.first_refs = self.first_hits = 0
        self.block_refs = 0
        self.hits = 0
        self.write_refs = self.write_hits = 0
        self.sizes: dict[int, int] = {}
        self.lw = self.pw = self.small = 0
        #: data blocks the requests' writes put on the disks, and the most one access of them put
        self.blocks_written = 0
        self.peak = 0.0

    def wrote(self, blocks: int, accesses: int) -> None:
        """A write operation put ``blocks`` data blocks on the disks in ``accesses`` accesses."""
        if self.on and not self.flushing and blocks:
            self.blocks_written += blocks
            self.peak = max(self.peak, blocks / max(accesses, 1))


def _small_write_cost(d: Any, strips: list[int], n: int) -> int:
    """Concurrent accesses of RAID-5 small writes of ``strips`` at their slots."""
    reads, writes = [0] * n, [0] * n
    small_write_io(d, strips, n, reads, writes)
    return max(reads) + max(writes)


def run_scheme(scheme: str, *, wr: float, skew: float, requests: int, warmup: int, seed: int,
               buffer: int = 100, order: str = "lrw", spare: float = 0.05, hot: float = 0.1,
               blocks: int = BLOCKS, disks: int = DISKS, size_skew: float = SIZE_SKEW,
               log_disk: bool = False) -> dict[str, Any]:
    """One run: ``scheme`` is ``raid5``, ``multibuffer``, ``dpsr`` or one of the logging
    schemes (:data:`.multibuffer_logging.LOGGING`: RAID-5's layout with a log of ``spare``
    times the data, Parity Logging's buffer ``buffer`` images; ``log_disk``: the log on one
    more disk of its own); ``hot`` (multibuffering's hot region, a fraction of the stripes)
    and ``size_skew`` (the access-size skew) are varied by the experiment's ablations."""
    logging = scheme in LOGGING
    spec = {"raid5": "static", "multibuffer": f"multibuffer:buffer={buffer},order={order},hot={hot},spare={spare}",
            "dpsr": f"dpsr:buffer={buffer},spare={spare}", **{k: "static" for k in LOGGING}}[scheme]
    policy = registry.create("placement", spec)
    g, logical = geometry_for(0.0 if scheme == "raid5" or logging else spare, blocks, disks)
    d = policy.make_directory(g, logical)
    policy.attach(d)
    log = make_logging(scheme, d, disks, log_blocks=int(np.ceil(spare * blocks)), buffer=buffer,
                       log_disk=log_disk) if logging else None
    c = Counter(disks)
    first, is_write, size = workload(requests, wr, skew, seed, blocks=blocks, size_skew=size_skew)
    n = disks

    def perform(steps: list[Any]) -> int:
        cost = 0
        for st in steps:
            if isinstance(st, StripeWrite):
                if c.on:
                    c.sizes[st.size] = c.sizes.get(st.size, 0) + 1
                    if c.flushing:
                        c.flush_sizes[st.size] = c.flush_sizes.get(st.size, 0) + 1
                    if st.kind == LW:
                        c.lw += 1
                    else:
                        c.pw += 1
                cost += 1 if st.kind == LW else 2
                c.wrote(st.size, 1 if st.kind == LW else 2)
            elif isinstance(st, InPlace):
                small = _small_write_cost(d, list(st.strips), n)
                cost += small
                c.small += c.on
                c.wrote(len(st.strips), small)
            elif isinstance(st, Swap) and c.on:
                c.background += 3
                if d.is_hot(st.stripe) and d.is_hot(st.partner):  # sec. 2.2: a directory change only
                    c.swaps_hot += 1
                else:
                    c.swaps_cold += 1
                    c.background_paper += 3
            elif isinstance(st, Release) and c.on:
                c.victims_hot += d.is_hot(st.stripe)
                c.victims += 1
                if d.live_count[st.stripe] > 0:
                    c.background += 2
                    c.background_paper += 2
                    c.partial_releases += 1
            if not isinstance(st, InPlace):
                d.apply(st)
        return cost

    for i in range(requests):
        c.on = i >= warmup
        f = int(first[i])
        strips = range(f, min(f + int(size[i]), blocks))
        if is_write[i]:
            cost = 0
            if scheme == "raid5":
                cost = _small_write_cost(d, list(strips), n)
                c.wrote(len(strips), cost)
            elif log is not None:
                cost, cleaning = log.write(list(strips))
                c.wrote(len(strips), cost)
                if c.on:
                    c.background += cleaning
                    c.background_paper += cleaning
            else:
                before = policy.stats["write_hits"]
                for L in strips:
                    cost += perform(policy.write(L))
                if c.on:
                    c.hits += policy.stats["write_hits"] - before
                    c.write_hits += policy.stats["write_hits"] - before
                    c.write_refs += len(strips)
            if c.on:
                c.write_accesses += cost
                c.block_refs += len(strips)
                if scheme == "raid5" or log is not None:  # the placements' writes count theirs above
                    c.write_refs += len(strips)
        else:
            hits = policy.read(strips)
            if c.on:
                c.first_refs += 1
                c.first_hits += f in hits
            per = [0] * n
            loc = d.loc
            for L in strips:
                if L not in hits:
                    per[loc[L][1]] += 1
            if c.on:
                c.read_accesses += max(per)
                c.hits += len(hits)
                c.block_refs += len(strips)
    c.on = c.flushing = True
    tail = 0
    while True:  # the final buffer flush
        steps = policy.flush()
        if not steps:
            break
        tail += perform(steps)
    d.check()
    return {"scheme": scheme, "accesses": c.read_accesses + c.write_accesses, "read_accesses": c.read_accesses,
            "write_accesses": c.write_accesses, "background": c.background,
            "background_paper": c.background_paper, "swaps_hot": c.swaps_hot, "swaps_cold": c.swaps_cold,
            "partial_releases": c.partial_releases, "victims": c.victims, "victims_hot": c.victims_hot,
            "flush_accesses": tail,
            "flush_sizes": {str(k): v for k, v in sorted(c.flush_sizes.items())},
            "first_block_read_hit_rate": c.first_hits / c.first_refs if c.first_refs else 0.0,
            "hit_rate": c.hits / c.block_refs if c.block_refs else 0.0,
            "write_hit_rate": c.write_hits / c.write_refs if c.write_refs else 0.0,
            "read_hit_rate": (c.hits - c.write_hits) / (c.block_refs - c.write_refs) if c.block_refs > c.write_refs else 0.0, "sizes": {str(k): v for k, v in sorted(c.sizes.items())},
            "lw": c.lw, "pw": c.pw, "small_writes": c.small,
            "blocks_written": c.blocks_written, "write_refs": c.write_refs, "peak_blocks_per_access": c.peak,
            "fallbacks": (getattr(log, "fallbacks", 0) if log is not None else
                          policy.stats.get("fallbacks", 0) if hasattr(policy, "stats") else 0),
            "cleanings": (log.log.cleanings if log is not None else
                          policy.stats.get("cleanings", 0) if hasattr(policy, "stats") else 0),
            "free_stripes_end": len(d.free_stripes)}
