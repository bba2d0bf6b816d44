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
    """No read-ahead: only what the host asks for is read (vraid's behaviour before paper 001, SASEQP/MSP)."""

    name = "none"

    def after_read(self, read: HostRead) -> Sequence[BlockRange]:
        return ()


#: stripes of data the default read cache of a prefetching array holds
DEFAULT_READ_CACHE_STRIPES = 32
#: bounds of the default read cache, bytes
DEFAULT_READ_CACHE_MIN, DEFAULT_READ_CACHE_MAX = 1 << 20, 64 << 20


def default_read_cache_size(geometry: Any) -> int:
    """The read cache a prefetch policy gets when none is given (``--prefetch msp`` alone):
    :data:`DEFAULT_READ_CACHE_STRIPES` stripes of data, so MSP's SPS_max = 8 stripes ahead fit
    several streams over, from 1 MiB to 64 MiB, and never more than a quarter of the array;
    whole blocks. A 5-disk array with 64 KiB strips gets 8 MiB (docs/prefetch.md)."""
    size = DEFAULT_READ_CACHE_STRIPES * geometry.stripe_data_bytes
    size = min(max(DEFAULT_READ_CACHE_MIN, min(DEFAULT_READ_CACHE_MAX, size)), geometry.capacity // 4)
    return max(geometry.block_size, size // geometry.block_size * geometry.block_size)
