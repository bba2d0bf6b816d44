"""Prefetch policies: after a host read, what else to read ahead (``--prefetch``).

The read path (:mod:`vraid.engine.readpath`) asks the policy once after every
host read, handing it a :class:`HostRead` (which blocks, how many of them
went to the members, how many a previous prefetch had brought in), and reads
the block ranges the policy returns into the clean-block read cache in the
background, without delaying the host read. What the cache or the read cache
already holds is left out by the read path, not by the policy.

Seed 001 (Baek & Park, striping-aware sequential prefetching) is built on
this interface: SEQP (Linux read-ahead: a window ramping x4 below max/16,
else x2), SASEQP (the ahead window shrunk at the first strip boundary,
Fig. 5) and MSP (the strip-number sequence with its sequential counter,
Fig. 7) all decide from the stream of host reads and the strip size
(``geometry.u`` blocks per strip), which is what a policy gets.

A policy is a pure, synchronous object; a new one is one class (one file here)
and one entry in the ``prefetch`` row of :mod:`vraid.policies.registry`.
Built in: ``none`` (today's behaviour: no read-ahead) and ``msp``
(:mod:`.msp`, seed 001 sec. 4). A policy may also have a ``state()`` method
returning a small dict (MSP: SC, SPS): the read path publishes it as a
``prefetch`` event when it changes and ``vraid status`` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ...errors import VraidError


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


from .msp import MspPrefetch  # noqa: E402  (it subclasses PrefetchPolicy above)

PREFETCHERS: dict[str, type[PrefetchPolicy]] = {"none": NoPrefetch, "msp": MspPrefetch}
CHOICES = tuple(PREFETCHERS)


def load_prefetch(spec: str = "none", geometry: Any = None) -> PrefetchPolicy:
    """The prefetch policy ``spec`` names (``NAME[:key=value,...]``), checked by the registry."""
    from vraid.policies.registry import Context, create

    name = str(spec).strip().partition(":")[0]
    if name.lower() not in PREFETCHERS:
        raise VraidError(f"unknown prefetch policy {spec!r}", f"use --prefetch {' | '.join(PREFETCHERS)}")
    return create("prefetch", spec, Context(geometry=geometry))
