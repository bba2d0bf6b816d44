"""Prefetch policies: after a host read, what else to read ahead (``--prefetch``).

The read path (:mod:`vraid.engine.read.readpath`) asks the policy once per host
read, as it arrives (before its member reads, as seed 001's RAID driver runs
MSP), handing it a :class:`HostRead` (which blocks, how many of them the
caches miss, how many a previous prefetch had brought in or is reading), and
reads the block ranges the policy returns into the clean-block read cache in
the background, without delaying the host read. What the cache or the read
cache already holds, and the host read's own blocks, are left out by the read
path, not by the policy.

Seed 001 (Baek & Park, striping-aware sequential prefetching) is built on
this interface: SEQP (Linux read-ahead: a window ramping x4 below max/16,
else x2), SASEQP (the ahead window shrunk at the first strip boundary,
Fig. 5) and MSP (the strip-number sequence with its sequential counter,
Fig. 7) all decide from the stream of host reads and the strip size
(``geometry.u`` blocks per strip), which is what a policy gets.

A policy is a pure, synchronous object; a new one is one class (one file here)
and one entry in the ``prefetch`` row of :mod:`vraid.policies.registry`.
Built in: ``none`` (today's behaviour: no read-ahead), ``msp``
(:mod:`.msp`, seed 001 sec. 4), and ``seqp``/``saseqp`` (:mod:`.seqp`): the
paper's host-side windows moved into the controller on block streams found by
address, an extension (the host-side models are in the simulator). A policy may also have a ``state()`` method
returning a small dict (MSP: SC, SPS): the read path publishes it as a
``prefetch`` event when it changes and ``vraid status`` shows it.
"""

from __future__ import annotations

from typing import Any

from ...errors import VraidError
from .base import BlockRange, HostRead, NoPrefetch, PrefetchPolicy
from .msp import MspPrefetch
from .seqp import SaseqpPrefetch, SeqpPrefetch

__all__ = ["BlockRange", "HostRead", "MspPrefetch", "NoPrefetch", "PrefetchPolicy", "SaseqpPrefetch", "SeqpPrefetch",
           "CHOICES", "PREFETCHERS", "load_prefetch"]

PREFETCHERS: dict[str, type[PrefetchPolicy]] = {"none": NoPrefetch, "msp": MspPrefetch, "seqp": SeqpPrefetch,
                                                 "saseqp": SaseqpPrefetch}
CHOICES = tuple(PREFETCHERS)


def load_prefetch(spec: str = "none", geometry: Any = None) -> PrefetchPolicy:
    """The prefetch policy ``spec`` names (``NAME[:key=value,...]``), checked by the registry."""
    from vraid.policies.registry import Context, create

    name = str(spec).strip().partition(":")[0]
    if name.lower() not in PREFETCHERS:
        raise VraidError(f"unknown prefetch policy {spec!r}", f"use --prefetch {' | '.join(PREFETCHERS)}")
    return create("prefetch", spec, Context(geometry=geometry))
