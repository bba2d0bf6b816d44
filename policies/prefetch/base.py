"""The prefetch family's interface: :class:`HostRead` in, block ranges out (see the package
docstring); :class:`NoPrefetch` is the default. A module of its own so that the built-ins
(:mod:`.msp`) import it without importing the package that lists them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence


@dataclass(frozen=True, slots=True)
class HostRead:
    """One host read as the prefetch policy sees it (logical block numbers)."""

    first: int  # first block read
    count: int  # blocks read
    misses: int  # of them, blocks neither the write cache nor the read cache held
    prefetch_hits: int  # of them, blocks a prefetch had brought into the read cache
    now: float  # the engine clock's time


#: (first block, number of blocks) to read ahead
BlockRange = tuple[int, int]


class PrefetchPolicy:
    """Decides what to read ahead after each host read."""

    name = "base"

    def __init__(self, geometry: Any = None) -> None:
        #: vraid.core.geometry.Geometry of the array: ``u`` blocks per strip, ``data_disks``
        self.geometry = geometry

    def after_read(self, read: HostRead) -> Sequence[BlockRange]:
        """Block ranges to read ahead after ``read`` (empty: none)."""
        raise NotImplementedError

    def describe(self) -> str:
        return self.name


class NoPrefetch(PrefetchPolicy):
    """No read-ahead: only what the host asks for is read (vraid's behaviour before seed 001)."""

    name = "none"

    def after_read(self, read: HostRead) -> Sequence[BlockRange]:
        return ()
