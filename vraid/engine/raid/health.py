"""Member states of a running array: which roles are usable, and where a rebuild has got to.

A role (member position in the layout) is *active*, *failed* (its blocks are
reconstructed from the others), or *rebuilding* (a spare is taking it over:
stripes below the rebuild position are on the new member, the rest are
still reconstructed). A *spare* is a member file with no role yet. What a
failure writes to the superblocks is :mod:`vraid.ondisk.failures`.
"""

from __future__ import annotations

from typing import Iterable

ACTIVE, FAILED, SPARE, REBUILDING = "active", "failed", "spare", "rebuilding"


class MemberHealth:
    """Which roles of an array are usable, and where a rebuild has got to."""

    def __init__(self, ndisks: int, failed: Iterable[int] = ()) -> None:
        self.states = [ACTIVE] * ndisks
        self.reasons: dict[int, str] = {}
        self._failed: set[int] = set()
        #: the role a spare is taking over, and the first stripe not yet rebuilt on it
        self.rebuild_role: int | None = None
        self.rebuild_pos = 0
        for role in failed:
            self.fail(role, "failed before this mount")

    @property
    def degraded(self) -> bool:
        return bool(self._failed) or self.rebuild_role is not None

    @property
    def failed(self) -> list[int]:
        return sorted(self._failed)

    @property
    def missing_roles(self) -> list[int]:
        """Roles whose blocks are not (all) on a member: failed and rebuilding."""
        extra = [self.rebuild_role] if self.rebuild_role is not None else []
        return sorted(self._failed | set(extra))

    def missing(self, stripe: int) -> frozenset[int] | set[int]:
        """Members whose blocks of ``stripe`` must be reconstructed (not read or written)."""
        r = self.rebuild_role
        if r is not None and stripe >= self.rebuild_pos:
            return self._failed | {r}
        return self._failed

    def fail(self, role: int, reason: str) -> bool:
        """Mark ``role`` failed; False if it already was."""
        if role in self._failed:
            return False
        if role == self.rebuild_role:
            self.rebuild_role = None
            self.rebuild_pos = 0
        self._failed.add(role)
        self.states[role] = FAILED
        self.reasons[role] = reason
        return True

    def start_rebuild(self, role: int) -> None:
        self._failed.discard(role)
        self.states[role] = REBUILDING
        self.rebuild_role = role
        self.rebuild_pos = 0

    def finish_rebuild(self, role: int) -> None:
        self.states[role] = ACTIVE
        self.reasons.pop(role, None)
        self.rebuild_role = None
        self.rebuild_pos = 0
