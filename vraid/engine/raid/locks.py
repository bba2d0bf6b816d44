"""Stripe locks: writes to one stripe are serialised, so two read-modify-writes never race on
a parity block (seed 000 II-A's small write reads the old parity it rewrites).

:class:`StripeLocks` holds one :class:`StripeMutex` per stripe while somebody holds or waits
for it. ``async with locks.hold(stripe)`` takes it: first come, first served, and a release
hands the lock to the first waiter, exactly trio.Lock's behaviour as the RAID layer uses it,
without trio.Lock's per-object costs (a parking lot and a statistics object each time), which
a simulation paid for every request. An uncontended acquire skips trio's checkpoint when the
clock allows it (``alone``: :meth:`vraid.engine.clock.TrioClock.may_skip_checkpoint`; in
virtual time when it would resume the caller alone, so the order of tasks stays the same; on
a mount's real clock always): no scheduler pass. Otherwise it takes the same checkpoints as
``trio.Lock.acquire``, so a simulation's order of tasks is the one trio.Lock gave.

Rebuild, scrub, resync and the degraded reads take the same locks through
:meth:`vraid.engine.raid.layer.RaidLayer.stripe_lock`.
"""

from __future__ import annotations

from typing import Callable

import trio


class StripeMutex:
    """One stripe's lock: whether it is held, and the tasks waiting for it (made on first
    contention). No owner is recorded: every holder releases it through ``async with``."""

    __slots__ = ("held", "lot")

    def __init__(self) -> None:
        self.held = False
        self.lot: trio.lowlevel.ParkingLot | None = None


class StripeLocks:
    """The stripe locks of one array."""

    def __init__(self, alone: Callable[[], bool] | None) -> None:
        #: stripe -> its mutex, while somebody holds or waits for it
        self.table: dict[int, StripeMutex] = {}
        #: the clock's "an uncontended lock may skip its checkpoint" test (None: always checkpoint)
        self.alone = alone

    def __contains__(self, stripe: int) -> bool:
        """Whether somebody holds or waits for the lock of ``stripe``."""
        return stripe in self.table

    def hold(self, stripe: int) -> "StripeLock":
        """``async with locks.hold(stripe)``: the stripe's lock for the block."""
        return StripeLock(self, stripe)


class StripeLock:
    """One acquisition of a stripe's lock (see the module docstring)."""

    __slots__ = ("locks", "stripe", "lock")

    def __init__(self, locks: StripeLocks, stripe: int) -> None:
        self.locks = locks
        self.stripe = stripe

    async def __aenter__(self) -> None:
        table = self.locks.table
        lock = table.get(self.stripe)
        if lock is None:
            lock = table[self.stripe] = StripeMutex()
        self.lock = lock
        if not lock.held:
            alone = self.locks.alone
            if alone is not None and alone():
                lock.held = True
                return
        try:
            await trio.lowlevel.checkpoint_if_cancelled()
            if not lock.held and not lock.lot:
                lock.held = True
                await trio.lowlevel.cancel_shielded_checkpoint()
            else:
                lot = lock.lot
                if lot is None:
                    lot = lock.lot = trio.lowlevel.ParkingLot()
                await lot.park()  # the holder's release hands the lock over (held stays True)
        except BaseException:
            self._drop()
            raise

    async def __aexit__(self, *exc) -> None:
        lock = self.lock
        if lock.lot:
            lock.lot.unpark(count=1)  # the first waiter holds it now
        else:
            lock.held = False
            self.locks.table.pop(self.stripe, None)

    def _drop(self) -> None:
        lock = self.lock
        if not lock.held and not lock.lot:
            self.locks.table.pop(self.stripe, None)
