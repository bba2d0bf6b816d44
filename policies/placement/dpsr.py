"""DPSR, Dynamic Parity Stripe Reorganization (Mogi & Kitsuregawa), as seed 004 describes it.

Seed 004 (Hua, Vu & Hu, section 1) uses DPSR as its baseline: updates wait in one shared
write buffer; every ``n-1`` of them form a new stripe written whole into a free stripe,
wherever its slots are, so a block migrates to whichever member the new stripe puts it
on (the loss of locality the paper blames for DPSR's slow reads). The old copies become
dirty, and a garbage collector recycles them into free stripes (the same victim and
same-member partner search as multibuffering's, :mod:`.cleaner`, but only whole free
stripes are of use: DPSR has no partial writes, so it tries the victims in order of fewest
active blocks until one can be emptied, :func:`.cleaner.generate_whole`). When the collector cannot make a free
stripe because some member has no dirty block (*external fragmentation*), "the only
solution is to apply the standard RAID5 algorithm": the oldest buffered block is
written in place with a RAID-5 small write (:class:`InPlace`).

The buffer is no cache ("no attempt was made to manage it as a cache", section 4.1):
reads never hit it. Where vraid differs: a rewrite of a block still waiting in the
buffer replaces the waiting copy (any write buffer does; the paper does not say), and
the buffer flushes its ``n-1`` oldest blocks when it is full (``buffer``), which is one
new stripe per ``n-1`` writes in steady state. The collector runs when a stripe write
finds no free stripe (the paper does not say when DPSR's runs).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable

from vraid.core.directory import LW, Step, StripeDirectory, StripeWrite
from vraid.policies.params import Fraction

from . import InPlace, Placement
from .cleaner import generate_whole
from .multibuffer import MAX_BUFFER


class DpsrPlacement(Placement):
    """One shared buffer; a new stripe per n-1 writes, blocks migrate; RAID-5 fallback (seed 004 s. 1)."""

    name = "dpsr"
    summary = "one shared write buffer, a new stripe per n-1 writes, blocks migrate; RAID-5 writes when fragmented"
    source = "paper 004, Hua, Vu & Hu, section 1 (Mogi & Kitsuregawa's DPSR)"
    params = {
        "buffer": (int, 100, "shared write buffer, in strips (held in memory)", (1, MAX_BUFFER)),
        "spare": (Fraction, 0.05, "free stripes kept beyond the data, as a fraction of the data stripes"),
    }

    #: fixed when the array is created (see MultibufferPlacement.create_time)
    create_time = ("spare",)

    def __init__(self, buffer: int = 100, spare: float = 0.05) -> None:
        self.buffer, self.spare = buffer, spare
        self.queue: OrderedDict[int, None] = OrderedDict()
        self.stats: dict[str, Any] = {"LW": 0, "PW": 0, "sizes": {}, "swaps": 0, "cleanings": 0,
                                      "fallbacks": 0, "write_hits": 0, "write_misses": 0}

    def make_directory(self, geometry: Any, logical_stripes: int) -> StripeDirectory:
        return StripeDirectory.fresh(geometry, logical_stripes, migrate=True)

    def attach(self, directory: StripeDirectory) -> None:
        self.directory = directory
        self.queue = OrderedDict()

    def write(self, strip: int) -> list[Any]:
        if strip in self.queue:
            self.stats["write_hits"] += 1
            return []
        self.stats["write_misses"] += 1
        steps = self._make_room() if len(self.queue) >= self.buffer else []
        self.queue[strip] = None
        return steps

    def flush(self) -> list[Any]:
        return self._make_room() if self.queue else []

    def restore(self, strips: Iterable[int]) -> None:
        for L in strips:
            self.queue[L] = None
            self.queue.move_to_end(L)

    def buffered(self) -> dict[int, int]:
        return {-1: len(self.queue)}

    def _make_room(self) -> list[Any]:
        d, n = self.directory, self.directory.geometry.ndisks
        steps: list[Step] = []
        stripe = min(d.free_stripes) if d.free_stripes else None
        if stripe is None and len(self.queue) >= n - 1:
            plan = generate_whole(d)
            if plan is not None:
                self.stats["cleanings"] += 1
                self.stats["swaps"] += plan.swaps
                steps += plan.steps
                stripe = plan.victim
        if stripe is None or len(self.queue) < n - 1:
            # external fragmentation (or too few blocks for a stripe): a RAID-5 small write
            L, _ = self.queue.popitem(last=False)
            self.stats["fallbacks"] += 1
            return [InPlace((L,))]
        parity = d.next_parity
        members = [m for m in range(n) if m != parity]
        slots = tuple((m, self.queue.popitem(last=False)[0]) for m in members)
        w = StripeWrite(LW, stripe, parity, slots)
        self.stats["LW"] += 1
        self.stats["sizes"][w.size] = self.stats["sizes"].get(w.size, 0) + 1
        return steps + [w]
