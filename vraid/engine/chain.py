"""The chain of layers of one array, assembled from built parts (called by
:mod:`vraid.engine.build`, the composition root).

From the top: the host API (:class:`vraid.engine.host.array.Array`), the read path
(:mod:`vraid.engine.read`: read cache and prefetch hook), the write-back cache
(:mod:`vraid.engine.cache`, seed 000/003), the log cache (seed 002) or the placement
(seed 004), and the RAID layer (:mod:`vraid.engine.raid`) over the members
(:mod:`vraid.engine.members.queues`). Every layer knows only the layer below it (its *target*: what it
destages to and reads its misses from, :class:`vraid.engine.layer.Layer`); none knows the
one above.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence


from vraid.backends.base import Store
from vraid.core.geometry import Geometry
from vraid.core.mapping import Mapping, StaticMapping
from vraid.engine.cache.journal import as_journal
from vraid.engine.clock import Clock, TrioClock
from vraid.engine.events import EventBus
from vraid.engine.guard import PolicyGuard
from vraid.engine.host.array import Array
from vraid.engine.members.queues import Members
from vraid.engine.metrics import Metrics
from vraid.engine.raid.layer import RaidLayer
from vraid.engine.read.readcache import ReadCache
from vraid.engine.read.readpath import ReadPath
from vraid.policies.prefetch import NoPrefetch


@dataclass(frozen=True)
class CacheConfig:
    """Which write-back cache to run (``organisation="none"``: write-through)."""

    organisation: str = "none"
    size: int = 64 << 20
    order: str = "lrw"
    destage: str = "hlwm"
    nvram: Path | None = None

    @property
    def enabled(self) -> bool:
        return self.organisation != "none"


def assemble(
    geometry: Geometry,
    stores: Sequence[Store],
    *,
    clock: Clock | None = None,
    events: EventBus | None = None,
    ct=None,
    cache: CacheConfig | None = None,
    nvram=None,
    journal=None,
    intent=None,
    failed: Sequence[int] = (),
    spares: Sequence[Store] = (),
    mapping: Mapping | None = None,
    read_cache_bytes: int = 0,
    prefetch=None,
    queue_order=None,
    guard: PolicyGuard | None = None,
    log=None,
    placement=None,
) -> Array:
    """The chain over ``stores``, its host API on top.

    ``nvram``: a :class:`vraid.backends.nvram.Nvram`, shorthand for
    ``journal=NvramJournal(nvram)``. ``read_cache_bytes``: size of the clean-block read cache
    (0: none); ``prefetch``: a :class:`vraid.policies.prefetch.PrefetchPolicy` (default none),
    which needs the read cache. ``guard``: the :class:`PolicyGuard` every policy runs behind
    (default: one that falls back to the family's default on a fault). ``log``:
    ``log(target, guard)`` makes the log cache (seed 002) over ``target``. ``placement``:
    ``placement(raid)`` makes the placement layer over the RAID layer (seed 004; ``mapping``
    is then its stripe directory). ``ct``, ``queue_order``: policies (guarded here).
    """
    if len(stores) != geometry.ndisks:
        raise ValueError(f"{len(stores)} stores for {geometry.ndisks} disks")
    mapping = mapping if mapping is not None else StaticMapping(geometry)
    clock = clock or TrioClock()
    events = events or EventBus()
    guard = guard or PolicyGuard()
    guard.attach(events, clock, geometry)
    members = Members(stores, clock, queue_order=guard.wrap("queue_order", queue_order))
    metrics = Metrics()
    raid = RaidLayer(geometry, members, mapping=mapping, clock=clock, events=events, metrics=metrics,
                     guard=guard, ct=ct, intent=intent, failed=failed, spares=spares)
    target = raid
    logc = placed = None
    if log is not None:
        logc = target = log(raid, guard)
    if placement is not None:
        placed = target = placement(raid)
        raid.after_rebuild.append(placed.checkpoint)  # the new member gets the directory
    journal = as_journal(journal, nvram, clock)
    cfg = cache or CacheConfig()
    wb = None
    if cfg.enabled:
        from vraid.engine.cache import WriteBackCache
        from vraid.policies.registry import Context, create

        ctx = Context(geometry=geometry)
        wb = WriteBackCache(target, create("cache", cfg.organisation, ctx), create("destage_order", cfg.order, ctx),
                            create("destage", cfg.destage, ctx), cfg.size, journal=journal, guard=guard)
    reads = ReadPath(
        target,
        cache=wb,
        read_cache=ReadCache(read_cache_bytes, geometry.block_size) if read_cache_bytes else None,
        prefetch=prefetch if isinstance(prefetch, NoPrefetch) else guard.wrap("prefetch", prefetch),
        members=members,
        host=metrics,
    )
    array = Array(raid, reads, metrics=metrics, guard=guard, cache=wb, log=logc, placed=placed)
    return array
