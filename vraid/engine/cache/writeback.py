"""The write-back cache and its destager (the mechanism; the choices are policies).

What a unit is comes from the organisation (``vraid.policies.cache``: a
stripe or a PBG, seed 000 Fig. 6), which dirty unit goes next from the
destage order (``vraid.policies.order``: LRW, LRU, FIFO, CSCAN), and when
and how many destages run from the destage scheduler
(``vraid.policies.destage``: HLWM, adaptive HLWM, LT, PI, idle). The cache
only keeps the units and carries those decisions out.

:class:`WriteBackCache` holds the cache's state and puts together one part per idea, each in
its own module of this package (mixins: the host write's hot path stays direct method calls
on one object):

* :mod:`~vraid.engine.cache.units`: units, their block states (E, C, D) and their allocation;
* :mod:`~vraid.engine.cache.absorb`: host writes, with the DDIRTY entries of seed 003, 3.2;
* :mod:`~vraid.engine.cache.reads`: host reads served from the units;
* :mod:`~vraid.engine.cache.destager`: the destager and its run-time control;
* :mod:`~vraid.engine.cache.durability`: fsync, drain and the journal's records;
* :mod:`~vraid.engine.cache.metrics`: counters, history and status.

Below the cache. The cache never sees the array: it destages each unit
to a *target* (:mod:`vraid.engine.layer`; the RAID planner/executor, or a
buffer that destages further, e.g. a log disk) and reads its misses and
partial-block fills from it. A host read's miss may also be handed a
``fetch`` from above (:mod:`vraid.engine.read.readpath`: the clean-block read
cache, then the target).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np
import trio

from vraid.core.mapping import StaticMapping
from vraid.errors import MemberIOError
from .absorb import Absorb
from .destager import Destager
from .durability import Durability
from .metrics import CacheMetrics, CacheStatus
from .reads import ReadServing
from .units import Unit, UnitStore

if TYPE_CHECKING:
    from vraid.policies.cache import Organisation
    from vraid.policies.destage.base import DestageScheduler
    from vraid.policies.order import DestageOrder
    from vraid.engine.guard import PolicyGuard
    from vraid.engine.layer import Layer as Target
    from .journal import Journal


class WriteBackCache(Absorb, ReadServing, Destager, Durability, CacheStatus, UnitStore):
    """A write-back cache in front of a target (see the module docstring): its state, the
    settings a mount changes, and the events that wake the destager and waiting writers."""


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
        #: unless the organisation asks for it (``pbg:merge=true``: md + the elevator)
        self.coalesce = bool(getattr(organisation, "merge", False))  # ``pbg:merge=true`` (md + elevator)
        #: ``pbg:merge=true``: the scheduler's concurrency counts merged groups of rows, not rows
        self.merge_rows = self.coalesce
        #: destages (merged groups of units) in flight
        self.groups_in_flight = 0
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

    def _notify(self) -> None:
        self._changed.set()

    def _progressed(self) -> None:
        self._progress.set()
        self._progress = trio.Event()

    def serve_a_mount(self) -> None:
        """The settings of a live mount, unlike the papers' cache that simulations keep:
        coalesced destages, no fill on a read miss, no destager wake-up for a quiet
        overwrite, whole stripes around the cache (each attribute says why)."""
        self.coalesce = True
        self.fill_misses = False
        self.quiet_overwrites = True
        self.bypass_whole_stripes = True

