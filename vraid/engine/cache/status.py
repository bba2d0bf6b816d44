"""The write-back cache's status record (seed 003 sec. 2.1's counters, the watermarks and
the destager's state), as ``vraid status`` shows it under ``cache`` and ``vraid top`` draws it.

:mod:`vraid.engine.status` says how a record becomes that dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from vraid.engine.status import StatusRecord, flat, optional


@dataclass(frozen=True, kw_only=True)
class WriteBackStatus(StatusRecord):
    """A :class:`~vraid.engine.cache.writeback.WriteBackCache` at one moment."""

    #: the cache organisation, destage order and scheduler in force
    organisation: str
    order: str
    scheduler: Any
    #: units the cache can hold, bytes of a unit, units held, dirty units among them
    capacity_units: int
    unit_bytes: int
    units: int
    dirty_units: int
    #: destages in flight
    destaging: int
    #: dirty fraction, and the scheduler's watermarks (None: it has none)
    occupancy: float
    hwm: float | None
    lwm: float | None
    #: destaging paused (``vraid ctl pause``)
    paused: bool
    #: flushes waiting for the cache to drain (vraid top: "flush waiting")
    draining: int
    #: whether an NVRAM journal keeps the dirty units
    nvram: bool
    #: the counters (``CacheMetrics.to_dict()``: hits, overwrites, misses, destages, ratios)
    counters: Mapping[str, Any] = flat()
    #: present only when whole stripes bypass the cache: True, and how many did
    bypass_whole_stripes: bool | None = optional()
    bypassed_stripes: int | None = optional()
