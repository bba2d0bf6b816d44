"""Member states of a running array: which roles are usable, and where a rebuild has got to.

A role (member position in the layout) is *active*, *failed* (its blocks are
reconstructed from the others), or *rebuilding* (a spare is taking it over:
stripes below the rebuild position are on the new member, the rest are
still reconstructed). One rebuild pass may take over several roles at once
(md rebuilds every failed member that has a spare in one pass: RAID-6 with
two failed and two spares); they share the rebuild position. A *spare* is a
member file with no role yet. What a
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
        #: the roles spares are taking over in one pass, and the first stripe not yet rebuilt on them
        self.rebuild_roles: tuple[int, ...] = ()
        self.rebuild_pos = 0
        for role in failed:
            self.fail(role, "failed before this mount")

    @property
    def degraded(self) -> bool:
        return bool(self._failed) or bool(self.rebuild_roles)

    @property
    def failed(self) -> list[int]:
        return sorted(self._failed)

    @property
    def missing_roles(self) -> list[int]:
        """Roles whose blocks are not (all) on a member: failed and rebuilding."""
        return sorted(self._failed | set(self.rebuild_roles))

    def missing(self, stripe: int) -> frozenset[int] | set[int]:
        """Members whose blocks of ``stripe`` must be reconstructed (not read or written)."""
        if self.rebuild_roles and stripe >= self.rebuild_pos:
            return self._failed | set(self.rebuild_roles)
        return self._failed

    def fail(self, role: int, reason: str) -> bool:
        """Mark ``role`` failed; False if it already was."""
        if role in self._failed:
            return False
        self._leave_rebuild(role)
        self._failed.add(role)
        self.states[role] = FAILED
        self.reasons[role] = reason
        return True

    def start_rebuild(self, roles: Iterable[int]) -> None:
        """Spares take over ``roles`` in one pass, from stripe 0."""
        self.rebuild_roles = tuple(roles)
        for role in self.rebuild_roles:
            self._failed.discard(role)
            self.states[role] = REBUILDING
        self.rebuild_pos = 0

    def finish_rebuild(self, roles: Iterable[int]) -> None:
        for role in roles:
            self.states[role] = ACTIVE
            self.reasons.pop(role, None)
            self._leave_rebuild(role)

    def abandon_rebuild(self, role: int) -> None:
        """A stopped pass gives ``role`` back as failed (for its reason before the rebuild)."""
        self._leave_rebuild(role)
        self._failed.add(role)
        self.states[role] = FAILED

    def _leave_rebuild(self, role: int) -> None:
        if role in self.rebuild_roles:
            self.rebuild_roles = tuple(r for r in self.rebuild_roles if r != role)
            if not self.rebuild_roles:
                self.rebuild_pos = 0
