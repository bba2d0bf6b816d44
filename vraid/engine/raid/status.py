"""The RAID layer's status records: the members (state, traffic, queue), member failure,
spares and the rebuild (:mod:`vraid.engine.raid.failures`), the write-intent bitmap
(:mod:`vraid.ondisk.bitmap`) and the contiguity transform (seed 000 sec. III) in force.

``vraid status`` shows the bitmap under ``bitmap``, the transform under ``ct`` and the
failure part's fields at the top level (``members``, ``degraded``, ``rebuild``...);
:mod:`vraid.engine.status` says how a record becomes a dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from vraid.engine.status import StatusRecord, flat, optional


@dataclass(frozen=True, kw_only=True)
class MemberStatus(StatusRecord):
    """One member of the array."""

    #: its role (position in the layout), the store under it, its state (active, failed, rebuilding)
    disk: int
    store: str
    state: str
    #: its traffic (``MemberStats.to_dict()``: requests, bytes, errors, busy time)
    io: Mapping[str, float] = flat()
    #: requests queued at it now
    queue: int
    #: why it failed, for a failed member
    reason: str | None = optional()


@dataclass(frozen=True, kw_only=True)
class SpareStatus(StatusRecord):
    """A spare waiting for a member to fail."""

    store: str
    state: str = "spare"


@dataclass(frozen=True, kw_only=True)
class FailureStatus(StatusRecord):
    """Members, failures, spares and the rebuild (:meth:`RaidFailures.failure_status`)."""

    members: tuple[MemberStatus, ...]
    #: a member is missing (failed or being rebuilt)
    degraded: bool
    #: failed roles, and those whose blocks are not all on a member (failed and rebuilding)
    failed: tuple[int, ...]
    missing: tuple[int, ...]
    #: more members missing than the redundancy survives
    data_lost: bool
    spares: tuple[SpareStatus, ...]
    #: the running rebuild's status, else the last one's (None: none yet)
    rebuild: Mapping[str, Any] | None
    #: plans made with a member missing
    degraded_plans: int


@dataclass(frozen=True, kw_only=True)
class RaidStatus(StatusRecord):
    """The RAID layer (:class:`vraid.engine.raid.layer.RaidLayer`) at one moment."""

    #: the contiguity transform's canonical spec (``none`` without one)
    ct: str
    #: the write-intent bitmap's status (:meth:`vraid.ondisk.bitmap.WriteIntentBitmap.status`; None: none)
    bitmap: Mapping[str, Any] | None
    #: members, failures, spares, rebuild (its fields merged in)
    failures: FailureStatus = flat()


def ct_spec(ct: Any) -> str:
    """The CT policy's canonical spec for status (``none`` without one)."""
    return "none" if ct is None else str(getattr(ct, "spec", getattr(ct, "name", "custom")))
