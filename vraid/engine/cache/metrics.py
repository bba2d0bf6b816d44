"""What the write-back cache counts and reports: its metrics and its status record.

:class:`CacheMetrics` counts the events of seed 003, section 2.1 (write cache hits,
overwrites and misses; read hits) and the destages, and keeps the occupancy and watermark
history the plots and ``vraid top`` draw. :class:`CacheStatus` is the part of
:class:`~vraid.engine.cache.writeback.WriteBackCache` that samples that history at every
scheduler decision (publishing a :class:`~vraid.engine.events.WatermarksEvent` when the
watermarks move) and answers ``status`` with a
:class:`~vraid.engine.cache.status.WriteBackStatus` (``vraid status``, ``vraid ctl get``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vraid.engine.cache.status import WriteBackStatus
from vraid.engine.events import WatermarksEvent
from vraid.engine.status import frozen_map, read_only


@dataclass
class CacheMetrics:
    """The cache's counters (see the module docstring); ``to_dict`` adds the two ratios."""

    read_blocks: int = 0
    read_hit_blocks: int = 0
    write_blocks: int = 0
    write_hits: int = 0
    overwrites: int = 0
    write_misses: int = 0
    destages_started: int = 0
    destages_finished: int = 0
    destage_errors: int = 0
    evictions: int = 0
    nvram_replayed: int = 0
    #: (time, occupancy, hwm, lwm, destaging) samples for plots and the TUI
    history: list[tuple[float, float, float | None, float | None, int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "history"}
        out["read_hit_ratio"] = self.read_hit_blocks / self.read_blocks if self.read_blocks else 0.0
        out["overwrite_ratio"] = self.overwrites / self.write_blocks if self.write_blocks else 0.0
        return out



class CacheStatus:
    """Sampling and status of a :class:`~vraid.engine.cache.writeback.WriteBackCache` (which
    holds the state these methods read)."""

    def _record(self, now: float, decision) -> None:
        if decision.hwm != self.hwm or decision.lwm != self.lwm:
            self.hwm, self.lwm = decision.hwm, decision.lwm
            self.target.events.publish(WatermarksEvent(time=now, hwm=decision.hwm, lwm=decision.lwm))
        h = self.metrics.history
        sample = (now, self.occupancy, decision.hwm, decision.lwm, self.in_flight)
        if not h or h[-1][1:] != sample[1:]:
            if len(h) >= self._history_limit:
                del h[: len(h) // 2]
            h.append(sample)

    def status(self) -> WriteBackStatus:
        bypass = self.bypass_whole_stripes
        return WriteBackStatus(
            organisation=self.organisation.name, order=self.order.name, scheduler=read_only(self.scheduler.describe()),
            capacity_units=self.capacity, unit_bytes=self.unit_bytes, units=len(self.units),
            dirty_units=len(self.dirty_keys), destaging=self.in_flight, occupancy=self.occupancy,
            hwm=self.hwm, lwm=self.lwm, paused=self.paused, draining=self.draining,
            nvram=self.journal is not None, counters=frozen_map(self.metrics.to_dict()),
            bypass_whole_stripes=True if bypass else None, bypassed_stripes=self.bypassed_stripes if bypass else None)
