"""The read path's status record and its read cache's (seed 001: the prefetch policy, the
read-path counters of independency and parallelism loss, the read cache's hits and waste).

``vraid status`` shows it as ``reads``, ``vraid sim --json`` as ``prefetch``;
:mod:`vraid.engine.status` says how a record becomes that dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from vraid.engine.status import StatusRecord, flat, optional


@dataclass(frozen=True, kw_only=True)
class ReadCacheStatus(StatusRecord):
    """The read cache (:class:`vraid.engine.read.readcache.ReadCache`)."""

    #: its size as configured (bytes)
    size: int
    #: blocks it holds, and at most
    blocks: int
    capacity_blocks: int
    #: blocks a fetch (a host-read miss or a prefetch) is reading now
    fetching: int
    #: its counters (``ReadCacheMetrics.to_dict()``: hits, lookups, prefetches, ratios)
    counters: Mapping[str, Any] = flat()
    #: prefetched blocks it holds that no host read has read yet
    prefetch_unread: int
    #: prefetched blocks evicted or invalidated before a host read used them
    prefetch_wasted: int


@dataclass(frozen=True, kw_only=True)
class ReadPathStatus(StatusRecord):
    """The read path (:class:`vraid.engine.read.readpath.ReadPath`)."""

    #: the prefetch policy's description
    prefetch: Any
    #: prefetches in flight
    prefetching: int
    #: the policy's own state, where it offers one (``state()``)
    policy_state: Mapping[str, Any] | None = optional()
    #: the read-path counters (``ReadPathMetrics.to_dict(members)``)
    counters: Mapping[str, Any] = flat()
    #: the read cache, where there is one (its fields merged in)
    read_cache: ReadCacheStatus | None = flat(optional=True)
