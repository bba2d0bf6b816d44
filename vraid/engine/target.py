"""Destage targets: where the write-back cache sends what it destages.

The write-back cache (:mod:`vraid.engine.cache`) used to hold the ``Array``
and call back into it, so array, cache and rebuild imported each other. Now
the cache knows only a :class:`Target`: something that takes a unit's rows
(a :class:`~vraid.engine.stripe.StripeBuffer` and its cache-state matrix Z,
seed 000 eq. 2) at a priority, reads blocks for partial-block fills and read
misses, and makes what it took durable.

:class:`RaidTarget` is the first implementation: the RAID planner/executor of
the array (plan the rxw-matrix from Z, let the CT policy rewrite it, write
intent, degraded plans, retries), i.e. today's ``Array.write_plan``,
``Array.read_blocks``, ``Array.read_members`` and the members' flush.

Chaining. A target may itself be a buffer that destages to the next target,
which is how seed 002 (VC-RAID) fits: the RAM write cache destages *level 1*
to a log-disk target, which appends the blocks to its log and acknowledges;
the log-disk target destages *level 2* to its own next target, a
:class:`RaidTarget`, in idle time. Such a target

* answers :meth:`Target.write_unit` once the blocks are in its own buffer
  (and returns no filled cells: it read nothing);
* serves :meth:`Target.read` and :meth:`Target.read_blocks` from its buffer
  where it holds a newer copy, from its next target otherwise, so a read
  below the cache never sees an older copy than the chain holds;
* makes :meth:`Target.flush` durable in its own medium (the log disk) or by
  flushing through to the next target;
* passes ``geometry``, ``mapping``, ``clock`` and ``events`` of the next target through,
  so every layer publishes on one bus under one clock.

``tests/test_target.py`` builds such a chained buffer over a recording
target and runs the cache on it; :class:`vraid.engine.log.cache.LogCache` is the real
one (docs/log-disk.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence

from .members import Priority

if TYPE_CHECKING:
    from vraid.core.geometry import Geometry
    from vraid.core.mapping import Mapping
    from .clock import Clock
    from .events import EventBus
    from .stripe import StripeBuffer

Z = Sequence[Sequence[str]]
#: (column, row) of a block in a StripeBuffer: data strip k, row relative to the buffer's row0
Cell = tuple[int, int]


class Target(Protocol):
    """What the write-back cache destages to and reads its misses from."""

    geometry: "Geometry"
    #: logical-to-physical translation (vraid.core.mapping): cache units and journal block numbers use it
    mapping: "Mapping"
    clock: "Clock"
    events: "EventBus"

    async def write_unit(self, buf: "StripeBuffer", z: Z, *, priority: Priority = Priority.DESTAGE, cause: Any = None) -> frozenset[Cell]:
        """Take the rows of ``buf`` whose states ``z`` gives (D blocks are written).

        Returns the E cells of ``buf`` the target filled with the current
        (clean) data while doing so (a RAID plan's ``r`` reads); the caller
        may mark them clean. A buffering target returns an empty set.
        """
        ...

    async def read_blocks(self, buf: "StripeBuffer", cells: Iterable[Cell], *, priority: Priority = Priority.HOST) -> None:
        """Read data blocks ``cells`` of ``buf`` into it (partial-block fills)."""
        ...

    async def read(self, offset: int, length: int, *, priority: Priority = Priority.HOST) -> bytes:
        """``length`` bytes of the image at ``offset`` as the target holds them (read misses)."""
        ...

    async def flush(self) -> None:
        """Return once everything :meth:`write_unit` took before the call is durable."""
        ...


class _Raid(Protocol):
    """The part of :class:`vraid.engine.array.Array` a RaidTarget drives (not imported:
    the array imports the cache, which imports this module)."""

    geometry: Any
    mapping: Any
    clock: Any
    events: Any
    members: Any

    async def write_plan(self, buf: "StripeBuffer", z: Z, *, priority: Any = ..., cause: Any = ...) -> Any: ...

    async def read_blocks(self, buf: "StripeBuffer", cells: Any, *, priority: int = ..., locked: bool = ...) -> None: ...

    async def read_members(self, offset: int, length: int, *, priority: int = ...) -> bytes: ...

    async def write_whole_stripe(self, stripe: int, data: Any) -> None: ...


class RaidTarget:
    """The RAID planner/executor of an array as a destage target (the end of every chain)."""

    def __init__(self, raid: _Raid) -> None:
        self.raid = raid
        self.geometry = raid.geometry
        self.mapping = raid.mapping
        self.clock = raid.clock
        self.events = raid.events

    async def write_unit(self, buf: "StripeBuffer", z: Z, *, priority: Priority = Priority.DESTAGE, cause: Any = None) -> frozenset[Cell]:
        plan = await self.raid.write_plan(buf, z, priority=priority, cause=cause)
        cols = len(z[0]) if z else 0
        # an E block the plan read with r (to the cache) now holds the members' clean data
        return frozenset(
            (j, i) for i, row in enumerate(plan.transformed) for j in range(cols) if z[i][j] == "E" and "r" in row[j]
        )

    async def read_blocks(self, buf: "StripeBuffer", cells: Iterable[Cell], *, priority: Priority = Priority.HOST) -> None:
        await self.raid.read_blocks(buf, list(cells), priority=priority)

    async def write_stripe(self, stripe: int, whole: Any) -> None:
        """Write ``whole``, all data of ``stripe`` as (data strip, row, block), as a host write
        of it would be written through (the cache's writes around it): from these bytes
        where they are, no copy into a stripe buffer when nothing interleaves (optional in
        the Target protocol; a cache without it writes a unit of the whole stripe)."""
        await self.raid.write_whole_stripe(stripe, whole)

    async def read(self, offset: int, length: int, *, priority: Priority = Priority.HOST) -> bytes:
        return await self.raid.read_members(offset, length, priority=priority)

    async def flush(self) -> None:
        await self.raid.members.flush()
