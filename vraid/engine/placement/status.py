"""The placement layer's status record (seed 004: each member's write buffer, the free
stripes of the stripe directory, the stripe writes by kind, the directory's journal), as
``vraid status`` shows it under ``placement`` and ``vraid sim --json`` reports it.

:mod:`vraid.engine.status` says how a record becomes that dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from vraid.engine.status import StatusRecord


@dataclass(frozen=True, kw_only=True)
class PlacementStatus(StatusRecord):
    """A :class:`~vraid.engine.placement.writes.PlacedWrites` at one moment."""

    #: the placement policy's name and spec, its write buffer (strips per member; None: none)
    policy: str
    spec: Any
    buffer_strips: Any
    #: write hits / (hits + misses) of the policy's counters (None before any write)
    write_hit_ratio: float | None
    #: the policy's own counters
    policy_stats: Mapping[str, Any]
    #: strips in the write buffers, in all and per member
    buffered: int
    buffered_per_disk: Mapping[str, int]
    #: the stripe directory: free stripes, stripes and strips in all
    free_stripes: int
    stripes: int
    strips: int
    #: the layer's counters (host strips, stripe writes by kind ``LW``/``PW``, swaps, sizes...)
    stats: Mapping[str, Any]
    #: the directory's journal and checkpoints (:meth:`DirectoryStore.status`)
    directory: Mapping[str, int]
