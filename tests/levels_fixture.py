"""A throwaway RAID level for the level-generic tests: RAID-4-like (XOR parity always on the
last member), registered in vraid.core.redundancy's registry for one test only.

The registry has no registration call of its own (a level is added by writing its class in
vraid/core/redundancy.py); the fixture puts the scheme into the level table ``for_level``
reads and into ``LEVELS`` as the modules that imported it see it, and monkeypatch takes both
out again after the test.
"""

from __future__ import annotations

import pytest

from vraid.core import geometry, redundancy


class FixedParity(redundancy.Xor):
    """XOR parity on the last member of every stripe (md's raid4), data on the others in order."""

    layouts = ("parity-last",)

    def place(self, layout, ndisks, stripe):
        return tuple(range(ndisks - 1)), (ndisks - 1,)

    def period(self, ndisks):
        return 1


def free_level() -> int:
    """A level number no real scheme uses."""
    return next(n for n in range(40, 100) if n not in redundancy.LEVELS)


@pytest.fixture
def fixed_parity_level(monkeypatch):
    """The FixedParity scheme registered as a level for this test; yields its level number."""
    scheme = FixedParity()
    scheme.level = free_level()
    table = vars(redundancy)["_BY_LEVEL"]  # the level table for_level reads (no public registration call)
    monkeypatch.setitem(table, scheme.level, scheme)
    levels = tuple(sorted(table))
    for module in (redundancy, geometry):
        monkeypatch.setattr(module, "LEVELS", levels)
    yield scheme.level
