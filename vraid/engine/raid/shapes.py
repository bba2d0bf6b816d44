"""Two plan shapes the RAID layer runs without a stripe buffer (seed 000 sec. II-A):

* the **small write**: whole blocks of one data strip whose plan is the RMW of that column
  (read the old data and the old parity, XOR the change into the parity, write both), with
  the host's bytes written as they are and the parity computed in a block-sized array;
* the **full-stripe write**: a whole stripe, its parity generated from the host's bytes where
  they are and every member written from them (no reads).

Each builds the same plan as the general path (:meth:`RaidLayer._execute_plan` on a stripe
buffer), recognises its shape in it (:func:`vraid.engine.raid.stripe.one_column_rmw`,
:func:`~vraid.engine.raid.stripe.full_stripe_writes`), and makes the same plan event,
metrics, write-intent bit and member requests with the same awaits in the same order, so the
order of tasks, and a simulation's results, stay those of the general path
(``tests/test_small_write.py``). They run only when nothing can interleave with them or the
caller holds the stripe lock, the intent bit is already durable, and the stripe is healthy
with no CT; otherwise they return 0 and the general path runs.

Return value: -1 when the write is done, otherwise the attempts made (0: not taken; 1: a
member failed, and the general path goes on degraded from there).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vraid.core.geometry import Extent
from vraid.engine.members.request import Priority, Request
from vraid.engine.raid.plans import build_plan
from vraid.engine.raid.stripe import full_stripe_writes, one_column_rmw
from vraid.errors import MemberIOError

#: the :class:`vraid.engine.raid.layer.RaidLayer` whose stripe is written (not imported: the
#: layer runs the shapes)
RaidLayer = Any

_HOST = Priority.HOST.cause


async def small_write(raid: RaidLayer, ext: Extent, src: np.ndarray, z, *, locked: bool = False) -> int:
    """The small write of ``ext`` (see the module docstring): unlocked when nothing can
    interleave with it (no stripe lock held or waited for, a stripe lock would take no
    checkpoint, both members inline); ``locked``: the caller holds the stripe lock (members
    that take time, such as a simulation's disk models, or a stripe another write holds)."""
    stripe = ext.stripe
    if raid.ct is not None or raid.health.degraded or raid.redundancy.parity_columns != 1:
        return 0
    if not locked and stripe in raid.locks:
        return 0
    intent = raid.intent
    if intent is not None and not intent.ready(stripe):
        return 0
    columns = raid.mapping.columns(stripe)
    members = raid.members
    disks = members.disks
    if not locked and not (disks[columns[ext.start // raid.geometry.strip_size]].can_inline
                           and disks[columns[-1]].can_inline):
        return 0  # (the data strip's member and the parity member: the only two the plan below can use)
    plan = build_plan(stripe, z, columns, 1, raid.covers)
    shape = one_column_rmw(plan)
    if shape is None:
        return 0
    k, first, rows, parity_read_first, parity_written_first = shape
    data_disk, parity_disk = columns[k], columns[-1]
    if not locked:
        alone = raid.alone
        if alone is None or not alone():
            return 0
    raid.planned(plan, 0, [], _HOST)
    if intent is not None:
        await intent.begin(stripe)  # durable already: returns at once
    n = rows * raid.geometry.block_size
    at = raid.mapping.column_offset(stripe, k, first)
    parity_at = raid.mapping.column_offset(stripe, len(columns) - 1, first)
    parity = np.empty((1, n), dtype=np.uint8)
    old = Request(data_disk, "read", at, n, priority=Priority.HOST)
    checks = Request(parity_disk, "read", parity_at, n, memoryview(parity).cast("B"), Priority.HOST)
    ok = False
    try:
        await members.run([checks, old] if parity_read_first else [old, checks])
        new = src[ext.host_offset : ext.host_offset + ext.length]
        if not members.no_data:  # the metadata-only simulation: no bytes to XOR
            raid.redundancy.update(parity, np.frombuffer(old.result, dtype=np.uint8).reshape(1, n),  # type: ignore[arg-type]
                                   new.reshape(1, n), (k,))
        data = Request(data_disk, "write", at, n, memoryview(new), Priority.HOST)
        written = Request(parity_disk, "write", parity_at, n, memoryview(parity).cast("B"), Priority.HOST)
        await members.run([written, data] if parity_written_first else [data, written])
        ok = True
        raid.small_writes += 1
        return -1
    except MemberIOError as exc:
        raid.member_error(exc, 1)
        if exc.op == "write" and raid.stripe_survives(stripe):
            return -1  # every other member holds its new blocks: the failed one's are rebuilt from them
        return 1  # failed while reading: nothing was written; the general path plans again without it
    finally:
        if intent is not None:
            intent.end(stripe, ok)


async def full_stripe_write(raid: RaidLayer, ext: Extent, src: np.ndarray, z) -> int:
    """The full-stripe write of ``ext`` (a whole stripe; see the module docstring), when
    nothing can interleave with it (as the unlocked :func:`small_write`)."""
    stripe = ext.stripe
    pc = raid.redundancy.parity_columns
    if raid.ct is not None or raid.health.degraded or stripe in raid.locks or pc > 1:
        return 0
    intent = raid.intent
    if intent is not None and not intent.ready(stripe):
        return 0
    columns = raid.mapping.columns(stripe)
    members = raid.members
    disks = members.disks
    for disk in columns:
        if not disks[disk].can_inline:
            return 0
    plan = build_plan(stripe, z, columns, pc, raid.covers)
    writes = full_stripe_writes(plan)
    if writes is None:
        return 0
    alone = raid.alone
    if alone is None or not alone():
        return 0
    raid.planned(plan, 0, [], _HOST)
    if intent is not None:
        await intent.begin(stripe)  # durable already: returns at once
    g = raid.geometry
    nd = g.data_disks
    n = g.u * g.block_size
    at = raid.mapping.column_offset
    flat = src[ext.host_offset : ext.host_offset + ext.length]
    data = flat.reshape(nd, g.u, g.block_size)  # the host's bytes, strip by strip
    if members.no_data:  # the metadata-only simulation: no bytes to XOR (the members keep none)
        checks = np.empty((pc, g.u, g.block_size), dtype=np.uint8)
    else:
        checks = raid.redundancy.generate(data)  # (RAID-0: no columns)
    requests = [Request(columns[j], "write", at(stripe, j), n,
                        memoryview(flat[j * n : (j + 1) * n]) if j < nd else memoryview(checks[j - nd]).cast("B"),
                        Priority.HOST)
                for j in writes]
    ok = False
    try:
        await members.run(requests)
        ok = True
        raid.full_stripe_writes += 1
        return -1
    except MemberIOError as exc:
        raid.member_error(exc, 1)
        if raid.stripe_survives(stripe):
            return -1  # every other member holds its new blocks: the failed one's are rebuilt from them
        return 1
    finally:
        if intent is not None:
            intent.end(stripe, ok)
