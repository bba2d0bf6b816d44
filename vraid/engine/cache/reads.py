"""Serving host reads from the write-back cache.

Reads are served from valid (C or D) blocks, the DDIRTY entries of a unit being destaged
first (seed 003, section 3.2: they are the newest); a read miss reads below (the read path's
``fetch``: the clean-block read cache, then the target) and, in the papers' cache, fills the
units' empty blocks as clean. :class:`ReadServing` is the read side of
:class:`~vraid.engine.cache.writeback.WriteBackCache`: :meth:`~ReadServing.read`, its fast
path for a read inside one data strip (:meth:`~ReadServing._strip_lookup`; a stripe it holds
nothing of goes straight below, :meth:`~ReadServing._below`), and the per-block states the
read path asks for
(:meth:`~ReadServing.block_states`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .units import C, D, E, Unit, rows_in

if TYPE_CHECKING:
    from vraid.policies.cache import UnitSpan


class ReadServing:
    """The read side of a :class:`~vraid.engine.cache.writeback.WriteBackCache` (which holds
    the state these methods use)."""

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
                    r = rows_in(k, u, span.row0, span.rows, fb, lb)
                    if r is None:
                        continue
                    r0, r1 = r
                    at = (ext.host_offset + k * strip + (span.row0 + r0) * bs - ext.start) // bs
                    states = unit.state[k, r0 : r1 + 1]
                    if unit.shadow_state is not None:
                        states = np.maximum(states, unit.shadow_state[k, r0 : r1 + 1])
                    out[at : at + r1 - r0 + 1] = np.maximum(out[at : at + r1 - r0 + 1], states)
        return out


def _strip_runs(unit: Unit, span, ext, fb: int, lb: int, view: np.ndarray, g):
    """For each data strip of the unit touched by blocks fb..lb: (k, r0, r1, the read
    buffer's rows for r0..r1 as a (rows, block) view)."""
    bs, u, strip = g.block_size, g.u, g.strip_size
    for k in range(g.data_disks):
        r = rows_in(k, u, span.row0, span.rows, fb, lb)
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

