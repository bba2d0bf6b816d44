"""Reads of the RAID layer: a range of the image becomes one member request per strip
(:mod:`vraid.core.mapping`); the blocks of a missing member are reconstructed from the rest
of their row (:mod:`vraid.engine.raid.degraded`, under the stripe lock); a member that fails
a read is failed and the read retried degraded.

Where the redundancy keeps copies of a data strip (RAID-1, RAID-10:
:meth:`vraid.core.redundancy.Redundancy.copies`), each strip's read goes to one of the members
holding it, chosen by :mod:`vraid.engine.raid.balance` (md's read_balance: a sequential read
stays on its disk, else the least busy, nearest head); a missing member is never chosen, so a
mirror reads degraded only when every copy of a strip is gone.

A read inside one strip of a healthy array on the static layout makes its one member request
without building extents; on an idle member that reads synchronously the members run it on
the trio thread with no await (:meth:`vraid.engine.members.queues.Members.run`), so a plain
array's random read costs one ``pread`` and this module's arithmetic.
"""

from __future__ import annotations

from vraid.core.geometry import Extent
from vraid.core.mapping import StaticMapping
from vraid.engine.members.request import Priority, Request
from vraid.engine.raid import degraded
from vraid.engine.raid.balance import read_member
from vraid.engine.raid.stripe import StripeBuffer
from vraid.errors import MemberIOError

_NONE: frozenset[int] = frozenset()


def _trimmed(data: bytes, head: int, length: int) -> bytes:
    """``length`` bytes of block-aligned ``data`` from ``head`` on (aligned: the member's
    bytes themselves, no copy)."""
    if head == 0 and len(data) == length:
        return data
    return data[head : head + length]


class RaidReads:
    """The read half of :class:`vraid.engine.raid.layer.RaidLayer` (a mixin: it shares the
    layer's geometry, mapping, members, health and locks)."""

    def init_reads(self) -> None:
        g = self.geometry
        #: the static layout of one strip of each member per stripe (reads inside one strip
        #: compute their member request directly)
        self.static = type(self.mapping) is StaticMapping and g.depth == 1
        #: for a read inside one strip: the block and strip sizes, data strips per stripe, the
        #: data strips' members per stripe mod N (the layouts repeat every N stripes) and the
        #: members' data offset, looked up once, not per read
        self._one_strip = (g.block_size, g.strip_size, g.data_disks,
                           tuple(g.data_disks_of(s) for s in range(g.ndisks)), g.data_offset)
        #: per data column, the check columns holding a copy of it (mirrors); any: reads are balanced
        self.copies = tuple(self.redundancy.copies(k) for k in range(g.data_disks))
        self.balanced = any(self.copies)
        #: a read inside one strip is one member request at a place the tables give
        self.one_request = self.static and not self.balanced

    def _one_strip_request(self, offset: int, length: int, priority: Priority) -> Request | None:
        """The one member request of a read inside one strip of a healthy array on the static
        layout (from the tables of :meth:`init_reads`, as ``StaticMapping.data_disk`` and
        ``member_offset`` compute it), or None when the read needs the general plan."""
        block, strip, data_disks, disks_of, data_offset = self._one_strip
        first = offset // block * block
        end = -(-(offset + length) // block) * block
        s0 = first // strip
        if s0 != (end - 1) // strip or not self.one_request or self.health.degraded:
            return None
        stripe, k = divmod(s0, data_disks)
        return Request(disks_of[stripe % len(disks_of)][k], "read", data_offset + stripe * strip + first % strip,
                       end - first, None, priority)

    def read_now(self, offset: int, length: int, *, priority: Priority = Priority.HOST) -> bytes | None:
        """:meth:`read` on this thread with no await when it can be: a read inside one strip of
        a healthy array whose member is idle and reads synchronously
        (:meth:`vraid.engine.members.queues.Members.run_now`), so nothing else runs meanwhile.
        None when it cannot (the caller then awaits :meth:`read`); a member that fails the
        read is failed first, so that read goes degraded."""
        req = self._one_strip_request(offset, length, priority)
        if req is None:
            return None
        try:
            if not self.members.run_now(req):
                return None
        except MemberIOError as exc:
            self.member_error(exc, 1)
            return None
        data = req.result
        head = offset % self._one_strip[0]
        if head == 0 and len(data) == length:  # type: ignore[arg-type]
            return data  # aligned: the member's bytes, no copy
        return data[head : head + length]  # type: ignore[index]

    async def read(self, offset: int, length: int, *, priority: Priority = Priority.HOST, attempt: int = 0) -> bytes:
        """Read straight from the members; blocks of a missing member are reconstructed, a
        member that fails is failed and the read retried degraded (``attempt``: the failures
        handled before the call)."""
        block = self._one_strip[0]
        first = offset // block * block
        end = -(-(offset + length) // block) * block
        while True:
            try:
                if self.health.degraded:
                    return await self._read_members_degraded(offset, length, priority)
                req = self._one_strip_request(offset, length, priority)
                if req is not None:  # inside one strip: one member request
                    if not self.members.run_now(req):  # (an idle member, a synchronous store: no await)
                        await self.members.run((req,))
                    data = req.result
                else:
                    requests: list[Request] = []
                    for ext in self.mapping.extents(first, end - first):
                        requests += self._read_requests(ext, priority)
                    await self.members.run(requests)
                    data = requests[0].result if len(requests) == 1 else b"".join(r.result for r in requests)  # type: ignore[misc]
                break
            except MemberIOError as exc:
                attempt += 1
                self.member_error(exc, attempt)
        return _trimmed(data, offset - first, length)  # type: ignore[arg-type]

    async def _read_members_degraded(self, offset: int, length: int, priority: Priority = Priority.HOST) -> bytes:
        """Like the normal read, but extents touching a missing member are reconstructed."""
        g = self.geometry
        block = g.block_size
        first = offset // block * block
        end = -(-(offset + length) // block) * block
        parts: list[list[Request] | Extent] = []
        plain: list[Request] = []
        for ext in self.mapping.extents(first, end - first):
            reqs = self._read_requests(ext, priority)
            missing = self.health.missing(ext.stripe)
            if any(r.disk in missing for r in reqs):
                parts.append(ext)
            else:
                parts.append(reqs)
                plain += reqs
        await self.members.run(plain)
        chunks: list[bytes] = []
        for part in parts:
            if isinstance(part, list):
                chunks += [r.result for r in part]  # type: ignore[misc]
            else:
                chunks.append(await self._read_extent_degraded(part, priority))
        data = b"".join(chunks)
        head = offset - first
        return data[head : head + length]

    async def _read_extent_degraded(self, ext: Extent, priority: Priority = Priority.HOST) -> bytes:
        """A block-aligned extent of a stripe with a member missing, under the stripe lock."""
        g = self.geometry
        u, bs = g.u, g.block_size
        fb, lb = ext.start // bs, (ext.start + ext.length - 1) // bs
        k0, k1 = fb // u, lb // u
        row0, rows = (fb % u, lb - fb + 1) if k0 == k1 else (0, u)
        async with self.locks.hold(ext.stripe):
            buf = StripeBuffer(self.mapping, ext.stripe, row0=row0, rows=rows)
            await degraded.read_rows(self.members, buf, self.health.missing(ext.stripe), range(k0, k1 + 1), priority=priority)
        if k0 == k1:
            return buf.data[k0].tobytes()
        return buf.flat[ext.start : ext.start + ext.length].tobytes()

    async def read_blocks(self, buf: StripeBuffer, cells, *, priority: Priority = Priority.HOST, locked: bool = False) -> None:
        """Read data blocks ``cells`` ((column, row) of ``buf``) from the members into ``buf``
        (partial-block fills, a cache's misses), reconstructing those of a missing member
        (under the stripe lock, unless the caller holds it: ``locked``)."""
        cells = list(cells)
        attempt = 0
        while True:
            try:
                missing = self.health.missing(buf.stripe) if self.health.degraded else _NONE
                reqs = self._balanced_block_reads(buf, cells, missing, priority) if self.balanced else None
                if reqs is not None:  # each block from a member holding a copy of it
                    await self.members.run(reqs)
                elif not self.balanced and not any(buf.columns[k] in missing for k, _ in cells):
                    await self.members.run([buf.request(k, "read", r, 1, priority=priority) for k, r in cells])
                elif locked:
                    await self._read_blocks_degraded(buf, cells, priority)
                else:
                    async with self.locks.hold(buf.stripe):
                        await self._read_blocks_degraded(buf, cells, priority)
                return
            except MemberIOError as exc:
                attempt += 1
                self.member_error(exc, attempt)

    def _balanced_block_reads(self, buf: StripeBuffer, cells, missing, priority: Priority) -> list[Request] | None:
        """Reads of ``cells`` into ``buf``, each from a member holding a copy of its column
        (:mod:`vraid.engine.raid.balance`); None when some cell has no copy left."""
        reqs = []
        bs = self.geometry.block_size
        for k, r in cells:
            chosen = self._choose(buf.stripe, buf.columns, k, buf.row0 + r, 0, missing)
            if chosen is None:
                return None
            reqs.append(Request(chosen[0], "read", chosen[1], bs, buf.view(k, r, 1), priority))
        return reqs

    def _choose(self, stripe: int, columns, k: int, row: int, within: int, missing) -> tuple[int, int] | None:
        """(member, offset) of the copy of data column ``k`` (its own strip, then its copies')
        that serves a read at ``row`` (plus ``within`` bytes), by
        :func:`~vraid.engine.raid.balance.read_member`; each copy at its own offset (a column's
        lane: RAID-10 on an odd count); None when every copy is missing."""
        holders = (k,) + tuple(len(self.copies) + j for j in self.copies[k])
        offsets = [self.mapping.column_offset(stripe, j, row) + within for j in holders]
        disks = [columns[j] for j in holders]
        disk = read_member(self.members, disks, offsets, missing)
        return None if disk is None else (disk, offsets[disks.index(disk)])

    async def _read_blocks_degraded(self, buf: StripeBuffer, cells, priority: Priority) -> None:
        lo = min(r for _, r in cells)
        hi = max(r for _, r in cells)
        tmp = StripeBuffer(self.mapping, buf.stripe, row0=buf.row0 + lo, rows=hi - lo + 1)
        await degraded.read_rows(self.members, tmp, self.health.missing(buf.stripe), {k for k, _ in cells}, priority=priority)
        for k, r in cells:
            buf.data[k, r] = tmp.data[k, r - lo]

    def _read_requests(self, ext: Extent, priority: Priority = Priority.HOST) -> list[Request]:
        """Member reads for a block-aligned extent, one per strip touched."""
        strip, mapping = self.geometry.strip_size, self.mapping
        reqs = []
        pos, end = ext.start, ext.start + ext.length
        stripe = ext.stripe
        if self.balanced:
            columns = mapping.columns(stripe)
            missing = self.health.missing(stripe) if self.health.degraded else _NONE
        while pos < end:
            k, within = divmod(pos, strip)
            n = min(strip - within, end - pos)
            disk = mapping.data_disk(stripe, k)
            at = mapping.column_offset(stripe, k) + within
            if self.balanced:  # the best member holding a copy (its own when every copy is missing: degraded)
                chosen = self._choose(stripe, columns, k, 0, within, missing)
                if chosen is not None:
                    disk, at = chosen
            reqs.append(Request(disk, "read", at, n, priority=priority))
            pos += n
        return reqs
