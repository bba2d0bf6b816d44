"""Degraded writes and reads: a stripe while members are missing (RAID-5 one, RAID-6 up to two).

A RAID-5 stripe survives the loss of any one member: every parity block
group (PBG, one row of the stripe) XORs to zero, so the missing block of a
row is the XOR of the row's surviving blocks, data and parity alike
(:func:`reconstruct`, which asks the array's redundancy scheme,
:mod:`vraid.core.redundancy`, how many columns it can rebuild and does it
over whole runs of rows).

Writes keep that invariant without touching the missing member. Per row
with dirty blocks, with ``m`` the missing column:

* parity missing: write the dirty data blocks, nothing else (RAID-0 row);
* ``m`` not dirty: read-modify-write (RMW), which never reads ``m``:
  new parity = old parity ^ old data ^ new data of the dirty blocks;
* ``m`` dirty (its new data is in the buffer): reconstruct-write (RCW),
  parity = XOR of all data of the row, ``m``'s from the buffer; only ``m``'s
  write is dropped, so its new data lives on in the parity.

With two members missing a row can still be written when parity survives
and no dirty block is on a missing member (RMW), or parity is one of the
missing and no dirty block is on the other; otherwise the data the write
needs is gone and it is refused before anything is written
(:class:`~vraid.errors.LostData`, EIO at the FUSE boundary).

*More check columns.* The rules are written for a plan with ``checks`` check
columns (the last ones of the matrix, P then Q; the count is the redundancy's
``parity_columns``, one for RAID-5), one missing column per check column:

* every check column missing: write the dirty data blocks that have a member;
* no dirty block missing: the basic row when no data column is missing, else
  RMW, each surviving check read and patched; a missing check gets nothing;
* a dirty block missing: RCW when at most ``checks`` columns are missing and
  every missing data block is dirty or clean (its new contents are in the
  buffer): the missing ones are XORed in (``x``) and not written. A missing
  *empty* block would have to be reconstructed from the old row first, which
  no rxw operation says, so such a row is refused.

With ``checks = 1`` these are exactly the RAID-5 rules above.

*Two missing (RAID-6).* A row whose dirty block is on a missing member while
another missing data block is empty cannot be planned from Z alone; the RAID
layer then reads the stripe's survivors first and rebuilds the missing
blocks (:func:`fill_from_survivors`, as md's ``handle_stripe_fill`` computes a
missing block before a degraded RCW), which makes every block of those rows
clean, and plans again: the row is an RCW that reads nothing.

*Mirrors* (a check column covering one data column, ``covers``: RAID-1, RAID-10) take the
same rules per touched group (the check columns whose covered data a row writes,
:func:`vraid.core.rxw.touched_groups`): a dirty block whose member is missing goes into the
surviving copies (RCW: ``x``, not written); with no copy of it left the row is refused. A
mirror's RCW reads nothing, so a degraded mirror write is "write every surviving copy".

The result is an ordinary rxw-matrix (seed 000 Table I operations), so the
executor (:mod:`vraid.engine.raid.stripe`) runs it unchanged and the plan event shows it.
This is md's degraded write path (drivers/md/raid5.c, handle_stripe_dirtying)
in the papers' words; vraid differs in choosing the cycle per row by which
blocks are missing, not by the I/O count, and it applies no CT transform to a
degraded plan.
"""

from __future__ import annotations

from typing import Collection, Sequence

from vraid.errors import LostData
from vraid.engine.members.queues import Members
from vraid.core.rxw import (EMPTY, RAID0_DIRTY, RCW_CLEAN, RCW_DIRTY, RCW_EMPTY, RCW_PARITY, RMW_DIRTY, RMW_PARITY, Matrix,
                            Plan, StateMatrix, basic_row, column_requests, grouped_row, touched_groups)
from vraid.engine.raid.stripe import StripeBuffer


def missing_columns(columns: Sequence[int], missing: Collection[int]) -> tuple[int, ...]:
    """rxw-matrix columns (data strips in order, check columns last) of the missing members."""
    return tuple(j for j, disk in enumerate(columns) if disk in missing)


def degraded_row(states: tuple[str, ...], missing: tuple[int, ...], checks: int = 1,
                 covers=None) -> tuple[tuple[str, ...], ...] | None:
    """The cells of one row of M (``checks`` check columns last) with the columns ``missing``
    gone; None if the row cannot be written. ``covers``: a mirror's coverage (see above)."""
    if covers is not None:
        return _grouped_degraded_row(states, missing, covers)
    nd = len(states)
    if "D" not in states:
        return (EMPTY,) * (nd + checks)
    data_missing = [j for j in missing if j < nd]
    dirty_lost = any(states[j] == "D" for j in data_missing)
    alive = tuple(j not in missing for j in range(nd, nd + checks))  # per check column: has a member
    if not any(alive):  # no check to keep: write the dirty blocks that have a member
        if dirty_lost:
            return None
        return tuple(RAID0_DIRTY if s == "D" else EMPTY for s in states) + (EMPTY,) * checks
    if not data_missing:
        row = basic_row(states, checks)
        return row if all(alive) else row[:nd] + tuple(c if a else EMPTY for c, a in zip(row[nd:], alive))
    if not dirty_lost:  # RMW never reads a block that is not dirty
        return tuple(RMW_DIRTY if s == "D" else EMPTY for s in states) + tuple(RMW_PARITY if a else EMPTY for a in alive)
    if len(missing) <= checks and all(states[j] != "E" for j in data_missing):
        # the missing blocks' new data is in the buffer: RCW, it goes into the checks only
        cells = [RCW_DIRTY if s == "D" else RCW_CLEAN if s == "C" else RCW_EMPTY for s in states]
        for m in data_missing:
            cells[m] = RCW_CLEAN
        return tuple(cells) + tuple(RCW_PARITY if a else EMPTY for a in alive)
    return None


def _grouped_degraded_row(states: tuple[str, ...], missing: tuple[int, ...], covers) -> tuple[tuple[str, ...], ...] | None:
    """:func:`degraded_row` when check column ``j`` covers the data columns ``covers[j]``."""
    nd, k = len(states), len(covers)
    if "D" not in states:
        return (EMPTY,) * (nd + k)
    touched, involved = touched_groups(states, covers)
    gone = set(missing)
    alive = tuple(j in touched and nd + j not in gone for j in range(k))  # per check: touched and has a member
    lost = [i for i in involved if i in gone]  # data of the touched groups whose member is missing
    for i in lost:
        if states[i] == "D" and not any(alive[j] for j in range(k) if i in covers[j]):
            return None  # its new data would have nowhere to go
    if not lost:
        row = grouped_row(states, covers)
        return row[:nd] + tuple(c if nd + j not in gone else EMPTY for j, c in enumerate(row[nd:]))
    if not any(states[i] == "D" for i in lost):  # RMW never reads a block that is not dirty
        return tuple(RMW_DIRTY if s == "D" else EMPTY for s in states) + tuple(RMW_PARITY if a else EMPTY for a in alive)
    if any(states[i] == "E" for i in lost):
        return None  # an empty lost block would have to be reconstructed first
    cells = [(RCW_DIRTY if s == "D" else RCW_CLEAN if s == "C" else RCW_EMPTY) if i in involved else EMPTY
             for i, s in enumerate(states)]
    for i in lost:
        cells[i] = RCW_CLEAN
    return tuple(cells) + tuple(RCW_PARITY if a else EMPTY for a in alive)


def degraded_matrix(z: StateMatrix, missing: tuple[int, ...], checks: int = 1, covers=None) -> Matrix | None:
    """M for a stripe with the columns ``missing`` gone; None if some row needs lost data."""
    rows = []
    for states in z:
        row = degraded_row(tuple(states), missing, checks, covers)
        if row is None:
            return None
        rows.append(row)
    return tuple(rows)


def degraded_plan(stripe: int, z: StateMatrix, columns: Sequence[int], missing: Collection[int], *,
                  checks: int | None = None, covers=None) -> Plan:
    """The plan that writes ``z``'s dirty blocks of ``stripe`` with ``missing`` members gone.

    ``checks`` is the number of check columns (the redundancy's ``parity_columns``); None
    takes the columns that Z's data does not fill (``len(columns) - len(z[0])``), which the
    mapping lays out from the same redundancy.

    Raises:
        LostData: a dirty block would need a missing member's data; nothing is written.
    """
    if checks is None:
        checks = len(columns) - len(z[0]) if z else 1
    cols = missing_columns(columns, missing)
    m = degraded_matrix(z, cols, checks, covers)
    if m is None:
        lost = [columns[j] for j in cols]
        raise LostData(lost[0], f"stripe {stripe}: members {', '.join(map(str, lost))} are missing; the write needs their data")
    return Plan(stripe, z, m, m, tuple(columns), tuple(column_requests(m)), ct="none", checks=checks, covers=covers)


def reconstruct(buf: StripeBuffer, column: int | Collection[int], first_row: int = 0, rows: int | None = None) -> None:
    """Column(s) ``column`` of rows first_row.. of ``buf`` := rebuilt from every other
    column (data and parity) by the buffer's redundancy scheme."""
    rows = buf.rows - first_row if rows is None else rows
    sel = slice(first_row, first_row + rows)
    missing = [column] if isinstance(column, int) else list(column)
    checks = buf.checks[:, sel] if buf.checks is not None else None
    buf.redundancy.reconstruct(buf.data[:, sel], checks, missing, slots=buf.slots)


async def fill_from_survivors(members: Members, buf: StripeBuffer, z: StateMatrix, missing: Collection[int], *,
                              priority: int = 0) -> StateMatrix:
    """Make every non-dirty block of the rows of ``z`` with a dirty block clean: read the
    surviving members into a second buffer, rebuild the missing columns there, copy the
    non-dirty blocks into ``buf`` (its dirty blocks are the new data and stay). Returns Z
    with those blocks ``C``.

    Raises:
        LostData: more members missing than the redundancy rebuilds.
        MemberIOError: a surviving member failed.
    """
    scratch = StripeBuffer(buf.mapping, buf.stripe, row0=buf.row0, rows=buf.rows)
    cols = missing_columns(buf.columns, missing)
    await read_rows(members, scratch, missing, cols, priority=priority)
    out = []
    for i, states in enumerate(z):
        if "D" not in states:
            out.append(tuple(states))
            continue
        for j, state in enumerate(states):
            if state != "D":
                buf.data[j, i] = scratch.data[j, i]
        out.append(tuple("D" if s == "D" else "C" for s in states))
    return tuple(out)


async def read_rows(members: Members, buf: StripeBuffer, missing: Collection[int], need: Collection[int], *, priority: int = 0) -> None:
    """Fill every column of ``buf`` (all its rows): read the surviving members and
    reconstruct a missing column that ``need`` (columns) asks for.

    Raises:
        LostData: a needed column is missing and cannot be rebuilt (two members missing).
        MemberIOError: a surviving member failed (the caller fails it and retries).
    """
    cols = missing_columns(buf.columns, missing)
    wanted = [j for j in cols if j in need]
    if wanted and not buf.redundancy.survives_columns(cols):
        if len(cols) == 1:  # RAID-0: nothing to reconstruct from
            raise LostData(buf.columns[wanted[0]], f"stripe {buf.stripe}: member {buf.columns[wanted[0]]} is missing (RAID-0)")
        lost = [buf.columns[j] for j in cols]
        raise LostData(buf.columns[wanted[0]], f"stripe {buf.stripe}: members {', '.join(map(str, lost))} are missing; cannot reconstruct")
    await members.run(
        [buf.request(j, "read", 0, buf.rows, priority=priority) for j in range(len(buf.columns)) if j not in cols]
    )
    if wanted:
        reconstruct(buf, cols)
