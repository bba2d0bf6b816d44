"""Throwaway RAID levels for the level-generic tests, registered in vraid.core.redundancy's
registry for one test only: RAID-4-like (XOR parity always on the last member) and a two-member
mirror (the second member a copy of the first).

The registry has no registration call of its own (a level is added by writing its class in
vraid/core/redundancy.py); the fixture puts the scheme into the level table ``for_level``
reads and into ``LEVELS`` as the modules that imported it see it, and monkeypatch takes both
out again after the test.
"""

from __future__ import annotations

import numpy as np
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


class Mirror(redundancy.Redundancy):
    """Two members, the second a copy of the first (a two-disk RAID-1), for the copy rules."""

    parity_columns = tolerates = 1
    min_disks = 2
    layouts = ("mirror",)

    def place(self, layout, ndisks, stripe):
        return (0,), (1,)

    def period(self, ndisks):
        return 1

    def generate(self, data, out=None):
        out = np.empty_like(data[:1]) if out is None else out
        out[0] = data[0]
        return out

    def reconstruct(self, data, checks, missing):
        if len(set(missing)) > 1:
            raise ValueError("both copies lost")
        if 0 in missing:
            data[0] = checks[0]
        else:
            checks[0] = data[0]


def register(monkeypatch, scheme) -> int:
    """``scheme`` registered under a free level number for this test; returns the number."""
    scheme.level = free_level()
    table = vars(redundancy)["_BY_LEVEL"]  # the level table for_level reads (no public registration call)
    monkeypatch.setitem(table, scheme.level, scheme)
    levels = tuple(sorted(table))
    for module in (redundancy, geometry):
        monkeypatch.setattr(module, "LEVELS", levels)
    return scheme.level


@pytest.fixture
def fixed_parity_level(monkeypatch):
    """The FixedParity scheme registered as a level for this test; yields its level number."""
    yield register(monkeypatch, FixedParity())


@pytest.fixture
def mirror_level(monkeypatch):
    """The Mirror scheme registered as a level for this test; yields its level number."""
    yield register(monkeypatch, Mirror())
