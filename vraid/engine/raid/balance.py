"""Read balancing across mirror copies: which member serves a read of a data strip that
other members hold copies of (RAID-1, RAID-10).

Linux md's raid1 ``read_balance`` (drivers/md/raid1.c) keeps a sequential read on the disk
that served its previous part, and otherwise picks the mirror that is least busy
(``nr_pending``), or for rotating disks the one whose head is nearest (``head_position``).
vraid asks the same of the members (:attr:`vraid.engine.members.member.Member.head`,
:attr:`~vraid.engine.members.member.Member.pending`), in this order:

1. a member whose last request ended exactly where this read starts (a sequential stream
   stays on one disk: its read-ahead and its head are there);
2. else the member with the fewest requests queued, in flight or being served;
3. ties: the nearest head (the smallest distance from its last request's end), then the
   order of the columns (the data strip's own member first, then its copies).

A missing member (failed, or being rebuilt past this stripe) is never chosen; when every
copy is missing there is nothing to choose (None) and the read is degraded. Which copies a
data column has is the redundancy's (:meth:`vraid.core.redundancy.Redundancy.copies`).
"""

from __future__ import annotations

from typing import Collection, Sequence

from vraid.engine.members.queues import Members


def read_member(members: Members, candidates: Sequence[int], offset: int | Sequence[int],
                missing: Collection[int] = ()) -> int | None:
    """The member of ``candidates`` (the data strip's member, then its copies') that serves a
    read at member ``offset`` (or, per candidate, at ``offset[i]``: where each holds its copy,
    RAID-10 on an odd count); None when all are ``missing``."""
    best = None
    best_key: tuple[int, int, int] | None = None
    for rank, disk in enumerate(candidates):
        if disk in missing:
            continue
        at = offset if isinstance(offset, int) else offset[rank]
        m = members[disk]
        head = m.head
        if head == at:
            return disk
        key = (m.pending, abs(at - head), rank)
        if best_key is None or key < best_key:
            best, best_key = disk, key
    return best
