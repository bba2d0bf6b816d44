"""Multibuffering (seed 004, Hua, Vu & Hu, sections 2.1-2.3).

One write buffer per member, all sharing one pool of ``buffer`` strips. An update of a
strip goes into the buffer of its home member (a strip never migrates to another
member) and its on-disk copy is marked dirty (:class:`Dirty`). When an update misses
and the pool is full, the policy makes room with one stripe write:

* a **large write (LW)**: one strip from each of the ``n-1`` buffers other than the new
  stripe's parity member, into a free stripe; the parity is computed from the buffered
  strips, nothing is read. Parity rotates per new stripe (``directory.next_parity``);
* a **partial write (PW)** when fewer than ``n-1`` buffers hold strips (or no free stripe
  can be made): one strip from each non-empty buffer aligned with a free slot of a
  partial free stripe (PFS); only the parity is read.

When no free stripe (or no aligned PFS) exists, the free-stripe generator
(:mod:`.cleaner`) makes one first; its steps come before the stripe write. While the array
is idle, :meth:`clean` makes free stripes ahead of need, up to ``reserve`` of them (the
engine asks at destage priority and stops at the next host request).

Replacement (section 2.3): ``fifo`` takes each buffer's oldest strip and leaves the
queue alone on a write hit; ``lrw`` (least recently written) moves a rewritten strip to
the back, reads never change the order. The buffers are a read cache too
(:meth:`read`).

Where vraid differs: the hot region is the last ``hot`` fraction of the physical
stripes (the paper does not say how it is sized or placed); a large write goes to a
free stripe of the hot region first. When exactly ``n-1`` buffers hold strips, the
empty one's member takes the parity instead of the round-robin member (the paper's
rotation would turn that LW into a PW). ``spare`` (free stripes beyond the data, as a
fraction; the paper does not give RAID-7's reserve) is the directory's, set at create.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable, Sequence

from vraid.core.directory import LW, PW, Dirty, Step, StripeDirectory, StripeWrite
from vraid.errors import VraidError
from vraid.policies.params import Fraction

from . import Placement
from .cleaner import generate

ORDERS = ("lrw", "fifo")
#: the largest write buffer pool, in strips: every buffered strip is held in memory (65,536
#: strips of 64 KiB are 4 GiB)
MAX_BUFFER = 1 << 16


class MultibufferPlacement(Placement):
    """Per-member write buffers in one pool; LWs into free stripes, PWs into PFSs (seed 004 s. 2)."""

    name = "multibuffer"
    summary = "one write buffer per disk, large writes into free stripes, partial writes into PFSs"
    source = "paper 004, Hua, Vu & Hu, sections 2.1-2.3"
    params = {
        "buffer": (int, 100, "write buffer pool, in strips, shared by the per-member buffers (held in memory)",
                   (1, MAX_BUFFER)),
        "order": (str, "lrw", "buffer replacement: lrw (least recently written) or fifo"),
        "hot": (Fraction, 0.1, "fraction of the stripes forming the hot region"),
        "spare": (Fraction, 0.05, "free stripes kept beyond the data, as a fraction of the data stripes"),
        "reserve": (int, 2, "free stripes the background cleaner keeps ready while the array is idle (0: none)",
                    (0, MAX_BUFFER)),
    }
    #: parameters fixed when the array is created (the stripe directory is sized by them): a
    #: mount may not give other values
    create_time = ("spare",)

    def __init__(self, buffer: int = 100, order: str = "lrw", hot: float = 0.1, spare: float = 0.05,
                 reserve: int = 2) -> None:
        if order not in ORDERS:
            raise VraidError(f"placement multibuffer: order={order!r} is not a replacement policy",
                             "write order=lrw or order=fifo")
        self.buffer, self.order, self.hot, self.spare, self.reserve = buffer, order, hot, spare, reserve
        self.queues: list[OrderedDict[int, None]] = []
        self.size = 0
        #: counters: stripe writes by kind and size (Table 1), cleaner swaps, write/read hits
        self.stats: dict[str, Any] = {"LW": 0, "PW": 0, "sizes": {}, "swaps": 0, "cleanings": 0,
                                      "write_hits": 0, "write_misses": 0, "read_hits": 0}

    def make_directory(self, geometry: Any, logical_stripes: int) -> StripeDirectory:
        hot = max(1, round(self.hot * geometry.stripes)) if self.hot else 0
        return StripeDirectory.fresh(geometry, logical_stripes, hot=hot)

    def attach(self, directory: StripeDirectory) -> None:
        self.directory = directory
        self.queues = [OrderedDict() for _ in range(directory.geometry.ndisks)]
        self.size = 0
        self._homed = [0] * directory.geometry.ndisks
        for m in directory.homes:
            if m >= 0:
                self._homed[m] += 1

    # -- reads and writes ------------------------------------------------------------------
    def read(self, strips: Sequence[int]) -> set[int]:
        homes, queues = self.directory.homes, self.queues
        hits = {L for L in strips if L in queues[homes[L]]}
        self.stats["read_hits"] += len(hits)
        return hits

    def write(self, strip: int) -> list[Any]:
        q = self.queues[self.directory.homes[strip]]
        if strip in q:
            self.stats["write_hits"] += 1
            if self.order == "lrw":
                q.move_to_end(strip)
            return []
        self.stats["write_misses"] += 1
        steps: list[Any] = self._make_room() if self.size >= self.buffer else []
        q[strip] = None
        self.size += 1
        steps.append(Dirty(strip))
        return steps

    def restore(self, strips: Iterable[int]) -> None:
        for L in strips:
            q = self.queues[self.directory.homes[L]]
            if L not in q:
                self.size += 1
            q[L] = None
            q.move_to_end(L)

    def flush(self) -> list[Any]:
        """The steps of one more stripe write out of the buffers ([] once they are empty)."""
        return self._make_room() if self.size else []

    def buffered(self) -> dict[int, int]:
        return {m: len(q) for m, q in enumerate(self.queues)}

    def clean(self) -> list[Step]:
        """The background free-stripe generator (section 2.2): while fewer than ``reserve``
        stripes are free, one cleaning that yields a whole free stripe (a PFS is left to
        the next partial write)."""
        d = self.directory
        if len(d.free_stripes) >= self.reserve:
            return []
        plan = generate(d)
        if plan is None or not plan.whole:
            return []
        self._count_clean(plan)
        return list(plan.steps)

    # -- making room ------------------------------------------------------------------------
    def _take(self, m: int) -> int:
        L, _ = self.queues[m].popitem(last=False)
        self.size -= 1
        return L

    def _make_room(self) -> list[Step]:
        """One stripe write (LW if possible, PW otherwise), with the cleaning it needs first."""
        d, n = self.directory, self.directory.geometry.ndisks
        full = [m for m in range(n) if self.queues[m]]
        steps: list[Step] = []
        if len(full) >= n - 1:
            stripe = self._free_stripe()
            if stripe is None:
                plan = generate(d)
                if plan is not None:
                    steps += plan.steps
                    self._count_clean(plan)
                    if plan.whole:
                        stripe = plan.victim
                    elif set(full).intersection(plan.free):  # a PFS: write into it right away
                        return steps + [self._pw(plan.victim, set(full), plan.free)]
                    else:  # nothing aligned: not worth its I/O
                        steps = []
            if stripe is not None:
                if len(full) == n:
                    parity = self._parity_member(d.next_parity)
                else:
                    parity = self._parity_member(next(m for m in range(n) if not self.queues[m]))
                slots = tuple((m, self._take(m)) for m in range(n) if m != parity and self.queues[m])
                return steps + [self._stripe_write(StripeWrite(LW, stripe, parity, slots))]
        return steps + self._partial(set(full))

    def _parity_member(self, want: int) -> int:
        """``want``, or the next member after it that can take one more parity strip: a
        member must keep a data slot for every strip whose home it is (strips never
        migrate), so rotating parity onto it without end would leave a strip no slot."""
        d, n = self.directory, self.directory.geometry.ndisks
        for i in range(n):
            m = (want + i) % n
            if d.stripes - d.parity_count[m] - 1 >= self._homed[m]:
                return m
        return want

    def _free_stripe(self) -> int | None:
        d = self.directory
        if not d.free_stripes:
            return None
        hot = [s for s in d.free_stripes if d.is_hot(s)]
        return min(hot) if hot else min(d.free_stripes)

    def _partial(self, full: set[int]) -> list[Step]:
        """A PW into the PFS that covers most non-empty buffers (made by the cleaner if none)."""
        d = self.directory
        best, cover = None, 0
        for s in range(d.stripes):
            if d.free_count[s] and s not in d.free_stripes:
                c = len(full.intersection(d.free_members(s)))
                if c > cover or (c == cover and best is not None and d.is_hot(s) and not d.is_hot(best)):
                    best, cover = s, c
                    if c == len(full):
                        break
        if best is not None and cover == len(full):
            return [self._pw(best, full, d.free_members(best))]
        plan = self._targeted(full)
        if plan is not None and len(full.intersection(plan.free)) > cover:
            self._count_clean(plan)
            # a whole free stripe too gets a PW here: its parity stays where it was
            return list(plan.steps) + [self._pw(plan.victim, full, plan.free)]
        if best is None or not cover:  # last resort: a PW into a whole free stripe with a slot on a buffered member
            fits = [t for t in d.free_stripes if full.intersection(d.free_members(t))]
            if fits:
                best = min(fits, key=lambda t: (not d.is_hot(t), t))
        if best is None or not full.intersection(d.free_members(best)):
            raise RuntimeError("multibuffer: no free or partially free slot aligned with a buffer "
                               "(the directory has no dirty block on the buffered members)")
        return [self._pw(best, full, d.free_members(best))]

    def _targeted(self, full: set[int]) -> Any:
        """Clean the stripe with the fewest active slots among those with a dirty slot on a
        buffered member: its release frees a slot aligned with a buffer (section 2.2: the
        number of dirty blocks on a member is at least the number buffered for it)."""
        d = self.directory
        cands = set().union(*(d.dirty_on[m] for m in full)) if full else set()
        if not cands:
            return None
        v = min(cands, key=lambda s: (d.live_count[s], not d.is_hot(s), s))
        return generate(d, victim=v)

    def _pw(self, stripe: int, full: set[int], free: Iterable[int]) -> StripeWrite:
        d = self.directory
        slots = tuple((m, self._take(m)) for m in sorted(full.intersection(free)))
        kind = PW
        return self._stripe_write(StripeWrite(kind, stripe, d.parity[stripe], slots))

    def _stripe_write(self, w: StripeWrite) -> StripeWrite:
        self.stats[w.kind] += 1
        sizes = self.stats["sizes"]
        sizes[w.size] = sizes.get(w.size, 0) + 1
        return w

    def _count_clean(self, plan: Any) -> None:
        self.stats["cleanings"] += 1
        self.stats["swaps"] += plan.swaps
