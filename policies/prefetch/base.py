"""The prefetch family's interface: :class:`HostRead` in, block ranges out (see the package
docstring); :class:`NoPrefetch` is the default. A module of its own so that the built-ins
(:mod:`.msp`) import it without importing the package that lists them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence


@dataclass(frozen=True, slots=True)
class HostRead:
    """One host read as the prefetch policy sees it (logical block numbers), on its arrival,
    before it is served: the counts are what the caches hold at that instant."""

    first: int  # first block read
    count: int  # blocks read
    misses: int  # of them, blocks neither the write cache nor the read cache held, nor a prefetch was reading
    prefetch_hits: int  # of them, blocks (not in the write cache) a prefetch had brought in or was reading
    now: float  # the engine clock's time


#: (first block, number of blocks) to read ahead
BlockRange = tuple[int, int]


class PrefetchPolicy:
    """Decides what to read ahead as each host read arrives."""

    name = "base"

    def __init__(self, geometry: Any = None) -> None:
        #: vraid.core.geometry.Geometry of the array: ``u`` blocks per strip, ``data_disks``
        self.geometry = geometry

    def after_read(self, read: HostRead) -> Sequence[BlockRange]:
        """Block ranges to read ahead on ``read`` (empty: none). Called as each host read
        arrives, before its member reads are issued (the name is older than that: kept so that
        existing policies keep working); blocks of ``read`` itself are never prefetched."""
        raise NotImplementedError

    def describe(self) -> str:
        return self.name


class NoPrefetch(PrefetchPolicy):
    """No read-ahead: only what the host asks for is read (vraid's behaviour before seed 001)."""

    name = "none"

    def after_read(self, read: HostRead) -> Sequence[BlockRange]:
        return ()
