"""The write-back cache and its destager (the mechanism; the choices are policies).

What a unit is comes from the organisation (``vraid.policies.cache``: a
stripe or a PBG, seed 000 Fig. 6), which dirty unit goes next from the
destage order (``vraid.policies.order``: LRW, LRU, FIFO, CSCAN), and when
and how many destages run from the destage scheduler
(``vraid.policies.destage``: HLWM, adaptive HLWM, LT, PI, idle). This module
only keeps the units and carries those decisions out.

Units and states. A unit holds its blocks in one contiguous buffer of shape
(data strips, rows, block), the layout the planner executes on, and one
state per block: D (dirty), C (clean) or E (empty). Reads are served from
valid (C or D) blocks; a read miss reads the members and fills the unit's
empty blocks as clean. A write makes its blocks D; a block that was already
D is a *write cache overwrite* and one that was not is a *write cache hit*
(seed 003, section 2.1). A write that finds no unit free, and no clean unit
to evict, waits: a *write cache miss*, counted, until a destage frees room.

Entry states of seed 003, section 3.2. A write to a unit while it is being
destaged must neither disturb the destage nor be lost: it goes to the unit's
*shadow* (the DDIRTY entries), a second buffer of the same shape. When the
destage ends, the destaged D blocks become C and the shadow's D blocks are
merged into the unit as its new dirty data. Nothing is lost or written
twice.

Below the cache. The cache never sees the array: it destages each unit
to a *target* (:mod:`vraid.engine.target`; the RAID planner/executor, or a
buffer that destages further, e.g. a log disk) and reads its misses and
partial-block fills from it. A host read's miss may also be handed a
``fetch`` from above (:mod:`vraid.engine.readpath`: the clean-block read
cache, then the target).

Durability. Without a journal the cache is volatile: fsync of the image
drains every unit dirty at the time of the call (``flush``). With one
(:mod:`vraid.engine.journal`; ``--nvram FILE`` is an NVRAM journal) every
dirty block is also put into the journal when it is written, so fsync only
syncs it, and a new mount replays it.

Concurrency. Code between two awaits runs alone (trio), so what matters is
what a host write holds across an await. Before it touches a unit it may wait
for NVRAM slots and for room (``_allocate``); it looks the unit up only after
those. A write of part of a block then reads the rest of the block (the
fill), and during that read anything may happen to the unit: other writes
fill or dirty the same block, a destage begins or ends (ending returns the
shadow buffer to the pool, and the next destage gets a new shadow), a
destaged unit turns clean and is evicted (its buffer goes to another unit).
So the fill reads into a buffer of its own, copies only blocks still empty,
and afterwards the write checks that the unit is still cached, that it is
in the same destage phase and that its state array (the main one, or the
very shadow it chose) is still the unit's; if not, it starts over. A write
that landed in a stale buffer would be lost to the members, and its write
sequence number would either be missed by ``drain`` or, for a stale shadow,
keep the unit dirty forever (an fsync that never returns). Writes are
acknowledged only when ``write`` returns, so ``flush`` may take
``upto = write_seq`` at its call: a write still in progress then is not yet
promised, and if it is absorbed later with a smaller number, drain merely
waits for it too.

Destager. One trio task asks the scheduler for a decision after every cache
change and at the times it asks to be called again, and keeps that many
destages in flight. It always destages at least one unit while host writes
wait for space or an fsync drains the cache. Destage member requests use the
destage priority class, so host reads go first (seed 003, section 3.1).
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import trio

from vraid.core.geometry import Extent
from vraid.core.mapping import StaticMapping
from vraid.errors import MemberIOError
from .events import Cause, DestageEvent, WatermarksEvent
from .members import Priority
from .stripe import StripeBuffer

if TYPE_CHECKING:
    from .guard import PolicyGuard
    from .journal import Journal
    from .target import Target
    from vraid.policies.cache import Organisation, UnitSpan
    from vraid.policies.destage.base import DestageScheduler
    from vraid.policies.order import DestageOrder

log = logging.getLogger(__name__)

E, C, D = 0, 1, 2
_LETTER = "ECD"


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
        return tuple(tuple(_LETTER[s] for s in row) for row in self.state.T.tolist())


@dataclass
class CacheMetrics:
    read_blocks: int = 0
    read_hit_blocks: int = 0
    write_blocks: int = 0
    write_hits: int = 0
    overwrites: int = 0
    write_misses: int = 0
    destages_started: int = 0
    destages_finished: int = 0
    destage_errors: int = 0
    evictions: int = 0
    nvram_replayed: int = 0
    #: (time, occupancy, hwm, lwm, destaging) samples for plots and the TUI
    history: list[tuple[float, float, float | None, float | None, int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "history"}
        out["read_hit_ratio"] = self.read_hit_blocks / self.read_blocks if self.read_blocks else 0.0
        out["overwrite_ratio"] = self.overwrites / self.write_blocks if self.write_blocks else 0.0
        return out


class WriteBackCache:
    #: :meth:`_commit` of one whole block takes a shortcut (the same steps without the range
    #: arithmetic); tests switch it off to compare it with the general steps
    _one_block = True

    def __init__(
        self,
        target: "Target",
        organisation: "Organisation",
        order: "DestageOrder",
        scheduler: "DestageScheduler",
        size: int,
        journal: "Journal | None" = None,
        history_limit: int = 100_000,
        guard: "PolicyGuard | None" = None,
    ) -> None:
        g = target.geometry
        self.target = target
        self.geometry = g
        self.mapping = target.mapping  # every logical-to-physical translation (vraid.core.mapping)
        self.clock = target.clock
        self.units: dict[int, Unit] = {}
        #: every policy call goes through the guard's wrappers (vraid.engine.guard), if given
        self.guard = guard
        self.organisation = self._guarded("cache", organisation, units=self.units)
        self.order = self._guarded("destage_order", order)
        self.scheduler = self._guarded("destage", scheduler)
        self.unit_bytes = organisation.unit_blocks() * g.block_size
        self.capacity = max(1, size // self.unit_bytes)  # N_W, in units
        self.clean: OrderedDict[int, None] = OrderedDict()  # evictable units, least recently used first
        self.dirty_keys: set[int] = set()
        self.in_flight = 0
        self.waiters = 0
        self.draining = 0
        self.paused = False
        self.write_seq = 0
        self.last_host = 0.0  # set when the destager starts (the clock needs a running loop)
        self.metrics = CacheMetrics()
        self.journal = journal
        #: journal records of destaged blocks (handle, stripe), cleared only once the target is
        #: flushed: until then a power loss could lose the member copy, and the journal's copy
        #: must survive it
        self._pending_release: list[tuple[Any, int]] = []
        self._settling = False
        self._changed = trio.Event()
        self._progress = trio.Event()
        self._pool: list[np.ndarray] = []
        self._history_limit = history_limit
        #: destage adjacent dirty units of one stripe together (:meth:`_neighbours`); the
        #: mount daemon turns it on, simulations keep the papers' one unit per destage
        self.coalesce = False
        #: whether a read miss allocates units for what it read (as clean blocks); the mount
        #: daemon turns it off, so that a read the cache cannot serve costs what it costs
        #: without a cache (a PBG unit per row read would otherwise be allocated and filled)
        self.fill_misses = True
        #: skip the scheduler's call after a host write that changed none of the counts it
        #: reads, when it says it reads only counts (DestageScheduler.decides_on_counts): the
        #: mount daemon turns it on (one destager wake-up less per overwrite); simulations keep
        #: the call, because a task fewer in a batch shifts trio's seeded shuffle of every later
        #: batch, and recorded experiments should reproduce byte for byte
        self.quiet_overwrites = False
        #: units held per stripe: a read of a stripe with none skips the unit lookups
        self._per_stripe: dict[int, int] = {}
        #: the static layout: a host range inside one stripe's data is one extent of that
        #: stripe, worked out by division (a read need not build the extent list)
        self._static = type(self.mapping) is StaticMapping
        #: write a host write's whole stripes straight to the target when the cache holds
        #: nothing of them (see :meth:`_may_bypass`): the mount daemon turns it on; simulations
        #: keep the papers' caches, which absorb every write
        self.bypass_whole_stripes = False
        #: stripes being written around the cache now, and the event their end sets
        self._bypassing: dict[int, trio.Event] = {}
        #: journal records awaiting release (``_pending_release``) per stripe
        self._pending_stripes: dict[int, int] = {}
        #: bumped when the journal is emptied (:meth:`reset_journal`)
        self._journal_epoch = 0
        #: whole stripes written around the cache (a counter for status and ``vraid top``)
        self.bypassed_stripes = 0
        #: bypasses completed, and how many of them the last completed flush of the target
        #: covers (with a journal, ``flush`` must flush the target too while any is not
        #: covered: the journal does not hold those blocks)
        self._bypass_gen = 0
        self._bypass_flushed = 0
        self.hwm: float | None = None
        self.lwm: float | None = None
        self.last_error: MemberIOError | None = None

    # -- bookkeeping -------------------------------------------------------------
    def _guarded(self, family: str, policy, **extra):
        return self.guard.wrap(family, policy, **extra) if self.guard is not None else policy

    @property
    def occupancy(self) -> float:
        return len(self.dirty_keys) / self.capacity

    def _notify(self) -> None:
        self._changed.set()

    def _progressed(self) -> None:
        self._progress.set()
        self._progress = trio.Event()

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

    # -- host writes -------------------------------------------------------------
    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        src = np.frombuffer(data, dtype=np.uint8)
        g = self.geometry
        self.last_host = self.clock.now()
        self.write_seq += 1
        seq = self.write_seq
        bs = g.block_size
        dirty = len(self.dirty_keys)
        journal = self.journal
        # units absorbed without an await share one journal batch (_absorb_now); a unit that
        # must wait (for journal room, for a free unit, for a partial block's fill) first puts
        # that batch, then goes through _absorb as before. Each unit sees the same checks, in
        # the same order, as when every unit went through _absorb: only the puts are merged.
        batch = _Batch(journal.available()) if journal is not None else None
        one = self._one_extent(offset, offset + len(data))
        for ext in (one,) if one is not None else self.mapping.extents(offset, len(data)):
            fb = ext.start // bs
            lb = (ext.start + ext.length - 1) // bs
            aligned = not (ext.start % bs or (ext.start + ext.length) % bs)
            # a whole stripe: its bytes as (data strip, row, block), the units' own layout
            whole = (src[ext.host_offset : ext.host_offset + ext.length].reshape(g.data_disks, g.u, bs)
                     if ext.start == 0 and ext.length == g.stripe_data_bytes else None)
            if whole is not None and self.bypass_whole_stripes and self._may_bypass(ext.stripe):
                if batch is not None:
                    self._put_batch(batch)
                bypassed = await self._bypass(ext.stripe, whole)
                if batch is not None:
                    batch.available = journal.available()
                if bypassed:
                    continue
            for span in self._spans(ext.stripe, fb, lb):
                if aligned and self._absorb_now(span, ext, src, fb, lb, seq, batch, whole):
                    continue
                if batch is not None:
                    self._put_batch(batch)
                await self._absorb(span, ext, src, fb, lb, seq)
                if batch is not None:
                    batch.available = journal.available()
        if batch is not None:
            self._put_batch(batch)
        # an overwrite of dirty units changes nothing a count-based scheduler reads
        if (len(self.dirty_keys) != dirty or self.waiters or not self.quiet_overwrites
                or not getattr(self.scheduler, "decides_on_counts", False)):
            self._notify()

    def _may_bypass(self, stripe: int) -> bool:
        """Whether a host write of all of ``stripe`` may go around the cache, straight to
        the target as a full-stripe write (no parity read: nothing for a cache to save).

        Only if the cache holds nothing of the stripe that the write would have to merge
        with: no dirty or destaging unit, no journal record still awaiting release (a
        replay after a crash would put those older blocks over the new ones), no bypass of
        it already running. Clean units of the stripe are dropped (they would be stale).
        A deliberate difference from the seeds' caches, which absorb every write: a mount
        turns it on (``bypass_whole_stripes``), as controllers and bcache send large
        sequential writes around their caches, so that a cache never makes a sequential
        writer pay for copying and journaling blocks it would destage whole anyway."""
        if stripe in self._bypassing or stripe in self._pending_stripes:
            return False
        if stripe in self._per_stripe:
            held = [unit for span in self._spans(stripe, 0, self.geometry.u - 1)
                    if (unit := self.units.get(span.key)) is not None]
            if any(unit.span.key not in self.clean for unit in held):
                return False  # dirty, destaging, or pinned by a write in progress
            for unit in held:
                key = unit.span.key
                del self.clean[key]
                del self.units[key]
                self._forget_stripe(stripe)
                self._pool.append(unit.data)
                self.metrics.evictions += 1
        return True

    async def _bypass(self, stripe: int, whole: np.ndarray) -> bool:
        """Write ``whole`` (the stripe's data as (data strip, row, block)) to the target as
        one full-stripe write at host priority. No unit of the stripe may appear until it
        ends (writes and read fills of the stripe wait or skip, see :meth:`_allocate` and
        :meth:`read`). False if the target failed: the caller absorbs the stripe instead,
        as without a bypass, and the destager writes it later."""
        g = self.geometry
        done = self._bypassing[stripe] = trio.Event()
        try:
            write_stripe = getattr(self.target, "write_stripe", None)
            if write_stripe is not None:  # the array's own path for a host write of the stripe
                await write_stripe(stripe, whole)
            else:
                buf = StripeBuffer(self.mapping, stripe, row0=0, rows=g.u, data=np.array(whole))
                await self.target.write_unit(buf, (("D",) * g.data_disks,) * g.u, priority=Priority.HOST, cause=Cause.HOST)
        except MemberIOError as exc:
            log.warning("write of stripe %d around the cache failed (%s): the cache takes it", stripe, exc)
            return False
        finally:
            del self._bypassing[stripe]
            self.write_seq += 1  # a read whose member read overlapped this write fills nothing in
            done.set()
        self._bypass_gen += 1
        self.bypassed_stripes += 1
        return True

    def _cells(self, span: "UnitSpan", fb: int, lb: int) -> list[tuple[int, int, int]]:
        """(data strip, first row, last row) of the unit's blocks among fb..lb (rows relative to the unit)."""
        u, row0, rows = self.geometry.u, span.row0, span.rows
        if fb == lb:  # one block (most host writes)
            k, r = divmod(fb, u)
            r -= row0
            return [(k, r, r)] if 0 <= r < rows else []
        return [(k, *r) for k in range(fb // u, lb // u + 1) if (r := _rows_in(k, u, row0, rows, fb, lb))]

    def _absorb_now(self, span: "UnitSpan", ext, src: np.ndarray, fb: int, lb: int, seq: int,
                    batch: "_Batch | None", whole: np.ndarray | None = None) -> bool:
        """:meth:`_absorb` of a block-aligned part of a write if it needs no await (journal
        room, a unit now); its journal records join ``batch``. False, with nothing changed,
        if it would have to wait: then :meth:`_absorb` does it."""
        cells = self._cells(span, fb, lb)
        if not cells:
            return True
        if batch is not None and batch.available < (1 if fb == lb else sum(r1 - r0 + 1 for _, r0, r1 in cells)):
            return False
        if self._bypassing and span.stripe in self._bypassing:
            return False  # _absorb waits for the bypass to end
        unit = self.units.get(span.key)
        if unit is None:
            unit = self._try_allocate(span)
            if unit is None:
                return False
        self._commit(unit, span, ext, src, cells, seq, batch, whole)
        return True

    def _put_batch(self, batch: "_Batch") -> None:
        """Put the records collected in ``batch`` into the journal (one put_many), note their handles."""
        if not batch.items:
            return
        items, dests = batch.items, batch.dests
        batch.items, batch.dests = [], []
        journal = self.journal
        put_many = getattr(journal, "put_many", None)  # optional in the Journal protocol
        handles = put_many(items) if put_many is not None and len(items) > 1 else [journal.put(*it) for it in items]
        for (slots, key), handle in zip(dests, handles):
            slots[key] = handle

    def _commit(self, unit: Unit, span: "UnitSpan", ext, src: np.ndarray, cells, seq: int,
                batch: "_Batch | None", whole: np.ndarray | None = None) -> None:
        """Copy the write's bytes into ``unit`` (its shadow while destaged), mark them D, count
        them and queue their journal records in ``batch``. No await: one atomic step.
        ``whole``: the write's bytes of the unit's stripe as (data strip, row, block) when it
        covers the whole stripe (then every row of the unit is written: one copy)."""
        g = self.geometry
        bs, strip, nd = g.block_size, g.strip_size, g.data_disks
        key = span.key
        shadow, data, state = self._pin_target(unit, span)
        row0 = span.row0
        start, end = ext.start, ext.start + ext.length
        m = self.metrics
        if whole is not None:  # every block of the unit: one copy, one state update
            data[:] = whole[:, row0 : row0 + span.rows]
            n = state.size
            overwrites = int(np.count_nonzero(state == D))
            state.fill(D)
            m.overwrites += overwrites
            m.write_hits += n - overwrites
            m.write_blocks += n
            cells = ()
        if whole is None and end - start == bs and not start % bs and self._one_block:
            # one whole block (most host writes): the same steps, without the range arithmetic
            ((k, r, _),) = cells
            data[k, r] = src[ext.host_offset : ext.host_offset + bs]
            if state[k, r] == D:
                m.overwrites += 1
            else:
                m.write_hits += 1
                state[k, r] = D
            m.write_blocks += 1
            if batch is not None:
                slots = unit.shadow_slots if shadow else unit.slots
                cell = (k, r)
                old = slots.get(cell)
                if old is None:
                    batch.available -= 1
                batch.items.append((self.mapping.block_of(ext.stripe, k, row0 + r), data[k, r], old))
                batch.dests.append((slots, cell))
                batch = None  # recorded
            cells = ()
        if cells:
            flat = data.reshape(nd, -1)  # a view: the buffers are contiguous
            base = row0 * bs
            off = ext.host_offset - start
        for k, r0, r1 in cells:
            strip0 = k * strip
            lo = max(start, strip0 + (row0 + r0) * bs)
            hi = min(end, strip0 + (row0 + r1 + 1) * bs)
            flat[k, lo - strip0 - base : hi - strip0 - base] = src[off + lo : off + hi]
            n = r1 - r0 + 1
            if n == 1:  # one block: numpy scalars, not a comparison array
                overwrites = 1 if state[k, r0] == D else 0
                state[k, r0] = D
            else:
                before = state[k, r0 : r1 + 1]
                overwrites = int(np.count_nonzero(before == D))
                before[:] = D
            m.overwrites += overwrites
            m.write_hits += n - overwrites
            m.write_blocks += n
        if batch is not None:  # every block of the unit this write touched
            slots = unit.shadow_slots if shadow else unit.slots
            block_of, stripe = self.mapping.block_of, ext.stripe
            items, dests = batch.items, batch.dests
            fresh = 0
            for k, r0, r1 in (((k, 0, span.rows - 1) for k in range(nd)) if whole is not None else cells):
                rows = data[k]
                for r in range(r0, r1 + 1):
                    cell = (k, r)
                    old = slots.get(cell)
                    if old is None:
                        fresh += 1
                    items.append((block_of(stripe, k, row0 + r), rows[r], old))
                    dests.append((slots, cell))
            batch.available -= fresh
        unit.version += 1
        if shadow:
            unit.shadow_oldest = min(unit.shadow_oldest, seq)
        else:
            was_dirty = unit.oldest != math.inf
            unit.oldest = min(unit.oldest, seq)
            if was_dirty:
                self.order.written(key)
            else:
                self.order.dirtied(key)
        self.clean.pop(key, None)
        self.dirty_keys.add(key)

    async def _absorb(self, span: "UnitSpan", ext, src: np.ndarray, fb: int, lb: int, seq: int) -> None:
        g = self.geometry
        bs = g.block_size
        cells = self._cells(span, fb, lb)
        if not cells:
            return
        journal = self.journal
        if journal is not None:
            need = sum(r1 - r0 + 1 for _, r0, r1 in cells)
            while journal.available() < need:
                await self._wait_for_progress()
        unit = await self._allocate(span)
        shadow, data, state = self._pin_target(unit, span)
        if ext.start % bs or (ext.start + ext.length) % bs:  # a sub-block write needs the rest of its block(s)
            try:
                current = await self._fill_partial(unit, span, ext, fb, lb, data, state, shadow)
            except BaseException:
                if self.units.get(span.key) is unit and not unit.dirty and not unit.destaging:
                    self.clean[span.key] = None  # unpinned: nothing was written to it
                raise
            if not current:  # evicted, or a destage began or ended, while the fill read: start over
                return await self._absorb(span, ext, src, fb, lb, seq)
        batch = _Batch(0) if journal is not None else None
        self._commit(unit, span, ext, src, cells, seq, batch)
        if batch is not None:
            self._put_batch(batch)

    def _pin_target(self, unit: Unit, span: "UnitSpan") -> tuple[bool, np.ndarray, np.ndarray]:
        """Pin ``unit`` (a clean unit must not be evicted while a write fills it) and say where
        a write to it goes now: (shadow?, data, states): its shadow while it is being destaged
        (the DDIRTY entries, made on first use), else the unit itself."""
        self.clean.pop(span.key, None)
        if unit.destaging and unit.shadow is None:
            unit.shadow = self._new_buffer(span)
            unit.shadow_state = np.zeros_like(unit.state)
        shadow = unit.destaging
        data = unit.shadow if shadow else unit.data
        state = unit.shadow_state if shadow else unit.state
        assert data is not None and state is not None
        return shadow, data, state

    def _current(self, unit: Unit, span, state, shadow: bool) -> bool:
        """Whether ``state`` is still what a write chose before an await: the unit not
        evicted, no destage begun or ended (a new destage means a new shadow)."""
        return (self.units.get(span.key) is unit and unit.destaging == shadow
                and (unit.shadow_state if shadow else unit.state) is state)

    async def _fill_partial(self, unit: Unit, span, ext, fb: int, lb: int, data, state, shadow: bool) -> bool:
        """A sub-block write needs the rest of its block: from the cache if valid, else the
        members. False if the read from the members outlived the buffer it was for (see
        the module docstring, Concurrency): nothing was filled then."""
        g = self.geometry
        bs, u = g.block_size, g.u
        partial = set()
        if ext.start % bs:
            partial.add(fb)
        if (ext.start + ext.length) % bs:
            partial.add(lb)
        need = []
        for b in sorted(partial):
            k, row = divmod(b, u)
            r = row - span.row0
            if not 0 <= r < span.rows or state[k, r] != E:
                continue
            if shadow and unit.state[k, r] != E:
                data[k, r] = unit.data[k, r]
                state[k, r] = C
                continue
            need.append((k, r))
        if not need:
            return True
        # read into a buffer of our own: meanwhile another write may make a needed block D
        # (the old bytes must not overwrite it) or the unit's buffer may go back to the pool
        buf = StripeBuffer(self.mapping, span.stripe, row0=span.row0, rows=span.rows, data=np.empty_like(data))
        await self.target.read_blocks(buf, need, priority=Priority.HOST)  # reconstructs a missing member's blocks
        if not self._current(unit, span, state, shadow):
            return False
        for k, r in need:
            if state[k, r] == E:
                data[k, r] = buf.data[k, r]
                state[k, r] = C
        return True

    async def _wait_for_progress(self) -> None:
        self.waiters += 1
        self._notify()
        progress = self._progress
        try:
            await progress.wait()
        finally:
            self.waiters -= 1

    # -- host reads --------------------------------------------------------------
    async def read(self, offset: int, length: int, fetch=None) -> bytes:
        """Serve valid blocks from the cache; read the rest from below and fill them in as clean.

        What the cache holds is copied *before* any member read: during that
        read a dirty block may be destaged and its unit evicted, and the
        members' bytes read before the destage would be stale. Empty blocks
        are filled only into units that did not change meanwhile.

        ``fetch(offset, length, need)``: where the misses come from (the read
        path's read cache, then the target); ``need`` marks the blocks of the
        block-aligned range the cache does not hold (None: all of them). Default: the target.
        """
        g = self.geometry
        bs = g.block_size
        self.last_host = self.clock.now()
        first = offset // bs * bs
        end = -(-(offset + length) // bs) * bs
        nblocks = (end - first) // bs
        fill = self.fill_misses
        one = self._one_extent(first, end)
        if one is not None:  # most host reads
            if not fill and one.stripe not in self._per_stripe:  # nothing of it cached: as below
                return await self._below(offset, length, first, end, fetch)
            extents = [one]
        else:
            extents = list(self.mapping.extents(first, end - first))
        m = self.metrics
        if not fill and not any(ext.stripe in self._per_stripe for ext in extents):
            # nothing of the range cached, nothing to fill in: the members' bytes as they are
            return await self._below(offset, length, first, end, fetch)
        spans_of_one = None  # the units of a one-extent read, asked of the organisation once
        if len(extents) == 1:
            ext = extents[0]
            fb = ext.start // bs
            spans_of_one = self._spans(ext.stripe, fb, fb + nblocks - 1)
            found = self._strip_lookup(ext, nblocks, spans_of_one) if ext.stripe in self._per_stripe else None
            if found is not None:
                if found[0]:  # every block held
                    held = found[1]
                    m.read_blocks += nblocks
                    m.read_hit_blocks += nblocks
                    head = offset - first
                    return held if head == 0 and length == len(held) else held[head : head + length]
                if not fill:  # none held, no unit to allocate
                    seen = [(unit, unit.version) for unit in found[1]]
                    return await self._below(offset, length, first, end, fetch, seen, ext)
        out = bytearray(end - first)
        view = np.frombuffer(out, dtype=np.uint8)
        hits = np.zeros(nblocks, dtype=bool)
        seen: list[tuple[Unit, int, object, int, int]] = []
        absent: list[tuple["UnitSpan", object, int, int]] = []
        seq = self.write_seq
        for ext in extents:
            if not fill and ext.stripe not in self._per_stripe:
                continue  # nothing of this stripe is cached, and nothing will be filled in
            fb, lb = ext.start // bs, (ext.start + ext.length - 1) // bs
            if ext.start == 0 and ext.length == g.stripe_data_bytes:  # a whole stripe: (strip, row, block)
                h = ext.host_offset
                whole = view[h : h + ext.length].reshape(g.data_disks, g.u, bs)
                whole_hits = hits[h // bs : (h + ext.length) // bs].reshape(g.data_disks, g.u)
            else:
                whole = None
            for span in self._spans(ext.stripe, fb, lb) if spans_of_one is None else spans_of_one:
                unit = self.units.get(span.key)
                if unit is not None:
                    if whole is not None and unit.shadow_state is None and unit.state.all():
                        # every block of the unit valid (E is 0), no shadow: its rows in one copy
                        whole[:, span.row0 : span.row0 + span.rows] = unit.data
                        whole_hits[:, span.row0 : span.row0 + span.rows] = True
                    else:
                        _copy_valid(unit, span, ext, fb, lb, view, hits, g)
                    seen.append((unit, unit.version, ext, fb, lb))
                elif fill:
                    absent.append((span, ext, fb, lb))
        cached = int(np.count_nonzero(hits))
        m.read_blocks += nblocks
        m.read_hit_blocks += cached
        if cached == nblocks:
            for unit, *_ in seen:
                self._touch(unit.span.key)
        else:
            below = await (fetch(first, end - first, ~hits) if fetch is not None else self.target.read(first, end - first))
            if not seen and not absent:  # nothing cached, nothing to fill: the members' bytes as they are
                head = offset - first
                return bytes(below) if head == 0 and length == len(below) else bytes(below[head : head + length])
            members = np.frombuffer(below, dtype=np.uint8)
            view[~np.repeat(hits, bs)] = members[~np.repeat(hits, bs)]
            for unit, version, ext, fb, lb in seen:
                if self.units.get(unit.span.key) is unit and unit.version == version and not unit.destaging:
                    _fill_empty(unit, unit.span, ext, fb, lb, view, g)
                self._touch(unit.span.key)
            if self.write_seq == seq:  # no write meanwhile: the members' bytes are the newest
                for span, ext, fb, lb in absent:
                    if span.key in self.units or span.stripe in self._bypassing:
                        continue
                    unit = self._try_allocate(span)
                    if unit is None:
                        break
                    self.clean[span.key] = None
                    _fill_empty(unit, span, ext, fb, lb, view, g)
        head = offset - first
        return bytes(out[head : head + length])

    def passes_by(self, first: int, end: int, now: float) -> bool:
        """Whether a host read of the blocks first..end-1, inside one stripe's data, would go
        straight below (:meth:`read`'s first branch): the cache fills nothing in on a miss
        and holds nothing of the stripe. If so the read is counted here as :meth:`read`
        counts it (``now``: when it arrived), and the caller reads the members itself
        (``Array._read_now``): no organisation is asked, so no policy runs."""
        if self.fill_misses or not self._static or first // self.geometry.stripe_data_bytes in self._per_stripe:
            return False
        self.last_host = now
        self.metrics.read_blocks += (end - first) // self.geometry.block_size
        return True

    def _one_extent(self, first: int, end: int) -> Extent | None:
        """The one extent of the host byte range first..end-1 (end > first) when the layout
        is static and the range lies inside one stripe's data (what ``mapping.extents`` gives,
        by division); None otherwise (the caller asks the mapping)."""
        per = self.geometry.stripe_data_bytes
        stripe = first // per
        if not self._static or (end - 1) // per != stripe:
            return None
        return Extent(stripe, first - stripe * per, end - first, 0)

    async def _below(self, offset: int, length: int, first: int, end: int, fetch,
                     seen: list[tuple[Unit, int]] = (), ext=None) -> bytes:
        """A read of blocks first..end-1 that the cache holds none of and allocates no
        unit for (``fill_misses`` off): the bytes from below. ``seen``: units of the one
        extent ``ext`` that hold other blocks, with their versions before the read; as in
        the general path, their empty blocks of the range are filled from what was read if
        they did not change meanwhile, and they are touched."""
        g = self.geometry
        nblocks = (end - first) // g.block_size
        self.metrics.read_blocks += nblocks
        below = await (fetch(first, end - first, None) if fetch is not None  # None: every block needed
                       else self.target.read(first, end - first))
        if seen:
            view = np.frombuffer(below, dtype=np.uint8)
            fb = ext.start // g.block_size
            for unit, version in seen:
                if self.units.get(unit.span.key) is unit and unit.version == version and not unit.destaging:
                    _fill_empty(unit, unit.span, ext, fb, fb + nblocks - 1, view, g)
                self._touch(unit.span.key)
        head = offset - first
        return bytes(below) if head == 0 and length == len(below) else bytes(below[head : head + length])

    def _strip_lookup(self, ext, nblocks: int, spans: list["UnitSpan"]) -> tuple[bool, Any] | None:
        """The read's fast path, for the blocks of ``ext`` (``nblocks`` of them, inside one
        data strip; ``spans``, the units holding them), in units without a shadow:

        * ``(True, data)``: the cache holds every block valid: their bytes, one copy per
          unit, the units touched as the general path touches them;
        * ``(False, units)``: it holds none of them (no unit, or only empty blocks of
          ``units``, which the caller fills and touches once it has read them from below, as
          the general path does);
        * None, with nothing changed, for anything else (the general path serves the read).
        """
        g = self.geometry
        bs, u = g.block_size, g.u
        fb = ext.start // bs
        k = fb // u
        base = fb - k * u  # the first block's row in strip k
        last = base + nblocks - 1
        if last >= u:
            return None
        units = self.units
        runs, touched = [], []
        held = missed = 0
        for span in spans:
            unit = units.get(span.key)
            if unit is None:
                missed += 1
                continue
            if unit.shadow_state is not None:
                return None
            touched.append(unit)
            lo = max(0, base - span.row0)
            hi = min(span.rows - 1, last - span.row0)
            if lo > hi:
                continue
            state = unit.state[k]  # E is 0: a block not held
            if lo == hi:
                valid = state[lo] != E
            else:
                rows = state[lo : hi + 1]
                valid = bool(rows.all())
                if not valid and rows.any():
                    return None  # some held, some not
            if valid:
                held += hi - lo + 1
                runs.append((span.row0 + lo - base, unit, lo, hi))
            else:
                missed += 1
        if not held:
            return False, touched
        if missed or held != nblocks:
            return None
        if len(runs) == 1:
            _, unit, lo, hi = runs[0]
            data = unit.data[k, lo : hi + 1].tobytes()
        else:
            out = bytearray(nblocks * bs)
            view = memoryview(out)  # a bytearray's own slice assignment takes no numpy array
            for at, unit, lo, hi in runs:
                view[at * bs : (at + hi - lo + 1) * bs] = unit.data[k, lo : hi + 1].reshape(-1)
            data = bytes(out)
        for unit in touched:
            self._touch(unit.span.key)
        return True, data

    def block_states(self, first: int, end: int) -> np.ndarray:
        """Per block of the block-aligned byte range first..end: E, C or D as the cache
        holds it (D also for a block written while its unit is destaged, DDIRTY)."""
        g = self.geometry
        bs, u, strip = g.block_size, g.u, g.strip_size
        out = np.zeros((end - first) // bs, dtype=np.int8)
        for ext in g.extents(first, end - first):
            fb, lb = ext.start // bs, (ext.start + ext.length - 1) // bs
            for span in self._spans(ext.stripe, fb, lb):
                unit = self.units.get(span.key)
                if unit is None:
                    continue
                for k in range(g.data_disks):
                    r = _rows_in(k, u, span.row0, span.rows, fb, lb)
                    if r is None:
                        continue
                    r0, r1 = r
                    at = (ext.host_offset + k * strip + (span.row0 + r0) * bs - ext.start) // bs
                    states = unit.state[k, r0 : r1 + 1]
                    if unit.shadow_state is not None:
                        states = np.maximum(states, unit.shadow_state[k, r0 : r1 + 1])
                    out[at : at + r1 - r0 + 1] = np.maximum(out[at : at + r1 - r0 + 1], states)
        return out

    def _touch(self, key: int) -> None:
        self.order.read(key)
        if key in self.clean:
            self.clean.move_to_end(key)

    # -- the destager --------------------------------------------------------------
    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Destage according to the scheduler until cancelled."""
        from vraid.policies.destage.base import CacheState

        self.last_host = self.clock.now()
        async with trio.open_nursery() as nursery:
            task_status.started()
            while True:
                now = self.clock.now()
                decision = self.scheduler.decide(
                    CacheState(now=now, dirty=len(self.dirty_keys), capacity=self.capacity, destaging=self.in_flight,
                               host_idle=now - self.last_host, waiters=self.waiters)
                )
                self._record(now, decision)
                want = 0 if self.paused else decision.concurrency
                if (self.waiters or self.draining) and not self.paused:
                    want = max(want, 1, decision.concurrency)
                    if self.draining:
                        want = max(want, 8)
                if self.waiters and self._pending_release and not self._settling:
                    nursery.start_soon(self._settle)  # writes wait for NVRAM slots
                while self.in_flight < want:
                    key = self.order.next()
                    if key is None:
                        break
                    self.order.removed(key)
                    self.in_flight += 1
                    group = self._neighbours(self.units[key]) if self.coalesce else [self.units[key]]
                    nursery.start_soon(self._destage_units, group)
                self._changed = trio.Event()
                deadline = decision.recheck if decision.recheck is not None else math.inf
                with trio.move_on_at(deadline):
                    await self._changed.wait()

    def _record(self, now: float, decision) -> None:
        if decision.hwm != self.hwm or decision.lwm != self.lwm:
            self.hwm, self.lwm = decision.hwm, decision.lwm
            self.target.events.publish(WatermarksEvent(time=now, hwm=decision.hwm, lwm=decision.lwm))
        h = self.metrics.history
        sample = (now, self.occupancy, decision.hwm, decision.lwm, self.in_flight)
        if not h or h[-1][1:] != sample[1:]:
            if len(h) >= self._history_limit:
                del h[: len(h) // 2]
            h.append(sample)

    # -- run-time control (vraid top's step mode, vraid ctl) -------------------------
    def pause(self) -> None:
        """Start no destages: host writes fill the cache, then wait (also fsync while volatile).
        :meth:`destage_one` still destages, and frees room for a waiting write."""
        self.paused = True
        self._notify()

    def resume(self) -> None:
        """Let the scheduler decide again (and writes waiting for room be served)."""
        self.paused = False
        self._notify()

    def set_scheduler(self, scheduler: "DestageScheduler") -> "DestageScheduler":
        """Let ``scheduler`` decide from the destager's next decision on; returns the old one.
        Destages in flight finish as they started."""
        old, self.scheduler = self.scheduler, self._guarded("destage", scheduler)
        self._notify()
        return old

    def set_order(self, order: "DestageOrder") -> "DestageOrder":
        """Take dirty units in ``order`` from now on; returns the old order.

        The new order is seeded with the dirty units waiting in the old one, in the old
        one's sequence; a unit being destaged joins it if still dirty when its destage ends.
        """
        order = self._guarded("destage_order", order)
        for key in self.order.keys():
            order.dirtied(key)
        old, self.order = self.order, order
        self._notify()
        return old

    async def destage_one(self) -> bool:
        """Destage the next unit now, whatever the scheduler says (step mode); False if none is dirty."""
        key = self.order.next()
        if key is None:
            return False
        self.order.removed(key)
        self.in_flight += 1
        await self._destage(self.units[key])
        return True

    def _neighbours(self, unit: Unit) -> list[Unit]:
        """``unit`` and the dirty units of its stripe whose rows continue it on either
        side (none being destaged), in row order; each added one leaves the destage
        order and counts as in flight. One destage then writes them all, as md batches
        the stripe_heads of a full-stripe write: a sequential write through ``pbg``
        otherwise costs one small plan per row (16 per strip of 64 KiB)."""
        span = unit.span
        if span.rows >= self.geometry.u:
            return [unit]
        spans = list(self.organisation.units(span.stripe, 0, self.geometry.u - 1))
        at = next((i for i, s in enumerate(spans) if s.key == span.key), None)
        if at is None:
            return [unit]

        def take(s) -> Unit | None:
            other = self.units.get(s.key)
            if other is None or other.destaging or other.oldest == math.inf or s.key not in self.dirty_keys:
                return None
            self.order.removed(s.key)
            self.in_flight += 1
            return other

        group = [unit]
        for s in reversed(spans[:at]):
            other = take(s)
            if other is None:
                break
            group.insert(0, other)
        for s in spans[at + 1 :]:
            other = take(s)
            if other is None:
                break
            group.append(other)
        return group

    async def _destage(self, unit: Unit) -> None:
        await self._destage_units([unit])

    async def _destage_units(self, units: list[Unit]) -> None:
        """Destage ``units`` (one, or adjacent rows of one stripe, see :meth:`_neighbours`)
        as one write to the target."""
        first = units[0].span
        for unit in units:
            unit.destaging = True
        self.metrics.destages_started += len(units)
        covered = [unit.oldest for unit in units]
        ok = False
        try:
            if len(units) == 1:  # the target reads into and writes from the unit's own buffer
                data = units[0].data
                z = units[0].z()
            else:
                data = np.concatenate([unit.data for unit in units], axis=1)
                z = tuple(row for unit in units for row in unit.z())
            buf = StripeBuffer(self.mapping, first.stripe, row0=first.row0, rows=data.shape[1], data=data)
            filled = await self.target.write_unit(buf, z, priority=Priority.DESTAGE, cause=Cause.DESTAGE)
            base = 0
            for unit in units:
                rows = unit.span.rows
                # destaged D blocks are clean now; E blocks the target filled (a plan's r) hold clean data too
                for j, i in filled:
                    if base <= i < base + rows and unit.state[j, i - base] == E:
                        if data is not unit.data:
                            unit.data[j, i - base] = data[j, i]
                        unit.state[j, i - base] = C
                unit.state[unit.state == D] = C
                if self.journal is not None and unit.slots:
                    stripe = unit.span.stripe
                    self._pending_release.extend((handle, stripe) for handle in unit.slots.values())
                    self._pending_stripes[stripe] = self._pending_stripes.get(stripe, 0) + len(unit.slots)
                    unit.slots.clear()
                unit.oldest = math.inf
                base += rows
            ok = True
            self.metrics.destages_finished += len(units)
        except MemberIOError as exc:
            self.metrics.destage_errors += 1
            self.last_error = exc
            log.error("destage of unit %d (stripe %d) failed: %s", first.key, first.stripe, exc)
            await self.clock.sleep(1.0)  # do not spin on a failing member
        finally:
            for unit, oldest in zip(units, covered):
                self._end_destage(unit, oldest, ok)
        if self.journal is not None and len(self._pending_release) >= max(1, self.journal.capacity // 8):
            await self._settle()

    async def _settle(self) -> None:
        """Flush the target, then clear the journal records of what was destaged before."""
        if self._settling or not self._pending_release:
            return
        self._settling = True
        try:
            batch, self._pending_release = self._pending_release, []
            epoch = self._journal_epoch
            try:
                await self.target.flush()
            except MemberIOError as exc:  # the records stay: the journal still holds those blocks
                if epoch == self._journal_epoch:
                    self._pending_release = batch + self._pending_release
                self.last_error = exc
                log.error("flush before clearing journal records failed: %s", exc)
                return
            if epoch != self._journal_epoch:
                return  # the journal was emptied meanwhile: these slots may hold new records now
            pending = self._pending_stripes
            for handle, stripe in batch:
                self.journal.clear(handle)
                n = pending[stripe] - 1
                if n:
                    pending[stripe] = n
                else:
                    del pending[stripe]
        finally:
            self._settling = False
        self._progressed()
        self._notify()

    def serve_a_mount(self) -> None:
        """The settings of a live mount, unlike the papers' cache that simulations keep:
        coalesced destages, no fill on a read miss, no destager wake-up for a quiet
        overwrite, whole stripes around the cache (each attribute says why)."""
        self.coalesce = True
        self.fill_misses = False
        self.quiet_overwrites = True
        self.bypass_whole_stripes = True

    async def reset_journal(self) -> None:
        """Empty the journal once the members hold everything durably (a shutdown). The
        records still awaiting release are forgotten with it: their slots are free again,
        and a later :meth:`_settle` clearing them would clear the new records put there."""
        self._pending_release = []
        self._pending_stripes = {}
        self._journal_epoch += 1  # a _settle in flight must not clear its (now stale) records
        await self.journal.reset()

    def _end_destage(self, unit: Unit, covered: float, ok: bool) -> None:
        key = unit.span.key
        unit.version += 1
        if unit.shadow is not None:
            sd = unit.shadow_state == D
            unit.data[sd] = unit.shadow[sd]
            unit.state[sd] = D
            sc = (unit.shadow_state == C) & (unit.state == E)
            unit.data[sc] = unit.shadow[sc]
            unit.state[sc] = C
            if self.journal is not None:
                for cell, handle in unit.shadow_slots.items():
                    old = unit.slots.pop(cell, None)
                    if old is not None:
                        self.journal.clear(old)
                    unit.slots[cell] = handle
                unit.shadow_slots.clear()
            unit.oldest = min(unit.oldest, unit.shadow_oldest)
            self._pool.append(unit.shadow)
            unit.shadow = unit.shadow_state = None
            unit.shadow_oldest = math.inf
        unit.destaging = False
        self.in_flight -= 1
        if unit.dirty:
            self.order.dirtied(key)
        else:
            self.dirty_keys.discard(key)
            self.clean[key] = None
        self.target.events.publish(DestageEvent(time=self.clock.now(), unit=key, stripe=unit.span.stripe, ok=ok))
        self._progressed()
        self._notify()

    # -- durability ----------------------------------------------------------------
    async def flush(self) -> None:
        """Return once every write acknowledged before the call is durable."""
        if self.journal is not None:
            await self.journal.sync()
            gen = self._bypass_gen
            if gen > self._bypass_flushed:  # stripes written around the cache: on the target only
                await self.target.flush()  # (each of two flushes at once waits for its own)
                self._bypass_flushed = max(self._bypass_flushed, gen)
            return
        await self.drain(self.write_seq)
        await self.target.flush()

    async def drain(self, upto: float = math.inf) -> None:
        """Destage until no unit holds a write with sequence number <= ``upto``."""
        self.draining += 1
        errors = self.metrics.destage_errors
        try:
            while any(min(u.oldest, u.shadow_oldest) <= upto for u in (self.units[k] for k in self.dirty_keys)):
                if self.metrics.destage_errors != errors and self.last_error is not None:
                    raise self.last_error
                self._notify()
                await self._progress_wait()
        finally:
            self.draining -= 1

    async def _progress_wait(self) -> None:
        progress = self._progress
        await progress.wait()

    def status(self) -> dict[str, Any]:
        return {
            "organisation": self.organisation.name,
            "order": self.order.name,
            "scheduler": self.scheduler.describe(),
            "capacity_units": self.capacity,
            "unit_bytes": self.unit_bytes,
            "units": len(self.units),
            "dirty_units": len(self.dirty_keys),
            "destaging": self.in_flight,
            "occupancy": self.occupancy,
            "hwm": self.hwm,
            "lwm": self.lwm,
            "paused": self.paused,
            "draining": self.draining,  # flushes waiting for the cache to drain (vraid top: "flush waiting")
            "nvram": self.journal is not None,
        } | self.metrics.to_dict() | (
            {"bypass_whole_stripes": True, "bypassed_stripes": self.bypassed_stripes} if self.bypass_whole_stripes else {})


class _Batch:
    """Journal records of the units one host write absorbed without an await, put together."""

    __slots__ = ("available", "items", "dests")

    def __init__(self, available: int) -> None:
        self.available = available  # journal room left once these records are put
        self.items: list[tuple[int, Any, Any]] = []  # (block, data, replaces)
        self.dests: list[tuple[dict, tuple[int, int]]] = []  # where each record's handle goes


def _rows_in(k: int, u: int, row0: int, rows: int, fb: int, lb: int) -> tuple[int, int] | None:
    """Rows (relative to row0) of data strip k inside this unit that blocks fb..lb cover."""
    lo = max(0, fb - k * u - row0)
    hi = min(rows - 1, lb - k * u - row0)
    return (lo, hi) if lo <= hi else None


def _strip_runs(unit: Unit, span, ext, fb: int, lb: int, view: np.ndarray, g):
    """For each data strip of the unit touched by blocks fb..lb: (k, r0, r1, the read
    buffer's rows for r0..r1 as a (rows, block) view)."""
    bs, u, strip = g.block_size, g.u, g.strip_size
    for k in range(g.data_disks):
        r = _rows_in(k, u, span.row0, span.rows, fb, lb)
        if r is None:
            continue
        r0, r1 = r
        pos = ext.host_offset + (k * strip + (span.row0 + r0) * bs) - ext.start
        yield k, r0, r1, view[pos : pos + (r1 - r0 + 1) * bs].reshape(-1, bs), pos // bs


def _copy_valid(unit: Unit, span, ext, fb: int, lb: int, view: np.ndarray, hits: np.ndarray, g) -> None:
    """Copy the blocks the unit holds (shadow D first) into the read buffer; mark them hits."""
    for k, r0, r1, rows, first in _strip_runs(unit, span, ext, fb, lb, view, g):
        valid = unit.state[k, r0 : r1 + 1] != E
        if valid.all():  # the common hit: one plain copy, no boolean indexing
            rows[:] = unit.data[k, r0 : r1 + 1]
        elif valid.any():
            rows[valid] = unit.data[k, r0 : r1 + 1][valid]
        if unit.shadow_state is not None:
            newer = unit.shadow_state[k, r0 : r1 + 1] == D
            if newer.any():
                rows[newer] = unit.shadow[k, r0 : r1 + 1][newer]
                valid = valid | newer
        hits[first : first + r1 - r0 + 1] |= valid


def _fill_empty(unit: Unit, span, ext, fb: int, lb: int, view: np.ndarray, g) -> None:
    """Fill the unit's empty blocks with what the members returned (read-miss fill, as clean)."""
    for k, r0, r1, rows, _ in _strip_runs(unit, span, ext, fb, lb, view, g):
        state = unit.state[k, r0 : r1 + 1]
        empty = state == E
        if empty.any():
            unit.data[k, r0 : r1 + 1][empty] = rows[empty]
            state[empty] = C

