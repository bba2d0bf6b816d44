"""Absorbing host writes, with the DDIRTY entries of a unit being destaged.

A write makes its blocks D; a block that was already D is a *write cache overwrite* and one
that was not is a *write cache hit* (seed 003, section 2.1). :class:`Absorb` is the write path
of :class:`~vraid.engine.cache.writeback.WriteBackCache`: it copies a write's bytes into the
units that hold them (:meth:`~Absorb._commit`, one atomic step), and with a journal queues
their records in one :class:`~vraid.engine.cache.durability.JournalBatch` per host write.

Entry states of seed 003, section 3.2. A write to a unit while it is being
destaged must neither disturb the destage nor be lost: it goes to the unit's
*shadow* (the DDIRTY entries), a second buffer of the same shape
(:meth:`~Absorb._pin_target`). When the destage ends, the destaged D blocks
become C and the shadow's D blocks are merged into the unit as its new dirty
data (:mod:`vraid.engine.cache.destager`). Nothing is lost or written twice.

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

Whole stripes around the cache. A mount lets a host write of a whole stripe the cache holds
nothing dirty of go straight to the target (:meth:`~Absorb._may_bypass`; simulations keep
the papers' caches, which absorb every write).
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import numpy as np
import trio

from vraid.errors import MemberIOError
from vraid.engine.events import Cause
from vraid.engine.members.request import Priority
from vraid.engine.raid.stripe import StripeBuffer
from .durability import JournalBatch
from .units import C, D, E, Unit, rows_in

if TYPE_CHECKING:
    from vraid.policies.cache import UnitSpan

log = logging.getLogger(__name__)


class Absorb:
    """The write path of a :class:`~vraid.engine.cache.writeback.WriteBackCache` (which holds
    the state these methods use)."""

    #: :meth:`_commit` of one whole block takes a shortcut (the same steps without the range
    #: arithmetic); tests switch it off to compare it with the general steps
    _one_block = True

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
        batch = JournalBatch(journal.available()) if journal is not None else None
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
        return [(k, *r) for k in range(fb // u, lb // u + 1) if (r := rows_in(k, u, row0, rows, fb, lb))]

    def _absorb_now(self, span: "UnitSpan", ext, src: np.ndarray, fb: int, lb: int, seq: int,
                    batch: "JournalBatch | None", whole: np.ndarray | None = None) -> bool:
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

    def _commit(self, unit: Unit, span: "UnitSpan", ext, src: np.ndarray, cells, seq: int,
                batch: "JournalBatch | None", whole: np.ndarray | None = None) -> None:
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
        batch = JournalBatch(0) if journal is not None else None
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

