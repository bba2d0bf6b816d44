"""Units and their allocation: what the write-back cache holds, and the room it has.

What a unit is comes from the organisation (``vraid.policies.cache``: a stripe or a PBG,
seed 000 Fig. 6); this module keeps the units it names. A unit holds its blocks in one
contiguous buffer of shape (data strips, rows, block), the layout the planner executes on,
and one state per block: D (dirty), C (clean) or E (empty). :class:`UnitStore` is the part of
:class:`~vraid.engine.cache.writeback.WriteBackCache` that finds the units holding a range
(:meth:`~UnitStore._spans`), allocates them (evicting the least recently used clean unit), and
makes a write that finds no room wait: a *write cache miss* (seed 003, section 2.1), counted,
until a destage frees room. Buffers of evicted units and of ended shadows go back to a pool.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from vraid.core.geometry import Extent
from vraid.errors import LostData

if TYPE_CHECKING:
    from vraid.policies.cache import UnitSpan

#: the states of a block: empty, clean, dirty (the numbers order them: E < C < D)
E, C, D = 0, 1, 2
LETTER = "ECD"


class Unit:
    """One cache unit: a stripe or a PBG, its blocks and their states."""

    __slots__ = ("span", "data", "state", "destaging", "shadow", "shadow_state", "slots", "shadow_slots",
                 "oldest", "shadow_oldest", "version")

    def __init__(self, span: "UnitSpan", data: np.ndarray) -> None:
        self.span = span
        self.data = data  # (nd, rows, block)
        self.state = np.zeros(data.shape[:2], dtype=np.int8)  # (nd, rows)
        self.destaging = False
        self.shadow: np.ndarray | None = None
        self.shadow_state: np.ndarray | None = None
        self.slots: dict[tuple[int, int], Any] = {}  # journal handle of each D block
        self.shadow_slots: dict[tuple[int, int], Any] = {}
        #: write sequence number of the oldest write not yet destaged (main / shadow)
        self.oldest = math.inf
        self.shadow_oldest = math.inf
        #: bumped whenever writes or a destage change the unit's contents or states
        self.version = 0

    @property
    def dirty(self) -> bool:
        return self.oldest != math.inf or self.shadow_oldest != math.inf

    def z(self) -> tuple[tuple[str, ...], ...]:
        """Z of seed 000 eq. (2): rows of D/C/E, one column per data strip."""
        return tuple(tuple(LETTER[s] for s in row) for row in self.state.T.tolist())


def rows_in(k: int, u: int, row0: int, rows: int, fb: int, lb: int) -> tuple[int, int] | None:
    """Rows (relative to row0) of data strip k inside this unit that blocks fb..lb cover."""
    lo = max(0, fb - k * u - row0)
    hi = min(rows - 1, lb - k * u - row0)
    return (lo, hi) if lo <= hi else None


class UnitStore:
    """The units of a :class:`~vraid.engine.cache.writeback.WriteBackCache` (which holds the
    state these methods use: ``units``, ``clean``, ``dirty_keys``, ``capacity``, the pool)."""

    @property
    def occupancy(self) -> float:
        return len(self.dirty_keys) / self.capacity

    def _new_buffer(self, span: "UnitSpan") -> np.ndarray:
        g = self.geometry
        shape = (g.data_disks, span.rows, g.block_size)
        while self._pool:
            buf = self._pool.pop()
            if buf.shape == shape:
                return buf
        return np.empty(shape, dtype=np.uint8)

    def _try_allocate(self, span: "UnitSpan") -> Unit | None:
        """A unit for ``span`` now, evicting the least recently used clean unit if needed."""
        if len(self.units) >= self.capacity:
            if not self.clean:
                return None
            victim, _ = self.clean.popitem(last=False)
            old = self.units.pop(victim)
            self._forget_stripe(old.span.stripe)
            self._pool.append(old.data)
            self.metrics.evictions += 1
        unit = Unit(span, self._new_buffer(span))
        self.units[span.key] = unit
        self._per_stripe[span.stripe] = self._per_stripe.get(span.stripe, 0) + 1
        return unit

    def _forget_stripe(self, stripe: int) -> None:
        n = self._per_stripe[stripe] - 1
        if n:
            self._per_stripe[stripe] = n
        else:
            del self._per_stripe[stripe]

    async def _allocate(self, span: "UnitSpan") -> Unit:
        """A unit for ``span``; waits (a write cache miss) until one can be had, and while
        its stripe is being written around the cache (no unit of it may appear meanwhile)."""
        missed = False
        while True:
            bypass = self._bypassing.get(span.stripe)
            if bypass is not None:
                await bypass.wait()
                continue
            unit = self.units.get(span.key)
            if unit is not None:
                return unit
            unit = self._try_allocate(span)
            if unit is not None:
                return unit
            if not missed:
                self.metrics.write_misses += 1
                missed = True
            await self._wait_for_progress()

    def _spans(self, stripe: int, fb: int, lb: int) -> list["UnitSpan"]:
        """Units holding blocks fb..lb (stripe data order) of ``stripe``, each once."""
        u = self.geometry.u
        if lb - fb + 1 >= u:
            ranges = [(0, u - 1)]
        elif fb % u <= lb % u:
            ranges = [(fb % u, lb % u)]
        else:  # the range wraps from the end of one strip into the next
            ranges = [(0, lb % u), (fb % u, u - 1)]
        if len(ranges) == 1:
            spans = list(self.organisation.units(stripe, *ranges[0]))
            if len(spans) == 1:  # one unit (most writes and reads of a block): nothing to merge
                return spans
        else:
            spans = [span for r0, r1 in ranges for span in self.organisation.units(stripe, r0, r1)]
        seen: dict[int, "UnitSpan"] = {}
        for span in spans:
            seen.setdefault(span.key, span)
        return list(seen.values())

    def _one_extent(self, first: int, end: int) -> Extent | None:
        """The one extent of the host byte range first..end-1 (end > first) when the layout
        is static and the range lies inside one stripe's data (what ``mapping.extents`` gives,
        by division); None otherwise (the caller asks the mapping)."""
        per = self.geometry.stripe_data_bytes
        stripe = first // per
        if not self._static or (end - 1) // per != stripe:
            return None
        return Extent(stripe, first - stripe * per, end - first, 0)

    def _touch(self, key: int) -> None:
        self.order.read(key)
        if key in self.clean:
            self.clean.move_to_end(key)

    async def _wait_for_progress(self) -> None:
        """Wait until a destage (or a release) makes progress.

        Raises:
            LostData: a destage failed meanwhile because its members are gone beyond what the
                redundancy survives: the units it holds can never be written, so room may never
                come (a write waiting for it would wait forever; EIO at the FUSE boundary)."""
        self.waiters += 1
        self._notify()
        progress = self._progress
        errors = self.metrics.destage_errors
        try:
            await progress.wait()
        finally:
            self.waiters -= 1
        if self.metrics.destage_errors != errors and isinstance(self.last_error, LostData):
            raise self.last_error

