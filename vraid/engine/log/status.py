"""The log cache's status record (seed 002: the RAM buffer, the log's segments and tail,
the slot table, both destage levels' counters), as ``vraid status`` shows it under ``log``.

:mod:`vraid.engine.status` says how a record becomes that dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from vraid.engine.status import StatusRecord, flat, optional


@dataclass(frozen=True, kw_only=True)
class LogStatus(StatusRecord):
    """A :class:`~vraid.engine.log.cache.LogCache` at one moment."""

    #: the log's layout kind (``single``, ``mirrored``, ``striped``...)
    kind: str
    #: the log stores' names
    stores: tuple[str, ...]
    #: the RAM buffer: bytes, block slots used and in all
    ram_bytes: int
    ram_used_blocks: int
    ram_blocks: int
    #: the log: segment slots, those between tail and head, bytes
    log_segments: int
    log_used_segments: int
    log_bytes: int
    #: sequence numbers: next to append, oldest still needed, tail recorded in the superblocks
    head: int
    tail: int
    durable_tail: int
    #: blocks per slot-table state, and the RAM slots (:meth:`SlotTable.status`)
    slots: Mapping[str, int]
    #: the level-2 destage scheduler's description (None: none)
    scheduler: Any
    #: the names of the log stores that failed (the log cache's own failure is in ``message``)
    failed: tuple[str, ...]
    #: the log medium's layout and traffic (:meth:`LogMedium.status`)
    segment_slots: int
    segment_bytes: int
    segment_writes: int
    bytes_written: int
    reads: int
    #: the counters (``LogMetrics.to_dict()``)
    counters: Mapping[str, Any] = flat()
    #: what a failure means for the array, when a log store or the log failed
    message: str | None = optional()
