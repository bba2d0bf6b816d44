"""Throwaway RAID levels for the level-generic tests, registered in vraid.core.redundancy's
registry for one test only: RAID-4-like (XOR parity always on the last member) and a two-member
mirror (the second member a copy of the first).

The fixture registers the scheme with :func:`vraid.core.redundancy.register`, as a course's
own level would be, and takes it out again after the test.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest

from vraid.core import redundancy


class FixedParity(redundancy.Xor):
    """XOR parity on the last member of every stripe (md's raid4), data on the others in order."""

    layouts = ("parity-last",)

    def place(self, layout, ndisks, stripe):
        return tuple(range(ndisks - 1)), (ndisks - 1,)

    def period(self, ndisks):
        return 1


def free_level() -> int:
    """A level number no real scheme uses."""
    return next(n for n in range(40, 100) if n not in redundancy.levels())


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


@contextmanager
def registered(scheme):
    """``scheme`` registered under a free level number while in the block; yields the number."""
    scheme.level = free_level()
    level = redundancy.register(scheme)
    try:
        yield level
    finally:
        redundancy.unregister(level)


@pytest.fixture
def fixed_parity_level():
    """The FixedParity scheme registered as a level for this test; yields its level number."""
    with registered(FixedParity()) as level:
        yield level


@pytest.fixture
def mirror_level():
    """The Mirror scheme registered as a level for this test; yields its level number."""
    with registered(Mirror()) as level:
        yield level
